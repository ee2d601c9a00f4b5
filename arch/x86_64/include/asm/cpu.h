/* CPU hints for spin loops. */
#ifndef ASM_CPU_H
#define ASM_CPU_H

#include <grace/types.h>

/*
 * PAUSE tells the core (and a hypervisor watching for PAUSE loops) that we spin,
 * which is what real CPUs and KVM want. Under QEMU's TCG it is costly instead: the
 * vCPU leaves its translated code and takes QEMU's global lock on every PAUSE
 * (measured: about 240 ns each, and with 64 vCPUs spinning they all queue on that
 * one lock, making lock handoffs a thousand times slower). Boot sets this flag
 * unless CPUID names the TCG "hypervisor"; until then a spin is a plain loop.
 */
extern bool x86_relax_with_pause;

static inline void cpu_relax(void)
{
	if (x86_relax_with_pause)
		__asm__ volatile("pause" ::: "memory");
	else
		__asm__ volatile("" ::: "memory");
}

#endif
