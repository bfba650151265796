#!/usr/bin/env bash
# Install every Debian package capvisor needs to build, test and benchmark.
# Idempotent: does nothing when everything is present; runs `apt-get update`
# only when something is missing.
set -euo pipefail

PKGS=(
	gcc clang make binutils            # toolchains (the project builds with both)
	libjson-c-dev                      # control socket, simulator, VM definitions
	libcap-ng-dev                      # dropping privileges after setup
	libseccomp-dev                     # seccomp-bpf filters of the run phase
	libxml2-dev pkg-config             # libvirt domain XML in and out
	libvirt-clients libxml2-utils      # virt-xml-validate, virsh's test driver, xmllint (domain tests)
	libcunit1-dev                      # unit tests
	libclang-rt-14-dev                 # clang's sanitizer and libFuzzer runtimes
	acpica-tools                       # iasl / acpiexec check our ACPI tables
	python3 socat                      # control-socket client tests
	qemu-system-x86                    # peer in benchmarks and guest cross-check
	cpio xz-utils zstd busybox-static  # Linux boot tests (initramfs, vmlinux)
	libc6-dev                          # libc.a: the static load program of the stock-Linux guests
	groff-base man-db                  # checking that the man page renders
)

missing=()
for p in "${PKGS[@]}"; do
	[[ $p == \#* ]] && continue
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done

if ((${#missing[@]} == 0)); then
	exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
SUDO=
if [[ $(id -u) -ne 0 ]]; then
	SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
