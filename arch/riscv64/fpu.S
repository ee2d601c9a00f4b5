/*
 * Saving and loading a user thread's floating-point registers (f0-f31 and fcsr,
 * struct riscv_fp_state in asm/switch.h). The kernel is built for rv64imac and
 * runs with sstatus.FS Off, so that an FP instruction in the kernel traps instead
 * of silently clobbering a user's registers; these two routines are the only
 * kernel code that touches them, and they open FS just around the access.
 * Opening it as Initial is enough to execute the instructions; the user's own FS
 * value (Clean, Dirty) lives in its trap frame and comes back with sret.
 * Called with interrupts off.
 */
#include <asm/csr.h>
#include <asm/switch.h>

	.option push
	.option arch, +d		/* the kernel's -march has no F or D */

	.section .text.riscv_fp, "ax"
	.balign 4
/* riscv_fp_save(struct riscv_fp_state *fp = a0) */
	.globl riscv_fp_save
riscv_fp_save:
	li	t0, SSTATUS_FS_INITIAL
	csrs	sstatus, t0
	fsd	f0, FP_STATE_F(0)(a0)
	fsd	f1, FP_STATE_F(1)(a0)
	fsd	f2, FP_STATE_F(2)(a0)
	fsd	f3, FP_STATE_F(3)(a0)
	fsd	f4, FP_STATE_F(4)(a0)
	fsd	f5, FP_STATE_F(5)(a0)
	fsd	f6, FP_STATE_F(6)(a0)
	fsd	f7, FP_STATE_F(7)(a0)
	fsd	f8, FP_STATE_F(8)(a0)
	fsd	f9, FP_STATE_F(9)(a0)
	fsd	f10, FP_STATE_F(10)(a0)
	fsd	f11, FP_STATE_F(11)(a0)
	fsd	f12, FP_STATE_F(12)(a0)
	fsd	f13, FP_STATE_F(13)(a0)
	fsd	f14, FP_STATE_F(14)(a0)
	fsd	f15, FP_STATE_F(15)(a0)
	fsd	f16, FP_STATE_F(16)(a0)
	fsd	f17, FP_STATE_F(17)(a0)
	fsd	f18, FP_STATE_F(18)(a0)
	fsd	f19, FP_STATE_F(19)(a0)
	fsd	f20, FP_STATE_F(20)(a0)
	fsd	f21, FP_STATE_F(21)(a0)
	fsd	f22, FP_STATE_F(22)(a0)
	fsd	f23, FP_STATE_F(23)(a0)
	fsd	f24, FP_STATE_F(24)(a0)
	fsd	f25, FP_STATE_F(25)(a0)
	fsd	f26, FP_STATE_F(26)(a0)
	fsd	f27, FP_STATE_F(27)(a0)
	fsd	f28, FP_STATE_F(28)(a0)
	fsd	f29, FP_STATE_F(29)(a0)
	fsd	f30, FP_STATE_F(30)(a0)
	fsd	f31, FP_STATE_F(31)(a0)
	frcsr	t1
	sw	t1, FP_STATE_FCSR(a0)
	li	t0, SSTATUS_FS
	csrc	sstatus, t0
	ret

/* riscv_fp_restore(const struct riscv_fp_state *fp = a0) */
	.globl riscv_fp_restore
riscv_fp_restore:
	li	t0, SSTATUS_FS_INITIAL
	csrs	sstatus, t0
	fld	f0, FP_STATE_F(0)(a0)
	fld	f1, FP_STATE_F(1)(a0)
	fld	f2, FP_STATE_F(2)(a0)
	fld	f3, FP_STATE_F(3)(a0)
	fld	f4, FP_STATE_F(4)(a0)
	fld	f5, FP_STATE_F(5)(a0)
	fld	f6, FP_STATE_F(6)(a0)
	fld	f7, FP_STATE_F(7)(a0)
	fld	f8, FP_STATE_F(8)(a0)
	fld	f9, FP_STATE_F(9)(a0)
	fld	f10, FP_STATE_F(10)(a0)
	fld	f11, FP_STATE_F(11)(a0)
	fld	f12, FP_STATE_F(12)(a0)
	fld	f13, FP_STATE_F(13)(a0)
	fld	f14, FP_STATE_F(14)(a0)
	fld	f15, FP_STATE_F(15)(a0)
	fld	f16, FP_STATE_F(16)(a0)
	fld	f17, FP_STATE_F(17)(a0)
	fld	f18, FP_STATE_F(18)(a0)
	fld	f19, FP_STATE_F(19)(a0)
	fld	f20, FP_STATE_F(20)(a0)
	fld	f21, FP_STATE_F(21)(a0)
	fld	f22, FP_STATE_F(22)(a0)
	fld	f23, FP_STATE_F(23)(a0)
	fld	f24, FP_STATE_F(24)(a0)
	fld	f25, FP_STATE_F(25)(a0)
	fld	f26, FP_STATE_F(26)(a0)
	fld	f27, FP_STATE_F(27)(a0)
	fld	f28, FP_STATE_F(28)(a0)
	fld	f29, FP_STATE_F(29)(a0)
	fld	f30, FP_STATE_F(30)(a0)
	fld	f31, FP_STATE_F(31)(a0)
	lw	t1, FP_STATE_FCSR(a0)
	fscsr	t1
	li	t0, SSTATUS_FS
	csrc	sstatus, t0
	ret

	.option pop
