/*
 * Interrupt and exception entry. Each of the 256 vectors has a 16-byte stub that
 * pushes a zero error code (unless the CPU pushed one for this vector) and the
 * vector number, then jumps to x86_trap_common, which saves the general registers
 * to complete a struct regs (asm/regs.h) and calls x86_trap(regs). All gates are
 * interrupt gates, so handlers run with interrupts off. Handlers run with SMAP's
 * window closed (CLAC) even when the interrupted code had it open in a user copy;
 * iretq restores the interrupted RFLAGS, AC included.
 *
 * The GS base must be the kernel's (this CPU's per-CPU copy) before any C runs.
 * A trap from ring 3 finds the user's there and the kernel's in MSR_KERNEL_GS_BASE:
 * SWAPGS exchanges them on the way in and back on the way out; the saved CS says
 * which way the trap came. That test fails for the IST vectors (NMI, #DF, #MC):
 * they can land in ring 0 between the SYSCALL entry's first instruction and its
 * SWAPGS, or between the exit's SWAPGS and SYSRETQ/IRETQ, with the user's GS base
 * loaded. So those read the GS base itself: a kernel address (negative) is ours,
 * anything else is the user's (Grace never lets user code set one). rbx remembers
 * the decision across the call (callee-saved, and a context switch keeps it too).
 *
 * Also here: x86_ap_entry64, where the AP trampoline lands in the higher half.
 */
#include <asm/regs.h>
#include "processor.h"
#include "smap.inc"

#define VEC_NMI 2
#define VEC_DOUBLE_FAULT 8
#define VEC_MACHINE_CHECK 18

/* Exceptions for which the CPU pushes an error code. */
#define HAS_ERROR_CODE(v) ((v) == 8 || ((v) >= 10 && (v) <= 14) || (v) == 17 || (v) == 21 || (v) == 29 || (v) == 30)

	.section .text
	.balign 16
	.globl x86_trap_stubs
x86_trap_stubs:
	.set vec, 0
	.rept 256
	.balign 16
	.if !HAS_ERROR_CODE(vec)
	pushq $0
	.endif
	pushq $vec
	jmp x86_trap_common
	.set vec, vec + 1
	.endr

x86_trap_common:
	pushq %rax
	pushq %rbx
	pushq %rcx
	pushq %rdx
	pushq %rsi
	pushq %rdi
	pushq %rbp
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	pushq %r12
	pushq %r13
	pushq %r14
	pushq %r15
	pushq $-1			/* orig_rax: no system call */
	subq $24, %rsp			/* cr2, fs_base, gs_base: filled by x86_trap for exceptions */
	SMAP_CLAC
	cld
	xorl %ebx, %ebx			/* 1: swapgs back on the way out */
	movq REGS_VECTOR(%rsp), %rax
	cmpq $VEC_NMI, %rax
	je 2f
	cmpq $VEC_DOUBLE_FAULT, %rax
	je 2f
	cmpq $VEC_MACHINE_CHECK, %rax
	je 2f
	testb $3, REGS_CS(%rsp)
	jz 3f
	swapgs
	movl $1, %ebx
	xorl %ebp, %ebp			/* the user's rbp is no frame: end backtraces here */
	jmp 3f
2:	movl $MSR_GS_BASE, %ecx
	rdmsr
	testl %edx, %edx
	js 3f
	swapgs
	movl $1, %ebx
3:	movq %rsp, %rdi
	call x86_trap
	testl %ebx, %ebx
	jz x86_trap_restore

/*
 * Back to ring 3 with the frame at rsp (struct regs), interrupts off, the GS base
 * the kernel's. The SYSCALL path and arch_enter_user() come here too.
 */
	.globl x86_iret_to_user
x86_iret_to_user:
	swapgs
x86_trap_restore:
	addq $REGS_ORIG_RAX + 8, %rsp	/* cr2, fs_base, gs_base, orig_rax */
	popq %r15
	popq %r14
	popq %r13
	popq %r12
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rbp
	popq %rdi
	popq %rsi
	popq %rdx
	popq %rcx
	popq %rbx
	popq %rax
	addq $16, %rsp			/* vector, error code */
	iretq

/*
 * An AP arrives here from the trampoline, in 64-bit mode on the boot page tables.
 * Switch to the kernel's tables, find our logical id from our APIC id, take the
 * stack arch_cpu_start() left for us and enter C. An AP nobody asked for (no id
 * or no stack) stops here with interrupts off and touches nothing.
 */
	.globl x86_ap_entry64
x86_ap_entry64:
	movq x86_kernel_cr3(%rip), %rax
	movq %rax, %cr3
	movl $1, %eax
	cpuid
	shrl $24, %ebx			/* CPUID.1:EBX[31:24] = initial APIC id */
	leaq x86_apic_to_cpu(%rip), %rax
	movzwl (%rax,%rbx,2), %edi
	cmpl $0xffff, %edi		/* NO_CPU in smpboot.c: not an AP we start */
	je 1f
	leaq x86_ap_stack(%rip), %rax
	movq (%rax,%rdi,8), %rsp
	testq %rsp, %rsp
	jz 1f
	xorl %ebp, %ebp			/* ends the frame-pointer chain */
	call x86_ap_main
1:	cli
	hlt
	jmp 1b
