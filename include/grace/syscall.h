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
/* What the registry knows of nr's arguments (struct syscall_meta below), or NULL: no handler. */
const struct syscall_meta *syscall_meta(unsigned nr);

/* One system call's handler: the six argument registers, the result or -errno. */
typedef long (*syscall_fn)(unsigned long a0, unsigned long a1, unsigned long a2, unsigned long a3,
			   unsigned long a4, unsigned long a5);

/*
 * What the registry knows of a call's arguments, from its definition: how many
 * it takes, and which are user pointers (a pointer type in a system call's
 * signature is always one: a kernel pointer never comes from user mode).
 */
struct syscall_meta {
	const char *name;
	u8 nargs;
	bool user_ptr[6];
};

/*
 * SYSCALL_DEFINEn(name, type1, arg1, ..., typen, argn) { body } defines the
 * system call sys_<name>, as Linux's macro of that name does: sys_<name> takes
 * the six argument registers, casts each of the first n once to its declared
 * type and calls the body, which sees only typed arguments. The call also needs
 * its line in kernel/syscall/registry.h, which declares sys_<name> and gives it
 * its numbers: a definition whose name the registry lacks does not build (it
 * names SC_REGISTERED_<name>), nor does a line without a definition (the table
 * names sys_<name>). The body is static inline, so that it is compiled into
 * sys_<name> and not kept a second time: the dispatch costs what a handler
 * taking the registers itself did.
 */
#define SYSCALL_DEFINE0(name)                                                                      \
	enum { SC_DEFINED_##name = SC_REGISTERED_##name };                                         \
	static inline long do_sys_##name(void);                                                    \
	const struct syscall_meta syscall_meta_##name = {#name, 0, {false}};                       \
	long sys_##name(unsigned long a0, unsigned long a1, unsigned long a2, unsigned long a3,    \
			unsigned long a4, unsigned long a5)                                        \
	{                                                                                          \
		return do_sys_##name();                                                            \
	}                                                                                          \
	static inline long do_sys_##name(void)
#define SYSCALL_DEFINE1(name, ...) SYSCALL_DEFINEx(1, name, __VA_ARGS__)
#define SYSCALL_DEFINE2(name, ...) SYSCALL_DEFINEx(2, name, __VA_ARGS__)
#define SYSCALL_DEFINE3(name, ...) SYSCALL_DEFINEx(3, name, __VA_ARGS__)
#define SYSCALL_DEFINE4(name, ...) SYSCALL_DEFINEx(4, name, __VA_ARGS__)
#define SYSCALL_DEFINE5(name, ...) SYSCALL_DEFINEx(5, name, __VA_ARGS__)
#define SYSCALL_DEFINE6(name, ...) SYSCALL_DEFINEx(6, name, __VA_ARGS__)

#define SYSCALL_DEFINEx(n, name, ...)                                                              \
	enum { SC_DEFINED_##name = SC_REGISTERED_##name };                                         \
	static inline long do_sys_##name(SC_MAP##n(SC_DECL, 0, __VA_ARGS__));                      \
	const struct syscall_meta syscall_meta_##name = {                                          \
	    #name, n, {SC_MAP##n(SC_IS_PTR, 0, __VA_ARGS__)}};                                     \
	long sys_##name(unsigned long a0, unsigned long a1, unsigned long a2, unsigned long a3,    \
			unsigned long a4, unsigned long a5)                                        \
	{                                                                                          \
		const unsigned long args[6] = {a0, a1, a2, a3, a4, a5};                            \
		return do_sys_##name(SC_MAP##n(SC_CAST, 0, __VA_ARGS__));                          \
	}                                                                                          \
	static inline long do_sys_##name(SC_MAP##n(SC_DECL, 0, __VA_ARGS__))

/* m(type, name, index) for each (type, name) pair, with commas between. */
#define SC_MAP1(m, i, t, a) m(t, a, i)
#define SC_MAP2(m, i, t, a, ...) m(t, a, i), SC_MAP1(m, i + 1, __VA_ARGS__)
#define SC_MAP3(m, i, t, a, ...) m(t, a, i), SC_MAP2(m, i + 1, __VA_ARGS__)
#define SC_MAP4(m, i, t, a, ...) m(t, a, i), SC_MAP3(m, i + 1, __VA_ARGS__)
#define SC_MAP5(m, i, t, a, ...) m(t, a, i), SC_MAP4(m, i + 1, __VA_ARGS__)
#define SC_MAP6(m, i, t, a, ...) m(t, a, i), SC_MAP5(m, i + 1, __VA_ARGS__)
#define SC_DECL(t, a, i) t a
#define SC_CAST(t, a, i) (t) args[i]
#define SC_IS_PTR(t, a, i) (__builtin_classify_type((t)0) == __builtin_classify_type((void *)0))

#endif
