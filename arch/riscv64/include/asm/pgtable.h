/*
 * Sv39 page-table entries for generic code (the contract is in grace/pgtable.h).
 *
 * Sv39 has three levels: a root table whose entries map 1 GiB, level-1 tables
 * (2 MiB) and level-0 tables (4 KiB). An entry is valid with V set; it is a leaf
 * when any of R/W/X is set, else it points to the next table. The physical page
 * number sits at bit 10. The user half is the low 256 GiB (root entries 0-255),
 * the kernel half the top 256 GiB (entries 256-511).
 */
#ifndef ASM_PGTABLE_H
#define ASM_PGTABLE_H

/* A part of grace/pgtable.h, which defines pte_t, the levels and PROT_* first. */
#ifndef GRACE_PGTABLE_H
#error "include <grace/pgtable.h>, not <asm/pgtable.h>"
#endif

#define PT_TOP_LEVEL 2

#define PTE_V (1 << 0)
#define PTE_R (1 << 1)
#define PTE_W (1 << 2)
#define PTE_X (1 << 3)
#define PTE_U (1 << 4) /* user page: S-mode touches it only with sstatus.SUM */
#define PTE_G (1 << 5) /* global: the kernel half is the same in every address space */
#define PTE_A (1 << 6) /* set A and D up front: hardware may fault instead of setting them */
#define PTE_D (1 << 7)
#define PTE_PPN_SHIFT 10
#define PTE_PPN_MASK (((1ULL << 44) - 1) << PTE_PPN_SHIFT) /* bits 53:10 */

/* Exclusive end of the user half: the lowest 2^38 bytes (Sv39 sign-extends bit 38). */
#define USER_VA_END 0x0000004000000000UL

/*
 * The vmap area (kernel stacks, mm/vmap.c): the GiB above the ioremap window
 * (asm/memory.h), one root entry that mmu_init() makes at boot.
 */
#define VMAP_BASE 0xffffffe040000000UL
#define VMAP_SIZE (1UL << 30)

#ifndef __ASSEMBLY__
#include <grace/types.h>
#include <asm/csr.h>

static inline unsigned pt_index(uintptr_t va, int level)
{
	return (va >> (12 + 9 * level)) & (PT_ENTRIES - 1);
}

static inline bool pte_present(pte_t pte)
{
	return pte & PTE_V;
}

static inline bool pte_is_leaf(pte_t pte)
{
	return (pte & PTE_V) && (pte & (PTE_R | PTE_W | PTE_X));
}

static inline phys_addr_t pte_phys(pte_t pte)
{
	return ((pte & PTE_PPN_MASK) >> PTE_PPN_SHIFT) << 12;
}

/* Non-leaf entries must have U, A and D clear (the privileged spec reserves them). */
static inline pte_t pte_mk_table(phys_addr_t next_table)
{
	return (next_table >> 12) << PTE_PPN_SHIFT | PTE_V;
}

/* Every leaf is readable: W without R is reserved in Sv39, and x86 has no unreadable pages. */
static inline pte_t pte_mk_leaf(phys_addr_t pa, unsigned prot, int level)
{
	pte_t pte = (pa >> 12) << PTE_PPN_SHIFT | PTE_V | PTE_R | PTE_A | PTE_D;
	(void)level; /* a leaf looks the same at every level; alignment is the caller's */
	if (prot & PROT_WRITE)
		pte |= PTE_W;
	if (prot & PROT_EXEC)
		pte |= PTE_X;
	pte |= (prot & PROT_USER) ? PTE_U : PTE_G;
	return pte;
}

static inline bool pte_allows(pte_t pte, unsigned prot)
{
	if (!pte_is_leaf(pte))
		return false;
	if ((prot & PROT_READ) && !(pte & PTE_R))
		return false;
	if ((prot & PROT_WRITE) && !(pte & PTE_W))
		return false;
	if ((prot & PROT_EXEC) && !(pte & PTE_X))
		return false;
	if ((prot & PROT_USER) && !(pte & PTE_U))
		return false;
	return true;
}

static inline void arch_flush_tlb_page(uintptr_t va)
{
	__asm__ __volatile__("sfence.vma %0, zero" : : "r"(va) : "memory");
}

static inline void arch_flush_tlb_all(void)
{
	__asm__ __volatile__("sfence.vma" : : : "memory");
}

/* sstatus.SUM lets S-mode loads and stores reach U pages (never execute them). */
static inline void arch_user_access_begin(void)
{
	csr_set(sstatus, SSTATUS_SUM);
}

static inline void arch_user_access_end(void)
{
	csr_clear(sstatus, SSTATUS_SUM);
}
#endif

#endif
