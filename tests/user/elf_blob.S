/*
 * One static ELF program (ELF_PATH) in the test image's read-only data, from
 * ELF_START to ELF_END. The Makefile assembles this once per program the ELF
 * loader's selftests load.
 */
	.section .rodata.test_elf, "a"
	.balign 8
	.globl	ELF_START
	.globl	ELF_END
ELF_START:
	.incbin	ELF_PATH
ELF_END:
