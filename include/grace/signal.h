/*
 * Signals: Linux's numbers (the same on riscv64 and x86_64), the kernel's form
 * of a disposition and of a signal set, siginfo as both arches' ABI lays it out
 * (asm-generic, 128 bytes), and what the arch provides to deliver a signal to a
 * handler and to return from it (kernel/proc/signal.c does the rest).
 */
#ifndef GRACE_SIGNAL_H
#define GRACE_SIGNAL_H

#include <grace/types.h>
#include <grace/uapi/signal.h>
#include <asm/regs.h>

#define NSIG 64 /* signals 1..64; 32 and up are the real-time ones */

/* "SIGSEGV" for 11; "SIG?" outside 1..31. */
const char *signal_name(int sig);

/* A set of signals: bit sig - 1 for signal sig, as the kernel's sigset_t on 64-bit Linux. */
typedef u64 ksigset_t;
#define SIGBIT(sig) (1ULL << ((sig)-1))

/* x86_64's sa_flags bit for a handler's return address (uapi/asm/signal.h there). */
#define SA_RESTORER 0x04000000

/* A disposition as the kernel keeps it (rt_sigaction translates the arch's struct). */
struct ksigaction {
	uintptr_t handler;   /* SIG_DFL, SIG_IGN, or the user handler's address */
	unsigned long flags; /* SA_* */
	uintptr_t restorer;  /* SA_RESTORER's return address (x86_64), else 0 */
	ksigset_t mask;	     /* blocked while the handler runs */
};

/*
 * siginfo_t as both ABIs lay it out: three ints, then a union at offset 16 whose
 * members used here are (pid, uid) for kill, (pid, uid, status, utime, stime) for
 * SIGCHLD, and addr for faults. 128 bytes.
 */
struct user_siginfo {
	s32 si_signo, si_errno, si_code, pad;
	union {
		struct {
			s32 pid;
			u32 uid;
			s32 status; /* SIGCHLD: the exit code or the signal */
			s32 pad;
			s64 utime, stime;
		} proc;
		u64 addr; /* SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGTRAP: the faulting address */
		u8 bytes[112];
	};
};
_Static_assert(sizeof(struct user_siginfo) == 128, "siginfo_t is 128 bytes");

/*
 * stack_t, as both ABIs lay it out: a ucontext's uc_stack in a signal frame.
 * There is no sigaltstack, so a frame always says { 0, SS_DISABLE, 0 }, as
 * Linux's does for a thread without an alternate stack.
 */
struct user_stack {
	uintptr_t ss_sp;
	s32 ss_flags;
	u64 ss_size;
};
#define SS_DISABLE 2
_Static_assert(sizeof(struct user_stack) == 24, "stack_t is 24 bytes");

/* ---- provided by the arch (arch/<arch>/signal.c) ---- */

/*
 * Build the arch's rt_sigframe on the user stack below regs' sp (x86_64: below the
 * 128-byte red zone), as Linux lays it out: siginfo, a ucontext holding every user
 * register of regs, the floating-point state, and oldmask as uc_sigmask; and a
 * return address that makes rt_sigreturn (x86_64: ka->restorer, which glibc always
 * gives with SA_RESTORER; riscv64: the process's sigreturn trampoline,
 * proc_sigreturn_trampoline()). Then point regs at the handler: pc = ka->handler,
 * the first argument sig, the second &siginfo, the third &ucontext, sp at the frame
 * with the ABI's alignment, the FP state as Linux leaves it to a handler (x86_64: a
 * new program's; riscv64: the interrupted code's). 0, or -EFAULT if the frame
 * could not be written or the arch refuses the handler (x86_64: one without
 * SA_RESTORER, as Linux does); the caller then ends the program with SIGSEGV.
 */
int arch_signal_frame_setup(struct regs *regs, int sig, const struct ksigaction *ka,
			    const struct user_siginfo *info, ksigset_t oldmask);

/*
 * rt_sigreturn: read the frame arch_signal_frame_setup() built, from regs' sp as the
 * handler's return left it; restore every user register into regs and the
 * floating-point state, and *mask from uc_sigmask. 0, or -EFAULT (the caller ends
 * the program with SIGSEGV). The system call's own result must not overwrite the
 * restored registers: the generic side returns the restored result register.
 */
int arch_signal_frame_restore(struct regs *regs, ksigset_t *mask);

/*
 * Make the system call that regs returns from run again when the thread goes back
 * to user mode: the pc back on the system-call instruction, the number and first
 * argument as they were at entry (x86_64: rax from orig_rax; riscv64: a0 from the
 * value the entry saved, since a0 holds the result by now).
 */
void arch_syscall_restart(struct regs *regs);

/*
 * The code of a sigreturn trampoline (riscv64: li a7, __NR_rt_sigreturn; ecall),
 * which exec maps into every process, read-only and executable, for
 * arch_signal_frame_setup() to return through; its length, or 0 where the arch
 * needs none (x86_64: libc gives SA_RESTORER).
 */
extern const u8 arch_sigreturn_code[];
extern const size_t arch_sigreturn_code_len;

#endif
