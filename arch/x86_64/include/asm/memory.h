/*
 * x86_64 memory layout. The kernel image is linked in the top 2 GiB
 * (KERNEL_VMA + physical load address, the -mcmodel=kernel range) and all RAM is
 * mapped again at PAGE_OFFSET (the "direct map", the address Linux uses, so a
 * reader of a register dump recognises it). Both use 2 MiB pages.
 */
#ifndef ASM_MEMORY_H
#define ASM_MEMORY_H

#ifdef __ASSEMBLY__
#define _UL(x) x
#else
#define _UL(x) x##UL
#endif

#define PAGE_SHIFT 12
#define PAGE_SIZE (_UL(1) << PAGE_SHIFT)
#define LARGE_PAGE_SIZE (_UL(1) << 21) /* a PMD-level (2 MiB) leaf */

#define PAGE_OFFSET _UL(0xffff888000000000) /* direct map of all RAM */
#define KERNEL_VMA _UL(0xffffffff80000000)  /* image: virtual = KERNEL_VMA + physical */

#ifndef __ASSEMBLY__
#include <grace/types.h>

static inline void *phys_to_virt(phys_addr_t pa)
{
	return (void *)(uintptr_t)(pa + PAGE_OFFSET);
}

/* Accepts direct-map and kernel-image addresses alike. */
static inline phys_addr_t virt_to_phys(const void *va)
{
	uintptr_t v = (uintptr_t)va;
	return v >= KERNEL_VMA ? v - KERNEL_VMA : v - PAGE_OFFSET;
}
#endif

#endif
