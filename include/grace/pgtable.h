/*
 * The generic view of page tables. Generic code (mm/pagewalk.c, mm/fault.c)
 * walks and fills page tables only through this header and the arch's inline
 * helpers in asm/pgtable.h, so that the same walker serves Sv39 (3 levels) and
 * x86_64 (4 levels):
 *
 *   levels    PT_LEVEL_PTE (4 KiB leaves) .. PT_TOP_LEVEL (the root, in satp/CR3)
 *   pte_t     one u64 entry; a table is PT_ENTRIES of them in one page
 *   pt_index(va, level)         which entry of a level-`level` table maps va
 *   pte_present / pte_is_leaf   valid at all / valid and maps memory (any level)
 *   pte_phys                    the next table, or the mapped page
 *   pte_mk_table / pte_mk_leaf  build entries; leaves take PROT_* bits
 *   pte_allows(pte, prot)       does this one entry grant every bit of prot
 *   pte_leaf_prot / pte_leaf_with_prot   a leaf's PROT_* bits / the leaf with others
 *
 * A leaf is always readable (x86_64 cannot express write- or execute-only).
 * Leaves have their accessed and dirty bits set up front: Sv39 hardware may trap
 * instead of setting them, and nothing in Grace reads them.
 *
 * The kernel half of every address space is shared: arch_mm_init_root() copies
 * the kernel's top-level entries into a new root, and the kernel never adds a
 * top-level entry after boot (the arch pre-creates every one it will use), so
 * those copies never go stale.
 */
#ifndef GRACE_PGTABLE_H
#define GRACE_PGTABLE_H

/* PROT_USER: reachable from user mode, and from the kernel inside arch_user_access_begin/end. */
#include <grace/uapi/mman.h> /* PROT_READ, PROT_WRITE, PROT_EXEC: mmap()'s own bits */
#define PROT_USER 0x8

#define PT_LEVEL_PTE 0 /* 4 KiB leaves */
#define PT_LEVEL_PMD 1 /* 2 MiB leaves, or a pointer to a PTE table */
#define PT_LEVEL_PUD 2 /* 1 GiB leaves, or a pointer to a PMD table */

#define PT_ENTRIES 512

#ifndef __ASSEMBLY__
#include <grace/types.h>

typedef u64 pte_t;
#endif

#include <asm/pgtable.h>

#ifndef __ASSEMBLY__
/* Bytes one entry of a level-`level` table maps: 4 KiB, 2 MiB, 1 GiB, 512 GiB. */
static inline u64 pt_level_size(int level)
{
	return (u64)1 << (12 + 9 * level);
}

/* The PROT_* bits a leaf grants (PROT_READ always: every leaf is readable). */
static inline unsigned pte_leaf_prot(pte_t leaf)
{
	unsigned prot = PROT_READ;
	if (pte_allows(leaf, PROT_WRITE))
		prot |= PROT_WRITE;
	if (pte_allows(leaf, PROT_EXEC))
		prot |= PROT_EXEC;
	if (pte_allows(leaf, PROT_USER))
		prot |= PROT_USER;
	return prot;
}

/* The same page as leaf (a level-`level` leaf), with prot instead of its bits. */
static inline pte_t pte_leaf_with_prot(pte_t leaf, unsigned prot, int level)
{
	return pte_mk_leaf(pte_phys(leaf), prot, level);
}

/* The kernel's top-level table (every CPU's when no mm is loaded). */
pte_t *arch_kernel_root(void);

/* Copy the kernel's top-level entries into root (a zeroed new top-level table). */
void arch_mm_init_root(pte_t *root);

/*
 * Load root (a physical address) as this CPU's page tables and flush the
 * non-kernel part of its TLB; root 0 = the kernel-only tables. No ASIDs/PCIDs:
 * every switch flushes the user half.
 */
void arch_switch_mm(phys_addr_t root);

/*
 * Inline in asm/pgtable.h:
 *
 * arch_user_access_begin() / arch_user_access_end(): kernel access to user pages
 * (PROT_USER) in between, on this CPU only. Not nestable. A trap taken inside
 * keeps the window open for the interrupted code and closed for the handler.
 *
 * arch_flush_tlb_page(va) / arch_flush_tlb_all(): this CPU's TLB only; remote
 * flushes are mm/tlb.c's, through IPIs.
 */
#endif

#endif
