/*
 * riscv_switch_to(prev = a0, next = a1), arch_switch_to()'s last step (context.c
 * has dealt with the FP registers), called with interrupts off: the C calling
 * convention already saved every caller-saved register the caller still needs, so
 * only the callee-saved ones (ra, sp, s0-s11) are thread state here, plus:
 *   - sstatus.SUM: a thread may block inside a user-access window (a fault on a
 *     user page that waits); the next thread must not inherit its open window,
 *     and it must get its own back.
 *   - the hart's trap_depth and trap_regs: a thread that is switched out from a
 *     trap handler (preempted on interrupt return, or blocking in a fault) owns
 *     those traps' frames on its stack; the trap exit it eventually takes, maybe
 *     on another hart, decrements the depth of whatever hart it is then on.
 *   - the hart's kstack_top, which only next's stack_top may be: a trap from user
 *     mode builds its frame there.
 * tp is not touched: it is the CPU's per-CPU base, not the thread's.
 */
#include <asm/csr.h>
#include <asm/switch.h>
#include "hart.h"

	.section .text.riscv_switch_to, "ax"
	.balign 4
	.globl riscv_switch_to
riscv_switch_to:
	addi	sp, sp, -SWITCH_FRAME_SIZE
	sd	ra, SWITCH_FRAME_RA(sp)
	sd	s0, SWITCH_FRAME_S(0)(sp)
	sd	s1, SWITCH_FRAME_S(1)(sp)
	sd	s2, SWITCH_FRAME_S(2)(sp)
	sd	s3, SWITCH_FRAME_S(3)(sp)
	sd	s4, SWITCH_FRAME_S(4)(sp)
	sd	s5, SWITCH_FRAME_S(5)(sp)
	sd	s6, SWITCH_FRAME_S(6)(sp)
	sd	s7, SWITCH_FRAME_S(7)(sp)
	sd	s8, SWITCH_FRAME_S(8)(sp)
	sd	s9, SWITCH_FRAME_S(9)(sp)
	sd	s10, SWITCH_FRAME_S(10)(sp)
	sd	s11, SWITCH_FRAME_S(11)(sp)
	li	t1, SSTATUS_SUM
	csrr	t0, sstatus
	and	t0, t0, t1
	sd	t0, SWITCH_FRAME_SSTATUS(sp)
	sd	sp, ARCH_CTX_SP(a0)

	csrr	t2, sscratch			/* this hart's struct riscv_hart */
	ld	t0, HART_TRAP_DEPTH(t2)
	sd	t0, ARCH_CTX_TRAP_DEPTH(a0)
	ld	t0, HART_TRAP_REGS(t2)
	sd	t0, ARCH_CTX_TRAP_REGS(a0)
	ld	t0, ARCH_CTX_TRAP_DEPTH(a1)
	sd	t0, HART_TRAP_DEPTH(t2)
	ld	t0, ARCH_CTX_TRAP_REGS(a1)
	sd	t0, HART_TRAP_REGS(t2)
	ld	t0, ARCH_CTX_STACK_TOP(a1)
	sd	t0, HART_KSTACK_TOP(t2)

	ld	sp, ARCH_CTX_SP(a1)
	ld	t0, SWITCH_FRAME_SSTATUS(sp)
	csrc	sstatus, t1
	csrs	sstatus, t0
	ld	ra, SWITCH_FRAME_RA(sp)
	ld	s0, SWITCH_FRAME_S(0)(sp)
	ld	s1, SWITCH_FRAME_S(1)(sp)
	ld	s2, SWITCH_FRAME_S(2)(sp)
	ld	s3, SWITCH_FRAME_S(3)(sp)
	ld	s4, SWITCH_FRAME_S(4)(sp)
	ld	s5, SWITCH_FRAME_S(5)(sp)
	ld	s6, SWITCH_FRAME_S(6)(sp)
	ld	s7, SWITCH_FRAME_S(7)(sp)
	ld	s8, SWITCH_FRAME_S(8)(sp)
	ld	s9, SWITCH_FRAME_S(9)(sp)
	ld	s10, SWITCH_FRAME_S(10)(sp)
	ld	s11, SWITCH_FRAME_S(11)(sp)
	addi	sp, sp, SWITCH_FRAME_SIZE
	ret

/*
 * A new thread's first riscv_switch_to() returns here (context.c put this in its
 * frame's ra, and entry in s1), with sp at the top of its stack. Call entry with
 * ra = 0 and s0 = 0 (from the frame): entry's own frame record then ends the
 * backtrace, since arch_unwind() stops at a zero frame pointer and a return
 * address outside the kernel text.
 */
	.globl riscv_thread_start
riscv_thread_start:
	li	ra, 0
	jr	s1
