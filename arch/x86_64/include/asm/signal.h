/*
 * struct sigaction as x86_64's rt_sigaction takes it (the kernel's, not libc's):
 * handler, flags, restorer, mask. x86_64 has SA_RESTORER: libc gives the address
 * the handler returns to, which makes rt_sigreturn.
 */
#ifndef ASM_SIGNAL_H
#define ASM_SIGNAL_H

#include <grace/types.h>

struct user_sigaction {
	uintptr_t handler;
	unsigned long flags;
	uintptr_t restorer;
	u64 mask;
};

#define ARCH_HAS_SA_RESTORER 1

#endif
