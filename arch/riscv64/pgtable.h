/*
 * Sv39 page-table entries and the kernel's page tables (built in head.S and mmu.c).
 * A table is 512 eight-byte entries; an entry is a leaf when any of R/W/X is set,
 * else it points to the next-level table. The PPN sits at bit 10.
 */
#ifndef RISCV_PGTABLE_H
#define RISCV_PGTABLE_H

#include <asm/const.h>

#define PTE_V (1 << 0)
#define PTE_R (1 << 1)
#define PTE_W (1 << 2)
#define PTE_X (1 << 3)
#define PTE_G (1 << 5) /* global: the kernel half is the same in every address space */
#define PTE_A (1 << 6) /* set A and D up front: hardware may fault instead of setting them */
#define PTE_D (1 << 7)
#define PTE_PPN_SHIFT 10
#define PTES_PER_TABLE 512
#define PGD_SHIFT 30 /* a root entry covers 1 GiB */
#define PMD_SHIFT 21 /* a level-1 entry covers 2 MiB */

/* Read/write/execute for now: the memory issue brings W^X with 4 KiB granularity. */
#define PTE_KERNEL (PTE_V | PTE_R | PTE_W | PTE_X | PTE_G | PTE_A | PTE_D)
#define PTE_DEVICE (PTE_V | PTE_R | PTE_W | PTE_G | PTE_A | PTE_D)
#define PTE_TABLE PTE_V

#ifndef __ASSEMBLY__
#include <grace/types.h>

typedef u64 pte_t;

extern pte_t boot_pgd[PTES_PER_TABLE];	      /* head.S: image, and early direct map */
extern pte_t boot_kernel_pmd[PTES_PER_TABLE]; /* head.S: the image's megapages */

static inline pte_t pte_make(phys_addr_t pa, u64 flags)
{
	return (pa >> 12) << PTE_PPN_SHIFT | flags;
}

static inline phys_addr_t pte_pa(pte_t pte)
{
	return (pte >> PTE_PPN_SHIFT) << 12;
}

static inline bool pte_is_leaf(pte_t pte)
{
	return pte & (PTE_R | PTE_W | PTE_X);
}

/* Switch to the final kernel page tables built from the device tree's RAM ranges. */
int mmu_init(phys_addr_t dtb_pa, u32 dtb_size);
/* Is [va, va + len) mapped kernel memory (image or direct-mapped RAM)? For the unwinder. */
bool mmu_kernel_range_ok(uintptr_t va, size_t len);
/* satp value for the kernel page tables, for secondary harts. */
u64 mmu_kernel_satp(void);
#endif

#endif
