/*
 * Signals' numbers, dispositions, sigaction()'s flags, the si_codes the kernel
 * sends and rt_sigprocmask()'s operations (uapi/asm-generic/signal.h,
 * signal-defs.h and siginfo.h), the same on riscv64 and x86_64. SA_RESTORER,
 * x86_64's alone, is in grace/signal.h.
 */
#ifndef GRACE_UAPI_SIGNAL_H
#define GRACE_UAPI_SIGNAL_H

#define SIGHUP 1
#define SIGINT 2
#define SIGQUIT 3
#define SIGILL 4
#define SIGTRAP 5
#define SIGABRT 6
#define SIGBUS 7
#define SIGFPE 8
#define SIGKILL 9
#define SIGUSR1 10
#define SIGSEGV 11
#define SIGUSR2 12
#define SIGPIPE 13
#define SIGALRM 14
#define SIGTERM 15
#define SIGSTKFLT 16
#define SIGCHLD 17
#define SIGCONT 18
#define SIGSTOP 19
#define SIGTSTP 20
#define SIGTTIN 21
#define SIGTTOU 22
#define SIGURG 23
#define SIGXCPU 24
#define SIGXFSZ 25
#define SIGVTALRM 26
#define SIGPROF 27
#define SIGWINCH 28
#define SIGIO 29
#define SIGPWR 30
#define SIGSYS 31

#define SIG_DFL 0UL
#define SIG_IGN 1UL
#define SA_NOCLDSTOP 0x00000001
#define SA_NOCLDWAIT 0x00000002
#define SA_SIGINFO 0x00000004
#define SA_ONSTACK 0x08000000
#define SA_RESTART 0x10000000
#define SA_NODEFER 0x40000000
#define SA_RESETHAND 0x80000000

/* si_code values used here. */
#define SI_USER 0      /* kill */
#define SI_TKILL (-6)  /* tkill, tgkill (and so glibc's raise) */
#define SI_KERNEL 0x80 /* sent by the kernel itself */
#define SEGV_MAPERR 1  /* no mapping at the address */
#define SEGV_ACCERR 2  /* a mapping that does not allow the access */
#define ILL_ILLOPC 1   /* an illegal opcode */
#define FPE_INTDIV 1   /* an integer division by zero */
#define BUS_ADRALN 1   /* a misaligned address */
#define TRAP_BRKPT 1   /* a breakpoint */
#define CLD_EXITED 1
#define CLD_KILLED 2

#define SIG_BLOCK 0
#define SIG_UNBLOCK 1
#define SIG_SETMASK 2

#endif
