# SPDX-License-Identifier: MIT
# Shared by the test_acpi_* scripts (sourced, not run): check a directory of
# dumped tables (SIG.dat) with ACPICA's iasl.

# check_dir DIR NR_VCPUS NR_X2APIC: every table disassembles cleanly, the FADT
# is hardware-reduced with the reset and sleep registers, the MADT has one
# enabled entry per vCPU, the DSDT recompiles, the RSDP checksums hold.
check_dir() {	# DIR NR_VCPUS NR_X2APIC
	local d=$1 n=$2 nx=$3 f out
	for f in "$d"/FACP.dat "$d"/APIC.dat "$d"/XSDT.dat "$d"/DSDT.dat; do
		out=$(cd "$d" && iasl -d "$(basename "$f")" 2>&1) || { echo "iasl -d $f failed:"; echo "$out"; return 1; }
		if grep -Eiq 'error|warning|incorrect checksum|invalid' <<<"$out" ||
		   grep -Eiq 'incorrect checksum|invalid|\*\*\*\* ' "${f%.dat}.dsl"; then
			echo "iasl -d $f complained:"; echo "$out"; grep -Ei 'checksum|invalid|\*\*\*\*' "${f%.dat}.dsl"; return 1
		fi
	done
	grep -Eq 'Hardware Reduced \(V5\) : 1' "$d/FACP.dsl" || { echo "$d: FADT not HW-reduced"; return 1; }
	grep -Eq 'Revision : 06' "$d/FACP.dsl" || { echo "$d: FADT revision is not 6"; return 1; }
	grep -Eq 'Reset Register Supported \(V2\) : 1' "$d/FACP.dsl" || { echo "$d: no reset register"; return 1; }
	grep -Eq 'Value to cause reset : FE' "$d/FACP.dsl" || { echo "$d: reset value"; return 1; }
	grep -A5 'Sleep Control Register' "$d/FACP.dsl" | grep -q 'Address : 0000000000000600' ||
		{ echo "$d: sleep control register not at port 0x600"; return 1; }
	grep -A5 'Sleep Status Register' "$d/FACP.dsl" | grep -q 'Address : 0000000000000601' ||
		{ echo "$d: sleep status register not at port 0x601"; return 1; }
	local lapic x2apic enabled
	lapic=$(grep -c 'Subtable Type : 00 \[Processor Local APIC\]' "$d/APIC.dsl" || true)
	x2apic=$(grep -c 'Subtable Type : 09 \[Processor Local x2APIC\]' "$d/APIC.dsl" || true)
	enabled=$(grep -c 'Processor Enabled : 1' "$d/APIC.dsl" || true)
	if (( lapic + x2apic != n || x2apic != nx || enabled != n )); then
		echo "$d: MADT has $lapic LAPIC + $x2apic x2APIC ($enabled enabled), expected $n with $nx x2APIC"; return 1
	fi
	grep -q 'Subtable Type : 01 \[I/O APIC\]' "$d/APIC.dsl" || { echo "$d: no IOAPIC"; return 1; }
	grep -A3 'Interrupt Source Override' "$d/APIC.dsl" | grep -q 'Source : 00' || { echo "$d: no IRQ0 override"; return 1; }
	out=$(cd "$d" && iasl -p recompiled DSDT.dsl 2>&1) || { echo "DSDT does not recompile:"; echo "$out"; return 1; }
	grep -q 'Compilation successful. 0 Errors' <<<"$out" || { echo "$out"; return 1; }
	python3 - "$d/RSDP.dat" "$d/XSDT.dat" <<'PY'
import sys
r = open(sys.argv[1], "rb").read()
assert len(r) == 36 and r[:8] == b"RSD PTR ", "RSDP signature/length"
assert sum(r[:20]) % 256 == 0, "RSDP checksum (first 20 bytes)"
assert sum(r) % 256 == 0, "RSDP extended checksum"
assert r[15] == 2, "RSDP revision %d, expected 2" % r[15]
assert int.from_bytes(r[24:32], "little") != 0, "RSDP without XSDT address"
x = open(sys.argv[2], "rb").read()
assert sum(x) % 256 == 0, "XSDT checksum"
PY
	echo "ok: $d ($n vCPUs, $nx x2APIC)"
}

