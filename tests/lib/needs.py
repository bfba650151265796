"""What an integration test needs of the machine, checked in one place.

A test that boots a guest needs /dev/kvm. Machines without it (a PVM guest
that cannot nest, a container) skip such a test with exit 77 and the
reason, as tests/run-scripts.sh expects; a test with checks that need no
KVM runs those and reports the others as skipped (kvm_or_note())."""
import os
import sys

KVM = "/dev/kvm"


def have_kvm():
    return os.access(KVM, os.R_OK | os.W_OK)


def require_kvm():
    """Skip the whole test (exit 77) on a machine without KVM."""
    if not have_kvm():
        print(f"{KVM} is not accessible (this test boots a guest)")
        sys.exit(77)


def kvm_or_note(what):
    """True where KVM is usable; else prints that `what` is skipped and returns False."""
    if have_kvm():
        return True
    print(f"skip {what}: {KVM} is not accessible")
    return False
