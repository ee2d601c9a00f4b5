/*
 * struct riscv_hart: what the arch keeps per logical CPU, found through sscratch.
 *
 * In the kernel, sscratch always holds this CPU's struct riscv_hart (the trap entry
 * swaps it with tp for a few instructions and puts it back). The trap entry uses
 * it to reach the per-CPU base and a safe stack even when tp or sp are garbage;
 * secondary_entry in head.S reads the boot fields with the MMU still off. The
 * HART_* offsets are for assembly; smp.c checks them at compile time.
 *
 * Most fields belong to the hart. trap_depth, trap_regs and kstack_top belong to
 * the thread running on it: a thread can be switched out inside a trap (preempted
 * on interrupt return, or blocking in a fault handler) and take that trap's exit
 * on another hart, so arch_switch_to() (switch.S) swaps them with the threads'
 * struct arch_context; and a trap from user mode finds no kernel stack in sp, so
 * the entry takes the running thread's from kstack_top. The scratch slots are
 * only live inside the trap entry, with interrupts off, so they stay per hart.
 */
#ifndef RISCV_HART_H
#define RISCV_HART_H

#define HART_PERCPU 0
#define HART_SCRATCH_SP 8
#define HART_SCRATCH_T0 16
#define HART_SCRATCH_TP 24
#define HART_TRAP_DEPTH 32
#define HART_EMERGENCY_SP 40
#define HART_SATP 48
#define HART_BOOT_SP 56
#define HART_TRAP_REGS 64
#define HART_HARTID 72
#define HART_KSTACK_TOP 80
#define HART_SIZE 128

/* struct riscv_resume (hart_stop.S), for assembly; smp.c checks them. */
#define RESUME_SATP 0
#define RESUME_STVEC 8
#define RESUME_SSCRATCH 16
#define RESUME_SIE 24
#define RESUME_SSTATUS 32
#define RESUME_RA 40
#define RESUME_SP 48
#define RESUME_GP 56
#define RESUME_TP 64
#define RESUME_S(n) (72 + 8 * (n))
#define RESUME_SIZE 176

/*
 * Trap nesting at which the entry stops trusting sp: a trap while handling a trap
 * is normal (a fault inside an interrupt handler, then die()), a third one means
 * the stack itself is what faults, so each further trap would fault again.
 */
#define TRAP_DEPTH_MAX 3

#ifndef __ASSEMBLY__
#include <grace/compiler.h>
#include <grace/types.h>
#include <asm/csr.h>
#include <asm/regs.h>

struct riscv_hart {
	uintptr_t percpu;	  /* this CPU's per-CPU base: tp in the kernel */
	uintptr_t scratch_sp;	  /* trap entry: the interrupted sp, before it saves it */
	uintptr_t scratch_t0;	  /* trap entry: the interrupted t0 */
	uintptr_t scratch_tp;	  /* trap entry: the interrupted tp */
	unsigned long trap_depth; /* the running thread's kernel-mode traps being handled */
	uintptr_t emergency_sp;	  /* top of a stack for traps past TRAP_DEPTH_MAX */
	u64 satp;		  /* secondary start: page tables to turn on */
	uintptr_t boot_sp;	  /* secondary start: stack top */
	struct regs *trap_regs;	  /* the running thread's innermost trap frame, for the unwinder */
	u32 hartid;
	uintptr_t kstack_top; /* the running thread's kernel stack top: traps from user mode */
} __cacheline_aligned;

/*
 * What a hart that stops keeps for its return (hart_stop.S): the registers a
 * firmware's stop and start do not, and token, the caller's. It must be in the
 * image (static), since the started hart finds it through the image's offset.
 */
struct riscv_resume {
	u64 satp, stvec, sscratch, sie, sstatus;
	u64 ra, sp, gp, tp, s[12];
	u64 token;
};

/*
 * Stop this hart through SBI HSM, interrupts off; it goes on here once some hart
 * starts it at riscv_resume_entry with the physical address of a struct
 * riscv_resume. Returns that struct (r, unless the firmware passed another), or
 * NULL if the stop failed. The timer and the IPIs are as the caller left them.
 */
struct riscv_resume *riscv_hart_stop(struct riscv_resume *r);
extern char riscv_resume_entry[];

extern struct riscv_hart riscv_harts[];
extern const u32 riscv_hart_slots;	   /* riscv_harts[]'s length, for head.S */
extern struct riscv_hart riscv_early_hart; /* the boot hart until it knows its logical id */

static inline struct riscv_hart *this_hart(void)
{
	return (struct riscv_hart *)csr_read(sscratch);
}
#endif

#endif
