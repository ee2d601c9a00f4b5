/*
 * The sigreturn trampoline (grace/signal.h: arch_sigreturn_code): the two
 * instructions a signal handler returns to, through the ra its frame gives it,
 * which make the rt_sigreturn system call. Linux's riscv64 vDSO has the same
 * pair. It is only data here: exec copies it into a page of every process, read
 * only and executable, and arch_signal_frame_setup() points ra at that copy.
 * norvc keeps it two 4-byte instructions whatever the kernel's own -march.
 */
#include <asm/unistd.h>

	.section .rodata
	.balign 4
	.globl arch_sigreturn_code
arch_sigreturn_code:
	.option push
	.option norvc
	li	a7, __NR_rt_sigreturn
	ecall
	.option pop
.Lsigreturn_code_end:

	.balign 8
	.globl arch_sigreturn_code_len
arch_sigreturn_code_len:
	.quad	.Lsigreturn_code_end - arch_sigreturn_code
