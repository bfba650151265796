/* The test guest, embedded so that `capvisor run` works with no --kernel. */
	.section .rodata
	.balign 16
	.globl capvisor_guest_elf
	.globl capvisor_guest_elf_end
capvisor_guest_elf:
	.incbin GUEST_ELF_PATH
capvisor_guest_elf_end:
	.section .note.GNU-stack,"",@progbits
