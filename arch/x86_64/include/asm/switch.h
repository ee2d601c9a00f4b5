/*
 * Thread context switch on x86_64 (see include/grace/arch.h). arch_switch_to()
 * (context.c) swaps the state that belongs to a thread and not to its stack,
 * then x86_switch_stack() (switch.S) pushes the System V callee-saved registers
 * (rbp, rbx, r12-r15) on the running thread's stack above the return address its
 * call pushed, keeps rsp in prev->sp, loads next's and pops the same. The GS base
 * is never saved or loaded: it is this CPU's per-CPU base, whichever thread runs.
 *
 * The state beside the stack: the kernel stack's top, which a trap or a system
 * call from ring 3 lands on (TSS.RSP0 and the SYSCALL entry's per-CPU slot follow
 * the running thread); and, for a thread that has entered user mode, its x87/SSE
 * registers (FXSAVE64's image; the kernel itself is built without them) and its
 * FS base (the user's TLS pointer). Interrupts and exceptions from the kernel run
 * on the thread's own stack (only #DF, NMI and #MC use IST stacks, and those never
 * return to a scheduler), CR2 is read with interrupts still off, RFLAGS.AC is
 * clear outside the user-copy routines and DF is clear by the ABI.
 */
#ifndef ASM_SWITCH_H
#define ASM_SWITCH_H

#define ARCH_CTX_SP 0

#ifndef __ASSEMBLY__
#include <grace/compiler.h>
#include <grace/types.h>

/* The FXSAVE64 image (Intel SDM vol. 1, 10.5.1): x87, MXCSR and XMM0-15. */
struct fxstate {
	u16 fcw, fsw;
	u8 ftw, reserved0;
	u16 fop;
	u64 fip, fdp;
	u32 mxcsr, mxcsr_mask;
	u8 st[8][16];
	u8 xmm[16][16];
	u8 reserved1[96];
} __aligned(16);

_Static_assert(sizeof(struct fxstate) == 512, "FXSAVE64 writes 512 bytes");

struct arch_context {
	uintptr_t sp;	     /* the switch frame on this thread's stack, while switched out */
	uintptr_t stack_top; /* its kernel stack's top (0: a CPU's boot/idle context) */
	bool user;	     /* entered user mode: fs_base and fx are its own */
	uintptr_t fs_base;   /* its user TLS pointer: MSR_FS_BASE whenever it runs */
	struct fxstate fx;   /* its x87/SSE registers, while switched out */
};

void arch_context_init(struct arch_context *ctx, uintptr_t stack_top, void (*entry)(void));
void arch_switch_to(struct arch_context *prev, struct arch_context *next);
#endif

#endif
