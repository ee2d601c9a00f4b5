/*
 * Thread context switch on riscv64 (see include/grace/arch.h). arch_switch_to()
 * (context.c, then riscv_switch_to in switch.S) pushes ra, s0-s11 and the
 * user-access bit sstatus.SUM on the running thread's stack, keeps sp in prev->sp,
 * and pops next's from its stack. trap_depth, trap_regs and stack_top are the
 * per-thread half of the hart's trap state (hart.h), which the hart's struct only
 * holds for the thread running there. A thread that has entered user mode also
 * owns the floating-point registers: fp is their copy while it is switched out.
 *
 * tp is never saved or restored here: in the kernel it is this CPU's per-CPU base,
 * and a thread that last ran on another CPU must come back with this CPU's (the
 * user's tp lives in the trap frame). The ARCH_CTX_* and FP_STATE_* offsets are
 * for the assembly; context.c checks them at compile time.
 */
#ifndef ASM_SWITCH_H
#define ASM_SWITCH_H

#define ARCH_CTX_SP 0
#define ARCH_CTX_TRAP_DEPTH 8
#define ARCH_CTX_TRAP_REGS 16
#define ARCH_CTX_STACK_TOP 24

/* The frame arch_switch_to() leaves on a switched-out stack: 14 words, 16-byte aligned. */
#define SWITCH_FRAME_RA 0
#define SWITCH_FRAME_S(n) (8 + (n)*8) /* s0..s11 */
#define SWITCH_FRAME_SSTATUS 104      /* only the SUM bit */
#define SWITCH_FRAME_SIZE 112

/* struct riscv_fp_state: f0-f31, then fcsr. */
#define FP_STATE_F(n) ((n)*8)
#define FP_STATE_FCSR (32 * 8)

#ifndef __ASSEMBLY__
#include <grace/types.h>

struct regs;

/* The F and D extensions' registers, as a user thread left them. */
struct riscv_fp_state {
	u64 f[32];
	u32 fcsr;
};

struct arch_context {
	uintptr_t sp;		  /* the switch frame on this thread's stack, while switched out */
	unsigned long trap_depth; /* hart->trap_depth while switched out: traps it sits in */
	struct regs *trap_regs;	  /* hart->trap_regs while switched out: its innermost frame */
	uintptr_t stack_top;	  /* its stack's top, 16-byte aligned; 0 for a CPU's boot stack */
	struct riscv_fp_state fp; /* its FP registers while switched out, if user */
	bool user;		  /* has called arch_enter_user(): owns fp and a user frame */
};

void arch_context_init(struct arch_context *ctx, uintptr_t stack_top, void (*entry)(void));
void arch_switch_to(struct arch_context *prev, struct arch_context *next);
#endif

#endif
