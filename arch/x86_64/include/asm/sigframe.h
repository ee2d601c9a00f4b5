/*
 * The signal frame x86_64 Linux builds on the user stack for a handler (its
 * asm/sigframe.h and uapi asm/{sigcontext,ucontext}.h), which the handler's
 * second and third arguments point into and glibc's ucontext_t reads: the
 * return address the handler's ret pops (sa_restorer), a ucontext whose
 * registers (struct sigcontext) come before the signal mask, and siginfo. The
 * x87/SSE state lies apart from it, higher on the stack, 64-byte aligned, and
 * sigcontext's fpstate points at it: FXSAVE's 512-byte image, which is the ABI's
 * struct _fpstate as it is (asm/switch.h's struct fxstate). arch/x86_64/signal.c
 * writes and reads it; the offsets are checked against Linux's below.
 */
#ifndef ASM_SIGFRAME_H
#define ASM_SIGFRAME_H

#include <grace/signal.h>
#include <grace/types.h>

/* uc_flags: the frame's ss is the interrupted one's, and sigreturn restores it as such. */
#define UC_SIGCONTEXT_SS 0x2
#define UC_STRICT_RESTORE_SS 0x4

struct user_sigcontext {
	u64 r8, r9, r10, r11, r12, r13, r14, r15;
	u64 rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip;
	u64 eflags;
	u16 cs, gs, fs, ss; /* gs and fs: 0, the bases being what programs use */
	u64 err, trapno, oldmask, cr2;
	u64 fpstate; /* the FXSAVE image's user address; 0: the state a new program has */
	u64 reserved[8];
};

struct user_ucontext {
	unsigned long uc_flags;
	uintptr_t uc_link; /* 0 */
	struct user_stack uc_stack;
	struct user_sigcontext uc_mcontext;
	ksigset_t uc_sigmask;
};

struct rt_sigframe {
	uintptr_t pretcode; /* where the handler returns: sa_restorer */
	struct user_ucontext uc;
	struct user_siginfo info;
};

_Static_assert(offsetof(struct user_sigcontext, eflags) == 136, "sigcontext's eflags at 136");
_Static_assert(offsetof(struct user_sigcontext, fpstate) == 184, "sigcontext's fpstate at 184");
_Static_assert(sizeof(struct user_sigcontext) == 256, "struct sigcontext is 256 bytes");
_Static_assert(offsetof(struct user_ucontext, uc_sigmask) == 296, "uc_sigmask at 296");
_Static_assert(offsetof(struct rt_sigframe, info) == 312, "siginfo follows the ucontext");
_Static_assert(sizeof(struct rt_sigframe) == 440, "struct rt_sigframe is 440 bytes");

#endif
