/*
 * A hart that stops through SBI HSM and goes on where it stopped once another hart
 * starts it again: riscv_hart_stop_resumable(r) saves what the firmware's stop and
 * start do not keep (the SBI spec starts a hart with the MMU off, satp 0, and its
 * other S-mode registers unspecified) in r, a struct riscv_resume in the image, and
 * stops; hart_start(hartid, riscv_resume_entry, the physical address of r) brings it
 * back there: MMU on as secondary_entry turns it on, the registers back, and a
 * return from riscv_hart_stop_resumable() with the struct the start named. That is
 * the start's argument as the hart saw it, so a caller can check it got the right one.
 */
#include <asm/csr.h>
#include "hart.h"
#include "sbi.h"

	.section .text, "ax"
	.balign 4
	.globl riscv_hart_stop_resumable
riscv_hart_stop_resumable:		/* a0 = r, interrupts off */
	csrr	t0, satp
	sd	t0, RESUME_SATP(a0)
	csrr	t0, stvec
	sd	t0, RESUME_STVEC(a0)
	csrr	t0, sscratch
	sd	t0, RESUME_SSCRATCH(a0)
	csrr	t0, sie
	sd	t0, RESUME_SIE(a0)
	csrr	t0, sstatus
	sd	t0, RESUME_SSTATUS(a0)
	sd	ra, RESUME_RA(a0)
	sd	sp, RESUME_SP(a0)
	sd	gp, RESUME_GP(a0)
	sd	tp, RESUME_TP(a0)
	sd	s0, RESUME_S(0)(a0)
	sd	s1, RESUME_S(1)(a0)
	sd	s2, RESUME_S(2)(a0)
	sd	s3, RESUME_S(3)(a0)
	sd	s4, RESUME_S(4)(a0)
	sd	s5, RESUME_S(5)(a0)
	sd	s6, RESUME_S(6)(a0)
	sd	s7, RESUME_S(7)(a0)
	sd	s8, RESUME_S(8)(a0)
	sd	s9, RESUME_S(9)(a0)
	sd	s10, RESUME_S(10)(a0)
	sd	s11, RESUME_S(11)(a0)
	/* Everything above before the stop: the hart that starts us reads none of it. */
	li	a7, SBI_EXT_HSM
	li	a6, SBI_HSM_HART_STOP
	ecall
	li	a0, 0			/* a stop that returns failed */
	ret

/* From hart_start(hartid, here, r's physical address): a0 = hart id, a1 = r, MMU off. */
	.globl riscv_resume_entry
riscv_resume_entry:
	csrw	sie, zero
	lla	t0, kernel_va_pa_offset
	ld	t2, 0(t0)
	ld	t1, RESUME_SATP(a1)
	lla	t0, 1f
	add	t0, t0, t2
	csrw	stvec, t0
	sfence.vma
	csrw	satp, t1
	.balign 4
1:
	add	a0, a1, t2		/* r is in the image: its virtual address */
	ld	t0, RESUME_STVEC(a0)
	csrw	stvec, t0
	ld	t0, RESUME_SSCRATCH(a0)
	csrw	sscratch, t0
	ld	t0, RESUME_SSTATUS(a0)	/* SIE clear: saved with interrupts off */
	csrw	sstatus, t0
	ld	ra, RESUME_RA(a0)
	ld	sp, RESUME_SP(a0)
	ld	gp, RESUME_GP(a0)
	ld	tp, RESUME_TP(a0)
	ld	s0, RESUME_S(0)(a0)
	ld	s1, RESUME_S(1)(a0)
	ld	s2, RESUME_S(2)(a0)
	ld	s3, RESUME_S(3)(a0)
	ld	s4, RESUME_S(4)(a0)
	ld	s5, RESUME_S(5)(a0)
	ld	s6, RESUME_S(6)(a0)
	ld	s7, RESUME_S(7)(a0)
	ld	s8, RESUME_S(8)(a0)
	ld	s9, RESUME_S(9)(a0)
	ld	s10, RESUME_S(10)(a0)
	ld	s11, RESUME_S(11)(a0)
	ld	t0, RESUME_SIE(a0)
	csrw	sie, t0
	ret				/* from riscv_hart_stop_resumable(), a0 = r */
