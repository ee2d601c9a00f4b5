/*
 * The firmware's entry from QEMU's reset vector, its trap vector, and the way into
 * S-mode. QEMU's -bios none starts every hart here, at RAM start, in M-mode, with
 * a0 = hart id and a1 = the device tree's physical address.
 *
 * Each hart sets up its own M-mode CSRs (they are per hart): PMP, delegation,
 * counter access and, when the hart has Sstc, menvcfg.STCE. The first hart to swap
 * mfw_boot_claimed from 0 becomes the boot hart: one amoswap, so every other hart
 * knows at once that it is not, and none is lost. The boot hart clears bss, reads
 * the tree (boot.c) and sets mfw_ready; the others sleep in wfi until then (their
 * MSIP wakes them), touching no memory but mfw_ready, since bss is not clear yet.
 */
#include "mfw.h"

#define PMPCFG_NAPOT (3 << 3)
#define PMPCFG_RWX 7
/* Entry 0: the firmware's 2 MiB, NAPOT, no permission for S and U (M is not bound). */
#define PMPADDR_FW ((0x80000000 | (MFW_REGION_SIZE / 2 - 1)) >> 2)
/*
 * medeleg: every exception S-mode can handle goes straight to it: misaligned
 * accesses, access faults, illegal instructions (QEMU implements every CSR Grace
 * reads: time through mcounteren.TM, stimecmp with Sstc), breakpoints, user ecalls,
 * page faults. Kept: ecall from S (bit 9), the SBI itself.
 */
#define MEDELEG_S ((1 << 0) | (1 << 1) | (1 << 2) | (1 << 3) | (1 << 4) | (1 << 5) | \
		   (1 << 6) | (1 << 7) | (1 << 8) | (1 << 12) | (1 << 13) | (1 << 15))
/* mideleg: the S-level interrupts; M keeps its own software and timer interrupts. */
#define MIDELEG_S (MIP_SSIP | MIP_STIP | MIP_SEIP)

	.section .text.entry, "ax"
	.globl _start
_start:
	csrw	mie, zero
	csrr	s0, mhartid
	mv	s1, a1			/* the device tree */
	li	t0, MFW_MAX_HARTS
	bgeu	s0, t0, park_forever

	/* PMP: S and U get all memory except the firmware's region. */
	li	t0, PMPADDR_FW
	csrw	pmpaddr0, t0
	li	t0, -1
	csrw	pmpaddr1, t0
	li	t0, PMPCFG_NAPOT | ((PMPCFG_NAPOT | PMPCFG_RWX) << 8)
	csrw	pmpcfg0, t0

	li	t0, MEDELEG_S
	csrw	medeleg, t0
	li	t0, MIDELEG_S
	csrw	mideleg, t0
	/* S-mode may read cycle, time and instret (Grace's clock is rdtime). */
	li	t0, -1
	csrw	mcounteren, t0
	/* And decides itself what U-mode may read. */
	csrw	scounteren, zero

	/*
	 * Sstc: a hart without it traps on stimecmp (QEMU lets menvcfg.STCE be set on
	 * every rv64 hart, so that bit proves nothing). With it, menvcfg.STCE hands
	 * stimecmp to S-mode and makes mip.STIP follow it.
	 */
	li	s2, 1
	lla	t0, probe_trap
	csrw	mtvec, t0
	csrr	t1, CSR_STIMECMP	/* no Sstc: probe_trap clears s2 and skips it */
	beqz	s2, 1f
	li	t0, 1
	slli	t0, t0, 63		/* MENVCFG_STCE */
	csrs	CSR_MENVCFG, t0
1:
	lla	t0, mfw_boot_claimed
	li	t1, 1
	amoswap.w.aqrl t1, t1, (t0)
	bnez	t1, secondary

	/* The boot hart. */
	lla	t0, __bss_start
	lla	t1, __bss_end
1:	bgeu	t0, t1, 2f
	sd	zero, 0(t0)
	addi	t0, t0, 8
	j	1b
2:	lla	sp, mfw_boot_stack + MFW_BOOT_STACK_SIZE
	lla	t0, fatal_trap
	csrw	mtvec, t0
	mv	a0, s0
	mv	a1, s1
	call	mfw_boot_main		/* reads the tree; halts if it cannot boot */
	call	hart_setup
	/* Pairs with the fence r,rw of the secondaries: bss and the tables first. */
	fence	rw, w
	lla	t0, mfw_ready
	li	t1, 1
	sw	t1, 0(t0)
	call	mfw_release_secondaries
	mv	a0, s0
	call	mfw_boot_hart_started
	lla	a0, _start
	li	t0, MFW_KERNEL_OFFSET
	add	a0, a0, t0		/* the kernel's Image, at RAM start + text_offset */
	mv	a1, s0
	mv	a2, s1
	j	mfw_enter_smode

	/* The others sleep until the boot hart has the tables ready, then stop (HSM). */
secondary:
	li	t0, MIP_MSIP
	csrw	mie, t0
1:	wfi
	lla	t0, mfw_ready
	lw	t0, 0(t0)
	beqz	t0, 1b
	fence	r, rw
	call	hart_setup
	mv	a0, s0
	call	mfw_secondary_main	/* never returns: hart_start takes it to S-mode */
park_forever:
	csrw	mie, zero
1:	wfi
	j	1b

