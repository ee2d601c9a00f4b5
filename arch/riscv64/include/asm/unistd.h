/*
 * The riscv64 Linux ABI's system-call numbers (include/uapi/asm-generic/unistd.h)
 * are a column of the registry, kernel/syscall/registry.h, beside x86_64's; this
 * picks riscv64's. A number without a handler returns -ENOSYS.
 */
#ifndef ASM_UNISTD_H
#define ASM_UNISTD_H

#define SYSCALL_ARCH_NR(x86_64, riscv64) riscv64

/* For the sigreturn trampoline (sigreturn.S), which assembly cannot take from the registry. */
#define __NR_rt_sigreturn 139

#define NR_SYSCALLS 512 /* the table's size: every riscv64 number is below it */

#endif
