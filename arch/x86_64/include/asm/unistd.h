/*
 * The x86_64 Linux ABI's system-call numbers (arch/x86/entry/syscalls/syscall_64.tbl)
 * are a column of the registry, kernel/syscall/registry.h, beside riscv64's; this
 * picks x86_64's. A number without a handler returns -ENOSYS.
 */
#ifndef ASM_UNISTD_H
#define ASM_UNISTD_H

#define SYSCALL_ARCH_NR(x86_64, riscv64) x86_64

#define NR_SYSCALLS 512 /* the table's size: every x86_64 number is below it */

#endif
