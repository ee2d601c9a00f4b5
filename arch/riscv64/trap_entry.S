/*
 * The one S-mode trap vector (stvec, direct mode): exceptions and interrupts alike,
 * from the kernel and from user mode.
 *
 * sscratch always holds this hart's struct riscv_hart, so the entry swaps tp with
 * it to reach the hart without trusting any register and parks the registers it
 * needs there. A trap from user mode (sstatus.SPP clear) brings the user's sp:
 * the frame goes at the top of the running thread's kernel stack (hart
 * kstack_top), which is empty while the thread runs in user mode, and the
 * nesting count is 0, as in a kernel thread outside any trap. A trap from the
 * kernel interrupted a kernel stack, unless that stack is the very thing that
 * broke: the entry counts the nesting, and past TRAP_DEPTH_MAX (a fault while
 * saving to a bad stack faults again, forever) switches to the hart's emergency
 * stack. Either way it saves every register in a struct regs, loads the
 * per-CPU base into tp, turns off user access (SUM) and the FPU (FS) for the
 * kernel, and calls trap_handler(regs).
 *
 * On the way out the whole saved sstatus comes back, so the interrupted code
 * keeps its own SPP/SPIE, its user-access window and, for user mode, its FPU
 * state; every register but tp comes back from the frame. tp is the user's
 * thread pointer from the frame on a return to user mode, and otherwise the
 * per-CPU base of the hart the thread is on by then (the handler may have
 * switched threads and migrated it). arch_enter_user() and arch_return_to_user()
 * leave through the same exit (riscv_enter_user, riscv_return_to_user below).
 */
#include <asm/csr.h>
#include <asm/regs.h>
#include "hart.h"

	.section .text.trap_entry, "ax"
	.balign 4
	.globl trap_entry
trap_entry:
	csrrw	tp, sscratch, tp		/* tp = struct riscv_hart, sscratch = interrupted tp */
	sd	t0, HART_SCRATCH_T0(tp)
	sd	sp, HART_SCRATCH_SP(tp)
	csrr	t0, sscratch
	sd	t0, HART_SCRATCH_TP(tp)
	/*
	 * sscratch holds the hart again before the first store that can fault (to
	 * the stack), so a nested trap finds it. Such a trap reuses the scratch slots;
	 * that is fine while a fault in here is always fatal.
	 */
	csrw	sscratch, tp
	csrr	t0, sstatus
	andi	t0, t0, SSTATUS_SPP
	bnez	t0, 1f
	/*
	 * From user mode: on the thread's empty kernel stack, which is known good,
	 * so this trap does not count as nesting. Its handler runs at depth 0, as a
	 * kernel thread's code does, and the traps it takes count from there.
	 */
	sd	zero, HART_TRAP_DEPTH(tp)
	ld	sp, HART_KSTACK_TOP(tp)
	j	2f
1:
	ld	t0, HART_TRAP_DEPTH(tp)
	addi	t0, t0, 1
	sd	t0, HART_TRAP_DEPTH(tp)
	addi	t0, t0, -TRAP_DEPTH_MAX
	bltz	t0, 2f
	ld	sp, HART_EMERGENCY_SP(tp)	/* nested too deep: do not trust sp */
2:
	andi	sp, sp, -16
	addi	sp, sp, -REGS_SIZE
	sd	x1, REGS_X(1)(sp)
	sd	x3, REGS_X(3)(sp)
	sd	x6, REGS_X(6)(sp)
	sd	x7, REGS_X(7)(sp)
	sd	x8, REGS_X(8)(sp)
	sd	x9, REGS_X(9)(sp)
	sd	x10, REGS_X(10)(sp)
	sd	x11, REGS_X(11)(sp)
	sd	x12, REGS_X(12)(sp)
	sd	x13, REGS_X(13)(sp)
	sd	x14, REGS_X(14)(sp)
	sd	x15, REGS_X(15)(sp)
	sd	x16, REGS_X(16)(sp)
	sd	x17, REGS_X(17)(sp)
	sd	x18, REGS_X(18)(sp)
	sd	x19, REGS_X(19)(sp)
	sd	x20, REGS_X(20)(sp)
	sd	x21, REGS_X(21)(sp)
	sd	x22, REGS_X(22)(sp)
	sd	x23, REGS_X(23)(sp)
	sd	x24, REGS_X(24)(sp)
	sd	x25, REGS_X(25)(sp)
	sd	x26, REGS_X(26)(sp)
	sd	x27, REGS_X(27)(sp)
	sd	x28, REGS_X(28)(sp)
	sd	x29, REGS_X(29)(sp)
	sd	x30, REGS_X(30)(sp)
	sd	x31, REGS_X(31)(sp)
	ld	t0, HART_SCRATCH_SP(tp)
	sd	t0, REGS_X(2)(sp)
	ld	t0, HART_SCRATCH_T0(tp)
	sd	t0, REGS_X(5)(sp)
	ld	t0, HART_SCRATCH_TP(tp)
	sd	t0, REGS_X(4)(sp)

	csrr	t0, sepc
	sd	t0, REGS_SEPC(sp)
	sd	t0, REGS_FRAME_RA(sp)
	sd	s0, REGS_FRAME_FP(sp)
	addi	s0, sp, REGS_SIZE		/* frame record just below s0: backtraces cross the trap */
	csrr	t0, sstatus
	sd	t0, REGS_SSTATUS(sp)
	/*
	 * The handler runs without user access (sstatus.SUM) even when the
	 * interrupted code had it open, and with the FPU off even when user mode
	 * had it on (the user's FS stays in the frame, for arch_switch_to() and
	 * sret); the sstatus restore below brings both back.
	 */
	li	t0, SSTATUS_SUM | SSTATUS_FS
	csrc	sstatus, t0
	csrr	t0, scause
	sd	t0, REGS_SCAUSE(sp)
	csrr	t0, stval
	sd	t0, REGS_STVAL(sp)

	ld	tp, HART_PERCPU(tp)
	mv	a0, sp
	call	trap_handler

	/*
	 * The exit, with sp at the frame. Interrupts are off from here to the sret,
	 * so this thread stays on this hart: but it may not be the hart it trapped
	 * on. A thread switched out inside the handler (sched_irq_return(), or
	 * blocking in a fault) can resume anywhere, and arch_switch_to() brought its
	 * trap depth to this hart. For the same reason a return to the kernel takes
	 * tp from this hart, not from the frame: the per-CPU base belongs to the
	 * CPU, and the frame's tp is the old CPU's. A return to user mode leaves
	 * every trap (depth 0, as its handler ran) and takes the user's tp from
	 * the frame.
	 */