/* mscratch, sp and mtvec for hart s0, which the tree described; sstc from the probe (s2). */
hart_setup:
	slli	t0, s0, 7		/* sizeof(struct mfw_hart) == 128: sbi.c checks */
	lla	t1, mfw_harts
	add	t0, t0, t1
	csrw	mscratch, t0
	ld	sp, MFW_HART_STACK_TOP(t0)
	beqz	sp, park_forever	/* not described: nothing can start it */
	sb	s2, 17(t0)		/* sstc: sbi.c checks the offset */
	lla	t1, mfw_trap_vector
	csrw	mtvec, t1
	ret

	.balign 4
probe_trap:
	csrr	t1, mepc
	addi	t1, t1, 4
	csrw	mepc, t1
	li	s2, 0			/* the probed CSR is not there */
	mret

	.balign 4
fatal_trap:
	lla	a0, .Lmsg_early_trap
	call	mfw_halt

/*
 * Traps from S-mode (ecall, the M timer and software interrupts): everything saved
 * on this hart's M stack, struct regs order (x1..x31 at 8 * n), and mfw_trap(frame).
 */
	.balign 4
	.globl mfw_trap_vector
mfw_trap_vector:
	csrrw	sp, mscratch, sp	/* sp = this hart's struct, mscratch = trapped sp */
	sd	t0, MFW_HART_SCRATCH(sp)
	mv	t0, sp
	ld	sp, MFW_HART_STACK_TOP(t0)
	addi	sp, sp, -MFW_FRAME_SIZE
	sd	x1, 1 * 8(sp)
	sd	x3, 3 * 8(sp)
	sd	x4, 4 * 8(sp)
	sd	x6, 6 * 8(sp)
	sd	x7, 7 * 8(sp)
	sd	x8, 8 * 8(sp)
	sd	x9, 9 * 8(sp)
	sd	x10, 10 * 8(sp)
	sd	x11, 11 * 8(sp)
	sd	x12, 12 * 8(sp)
	sd	x13, 13 * 8(sp)
	sd	x14, 14 * 8(sp)
	sd	x15, 15 * 8(sp)
	sd	x16, 16 * 8(sp)
	sd	x17, 17 * 8(sp)
	sd	x18, 18 * 8(sp)
	sd	x19, 19 * 8(sp)
	sd	x20, 20 * 8(sp)
	sd	x21, 21 * 8(sp)
	sd	x22, 22 * 8(sp)
	sd	x23, 23 * 8(sp)
	sd	x24, 24 * 8(sp)
	sd	x25, 25 * 8(sp)
	sd	x26, 26 * 8(sp)
	sd	x27, 27 * 8(sp)
	sd	x28, 28 * 8(sp)
	sd	x29, 29 * 8(sp)
	sd	x30, 30 * 8(sp)
	sd	x31, 31 * 8(sp)
	ld	t1, MFW_HART_SCRATCH(t0)
	sd	t1, 5 * 8(sp)		/* the trapped t0 */
	csrrw	t1, mscratch, t0	/* mscratch = this hart's struct again */
	sd	t1, 2 * 8(sp)		/* the trapped sp */
	mv	a0, sp
	call	mfw_trap
	ld	x1, 1 * 8(sp)
	ld	x3, 3 * 8(sp)
	ld	x4, 4 * 8(sp)
	ld	x5, 5 * 8(sp)
	ld	x6, 6 * 8(sp)
	ld	x7, 7 * 8(sp)
	ld	x8, 8 * 8(sp)
	ld	x9, 9 * 8(sp)
	ld	x10, 10 * 8(sp)
	ld	x11, 11 * 8(sp)
	ld	x12, 12 * 8(sp)
	ld	x13, 13 * 8(sp)
	ld	x14, 14 * 8(sp)
	ld	x15, 15 * 8(sp)
	ld	x16, 16 * 8(sp)
	ld	x17, 17 * 8(sp)
	ld	x18, 18 * 8(sp)
	ld	x19, 19 * 8(sp)
	ld	x20, 20 * 8(sp)
	ld	x21, 21 * 8(sp)
	ld	x22, 22 * 8(sp)
	ld	x23, 23 * 8(sp)
	ld	x24, 24 * 8(sp)
	ld	x25, 25 * 8(sp)
	ld	x26, 26 * 8(sp)
	ld	x27, 27 * 8(sp)
	ld	x28, 28 * 8(sp)
	ld	x29, 29 * 8(sp)
	ld	x30, 30 * 8(sp)
	ld	x31, 31 * 8(sp)
	ld	x2, 2 * 8(sp)
	mret

/*
 * mfw_enter_smode(addr, a0, a1): into S-mode at addr, MMU off, S interrupts off, with
 * a0 and a1 as the kernel's entry wants them (hart id, then the DTB or hart_start's
 * opaque argument). Whatever this hart ran before, it starts with no stale
 * translation or instruction.
 */
	.globl mfw_enter_smode
mfw_enter_smode:
	csrw	mepc, a0
	li	t0, MSTATUS_MPP_MASK | MSTATUS_MPIE | 2	/* 2: SIE */
	csrc	mstatus, t0
	li	t0, MSTATUS_MPP_S
	csrs	mstatus, t0
	csrw	satp, zero
	sfence.vma
	fence.i
	mv	a0, a1
	mv	a1, a2
	mret

	.section .rodata
.Lmsg_early_trap:
	.asciz	"trap before the firmware's tables were ready"

	.data
	.balign 4
mfw_boot_claimed:			/* in .data, not .bss: the boot hart clears bss */
	.word	0
	.globl mfw_ready
mfw_ready:
	.word	0

	.bss
	.balign 16
mfw_boot_stack:
	.space	MFW_BOOT_STACK_SIZE
