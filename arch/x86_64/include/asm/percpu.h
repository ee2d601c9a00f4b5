/*
 * The per-CPU base on x86_64 is the GS base (MSR_GS_BASE). Reading the MSR is
 * slow, so the first word of every per-CPU copy holds the copy's own address
 * (percpu_self, filled by percpu_setup) and arch_percpu_base() is one %gs:0 load.
 */
#ifndef ASM_PERCPU_H
#define ASM_PERCPU_H

#include <asm/x86.h>

#ifndef __ASSEMBLY__
#include <grace/types.h>

static inline uintptr_t arch_percpu_base(void)
{
	uintptr_t base;
	__asm__ volatile("mov %%gs:0, %0" : "=r"(base));
	return base;
}

/* Generic code has already stored base at *(uintptr_t *)base (percpu_self). */
static inline void arch_set_percpu_base(uintptr_t base)
{
	__asm__ volatile("wrmsr" ::"c"(MSR_GS_BASE), "a"((u32)base), "d"((u32)(base >> 32))
			 : "memory");
}
#endif

#endif
