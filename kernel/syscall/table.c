/*
 * The system-call table, made from the registry (registry.h): this arch's
 * number for each call to its handler, and to its argument types for the
 * bad-pointer test. Empty slots return -ENOSYS. Two calls given one number would
 * initialize a slot twice, which -Woverride-init (-Wextra) refuses.
 */
#include "syscall_internal.h"

#define SC_TABLE_ENTRY(name, nr) [nr] = sys_##name,
const syscall_fn syscall_table[NR_SYSCALLS] = {
#define SYSCALL(name, x86_64, riscv64) SYSCALL_ON_ARCH(SC_TABLE_ENTRY, name, x86_64, riscv64)
#include "registry.h"
#undef SYSCALL
};

#define SC_META_ENTRY(name, nr) [nr] = &syscall_meta_##name,
const struct syscall_meta *const syscall_meta_table[NR_SYSCALLS] = {
#define SYSCALL(name, x86_64, riscv64) SYSCALL_ON_ARCH(SC_META_ENTRY, name, x86_64, riscv64)
#include "registry.h"
#undef SYSCALL
};

#ifdef __NR_rt_sigreturn
/* The arch's assembly names the one number it needs; it must be the registry's. */
_Static_assert(__NR_rt_sigreturn == NR_rt_sigreturn, "asm/unistd.h against registry.h");
#endif
