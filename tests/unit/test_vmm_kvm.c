// SPDX-License-Identifier: MIT
/*
 * The run loop against real KVM with tiny real-mode guests: userspace MSRs
 * through the MSR filter, PIO dispatch, kicks that are never lost, the gate
 * hooks, and the `blocking` statistic. Skipped (with a message) without
 * /dev/kvm access.
 */
#include "tests/unit/harness.h"
#include "util/evloop.h"
#include "capvisor/layout.h"
#include "vmm/kvm/vm.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CODE_GPA 0x1000

static bool have_kvm(void)
{
	if (access("/dev/kvm", R_OK | W_OK) == 0)
		return true;
	fprintf(stderr, "\n  (skipped: no read/write access to /dev/kvm)\n");
	return false;
}

static struct vm *tiny_vm(const uint8_t *code, size_t len)
{
	struct vm_params p = { .nr_vcpus = 1, .mem_size = 16ULL << 20 };
	struct vm *vm = vm_create(&p);

	CU_ASSERT_FATAL(vm != NULL);
	memcpy(guest_mem_ptr(&vm->mem, CODE_GPA, len), code, len);
	return vm;
}

static void start_real(struct vm *vm)
{
	struct boot_entry e = { .mode = BOOT_REAL16, .rip = CODE_GPA };

	CU_ASSERT_EQUAL_FATAL(vm_start(vm, &e), 0);
}

static void on_timeout(struct evloop *loop, void *opaque)
{
	(void)loop;
	vm_request_exit(opaque, VM_EXIT_ERROR, 0, "test timed out");
}

/* Run the main loop until the VM ends (or 10 s pass). */
static void run_main_loop(struct vm *vm)
{
	CU_ASSERT(evloop_add_timer(vm->loop, 10000000000ULL, on_timeout, vm) >= 0);
	evloop_run(vm->loop);
	vm_stop_vcpus(vm);
}

struct port_rec {
	struct vm *vm;
	uint32_t value;
	unsigned int writes;
};

static void port_write(struct bus_device *dev, uint64_t off, const void *data, unsigned int len)
{
	struct port_rec *r = dev->priv;

	r->writes++;
	if (off == 0 && len == 4)
		memcpy(&r->value, data, 4);
	if (off == 4)
		vm_request_exit(r->vm, VM_EXIT_POWEROFF, 0, "done");
}

static const struct bus_device_ops port_ops = { "test-port", NULL, port_write };

static uint64_t msr_value = 0x1122334455667788ULL, msr_written;
static unsigned int msr_reads;

static int test_msr_read(struct vcpu *v, uint32_t msr, uint64_t *val, void *opaque)
{
	(void)v;
	(void)opaque;
	CU_ASSERT_EQUAL(msr, MSR_IA32_MPERF);
	msr_reads++;
	*val = msr_value;
	return 0;
}

static int test_msr_write(struct vcpu *v, uint32_t msr, uint64_t val, void *opaque)
{
	(void)v;
	(void)msr;
	(void)opaque;
	msr_written = val;
	return 0;
}

static void test_kvm_msr_exits_and_pio(void)
{
	static const uint8_t code[] = {
		0x66, 0xb9, 0xe7, 0x00, 0x00, 0x00,	/* mov ecx, 0xe7 */
		0x0f, 0x32,				/* rdmsr */
		0x66, 0xe7, 0x10,			/* out 0x10, eax */
		0x66, 0xb8, 0x78, 0x56, 0x34, 0x12,	/* mov eax, 0x12345678 */
		0x66, 0xba, 0x01, 0x00, 0x00, 0x00,	/* mov edx, 1 */
		0x0f, 0x30,				/* wrmsr */
		0xe6, 0x14,				/* out 0x14, al: done */
		0xeb, 0xfe,				/* jmp $ */
	};
	struct vm_msr_handler h = { MSR_IA32_MPERF, test_msr_read, test_msr_write, NULL };
	struct port_rec rec = { 0 };
	struct bus_device dev = { &port_ops, 0x10, 5, &rec };
	struct vm *vm;

	if (!have_kvm())
		return;
	vm = tiny_vm(code, sizeof(code));
	rec.vm = vm;
	CU_ASSERT_EQUAL(bus_register(vm->pio, &dev), 0);
	CU_ASSERT_EQUAL(vm_register_msr(vm, &h), 0);
	CU_ASSERT_EQUAL(vm_register_msr(vm, &h), -EEXIST);
	msr_reads = 0;
	start_real(vm);
	CU_ASSERT_EQUAL(vm_register_msr(vm, &h), -EBUSY);
	run_main_loop(vm);
	CU_ASSERT_EQUAL(vm_exit_kind(vm), VM_EXIT_POWEROFF);
	CU_ASSERT_STRING_EQUAL(vm->exit_reason, "done");
	CU_ASSERT_EQUAL(msr_reads, 1);
	CU_ASSERT_EQUAL(rec.value, 0x55667788);		/* EAX of the handler's value */
	CU_ASSERT_EQUAL(msr_written, 0x112345678ULL);
	CU_ASSERT(vm->vcpus[0]->nr_msr_exits >= 2);
	vm_destroy(vm);
}