trap_exit:
	csrr	t0, sscratch
	ld	t1, REGS_SSTATUS(sp)
	andi	t1, t1, SSTATUS_SPP
	beqz	t1, 1f
	ld	t1, HART_TRAP_DEPTH(t0)
	addi	t1, t1, -1
	sd	t1, HART_TRAP_DEPTH(t0)
	ld	tp, HART_PERCPU(t0)
	j	2f
1:
	sd	zero, HART_TRAP_DEPTH(t0)
	ld	tp, REGS_X(4)(sp)
2:
	/* sstatus as saved: SIE clear, so nothing interrupts the restore; sret sets SIE = SPIE. */
	ld	t0, REGS_SSTATUS(sp)
	csrw	sstatus, t0
	ld	t0, REGS_SEPC(sp)
	csrw	sepc, t0
	ld	x1, REGS_X(1)(sp)
	ld	x3, REGS_X(3)(sp)		/* then not x4: tp was loaded above */
	ld	x5, REGS_X(5)(sp)
	ld	x6, REGS_X(6)(sp)
	ld	x7, REGS_X(7)(sp)
	ld	x8, REGS_X(8)(sp)
	ld	x9, REGS_X(9)(sp)
	ld	x10, REGS_X(10)(sp)
	ld	x11, REGS_X(11)(sp)
	ld	x12, REGS_X(12)(sp)
	ld	x13, REGS_X(13)(sp)
	ld	x14, REGS_X(14)(sp)
	ld	x15, REGS_X(15)(sp)
	ld	x16, REGS_X(16)(sp)
	ld	x17, REGS_X(17)(sp)
	ld	x18, REGS_X(18)(sp)
	ld	x19, REGS_X(19)(sp)
	ld	x20, REGS_X(20)(sp)
	ld	x21, REGS_X(21)(sp)
	ld	x22, REGS_X(22)(sp)
	ld	x23, REGS_X(23)(sp)
	ld	x24, REGS_X(24)(sp)
	ld	x25, REGS_X(25)(sp)
	ld	x26, REGS_X(26)(sp)
	ld	x27, REGS_X(27)(sp)
	ld	x28, REGS_X(28)(sp)
	ld	x29, REGS_X(29)(sp)
	ld	x30, REGS_X(30)(sp)
	ld	x31, REGS_X(31)(sp)
	ld	x2, REGS_X(2)(sp)
	sret

/*
 * riscv_enter_user(pc = a0, sp = a1, sstatus = a2, frame = a3), interrupts off:
 * arch_enter_user()'s way to user mode. The frame is where a trap from user mode
 * would have put it, at the top of this thread's kernel stack, so the C frames
 * that called this lie inside it: move sp first, then zero it (every user
 * register but pc and sp starts as zero) and take the trap exit.
 */
	.globl riscv_enter_user
riscv_enter_user:
	mv	sp, a3
	addi	t0, sp, REGS_SIZE
1:
	addi	t0, t0, -8
	sd	zero, 0(t0)
	bne	t0, sp, 1b
	sd	a0, REGS_SEPC(sp)
	sd	a1, REGS_X(2)(sp)
	sd	a2, REGS_SSTATUS(sp)
	j	trap_exit

/*
 * riscv_return_to_user(src = a0, sstatus = a1, frame = a2), interrupts off:
 * arch_return_to_user()'s way to user mode, with the registers *src holds. As
 * above the frame may cover the caller's frames, and src may lie in them, the
 * two overlapping: copy without a stack, in the direction that reads each word
 * of src before it is overwritten, then move sp to the frame.
 */
	.globl riscv_return_to_user
riscv_return_to_user:
	li	t0, 0
	li	t1, REGS_SIZE
	bgeu	a0, a2, 2f
	/* src below frame: from the top down */
1:
	addi	t1, t1, -8
	add	t2, a0, t1
	ld	t3, 0(t2)
	add	t2, a2, t1
	sd	t3, 0(t2)
	bnez	t1, 1b
	j	3f
	/* src at or above frame: from the bottom up */
2:
	add	t2, a0, t0
	ld	t3, 0(t2)
	add	t2, a2, t0
	sd	t3, 0(t2)
	addi	t0, t0, 8
	bne	t0, t1, 2b
3:
	mv	sp, a2
	sd	a1, REGS_SSTATUS(sp)
	j	trap_exit
	.globl trap_entry_end
trap_entry_end:
