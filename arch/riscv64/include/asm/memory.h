/*
 * The riscv64 virtual memory layout (Sv39: 39-bit virtual addresses, so the kernel
 * half is the top 256 GiB, 0xffffffc000000000 and up):
 *
 *   0xffffffc000000000  direct map: physical address P at PAGE_OFFSET + P, for P
 *                       below DIRECT_MAP_SIZE; only RAM (and the DTB) is mapped
 *   0xffffffe000000000  ioremap window (IOREMAP_SIZE): device registers
 *   0xffffffe040000000  vmap area (VMAP_BASE in asm/pgtable.h): kernel stacks
 *                       with guard pages
 *   0xffffffff80000000  the kernel image (KERNEL_VIRT_BASE, -mcmodel=medany reaches
 *                       it PC-relative), mapped to wherever the loader put it
 *
 * Why Sv39: every RV64 hart with paging implements it (Sv48 and Sv57 are optional
 * and imply Sv39), QEMU and every board support it, and a 128 GiB direct map
 * covers the RAM of the machines Grace boots on. RAM above physical 128 GiB is
 * left out (mmu_init() says so and keeps it from the page allocator); Sv48's
 * fourth table level would make room for it.
 */
#ifndef ASM_MEMORY_H
#define ASM_MEMORY_H

#include <asm/const.h>

#define PAGE_SHIFT 12
#define PAGE_SIZE (_UL(1) << PAGE_SHIFT)
#define PMD_SIZE (_UL(1) << 21) /* a megapage: one level-1 leaf */
#define PGD_SIZE (_UL(1) << 30) /* a gigapage: one root-level leaf */

#define PAGE_OFFSET _UL(0xffffffc000000000)
#define DIRECT_MAP_SIZE (_UL(128) << 30)
#define IOREMAP_BASE _UL(0xffffffe000000000)
#define IOREMAP_SIZE PGD_SIZE
#define KERNEL_VIRT_BASE _UL(0xffffffff80000000)

#ifndef __ASSEMBLY__
#include <grace/types.h>

/* Kernel-image virtual address minus its physical address, set by head.S at boot. */
extern uintptr_t kernel_va_pa_offset;

static inline void *phys_to_virt(phys_addr_t pa)
{
	return (void *)(uintptr_t)(pa + PAGE_OFFSET);
}

/* Direct-map and kernel-image addresses alike. */
static inline phys_addr_t virt_to_phys(const void *va)
{
	uintptr_t v = (uintptr_t)va;
	return v >= KERNEL_VIRT_BASE ? v - kernel_va_pa_offset : v - PAGE_OFFSET;
}
#endif

#endif
