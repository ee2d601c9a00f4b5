/*
 * x86_switch_stack(prev = rdi, next = rsi), called by arch_switch_to() (context.c)
 * with interrupts off, once the state beside the stack has been swapped. The
 * caller saved every caller-saved register it still needs, so the thread's state
 * is the callee-saved ones and the return address the call pushed: push them,
 * swap stacks, pop next's, return into next. rbp goes first, so a switched-out
 * stack reads [sp + 40] = rbp, [sp + 48] = return address: a frame record a
 * backtrace of the sleeping thread can start from. Flags are not saved: IF is off
 * on both sides, DF is clear throughout the kernel, and AC (SMAP's window) is set
 * only inside the user-copy routines, which reach a switch only through a trap,
 * whose entry clears it.
 */
#include <asm/switch.h>

	.section .text
	.globl x86_switch_stack
x86_switch_stack:
	pushq %rbp
	pushq %rbx
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	movq %rsp, ARCH_CTX_SP(%rdi)
	movq ARCH_CTX_SP(%rsi), %rsp
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %rbx
	popq %rbp
	ret