struct gate_rec {
	atomic_uint enters, leaves, eintr;
};

static bool gate_enter(void *opaque, unsigned int vcpu)
{
	struct gate_rec *g = opaque;

	(void)vcpu;
	atomic_fetch_add(&g->enters, 1);
	return true;
}

static void gate_leave(void *opaque, unsigned int vcpu, int reason)
{
	struct gate_rec *g = opaque;

	(void)vcpu;
	atomic_fetch_add(&g->leaves, 1);
	if (reason == -EINTR)
		atomic_fetch_add(&g->eintr, 1);
}

static const struct vcpu_gate_ops gate_ops = { gate_enter, gate_leave };

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void test_kvm_kick_and_stop_spinning_vcpu(void)
{
	static const uint8_t spin[] = { 0xeb, 0xfe };	/* jmp $ */
	struct gate_rec g = { 0 };

	if (!have_kvm())
		return;
	/* Repeated start/stop: a lost kick would hang vm_stop_vcpus(). */
	for (int round = 0; round < 10; round++) {
		struct vm *vm = tiny_vm(spin, sizeof(spin));

		memset(&g, 0, sizeof(g));
		vm_set_gate(vm, &gate_ops, &g);
		start_real(vm);
		if (round == 0) {
			sleep_ms(20);
			CU_ASSERT_EQUAL(vcpu_halted(vm->vcpus[0]), 0);
			vm_kick_vcpu(vm, 0);
			vm_kick_vcpu(vm, 7);	/* no such vCPU: ignored */
			for (int i = 0; i < 1000 && !atomic_load(&g.eintr); i++)
				sleep_ms(1);
			CU_ASSERT(atomic_load(&g.eintr) >= 1);	/* kicked out, then back in */
			for (int i = 0; i < 1000 && atomic_load(&g.enters) < 2; i++)
				sleep_ms(1);
			CU_ASSERT(atomic_load(&g.enters) >= 2);
		}
		vm_request_exit(vm, VM_EXIT_SIGNAL, 15, "test stop");
		vm_stop_vcpus(vm);
		CU_ASSERT_EQUAL(vm_exit_kind(vm), VM_EXIT_SIGNAL);
		CU_ASSERT_EQUAL(atomic_load(&g.enters), atomic_load(&g.leaves));
		vm_destroy(vm);
	}
}

static void test_kvm_halted_vcpu_is_blocking(void)
{
	static const uint8_t halt[] = { 0xfa, 0xf4, 0xeb, 0xfd };	/* cli; hlt; jmp -3 */
	struct vm *vm;
	int halted = -1;

	if (!have_kvm())
		return;
	vm = tiny_vm(halt, sizeof(halt));
	start_real(vm);
	for (int i = 0; i < 2000 && halted != 1; i++) {
		sleep_ms(1);
		halted = vcpu_halted(vm->vcpus[0]);
	}
	CU_ASSERT_EQUAL(halted, 1);
	CU_ASSERT_EQUAL(vm_vcpu_halted(vm, 0), 1);
	CU_ASSERT_EQUAL(vm_vcpu_halted(vm, 1), -EINVAL);
	/* A halted vCPU sleeps in KVM_RUN: the kick still gets it out. */
	vm_request_exit(vm, VM_EXIT_SIGNAL, 2, "test stop");
	vm_stop_vcpus(vm);
	vm_destroy(vm);
}

