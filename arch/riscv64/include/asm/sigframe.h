/*
 * The signal frame riscv64 Linux builds on the user stack for a handler (its
 * uapi asm/{ucontext,sigcontext,ptrace}.h), which the handler's second and third
 * arguments point into and glibc's ucontext_t reads: siginfo, then a ucontext
 * whose signal mask comes before the registers, padded to 1024 bits so that the
 * mask could grow, and whose registers (pc, then x1..x31) are followed by the
 * floating-point state. That last part is sized for the Q extension's 64 double
 * words; the D state uses its start, and its end holds a reserved word and the
 * header of a list of extension states (the vector unit's, where there is one),
 * which here is always just the end marker. arch/riscv64/signal.c writes and
 * reads it; the offsets are checked against Linux's below.
 */
#ifndef ASM_SIGFRAME_H
#define ASM_SIGFRAME_H

#include <grace/compiler.h>
#include <grace/signal.h>
#include <grace/types.h>

/* The header ending the extension list: magic and size both 0 (Linux's END_MAGIC). */
#define SIGCTX_END_MAGIC 0
#define SIGCTX_END_SIZE 0

/* union __riscv_fp_state as Linux's kernel fills it: the D state, the rest zero. */
struct user_fp_state {
	u64 f[32];
	u32 fcsr;
	u8 unused[256]; /* the rest of the Q state's registers */
	u32 reserved;	/* zero in every frame; a frame without it zero is refused */
	u32 ext_magic;	/* the first extension header: SIGCTX_END_MAGIC */
	u32 ext_size;	/* SIGCTX_END_SIZE */
} __aligned(16);	/* the Q state's alignment */

struct user_sigcontext {
	unsigned long pc;
	unsigned long x[31]; /* x1..x31, struct user_regs_struct's order */
	struct user_fp_state fp;
};

struct user_ucontext {
	unsigned long uc_flags; /* 0 */
	uintptr_t uc_link;	/* 0 */
	struct user_stack uc_stack;
	ksigset_t uc_sigmask;
	u8 sigmask_room[128 - sizeof(ksigset_t)];
	struct user_sigcontext uc_mcontext;
};

struct rt_sigframe {
	struct user_siginfo info;
	struct user_ucontext uc;
};

_Static_assert(offsetof(struct user_fp_state, reserved) == 516, "__riscv_extra_ext_header");
_Static_assert(sizeof(struct user_fp_state) == 528, "union __riscv_fp_state is 528 bytes");
_Static_assert(sizeof(struct user_sigcontext) == 784, "struct sigcontext is 784 bytes");
_Static_assert(offsetof(struct user_ucontext, uc_mcontext) == 176, "uc_mcontext at 176");
_Static_assert(offsetof(struct rt_sigframe, uc) == 128, "the ucontext follows siginfo");
_Static_assert(sizeof(struct rt_sigframe) == 1088, "struct rt_sigframe is 1088 bytes");

#endif
