/*
 * The generic page-table walker for address spaces (mm/pagewalk.c): table pages,
 * their locks, and the walks that fault, unmap and teardown are built from.
 *
 * Who may change which entry:
 *   above PT_LEVEL_PMD   (PUD/PGD entries: pointers to tables) filled once by
 *                        cmpxchg from empty, no lock; cleared only with the VMA
 *                        lock held for writing (no fault can be walking).
 *   PT_LEVEL_PMD, PTE    under the lock of the table holding the entry:
 *                        pt_lock(mm, table), which is that table page's own ptl
 *                        (PTLOCK_SPLIT) or mm->page_table_lock (PTLOCK_MM).
 * Entries are published with a release store (the table or page they point to
 * is zeroed first) and read with an acquire load by software walkers.
 */
#ifndef GRACE_PAGEWALK_H
#define GRACE_PAGEWALK_H

#include <grace/address_space.h>
#include <grace/page.h>
#include <grace/pgtable.h>

struct tlb_gather;

static inline pte_t pt_entry_read(const pte_t *e)
{
	/* Pairs with the release in pt_entry_write() and pt_entry_populate(). */
	return smp_load_acquire(e);
}

static inline void pt_entry_write(pte_t *e, pte_t v)
{
	/* Pairs with the smp_load_acquire() in pt_entry_read(). */
	smp_store_release(e, v);
}

static inline pte_t *pt_table_of(pte_t e)
{
	return phys_to_virt(pte_phys(e));
}

/* The lock that guards the entries of `table` (a PMD or PTE table of mm). */
static inline spinlock_t *pt_lockptr(struct mm *mm, pte_t *table)
{
	if (mm->ptlock == PTLOCK_SPLIT)
		return &virt_to_page(table)->ptl;
	return &mm->page_table_lock;
}

static inline spinlock_t *pt_lock(struct mm *mm, pte_t *table)
{
	spinlock_t *ptl = pt_lockptr(mm, table);
	spin_lock(ptl);
	return ptl;
}

/* A zeroed page-table page on this CPU's node, its ptl unlocked; NULL when out of memory. */
pte_t *pt_table_alloc(void);
void pt_table_free(pte_t *table);

/*
 * Walk from the root to the PMD table covering va, creating missing tables above
 * it with cmpxchg. Returns the PMD table, or NULL: *err is -ENOMEM, or -EFAULT if
 * a leaf sits above the PMD level (Grace never makes one in a user half).
 */
pte_t *pt_pmd_table(struct mm *mm, uintptr_t va, int *err);

/* The leaf mapping va: 0 and *pte, *level set, or -ENOENT. Lock-free, for tests. */
int pt_lookup(struct mm *mm, uintptr_t va, pte_t *pte, int *level);

/* What the user half of mm holds, by walking it. Caller excludes changes (or accepts a snapshot).
 */
struct pt_counts {
	u64 pages_4k, pages_huge; /* leaves at PT_LEVEL_PTE / PT_LEVEL_PMD */
	u64 tables;		  /* table pages below the root */
};
void pt_count(struct mm *mm, struct pt_counts *c);

/*
 * Clear every leaf in [start, end) (page aligned) into g, and hand g every table
 * left empty whose whole span lies in the range or that holds nothing. Caller holds
 * mm->vma_lock for writing and has checked that no 2 MiB leaf straddles an edge.
 */
void pt_clear_range(struct mm *mm, uintptr_t start, uintptr_t end, struct tlb_gather *g);

/* Does a 2 MiB leaf map va while va is not 2 MiB aligned? (unmap's edge check) */
bool pt_huge_straddles(struct mm *mm, uintptr_t va);

/* Free every table, page and the root of mm's user half. No CPU may run on mm. */
void pt_free_all(struct mm *mm);

#endif
