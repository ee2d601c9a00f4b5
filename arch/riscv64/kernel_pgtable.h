/*
 * The riscv64 kernel page tables, inside arch/riscv64 (the generic entry helpers
 * are in asm/pgtable.h). head.S builds boot_pgd with read/write/execute
 * megapages (PTE_BOOT) so that C can run; mmu_init() replaces it with the W^X
 * tables every hart uses afterwards.
 */
#ifndef RISCV_KERNEL_PGTABLE_H
#define RISCV_KERNEL_PGTABLE_H

#include <asm/const.h>
#include <grace/pgtable.h>

#define PTES_PER_TABLE PT_ENTRIES
#define PGD_SHIFT 30 /* a root entry covers 1 GiB */
#define PMD_SHIFT 21 /* a level-1 entry covers 2 MiB */

/* Boot only: everything read/write/execute until mmu_init() splits the image up. */
#define PTE_BOOT (PTE_V | PTE_R | PTE_W | PTE_X | PTE_G | PTE_A | PTE_D)
/* The direct map and device windows: never executable. */
#define PTE_KERNEL_DATA (PTE_V | PTE_R | PTE_W | PTE_G | PTE_A | PTE_D)
#define PTE_TABLE PTE_V

#ifndef __ASSEMBLY__
#include <grace/types.h>

extern pte_t boot_pgd[PTES_PER_TABLE];	      /* head.S: image, and early direct map */
extern pte_t boot_kernel_pmd[PTES_PER_TABLE]; /* head.S: the image's megapages */

static inline pte_t pte_make(phys_addr_t pa, u64 flags)
{
	return (pa >> 12) << PTE_PPN_SHIFT | flags;
}

/* Switch to the final kernel page tables built from the device tree's RAM ranges. */
int mmu_init(phys_addr_t dtb_pa, u32 dtb_size);
/* Is [va, va + len) mapped, readable kernel memory? For the unwinder. */
bool mmu_kernel_range_ok(uintptr_t va, size_t len);
/* satp value for the kernel page tables, for secondary harts. */
u64 mmu_kernel_satp(void);
#endif

#endif
