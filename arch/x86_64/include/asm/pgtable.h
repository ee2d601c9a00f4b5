/*
 * x86_64 4-level page-table entries for generic code (the contract is in
 * grace/pgtable.h).
 *
 * Levels: PML4 (3, the root in CR3, 512 GiB per entry), PDPT (2, 1 GiB), page
 * directory (1, 2 MiB) and page table (0, 4 KiB). Bit 7 means "large leaf" in a
 * PDPT or PD entry but "PAT" in a PT entry, so an entry alone cannot say whether
 * it is a leaf; every leaf Grace makes also carries a software bit (PTE_LEAF, an
 * ignored bit the CPU leaves alone) so that pte_is_leaf() needs no level.
 *
 * Access rights combine down the walk (writable and user only if every level
 * allows it), so table entries grant everything and the leaf decides. The user
 * half is PML4 entries 0-255, the kernel half 256-511.
 */
#ifndef ASM_PGTABLE_H
#define ASM_PGTABLE_H

/* A part of grace/pgtable.h, which defines pte_t, the levels and PROT_* first. */
#ifndef GRACE_PGTABLE_H
#error "include <grace/pgtable.h>, not <asm/pgtable.h>"
#endif

#define PT_TOP_LEVEL 3

#define PTE_PRESENT (1ULL << 0)
#define PTE_WRITE (1ULL << 1)
#define PTE_USER (1ULL << 2)
#define PTE_PWT (1ULL << 3)
#define PTE_PCD (1ULL << 4)
#define PTE_ACCESSED (1ULL << 5)
#define PTE_DIRTY (1ULL << 6)
#define PTE_LARGE (1ULL << 7) /* PDPT/PD entries only: a 1 GiB / 2 MiB leaf */
#define PTE_GLOBAL (1ULL << 8)
#define PTE_LEAF (1ULL << 9) /* software: this entry maps memory (see above) */
#define PTE_NX (1ULL << 63)  /* EFER.NXE is set by boot.S and the AP trampoline */
#define PTE_ADDR_MASK 0x000ffffffffff000ULL

/* Exclusive end of the user half: canonical lower-half addresses end at 2^47. */
#define USER_VA_END 0x0000800000000000UL

/*
 * The vmap area (kernel stacks, mm/vmap.c): where Linux puts vmalloc, in its
 * own PML4 entry, which mmu_init() makes at boot (with one PDPT: 1 GiB used).
 */
#define VMAP_BASE 0xffffc90000000000UL
#define VMAP_SIZE (1UL << 30)

#ifndef __ASSEMBLY__
#include <grace/types.h>

static inline unsigned pt_index(uintptr_t va, int level)
{
	return (va >> (12 + 9 * level)) & (PT_ENTRIES - 1);
}

static inline bool pte_present(pte_t pte)
{
	return pte & PTE_PRESENT;
}

static inline bool pte_is_leaf(pte_t pte)
{
	return (pte & PTE_PRESENT) && (pte & (PTE_LEAF | PTE_LARGE));
}

static inline phys_addr_t pte_phys(pte_t pte)
{
	return pte & PTE_ADDR_MASK;
}

static inline pte_t pte_mk_table(phys_addr_t next_table)
{
	return (next_table & PTE_ADDR_MASK) | PTE_PRESENT | PTE_WRITE | PTE_USER;
}

/* Every present leaf is readable: x86 has no write- or execute-only pages. */
static inline pte_t pte_mk_leaf(phys_addr_t pa, unsigned prot, int level)
{
	pte_t pte = (pa & PTE_ADDR_MASK) | PTE_PRESENT | PTE_LEAF | PTE_ACCESSED | PTE_DIRTY;
	if (level > PT_LEVEL_PTE)
		pte |= PTE_LARGE;
	if (prot & PROT_WRITE)
		pte |= PTE_WRITE;
	if (!(prot & PROT_EXEC))
		pte |= PTE_NX;
	/* Kernel pages are global (kept across CR3 loads if CR4.PGE were on); user pages never. */
	pte |= (prot & PROT_USER) ? PTE_USER : PTE_GLOBAL;
	return pte;
}

static inline bool pte_allows(pte_t pte, unsigned prot)
{
	if (!pte_is_leaf(pte))
		return false;
	if ((prot & PROT_WRITE) && !(pte & PTE_WRITE))
		return false;
	if ((prot & PROT_EXEC) && (pte & PTE_NX))
		return false;
	if ((prot & PROT_USER) && !(pte & PTE_USER))
		return false;
	return true;
}

static inline void arch_flush_tlb_page(uintptr_t va)
{
	__asm__ __volatile__("invlpg (%0)" : : "r"(va) : "memory");
}

/* Reloading CR3 flushes every non-global entry; Grace leaves CR4.PGE off, so that is all. */
static inline void arch_flush_tlb_all(void)
{
	u64 cr3;
	__asm__ __volatile__("mov %%cr3, %0; mov %0, %%cr3" : "=r"(cr3) : : "memory");
}

/*
 * Under SMAP (arch/x86_64/smap.c) the kernel reaches user pages only while
 * EFLAGS.AC is set; without it, at any time. STAC/CLAC are #UD without SMAP.
 */
extern bool x86_smap_enabled;

static inline void arch_user_access_begin(void)
{
	if (x86_smap_enabled)
		__asm__ __volatile__("stac" : : : "memory");
}

static inline void arch_user_access_end(void)
{
	if (x86_smap_enabled)
		__asm__ __volatile__("clac" : : : "memory");
}
#endif

#endif