static void test_kvm_guest_failure_is_reported(void)
{
	/*
	 * Load an empty IDT, then raise #UD: with hardware virtualization the
	 * vCPU triple-faults; PVM's emulator reports an emulation failure of
	 * the ud2. Either way the VM ends with the vCPU, RIP and bytes.
	 */
	static const uint8_t code[] = {
		0x0f, 0x01, 0x1e, 0x10, 0x00,		/* lidt [0x10] (DS = 0: GPA 0x10) */
		0x0f, 0x0b,				/* ud2 */
	};
	struct vm *vm;

	if (!have_kvm())
		return;
	vm = tiny_vm(code, sizeof(code));
	memset(guest_mem_ptr(&vm->mem, 0x10, 6), 0, 6);	/* limit 0, base 0 */
	start_real(vm);
	run_main_loop(vm);
	CU_ASSERT_EQUAL(vm_exit_kind(vm), VM_EXIT_ERROR);
	CU_ASSERT_PTR_NOT_NULL(strstr(vm->exit_reason, "vCPU 0:"));
	CU_ASSERT_PTR_NOT_NULL(strstr(vm->exit_reason, "RIP 0x5"));
	CU_ASSERT(strstr(vm->exit_reason, "triple fault") ||
		  strstr(vm->exit_reason, "instruction bytes: 0f 0b"));
	fprintf(stderr, "\n  (exit reason: %s)\n", vm->exit_reason);
	vm_destroy(vm);
}

static void test_kvm_steal_time_preempted_flag(void)
{
	static const uint8_t code[] = {
		0x66, 0xb9, 0x03, 0x4d, 0x56, 0x4b,	/* mov ecx, MSR_KVM_STEAL_TIME */
		0x66, 0xb8, 0x01, 0x20, 0x00, 0x00,	/* mov eax, 0x2000 | enable */
		0x66, 0x31, 0xd2,			/* xor edx, edx */
		0x0f, 0x30,				/* wrmsr */
		0xe6, 0x14,				/* out 0x14, al: done */
		0xeb, 0xfe,				/* jmp $ */
	};
	struct port_rec rec = { 0 };
	struct bus_device dev = { &port_ops, 0x10, 5, &rec };
	volatile uint8_t *flag;
	struct vm *vm;

	if (!have_kvm())
		return;
	vm = tiny_vm(code, sizeof(code));
	rec.vm = vm;
	flag = guest_mem_ptr(&vm->mem, 0x2000 + 16, 1);
	CU_ASSERT_EQUAL(bus_register(vm->pio, &dev), 0);
	CU_ASSERT_EQUAL(vcpu_set_preempted(vm->vcpus[0], true), -ENOENT);	/* not enabled yet */
	start_real(vm);
	run_main_loop(vm);
	CU_ASSERT_EQUAL_FATAL(vm_exit_kind(vm), VM_EXIT_POWEROFF);
	/* The vCPU is out of KVM_RUN now, as the dispatcher's gate would hold it. */
	CU_ASSERT_EQUAL(vcpu_set_preempted(vm->vcpus[0], true), 0);
	CU_ASSERT_EQUAL(*flag, 1);
	CU_ASSERT_EQUAL(vcpu_set_preempted(vm->vcpus[0], false), 0);
	CU_ASSERT_EQUAL(*flag, 0);
	vm_destroy(vm);
}

/* Identity-mapped 64-bit ring 0 with an IDT whose vector 3 points at `handler`. */
static void setup_long_mode_idt(struct vm *vm, uint64_t handler)
{
	uint64_t *pml4 = guest_mem_ptr(&vm->mem, 0x9000, 0x3000);
	uint64_t *gdt = guest_mem_ptr(&vm->mem, 0x500, 32);
	uint8_t *idt = guest_mem_ptr(&vm->mem, 0x3000, 0x1000);
	uint8_t *idtr = guest_mem_ptr(&vm->mem, 0x2000, 10);
	uint16_t limit = 0xfff;
	uint64_t base = 0x3000;

	pml4[0] = 0xa000 | 3;
	pml4[512] = 0xb000 | 3;				/* PDPT[0] -> PD */
	for (int i = 0; i < 512; i++)
		pml4[1024 + i] = ((uint64_t)i << 21) | 0x83;	/* 2 MiB pages */
	gdt[0] = gdt[1] = 0;
	gdt[2] = 0x00af9b000000ffffULL;
	gdt[3] = 0x00cf93000000ffffULL;
	memset(idt + 3 * 16, 0, 16);
	idt[3 * 16 + 0] = handler & 0xff;
	idt[3 * 16 + 1] = (handler >> 8) & 0xff;
	idt[3 * 16 + 2] = 0x10;				/* selector */
	idt[3 * 16 + 5] = 0x8e;				/* present, 64-bit interrupt gate */
	idt[3 * 16 + 6] = (handler >> 16) & 0xff;
	idt[3 * 16 + 7] = (handler >> 24) & 0xff;
	memcpy(idtr, &limit, 2);
	memcpy(idtr + 2, &base, 8);
}

