/*
 * The generic page-table walker for address spaces (mm/pagewalk.c): table pages,
 * their locks, and the walks that fault, unmap and teardown are built from.
 *
 * Who may change which entry:
 *   above PT_LEVEL_PMD   (PUD entries, pointers to PMD tables; on Sv39 the root's
 *                        entries; and x86's PML4 entries) filled once from empty
 *                        and cleared only with the VMA lock held for writing
 *                        and where no VMA remains. With PTLOCK_SPLIT by cmpxchg,
 *                        no lock: each entry is its own split, so installing a
 *                        PMD table in one 1 GiB region never waits for another.
 *                        With PTLOCK_MM a PUD entry changes under
 *                        mm->page_table_lock, as every other entry does then.
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

/*
 * The lock for changing an entry of a level-`level` table, taken; NULL where the
 * level takes none (above the PMD with PTLOCK_SPLIT, above the PUD always).
 */
static inline spinlock_t *pt_lock_level(struct mm *mm, pte_t *table, int level)
{
	if (level <= PT_LEVEL_PMD || (level == PT_LEVEL_PUD && mm->ptlock == PTLOCK_MM))
		return pt_lock(mm, table);
	return NULL;
}

/* A zeroed page-table page on this CPU's node, its ptl unlocked; NULL when out of memory. */
pte_t *pt_table_alloc(void);
void pt_table_free(pte_t *table);

/*
 * Walk from the root to the PMD table covering va, creating missing tables above
 * it: a PMD table under the PUD table's lock, the tables above by cmpxchg. Returns
 * the PMD table, or NULL: *err is -ENOMEM, or -EFAULT if a leaf sits above the PMD
 * level (Grace never makes one in a user half).
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
 * mm->vma_lock for writing and has split every 2 MiB leaf that straddles an edge.
 */
void pt_clear_range(struct mm *mm, uintptr_t start, uintptr_t end, struct tlb_gather *g);

/* Does a 2 MiB leaf map va while va is not 2 MiB aligned? (an edge that needs a split) */
bool pt_huge_straddles(struct mm *mm, uintptr_t va);

/*
 * Split the 2 MiB leaf mapping va into new_table (a zeroed table from
 * pt_table_alloc()): 512 4 KiB leaves for the same pages with the same permissions,
 * installed under the PMD table's lock; the block becomes 512 order-0 pages and its
 * range goes into g to be flushed. Returns 1 (new_table is in use), or 0 (no 2 MiB
 * leaf maps va; new_table is still the caller's). Caller holds mm->vma_lock for
 * writing and the VMA around va for writing, so no unmap and no fault in it runs
 * meanwhile; other CPUs may keep reading the range through either translation,
 * which map the same bytes.
 */
int pt_split_huge(struct mm *mm, uintptr_t va, pte_t *new_table, struct tlb_gather *g);

/*
 * PTE tables allocated before mm->vma_lock is taken (no allocation under it), for
 * the splits of one range's two edges.
 */
struct pt_split_tables {
	pte_t *table[2];
	unsigned nr;
};

/*
 * Split every 2 MiB leaf an edge cuts, with st's tables: one for each edge where a
 * 2 MiB leaf may be (mm/vma.c counts them from the VMAs).
 */
void pt_split_edges(struct mm *mm, uintptr_t start, uintptr_t end, struct pt_split_tables *st,
		    struct tlb_gather *g);
/* Free the tables st holds still (after the VMA lock is dropped). */
void pt_split_tables_free(struct pt_split_tables *st);

/*
 * Give every present leaf in [start, end) the permissions prot (PROT_*, PROT_USER
 * included), each under its table's lock, and gather each changed one into g.
 * Caller holds mm->vma_lock for writing and has split the leaves the edges cut.
 */
void pt_protect_range(struct mm *mm, uintptr_t start, uintptr_t end, unsigned prot,
		      struct tlb_gather *g);

/* Free every table, page and the root of mm's user half. No CPU may run on mm. */
void pt_free_all(struct mm *mm);

#endif
