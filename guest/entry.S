/* SPDX-License-Identifier: MIT */
/*
 * Test guest entry code: the PVH entry (32-bit protected mode, paging off,
 * EBX = hvm_start_info), the switch to long mode on static page tables, the
 * AP real-mode trampoline, interrupt stubs (syscalls arrive as #UD, see
 * trap.c) and the HLT window that the timer interrupt skips (so a wakeup is
 * never lost).
 *
 * Guest ring 0 is emulated on PVM hosts (~0.5-1 us per instruction), so the
 * page tables are built by the assembler, not by loops at run time.
 */
#define KERNEL_CS	0x08
#define KERNEL_DS	0x10
#define USER_DS		0x1b
#define USER_CS		0x23
#define USER_RFLAGS	0x3202		/* IF, IOPL=3 (PVM needs the TSS bitmap too), bit 1 */
#define MSR_EFER	0xc0000080
#define EFER_LME_SCE	0x101
#define TRAMP		0x8000
#define KSTACK_TOP0	0x802000	/* GUEST_KSTACKS + KSTACK_SYSCALL_TOP */
#define STACK_SHIFT	14		/* GUEST_STACK_SIZE = 16 KiB */
#define LAPIC_ID_REG	0xfee00020
#define LAPIC_EOI_REG	0xfee000b0
#define PERCPU_TIMER_FIRED 24		/* offsetof(struct percpu, timer_fired) */

/* ---- PVH ELF note: XEN_ELFNOTE_PHYS32_ENTRY ---- */
	.section .note.pvh, "a", @note
	.balign 4
	.long 4, 4, 18
	.asciz "Xen"
	.balign 4
	.long pvh_start

/* ---- Static page tables: identity map, 2 MiB pages ---- */
	.section .data.pagetables, "aw"
	.balign 4096
	.globl pml4, pd_low
pml4:
	.quad pdpt + 0x7		/* P, RW, US: leaves decide */
	.fill 511, 8, 0
pdpt:
	.quad pd_low + 0x7
	.quad 0, 0
	.quad pd_hole + 0x7		/* 3-4 GiB: the MMIO hole */
	.fill 508, 8, 0
pd_low:			/* first 16 MiB here; kmain() maps the rest of RAM below 1 GiB */
	.set i, 0
	.rept 8
	.if i >= 1 && i <= 3		/* 0x200000-0x7fffff: user image, stacks */
	.quad (i << 21) | 0x87
	.else
	.quad (i << 21) | 0x83
	.endif
	.set i, i + 1
	.endr
	.fill 504, 8, 0
pd_hole:				/* uncached (PCD|PWT) */
	.set i, 0
	.rept 512
	.if i >= 128 && i < 132		/* CPPC and hint pages: user */
	.quad 0xc0000000 + (i << 21) | 0x9f
	.else
	.quad 0xc0000000 + (i << 21) | 0x9b
	.endif
	.set i, i + 1
	.endr

/* ---- GDT: 0x08 kernel code, 0x10 kernel data, 0x18 user data, 0x20 user code,
 *      0x28 + 16 * cpu: 64-bit TSS descriptors, filled at boot ---- */
	.data
	.balign 16
	.globl gdt, gdt_desc
gdt:
	.quad 0
	.quad 0x00af9a000000ffff
	.quad 0x00cf92000000ffff
	.quad 0x00cff2000000ffff
	.quad 0x00affa000000ffff
	.fill 2 * 255, 8, 0		/* GUEST_MAX_CPUS */
gdt_end:
gdt_desc:
	.word gdt_end - gdt - 1
	.quad gdt

	.globl boot_start_info, boot_tsc
boot_start_info:
	.quad 0
boot_tsc:
	.quad 0

/* ---- BSP entry ---- */
	.text
	.code32
	.globl pvh_start
pvh_start:
	cli
	mov %ebx, boot_start_info
	rdtsc				/* for the boot line's boot_us */
	mov %eax, boot_tsc
	mov %edx, boot_tsc + 4
	lgdt gdt_desc
	mov %cr4, %eax
	or $0x20, %eax			/* PAE */
	mov %eax, %cr4
	mov $pml4, %eax
	mov %eax, %cr3
	mov $MSR_EFER, %ecx
	rdmsr
	or $EFER_LME_SCE, %eax
	wrmsr
	mov %cr0, %eax
	or $0x80000001, %eax		/* PG, PE */
	mov %eax, %cr0
	ljmp $KERNEL_CS, $long_entry

	.code64
long_entry:
	mov $KERNEL_DS, %eax
	mov %eax, %ss
	xor %eax, %eax			/* null data selectors: an IRETQ to ring 3 */
	mov %eax, %ds			/* must not reset the GS base we set later */
	mov %eax, %es
	mov %eax, %fs
	mov %eax, %gs
	mov $KSTACK_TOP0, %rsp
	call kmain
1:	hlt
	jmp 1b

/*
 * ---- AP entry in long mode, reached from the trampoline ----
 * APs start together, so each finds its CPU index (and so its stack) from
 * its own LAPIC id through apic_to_cpu[], which the BSP filled.
 */
	.globl ap_entry64
