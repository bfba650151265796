// SPDX-License-Identifier: MIT
/*
 * Per-CPU descriptor tables, interrupt and exception dispatch, syscalls,
 * and RDMSR/WRMSR that survive #GP (hostile and probing tests ask for MSRs a
 * host may refuse).
 *
 * Syscalls are UD2 from ring 3, not SYSCALL: on PVM hosts the SYSCALL
 * instruction from guest ring 3 jumps to LSTAR but stays at CPL 3 (so SYSRET
 * "fails" and an IRETQ cannot restore IF), while exceptions are delivered to
 * ring 0 through the IDT as on hardware. A #UD trap gate (IF stays as ring 3
 * had it) on the TSS RSP0 stack is a syscall that works on every host.
 */
#include "guest/kernel.h"

#define MSR_GS_BASE	0xc0000101
#define GDT_TSS_FIRST	5
#define IST_IRQ		1
#define IST_EXC		2

struct trap_frame {
	u64 r11, r10, r9, r8, rdi, rsi, rdx, rcx, rax;
	u64 vector, error;
	u64 rip, cs, rflags, rsp, ss;
};

struct idt_gate {
	u16 off_lo, sel;
	u8 ist, type;
	u16 off_mid;
	u32 off_hi, zero;
} __attribute__((packed));

static struct idt_gate idt[256] __attribute__((aligned(16)));

/* entry.S's timer interrupt stub writes percpu->timer_fired at this offset. */
_Static_assert(__builtin_offsetof(struct percpu, timer_fired) == 24, "see entry.S");
static volatile u32 msr_faulted[GUEST_MAX_CPUS];

static void set_gate_type(unsigned int vec, u64 handler, u8 ist, u8 type)
{
	struct idt_gate *g = &idt[vec];

	g->off_lo = (u16)handler;
	g->sel = 0x08;
	g->ist = ist;
	g->type = type;
	g->off_mid = (u16)(handler >> 16);
	g->off_hi = (u32)(handler >> 32);
	g->zero = 0;
}

/* Present, DPL 0, 64-bit interrupt gate (IF cleared on entry). */
static void set_gate(unsigned int vec, u64 handler, u8 ist)
{
	set_gate_type(vec, handler, ist, 0x8e);
}

/* Build the shared IDT once, on the BSP. */
static void idt_build(void)
{
	for (unsigned int v = 0; v < 32; v++)
		set_gate(v, isr_table[v], IST_EXC);
	/* #UD is the syscall: trap gate, no IST (it may sleep and take #GP). */
	set_gate_type(6, isr_table[6], 0, 0x8f);
	set_gate(LAPIC_TIMER_VECTOR, isr_table[32], IST_IRQ);
	set_gate(WAKE_VECTOR, isr_table[33], IST_IRQ);
	set_gate(SPURIOUS_VECTOR, (u64)isr_spurious, IST_IRQ);
}

/*
 * The TSSs of all CPUs, then one I/O permission bitmap they all point at
 * (iomap_base is relative to each TSS). All zeroes: ring 3 may use every
 * port. IOPL alone is not enough on PVM hosts, whose emulator of ring-3
 * `out` checks the bitmap (and an IRETQ there does not load IOPL).
 */
struct tss_block {
	struct tss64 tss[GUEST_MAX_CPUS];
	u8 iobitmap[8192];
	u8 terminator;		/* 0xff, as the architecture requires */
} __attribute__((packed, aligned(16)));

static struct tss_block tss_block;

