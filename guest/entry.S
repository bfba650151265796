/* Placeholder PVH entry: prints "ok" on COM1 and halts. Replaced by the real guest. */
	.section .note.pvh, "a"
	.balign 4
	.long 4, 4, 18		/* namesz, descsz, XEN_ELFNOTE_PHYS32_ENTRY */
	.asciz "Xen"
	.long pvh_start
	.text
	.code32
	.globl pvh_start
pvh_start:
	mov $0x3f8, %dx
	mov $'o', %al
	out %al, %dx
	mov $'k', %al
	out %al, %dx
1:	hlt
	jmp 1b
	.section .note.GNU-stack,"",@progbits
