/*
 * A thread's context. A new thread's first context: at the top of its stack, a
 * switch frame that x86_switch_stack() (switch.S) pops like any other and whose
 * return address is entry, above it a zero return address for entry itself.
 * entry then starts as if called from a function at address 0 with rbp = 0: its
 * frame record (0, 0) ends arch_unwind(), and rsp + 8 is 16-byte aligned, as at
 * any call.
 *
 * arch_switch_to() swaps what belongs to the thread but lives outside its stack
 * (asm/switch.h): where this CPU enters the kernel from ring 3, and a user
 * thread's x87/SSE registers and FS base. Neither side's user state needs more:
 * the GS base is the CPU's, and every other user register is in the trap frame.
 */
#include <grace/compiler.h>
#include <asm/switch.h>
#include "processor.h"
#include "x86_64.h"

BUILD_BUG_ON(offsetof(struct arch_context, sp) != ARCH_CTX_SP);

/* The words x86_switch_stack() pops, lowest first. */
enum {
	FRAME_R15,
	FRAME_R14,
	FRAME_R13,
	FRAME_R12,
	FRAME_RBX,
	FRAME_RBP,
	FRAME_RET,
	FRAME_ENTRY_RET,
	FRAME_WORDS
};

void x86_switch_stack(struct arch_context *prev, struct arch_context *next);

void arch_context_init(struct arch_context *ctx, uintptr_t stack_top, void (*entry)(void))
{
	stack_top &= ~(uintptr_t)15;
	u64 *frame = (u64 *)(stack_top - FRAME_WORDS * sizeof(u64));

	for (unsigned i = 0; i < FRAME_WORDS; i++)
		frame[i] = 0; /* rbp = 0 ends the frame chain */
	frame[FRAME_RET] = (uintptr_t)entry;
	frame[FRAME_ENTRY_RET] = 0;
	ctx->sp = (uintptr_t)frame;
	ctx->stack_top = stack_top;
	ctx->user = false;
	ctx->fs_base = 0;
}

void arch_switch_to(struct arch_context *prev, struct arch_context *next)
{
	if (prev->user)
		x86_fpu_save(&prev->fx);
	if (next->user) {
		x86_fpu_restore(&next->fx);
		wrmsr(MSR_FS_BASE, next->fs_base);
	}
	/* A CPU's idle context never runs in ring 3, and has no stack top to give. */
	if (next->stack_top)
		x86_set_kernel_stack(next->stack_top);
	x86_switch_stack(prev, next);
}