static void test_kvm_int3_reaches_the_guest_handler(void)
{
	/* mov esp, 0x8000; lidt [0x2000]; int3; jmp $ -- handler at 0x1100: out 0x14, al */
	static const uint8_t code[0x104] = {
		0xbc, 0x00, 0x80, 0x00, 0x00, 0x0f, 0x01, 0x1c, 0x25, 0x00, 0x20, 0x00, 0x00,
		0xcc, 0xeb, 0xfe,
		[0x100] = 0xe6, [0x101] = 0x14, [0x102] = 0xeb, [0x103] = 0xfe,
	};
	struct boot_entry e = { .mode = BOOT_LONG64, .rip = CODE_GPA, .cr3 = 0x9000, .gdt = 0x500 };
	struct port_rec rec = { 0 };
	struct bus_device dev = { &port_ops, 0x10, 5, &rec };
	struct vm *vm;

	if (!have_kvm())
		return;
	vm = tiny_vm(code, sizeof(code));
	rec.vm = vm;
	setup_long_mode_idt(vm, CODE_GPA + 0x100);
	CU_ASSERT_EQUAL(bus_register(vm->pio, &dev), 0);
	CU_ASSERT_EQUAL_FATAL(vm_start(vm, &e), 0);
	run_main_loop(vm);
	/* Natively on VMX/SVM; through emulate_int3() where the emulator fails on it (PVM). */
	CU_ASSERT_EQUAL(vm_exit_kind(vm), VM_EXIT_POWEROFF);
	if (vm_exit_kind(vm) != VM_EXIT_POWEROFF)
		fprintf(stderr, "\n  (%s)\n", vm->exit_reason);
	fprintf(stderr, "\n  (int3 emulated by capvisor: %llu)\n",
		(unsigned long long)vm->vcpus[0]->nr_int3_emulated);
	vm_destroy(vm);
}

static void test_kvm_fwait_without_pending_x87_error(void)
{
	/* fninit; fwait; out 0x14, al: fwait must be a no-op with no x87 error pending. */
	static const uint8_t code[] = { 0xdb, 0xe3, 0x9b, 0xe6, 0x14, 0xeb, 0xfe };
	struct boot_entry e = { .mode = BOOT_LONG64, .rip = CODE_GPA, .cr3 = 0x9000, .gdt = 0x500 };
	struct port_rec rec = { 0 };
	struct bus_device dev = { &port_ops, 0x10, 5, &rec };
	struct vm *vm;

	if (!have_kvm())
		return;
	vm = tiny_vm(code, sizeof(code));
	rec.vm = vm;
	setup_long_mode_idt(vm, CODE_GPA + 0x100);
	CU_ASSERT_EQUAL(bus_register(vm->pio, &dev), 0);
	CU_ASSERT_EQUAL_FATAL(vm_start(vm, &e), 0);
	run_main_loop(vm);
	CU_ASSERT_EQUAL(vm_exit_kind(vm), VM_EXIT_POWEROFF);
	if (vm_exit_kind(vm) != VM_EXIT_POWEROFF)
		fprintf(stderr, "\n  (%s)\n", vm->exit_reason);
	fprintf(stderr, "\n  (fwait carried out by capvisor: %llu)\n",
		(unsigned long long)vm->vcpus[0]->nr_fwait_emulated);
	vm_destroy(vm);
}

