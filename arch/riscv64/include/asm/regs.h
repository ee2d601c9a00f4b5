/*
 * The trap frame: every general register as the trap found it, the trap CSRs, and
 * a frame record (s0, sepc) at the top so that frame-pointer backtraces walk from
 * the handler through the trap into the interrupted code. orig_a0 is a system
 * call's first argument as the ecall brought it, which its result replaces in a0:
 * restarting the call after a signal needs it back. The assembly in
 * arch/riscv64/trap_entry.S uses the REGS_* offsets; arch/riscv64/trap.c checks
 * them against this struct at compile time.
 */
#ifndef ASM_REGS_H
#define ASM_REGS_H

/* x1..x31 at (n - 1) * 8 */
#define REGS_X(n) (((n)-1) * 8)
#define REGS_SEPC (31 * 8)
#define REGS_SSTATUS (32 * 8)
#define REGS_SCAUSE (33 * 8)
#define REGS_STVAL (34 * 8)
#define REGS_FRAME_FP (38 * 8)
#define REGS_FRAME_RA (39 * 8)
#define REGS_SIZE (40 * 8) /* a multiple of 16: the ABI's stack alignment */

#ifndef __ASSEMBLY__
#include <grace/types.h>

struct regs {
	unsigned long ra, sp, gp, tp;				/* x1-x4 */
	unsigned long t0, t1, t2;				/* x5-x7 */
	unsigned long s0, s1;					/* x8-x9 */
	unsigned long a0, a1, a2, a3, a4, a5, a6, a7;		/* x10-x17 */
	unsigned long s2, s3, s4, s5, s6, s7, s8, s9, s10, s11; /* x18-x27 */
	unsigned long t3, t4, t5, t6;				/* x28-x31 */
	unsigned long sepc, sstatus, scause, stval;
	unsigned long orig_a0;		  /* a system call's a0 at the ecall (trap.c) */
	struct regs *outer;		  /* the trap this one interrupted, if any */
	unsigned long unused;		  /* keeps the size a multiple of 16 */
	unsigned long frame_fp, frame_ra; /* the frame record: s0 and sepc again */
};

static inline uintptr_t regs_pc(const struct regs *r)
{
	return r->sepc;
}

static inline uintptr_t regs_fp(const struct regs *r)
{
	return r->s0;
}
#endif

#endif