ap_entry64:
	lgdt gdt_desc
	mov $KERNEL_DS, %eax
	mov %eax, %ss
	xor %eax, %eax
	mov %eax, %ds
	mov %eax, %es
	mov %eax, %fs
	mov %eax, %gs
	mov $LAPIC_ID_REG, %ebx
	mov (%rbx), %eax
	shr $24, %eax
	movzbl apic_to_cpu(%rax), %edi
	mov %edi, %eax
	shl $STACK_SHIFT, %rax
	add $KSTACK_TOP0, %rax
	mov %rax, %rsp
	pushq $KERNEL_CS
	lea 1f(%rip), %rax
	push %rax
	lretq
1:	call ap_main			/* ap_main(cpu index in edi) */
2:	hlt
	jmp 2b

/* ---- AP trampoline: copied to TRAMP (0x8000), started by SIPI vector 8 ---- */
	.section .rodata.trampoline, "a"
	.globl tramp_start, tramp_end
	.code16
tramp_start:
	cli
	mov %cs, %ax
	mov %ax, %ds
	lgdtl tramp_gdt_desc - tramp_start
	mov %cr0, %eax
	or $1, %eax
	mov %eax, %cr0
	ljmpl $0x08, $(tramp32 - tramp_start + TRAMP)
	.code32
tramp32:
	mov $0x10, %ax
	mov %ax, %ds
	mov %ax, %es
	mov %ax, %ss
	mov %cr4, %eax
	or $0x20, %eax
	mov %eax, %cr4
	mov $pml4, %eax
	mov %eax, %cr3
	mov $MSR_EFER, %ecx
	rdmsr
	or $EFER_LME_SCE, %eax
	wrmsr
	mov %cr0, %eax
	or $0x80000001, %eax
	mov %eax, %cr0
	ljmp $0x18, $(tramp64 - tramp_start + TRAMP)
	.code64
tramp64:
	mov $ap_entry64, %eax
	jmp *%rax
	.balign 8
tramp_gdt:
	.quad 0
	.quad 0x00cf9a000000ffff	/* 0x08: 32-bit code */
	.quad 0x00cf92000000ffff	/* 0x10: data */
	.quad 0x00af9a000000ffff	/* 0x18: 64-bit code */
tramp_gdt_desc:
	.word 31
	.long tramp_gdt - tramp_start + TRAMP
tramp_end:


/* ---- Entering ring 3: enter_user(rip, rsp, arg) ---- */
	.text
	.globl enter_user
enter_user:
	pushq $USER_DS
	push %rsi
	pushq $USER_RFLAGS
	pushq $USER_CS
	push %rdi
	mov %rdx, %rdi
	xor %esi, %esi
	xor %edx, %edx
	iretq

/* ---- Interrupt and exception stubs: isr_dispatch(struct trap_frame *) ---- */
	.macro ISR_NOERR vec
	.balign 16
isr_\vec:
	pushq $0
	pushq $\vec
	jmp isr_common
	.endm
	.macro ISR_ERR vec
	.balign 16
isr_\vec:
	pushq $\vec
	jmp isr_common
	.endm

	.irp v, 0,1,2,3,4,5,6,7,9,15,16,18,19,20,22,23,24,25,26,27,28,31
	ISR_NOERR \v
	.endr
	.irp v, 8,10,11,12,13,14,17,21,29,30
	ISR_ERR \v
	.endr

isr_common:
	cld				/* ring 3 may have left DF set (rep outsb) */
	push %rax
	push %rcx
	push %rdx
	push %rsi
	push %rdi
	push %r8
	push %r9
	push %r10
	push %r11
	mov %rsp, %rdi
	call isr_dispatch
	pop %r11
	pop %r10
	pop %r9
	pop %r8
	pop %rdi
	pop %rsi
	pop %rdx
	pop %rcx
	pop %rax
	add $16, %rsp
	iretq

	.globl isr_spurious
	.balign 16
isr_spurious:
	iretq

/*
 * The timer (0x20) and wake (0x21) interrupts, in assembly because they sit
 * on every wakeup path and each emulated instruction costs about 1 us: mark
 * the timer fired (timer only), EOI, and if the interrupt hit idle_wait()
 * between its test and its HLT, return past the HLT.
 */
	.balign 16
isr_32:
	movl $1, %gs:PERCPU_TIMER_FIRED
isr_33:
	push %rax
	mov $LAPIC_EOI_REG, %eax
	movl $0, (%rax)
	mov 8(%rsp), %rax		/* interrupted RIP */
	cmp $idle_window_start, %rax
	jb 1f
	cmp $idle_window_end, %rax
	jae 1f
	movq $idle_window_end, 8(%rsp)
1:	pop %rax
	iretq

	.section .rodata
	.balign 8
	.globl isr_table
isr_table:				/* vectors 0..33 */
	.irp v, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33
	.quad isr_\v
	.endr

/*
 * idle_wait(const volatile u32 *flag): HLT unless *flag is set. An interrupt
 * that arrives between the test and the HLT finds its return address inside
 * [idle_window_start, idle_window_end) and is sent past the HLT instead.
 */
	.text
	.globl idle_wait, idle_window_start, idle_window_end
idle_wait:
idle_window_start:
	cmpl $0, (%rdi)
	jne 1f
	hlt
idle_window_end:
1:	ret

	.section .note.GNU-stack, "", @progbits
