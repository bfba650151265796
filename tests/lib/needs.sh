# What an integration test needs of the machine, for the bash tests (the
# Python ones use tests/lib/needs.py, with the same messages).
# need_kvm: skip the whole test (exit 77) without /dev/kvm.
# have_kvm: true where /dev/kvm is usable (guard the checks that boot a guest).
have_kvm() { [[ -r /dev/kvm && -w /dev/kvm ]]; }
need_kvm() {
	have_kvm && return 0
	echo "/dev/kvm is not accessible (this test boots a guest)"
	exit 77
}
