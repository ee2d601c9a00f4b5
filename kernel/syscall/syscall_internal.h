/*
 * The system-call table and its handlers. A handler is sys_<call>, as Linux
 * names it: the call as a user program makes it, with user pointers, Linux's
 * argument order and Linux's errors, defined by SYSCALL_DEFINEn (grace/syscall.h)
 * and listed once in registry.h, from which everything here is made. Handlers in
 * sys_fs.c copy paths and buffers across and call the VFS's kernel-pointer calls
 * (grace/fs.h: vfs_*).
 */
#ifndef KERNEL_SYSCALL_INTERNAL_H
#define KERNEL_SYSCALL_INTERNAL_H

#include <grace/syscall.h>
#include <asm/unistd.h>

/* This arch's handler for each number (NULL: -ENOSYS), and each one's argument types. */
extern const syscall_fn syscall_table[NR_SYSCALLS];
extern const struct syscall_meta *const syscall_meta_table[NR_SYSCALLS];

/*
 * Raise sig against the calling program for something it did (a fault, a frame
 * rt_sigreturn cannot read): delivered on the way back to user mode even if it
 * is blocked or ignored, as Linux's force_sig_fault().
 */
void user_signal_force(int sig, int code, uintptr_t addr);

/*
 * A user struct timespec at uts in ns (saturating: 584 years is for ever):
 * 0, -EFAULT, or -EINVAL for a negative time or tv_nsec past a second.
 */
int timespec_from_user(const void __user *uts, u64 *ns);

/*
 * SYSCALL_ON_ARCH(m, name, x86_64, riscv64) is m(name, nr) with this arch's
 * number nr (asm/unistd.h: SYSCALL_ARCH_NR picks it), or nothing where the
 * registry says none: a call the arch does not have.
 */
#define SYSCALL_ON_ARCH(m, name, x86_64, riscv64)                                                  \
	SC_ON_ARCH_(m, name, SYSCALL_ARCH_NR(x86_64, riscv64))
#define SC_ON_ARCH_(m, name, nr) SC_CAT(SC_WHEN_NONE_, SC_IS_NONE(nr))(m, name, nr)
#define SC_WHEN_NONE_0(m, name, nr) m(name, nr)
#define SC_WHEN_NONE_1(m, name, nr)
#define SC_CAT(a, b) SC_CAT_(a, b)
#define SC_CAT_(a, b) a##b
/* 1 for the token none, 0 for a number: none's probe expands to two arguments. */
#define SC_IS_NONE(nr) SC_SECOND(SC_PROBE_##nr, 0, ~)
#define SC_PROBE_none ~, 1
#define SC_SECOND(...) SC_SECOND_(__VA_ARGS__)
#define SC_SECOND_(a, b, ...) b

/* Every handler in the registry, whether this arch has the call or not. */
#define SYSCALL(name, x86_64, riscv64)                                                             \
	long sys_##name(unsigned long a0, unsigned long a1, unsigned long a2, unsigned long a3,    \
			unsigned long a4, unsigned long a5);                                       \
	extern const struct syscall_meta syscall_meta_##name;
#include "registry.h"
#undef SYSCALL

/* SC_REGISTERED_<name>: named by SYSCALL_DEFINEn, so a call the registry lacks does not build. */
enum syscall_registered {
#define SYSCALL(name, x86_64, riscv64) SC_REGISTERED_##name,
#include "registry.h"
#undef SYSCALL
};

/* NR_<name>: the call's number on this arch, for the calls it has. */
#define SC_NR_ENUM(name, nr) NR_##name = nr,
enum syscall_nr {
#define SYSCALL(name, x86_64, riscv64) SYSCALL_ON_ARCH(SC_NR_ENUM, name, x86_64, riscv64)
#include "registry.h"
#undef SYSCALL
};

#endif