static void load_tss(struct percpu *cpu)
{
	struct tss64 *tss = &tss_block.tss[cpu->index];
	u64 base = (u64)tss;
	u16 iomap = (u16)((u64)tss_block.iobitmap - base);
	u64 limit = iomap + sizeof(tss_block.iobitmap);
	unsigned int slot = GDT_TSS_FIRST + 2 * cpu->index;
	u64 kstacks = GUEST_KSTACKS + cpu->index * GUEST_STACK_SIZE;
	u16 sel = (u16)(slot * 8);

	tss_block.terminator = 0xff;
	tss->rsp[0] = kstacks + KSTACK_SYSCALL_TOP;
	tss->ist[IST_IRQ - 1] = kstacks + KSTACK_IST1_TOP;
	tss->ist[IST_EXC - 1] = kstacks + KSTACK_IST2_TOP;
	tss->iomap_base = iomap;
	gdt[slot] = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89UL << 40) |
		    ((limit >> 16) << 48) | (((base >> 24) & 0xff) << 56);
	gdt[slot + 1] = base >> 32;
	asm volatile("ltr %0" : : "r"(sel));
}

void trap_init_cpu(struct percpu *cpu)
{
	struct {
		u16 limit;
		u64 base;
	} __attribute__((packed)) desc = { sizeof(idt) - 1, (u64)idt };

	if (cpu->index == 0)
		idt_build();
	load_tss(cpu);
	asm volatile("lidt %0" : : "m"(desc));
	cpu->self = cpu;
	cpu->kstack_top = GUEST_KSTACKS + cpu->index * GUEST_STACK_SIZE + KSTACK_SYSCALL_TOP;
	wrmsr(MSR_GS_BASE, (u64)cpu);
}

/* The addresses of the two instructions a #GP may skip (2 bytes each). */
extern const char rdmsr_insn[], wrmsr_insn[];

__attribute__((noinline)) long msr_read_safe(u32 msr, u64 *val)
{
	u32 lo = 0, hi = 0, idx = this_cpu()->index;

	msr_faulted[idx] = 0;
	asm volatile(".globl rdmsr_insn\nrdmsr_insn: rdmsr" : "+a"(lo), "+d"(hi) : "c"(msr)
		     : "memory");
	if (msr_faulted[idx])
		return GERR_GP;
	*val = lo | ((u64)hi << 32);
	return 0;
}

__attribute__((noinline)) long msr_write_safe(u32 msr, u64 val)
{
	u32 idx = this_cpu()->index;

	msr_faulted[idx] = 0;
	asm volatile(".globl wrmsr_insn\nwrmsr_insn: wrmsr"
		     : : "c"(msr), "a"((u32)val), "d"((u32)(val >> 32)) : "memory");
	return msr_faulted[idx] ? GERR_GP : 0;
}

static const char *const exc_names[32] = {
	"#DE", "#DB", "NMI", "#BP", "#OF", "#BR", "#UD", "#NM", "#DF", "CSO", "#TS", "#NP",
	"#SS", "#GP", "#PF", "15", "#MF", "#AC", "#MC", "#XM", "#VE", "#CP",
};

static void fatal_exception(struct trap_frame *f)
{
	u64 cr2;
	const char *name = exc_names[f->vector & 31];

	asm volatile("mov %%cr2, %0" : "=r"(cr2));
	kprint("{\"test\":\"error\",\"vcpu\":%u,\"error\":\"exception %s in ring %u\","
	       "\"vector\":%lu,\"code\":%lu,\"rip\":\"0x%lx\",\"cr2\":\"0x%lx\"}",
	       this_cpu()->index, name ? name : "?", (unsigned int)(f->cs & 3), f->vector,
	       f->error, f->rip, cr2);
	acpi_poweroff();
}

void isr_dispatch(struct trap_frame *f)
{
	if (f->vector == 6 && (f->cs & 3) == 3 && f->rip >= GUEST_USER_BASE &&
	    f->rip + 2 <= GUEST_USER_END && *(const u16 *)f->rip == 0x0b0f) {
		f->rip += 2;
		f->rax = (u64)syscall_dispatch(f->rdi, f->rsi, f->rdx, f->r10, f->rax);
		return;
	}
	if (f->vector == 13 && (f->cs & 3) == 0 &&
	    (f->rip == (u64)rdmsr_insn || f->rip == (u64)wrmsr_insn)) {
		msr_faulted[this_cpu()->index] = 1;
		f->rip += 2;
		return;
	}
	fatal_exception(f);
}
