/*
 * AT_HWCAP on x86_64: the feature bits of CPUID leaf 1's EDX, as Linux's
 * ELF_HWCAP gives them.
 */
#include <grace/arch.h>
#include "processor.h"

unsigned long arch_elf_hwcap(void)
{
	return cpuid(1, 0).edx;
}
