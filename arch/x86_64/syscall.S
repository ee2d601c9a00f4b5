/*
 * The ways between ring 3 and the kernel that no interrupt gate provides.
 *
 * x86_syscall_entry (MSR_LSTAR): the SYSCALL instruction leaves the user's rip in
 * rcx and RFLAGS in r11, loads the kernel CS and SS from MSR_STAR and clears the
 * RFLAGS bits in MSR_SFMASK (IF among them, so nothing interrupts the next few
 * instructions; NMI aside, see entry.S), but does not touch rsp: the entry swaps
 * in the kernel's GS base, parks the user rsp in a per-CPU slot, loads the
 * thread's kernel stack top from another, and pushes the same struct regs an
 * interrupt from ring 3 would have left there (asm/regs.h), with rax also in
 * orig_rax. x86_syscall() runs the call and says how to go back: SYSRETQ, which
 * reloads rip from rcx and RFLAGS from r11 and so can only return what SYSCALL
 * brought (user.c checks), or IRETQ through entry.S's exit, which restores
 * every register from the frame.
 *
 * x86_enter_user: a thread's first way out to ring 3 (arch_enter_user, user.c),
 * on its kernel stack emptied: a frame of zeros but for the user rip and rsp,
 * left by IRETQ. x86_return_to_user: the same with a whole frame given (fork's
 * child, arch_return_to_user).
 */
#include <asm/regs.h>
#include "processor.h"

#define USER_SP %gs:x86_entry_percpu_offset + ENTRY_USER_SP
#define KERNEL_SP %gs:x86_entry_percpu_offset + ENTRY_KERNEL_SP

	.section .text
	.globl x86_syscall_entry
x86_syscall_entry:
	swapgs
	movq %rsp, USER_SP
	movq KERNEL_SP, %rsp
	pushq $USER_DS			/* ss */
	pushq USER_SP			/* rsp */
	pushq %r11			/* rflags */
	pushq $USER_CS			/* cs */
	pushq %rcx			/* rip */
	pushq $0			/* error code */
	pushq $REGS_NO_VECTOR		/* vector */
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
	pushq %rax			/* orig_rax: the system call's number */
	subq $24, %rsp			/* cr2, fs_base, gs_base: not filled for a system call */
	xorl %ebp, %ebp			/* the user's rbp is no frame: end backtraces here */
	movq %rsp, %rdi
	call x86_syscall
	testb %al, %al
	jz x86_iret_to_user
	/* rcx == rip and r11 == rflags in the frame (x86_syscall checked): SYSRETQ can. */
	addq $REGS_ORIG_RAX + 8, %rsp
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
	movq 5 * 8(%rsp), %rsp		/* past vector, error, rip, cs, rflags: the user rsp */
	swapgs
	sysretq

/* x86_enter_user(pc = rdi, sp = rsi, stack_top = rdx), interrupts off: never returns. */
	.globl x86_enter_user
x86_enter_user:
	movq %rdx, %rsp
	pushq $USER_DS			/* ss */
	pushq %rsi			/* rsp */
	pushq $(RFLAGS_IF | RFLAGS_FIXED) /* rflags: interrupts on in ring 3 */
	pushq $USER_CS			/* cs */
	pushq %rdi			/* rip */
	pushq $0			/* error code */
	pushq $REGS_NO_VECTOR		/* vector */
	xorl %eax, %eax
	.rept 15			/* rax ... r15 */
	pushq %rax
	.endr
	pushq $-1			/* orig_rax: no system call */
	.rept 3				/* gs_base, fs_base, cr2 */
	pushq %rax
	.endr
	xorl %ebp, %ebp			/* ends the frame chain: nothing returns here */
	movq %rsp, %rdi
	call x86_exit_to_user
	jmp x86_iret_to_user

/*
 * x86_return_to_user(regs = rdi, stack_top = rsi), interrupts off: never returns.
 * regs may lie on this very stack, in a caller's frame, overlapping the place the
 * frame goes; that place is then above it, so a copy from the last word down
 * (DF set, no stack used meanwhile) moves it whole.
 */
	.globl x86_return_to_user
x86_return_to_user:
	leaq -REGS_SIZE(%rsi), %rdx	/* the frame's place at the top of the stack */
	leaq REGS_SIZE - 8(%rdi), %rsi
	leaq REGS_SIZE - 8(%rdx), %rdi
	movl $REGS_SIZE / 8, %ecx
	std
	rep movsq
	cld
	movq %rdx, %rsp
	xorl %ebp, %ebp
	movq %rsp, %rdi
	call x86_exit_to_user
	jmp x86_iret_to_user
