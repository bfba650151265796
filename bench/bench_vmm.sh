#!/usr/bin/env bash
# VMM benchmarks (figures for the README), all in one run so they compare:
#  1. launch: median of 7 of time to the guest's first console line, time to
#     exit and peak RSS, for capvisor and QEMU microvm, same test guest
#     (`test=idle secs=0`: boot, one line, poweroff), same RAM;
#  2. I/O exit cost from guest ring 0 and ring 3: a raw KVM loop doing nothing
#     but OUT exits, the same loop code booted by capvisor (vmm_exitloop), and
#     the test guest's own `ioexit` measurement (ring 0 and ring 3); capvisor
#     with its scheduler (default) and with --sched host.
set -euo pipefail
BUILD=${BUILD:-build}
CAPVISOR=${CAPVISOR:-$BUILD/capvisor}
GUEST=build/guest/capvisor-guest.elf
RUNS=${RUNS:-7}
N_EXITS=${N_EXITS:-20000}
launch=$BUILD/bench/vmm_launch
raw=$BUILD/bench/vmm_rawkvm
exitloop=$BUILD/bench/vmm_exitloop
for f in "$CAPVISOR" "$GUEST" "$launch" "$raw" "$exitloop"; do
	[[ -e $f ]] || { echo "bench_vmm: $f missing (make bench-build)"; exit 1; }
done

echo "# launch to first line / exit / peak RSS (median of $RUNS, 1 vCPU, 256M)"
"$launch" capvisor "$RUNS" -- "$CAPVISOR" run --mem 256M --cmdline "test=idle secs=0"
if command -v qemu-system-x86_64 >/dev/null; then
	"$launch" qemu-microvm "$RUNS" -- qemu-system-x86_64 -M microvm -accel kvm -m 256M \
		-nic none -nographic -no-reboot -kernel "$GUEST" -append "test=idle secs=0"
else
	echo '{"vmm":"qemu-microvm","skipped":"qemu-system-x86_64 not installed"}'
fi

echo "# one userspace I/O exit (median of $RUNS runs of $N_EXITS exits each)"
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
for ring in ring0 ring3; do
	for _ in $(seq "$RUNS"); do
		"$raw" "$ring" "$N_EXITS" | sed -E 's/.*"ns_per_exit":([0-9]+).*/\1/'
	done | median | xargs printf '{"vmm":"raw-kvm","mode":"%s","ns_per_exit":%s}\n' "$ring"
done
# Ring 0, the raw loop's very code booted by capvisor as a PVH ELF, timed by the
# host between two console markers.
for sched in capvisor host; do
	for _ in $(seq "$RUNS"); do
		"$exitloop" "$N_EXITS" "$CAPVISOR" run --sched "$sched" --kernel |
			sed -E 's/.*"ns_per_exit":([0-9]+).*/\1/'
	done | median | xargs printf '{"vmm":"capvisor","sched":"%s","mode":"ring0 (raw loop code)","ns_per_exit":%s}\n' "$sched"
done
# Ring 0 and ring 3 measured by the test guest itself (`test=ioexit`, kvmclock);
# capvisor twice: with its vCPU scheduler (the default; every exit passes the
# dispatcher's gate) and with --sched host (the VMM's own exit path alone).
for sched in capvisor host; do
	out="${TMPDIR:-/tmp}/capvisor-ioexit.$$"
	for _ in $(seq "$RUNS"); do
		"$CAPVISOR" run --sched "$sched" --cmdline "test=ioexit n=$N_EXITS port=128" \
			</dev/null 2>/dev/null | grep '"test":"ioexit"'
	done >"$out"
	for ring in ring0 ring3; do
		sed -E "s/.*\"${ring}_ns_per_exit\":([0-9]+).*/\1/" "$out" | median |
			xargs printf '{"vmm":"capvisor","sched":"%s","mode":"%s","ns_per_exit":%s}\n' \
				"$sched" "$ring"
	done
	rm -f "$out"
done
