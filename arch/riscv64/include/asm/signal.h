/*
 * struct sigaction as riscv64's rt_sigaction takes it (asm-generic without
 * SA_RESTORER): handler, flags, mask. The handler returns through the kernel's
 * trampoline instead (arch_sigreturn_code).
 */
#ifndef ASM_SIGNAL_H
#define ASM_SIGNAL_H

#include <grace/types.h>

struct user_sigaction {
	uintptr_t handler;
	unsigned long flags;
	u64 mask;
};

#define ARCH_HAS_SA_RESTORER 0

#endif
