// SPDX-License-Identifier: MIT
/*
 * The floor for a userspace I/O exit: a minimal KVM program (no devices, no
 * threads, no buses) whose guest executes N `out` instructions, from ring 0
 * (flat 32-bit protected mode, as PVH enters) or from ring 3 (64-bit mode,
 * CPL 3 with IOPL 3, identity-mapped user pages). Prints one JSON line with
 * the nanoseconds per exit, measured from the first exit to the last.
 *
 *   vmm_rawkvm ring0|ring3 N
 */
#include "util/util.h"

#include <fcntl.h>
#include <linux/kvm.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MEM_SIZE	(4ULL << 20)
#define CODE		0x100000ULL
#define PML4		0x9000ULL
#define PORT_LOOP	0x80
#define PORT_DONE	0x81

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ns_from_timespec(&ts);
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

/* mov ecx, N; 1: out 0x80, al; dec ecx; jnz 1b; out 0x81, al; jmp $ (same bytes in both modes) */
static void put_code(uint8_t *mem, uint32_t n)
{
	uint8_t code[] = { 0xb9, 0, 0, 0, 0, 0xe6, PORT_LOOP, 0xff, 0xc9, 0x75, 0xfa,
			   0xe6, PORT_DONE, 0xeb, 0xfe };

	memcpy(code + 1, &n, 4);
	memcpy(mem + CODE, code, sizeof(code));
}

static void seg(struct kvm_segment *s, uint16_t sel, uint8_t type, uint8_t dpl, int l, int db)
{
	*s = (struct kvm_segment){ .limit = 0xffffffff, .selector = sel, .type = type,
				   .present = 1, .dpl = dpl, .db = (uint8_t)db, .s = 1,
				   .l = (uint8_t)l, .g = 1 };
}

static void setup_ring3(uint8_t *mem, struct kvm_sregs *sr, struct kvm_regs *regs)
{
	uint64_t *pml4 = (uint64_t *)(mem + PML4), *pdpt = pml4 + 512, *pd = pml4 + 1024;

	/* User-accessible identity map of the first 1 GiB with 2 MiB pages. */
	pml4[0] = (PML4 + 0x1000) | 0x7;
	pdpt[0] = (PML4 + 0x2000) | 0x7;
	for (int i = 0; i < 512; i++)
		pd[i] = ((uint64_t)i << 21) | 0x87;
	seg(&sr->cs, 0x2b, 0xb, 3, 1, 0);
	seg(&sr->ss, 0x33, 0x3, 3, 0, 1);
	sr->ds = sr->es = sr->fs = sr->gs = sr->ss;
	sr->cr3 = PML4;
	sr->cr4 = 0x20;
	sr->efer = 0x500;
	sr->cr0 = 0x80050033;
	regs->rflags = 0x3002;	/* IOPL 3: `out` is allowed in ring 3 and exits to us */
}

static void setup_ring0(struct kvm_sregs *sr)
{
	seg(&sr->cs, 0x10, 0xb, 0, 0, 1);
	seg(&sr->ds, 0x18, 0x3, 0, 0, 1);
	sr->es = sr->fs = sr->gs = sr->ss = sr->ds;
	sr->cr0 = 0x11;
}

int main(int argc, char **argv)
{
	struct kvm_userspace_memory_region region = { .memory_size = MEM_SIZE };
	struct kvm_sregs sr;
	struct kvm_regs regs = { .rflags = 0x2, .rip = CODE };
	struct kvm_run *run;
	uint64_t first = 0, exits = 0;
	int kvm, vm, vcpu, ring3;
	uint32_t n;
	uint8_t *mem;

	if (argc != 3 || (strcmp(argv[1], "ring0") && strcmp(argv[1], "ring3")) || atoi(argv[2]) < 2) {
		fprintf(stderr, "usage: vmm_rawkvm ring0|ring3 N (N >= 2)\n");
		return 2;
	}
	ring3 = !strcmp(argv[1], "ring3");
	n = (uint32_t)atoi(argv[2]);
	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0)
		die("/dev/kvm");
	vm = ioctl(kvm, KVM_CREATE_VM, 0);
	mem = mmap(NULL, MEM_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (vm < 0 || mem == MAP_FAILED)
		die("KVM_CREATE_VM/mmap");
	region.userspace_addr = (uintptr_t)mem;
	if (ioctl(vm, KVM_SET_TSS_ADDR, 0xfeffd000UL) < 0 ||
	    ioctl(vm, KVM_SET_USER_MEMORY_REGION, &region) < 0)
		die("VM setup");
	vcpu = ioctl(vm, KVM_CREATE_VCPU, 0);
	run = mmap(NULL, (size_t)ioctl(kvm, KVM_GET_VCPU_MMAP_SIZE, 0), PROT_READ | PROT_WRITE,
		   MAP_SHARED, vcpu, 0);
	if (vcpu < 0 || run == MAP_FAILED || ioctl(vcpu, KVM_GET_SREGS, &sr) < 0)
		die("vCPU setup");
	put_code(mem, n);
	if (ring3)
		setup_ring3(mem, &sr, &regs);
	else
		setup_ring0(&sr);
	if (ioctl(vcpu, KVM_SET_SREGS, &sr) < 0 || ioctl(vcpu, KVM_SET_REGS, &regs) < 0)
		die("KVM_SET_SREGS/REGS");
	for (;;) {
		if (ioctl(vcpu, KVM_RUN, 0) < 0)
			die("KVM_RUN");
		if (run->exit_reason != KVM_EXIT_IO) {
			fprintf(stderr, "vmm_rawkvm: unexpected exit %u after %llu I/O exits\n",
				run->exit_reason, (unsigned long long)exits);
			return 1;
		}
		if (!exits++)
			first = now_ns();
		if (run->io.port == PORT_DONE)
			break;
	}
	/* exits - 1 intervals between the first loop exit and the done exit. */
	printf("{\"vmm\":\"raw-kvm\",\"mode\":\"%s\",\"exits\":%llu,\"ns_per_exit\":%llu}\n", argv[1],
	       (unsigned long long)exits, (unsigned long long)((now_ns() - first) / (exits - 1)));
	return 0;
}
