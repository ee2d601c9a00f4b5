/*
 * The way in from user mode: the generic entry points the arch's trap code calls
 * for a trap taken in user mode (grace/arch.h, "user mode", says in what order),
 * and the system-call table they dispatch through (kernel/syscall/).
 *
 * A system call's number and six arguments sit in the trap frame where the
 * arch's ABI puts them; asm/syscall.h reads them out and stores the result, so
 * nothing here knows a register name. Numbers are Linux's for each arch
 * (asm/unistd.h); a number without a handler returns -ENOSYS and is counted.
 */
#ifndef GRACE_SYSCALL_H
#define GRACE_SYSCALL_H

#include <grace/compiler.h>
#include <grace/types.h>
#include <asm/regs.h>
#include <asm/syscall.h>

/*
 * A system call from user mode, interrupts on. riscv64 has already moved sepc
 * past the ecall. The result (a value, or -errno) is stored in regs.
 */
void syscall_entry(struct regs *regs);

/*
 * A page fault in user mode at addr (FAULT_READ, FAULT_WRITE or FAULT_EXEC, as
 * for handle_page_fault), interrupts on. Resolved, or the thread gets SIGSEGV
 * with Linux's "segfault at" line on the console.
 */
void user_page_fault(struct regs *regs, uintptr_t addr, unsigned access);

/*
 * Any other exception in user mode, interrupts on: sig is the signal Linux sends
 * for it (SIGILL, SIGTRAP, SIGBUS, SIGFPE, SIGSEGV; grace/signal.h), what the
 * arch's name for the exception, for the console line.
 */
void user_exception(struct regs *regs, int sig, const char *what);

/*
 * Last on every way back to user mode, with interrupts off: switch threads if a
 * reschedule is pending, act on pending signals (a fatal one ends the thread
 * here), and return with interrupts off, regs ready to restore.
 */
void exit_to_user_mode(struct regs *regs);

/* Calls made with number nr (NR_SYSCALLS, asm/unistd.h: any number past the table), all CPUs. */
u64 syscall_count(unsigned nr);
/* Has nr a handler? The others return -ENOSYS. */
bool syscall_implemented(unsigned nr);

/* One system call's handler: the six argument registers, the result or -errno. */
typedef long (*syscall_fn)(unsigned long a0, unsigned long a1, unsigned long a2, unsigned long a3,
			   unsigned long a4, unsigned long a5);

#endif