/* 1000 I/O exits, then done; the gate counts its runs. */
static void run_io_loop(bool fast, struct gate_rec *g, uint64_t *exits)
{
	static const uint8_t code[] = {
		0xb9, 0xe8, 0x03,	/* mov cx, 1000 */
		0xe6, 0x15,		/* 1: out 0x15, al */
		0x49,			/* dec cx */
		0x75, 0xfb,		/* jnz 1b */
		0xe6, 0x14,		/* out 0x14, al: done */
		0xeb, 0xfe,
	};
	struct port_rec rec = { 0 };
	struct bus_device dev = { &port_ops, 0x10, 6, &rec };
	struct vm *vm = tiny_vm(code, sizeof(code));

	rec.vm = vm;
	memset(g, 0, sizeof(*g));
	CU_ASSERT_EQUAL(bus_register(vm->pio, &dev), 0);
	vm_set_gate(vm, &gate_ops, g);
	vm_set_gate_flags(vm, fast ? VCPU_GATE_FAST_REENTRY : 0);
	start_real(vm);
	run_main_loop(vm);
	CU_ASSERT_EQUAL(vm_exit_kind(vm), VM_EXIT_POWEROFF);
	CU_ASSERT_EQUAL(rec.writes, 1001);
	*exits = vm->vcpus[0]->nr_io_exits;
	vm_destroy(vm);
}

static void test_kvm_gate_fast_reentry(void)
{
	struct gate_rec g;
	uint64_t exits;

	if (!have_kvm())
		return;
	run_io_loop(false, &g, &exits);
	CU_ASSERT(exits >= 1001);
	CU_ASSERT(atomic_load(&g.enters) >= 1001);	/* one gate pass per exit */
	CU_ASSERT_EQUAL(atomic_load(&g.enters), atomic_load(&g.leaves));
	run_io_loop(true, &g, &exits);
	CU_ASSERT(exits >= 1001);
	CU_ASSERT(atomic_load(&g.enters) < 10);		/* one run, plus the stop */
	CU_ASSERT_EQUAL(atomic_load(&g.enters), atomic_load(&g.leaves));
}

static void test_kvm_kick_with_fast_reentry(void)
{
	static const uint8_t code[] = { 0xe6, 0x15, 0xeb, 0xfc };	/* 1: out 0x15, al; jmp 1b */
	struct port_rec rec = { 0 };
	struct bus_device dev = { &port_ops, 0x10, 6, &rec };
	struct gate_rec g = { 0 };
	struct vm *vm;

	if (!have_kvm())
		return;
	vm = tiny_vm(code, sizeof(code));
	rec.vm = vm;
	CU_ASSERT_EQUAL(bus_register(vm->pio, &dev), 0);
	vm_set_gate(vm, &gate_ops, &g);
	vm_set_gate_flags(vm, VCPU_GATE_FAST_REENTRY);
	start_real(vm);
	for (int i = 0; i < 2000 && vm->vcpus[0]->nr_io_exits < 100; i++)
		sleep_ms(1);
	CU_ASSERT_EQUAL(atomic_load(&g.enters), 1);	/* still in its first run */
	vm_kick_vcpu(vm, 0);
	for (int i = 0; i < 2000 && atomic_load(&g.enters) < 2; i++)
		sleep_ms(1);
	CU_ASSERT(atomic_load(&g.eintr) >= 1);		/* the kick ended the run */
	CU_ASSERT(atomic_load(&g.enters) >= 2);		/* and the gate let it in again */
	vm_request_exit(vm, VM_EXIT_SIGNAL, 15, "test stop");
	vm_stop_vcpus(vm);
	CU_ASSERT_EQUAL(atomic_load(&g.enters), atomic_load(&g.leaves));
	vm_destroy(vm);
}

UNIT_SUITE(vmm_kvm, NULL, NULL,
	   UNIT_TEST(test_kvm_gate_fast_reentry),
	   UNIT_TEST(test_kvm_kick_with_fast_reentry),
	   UNIT_TEST(test_kvm_fwait_without_pending_x87_error),
	   UNIT_TEST(test_kvm_int3_reaches_the_guest_handler),
	   UNIT_TEST(test_kvm_steal_time_preempted_flag),
	   UNIT_TEST(test_kvm_msr_exits_and_pio),
	   UNIT_TEST(test_kvm_kick_and_stop_spinning_vcpu),
	   UNIT_TEST(test_kvm_halted_vcpu_is_blocking),
	   UNIT_TEST(test_kvm_guest_failure_is_reported))
