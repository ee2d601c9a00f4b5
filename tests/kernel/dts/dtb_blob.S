/*
 * One compiled device tree (DTB_PATH) in the test image's read-only data, from
 * DTB_START to DTB_END. The Makefile assembles this once per tree in tests/kernel/dts.
 */
	.section .rodata.test_dtb, "a"
	.balign 8
	.globl	DTB_START
	.globl	DTB_END
DTB_START:
	.incbin	DTB_PATH
DTB_END:
