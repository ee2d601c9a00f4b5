/*
 * The generic page-table walker for address spaces: table allocation, the
 * lock-free population of the levels above the PMD, lookup and counting for
 * tests, range clearing for unmap and the teardown walk. The rules for who may
 * change which entry are in include/grace/pagewalk.h.
 *
 * Why the top levels take no lock: an entry there only ever goes from empty to
 * "points to a zeroed table" while faults run (clearing needs the VMA lock for
 * writing, which excludes faults), so a cmpxchg from 0 decides the race and the
 * loser frees its table. One PMD table covers 1 GiB, so a lock there would be one
 * more line every CPU faulting anywhere in the same 512 GiB (x86 PUD) or the whole
 * user half (Sv39 root) would share.
 *
 * Lock order: docs/locking.md. Clearing holds one page-table lock at a time
 * (pt_lock), inside mm->vma_lock; the teardown walk takes none.
 */
#include <grace/errno.h>
#include <grace/fault.h>
#include <grace/page_alloc.h>
#include <grace/pagewalk.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <grace/tlb.h>
#include <grace/vma.h>
#include "address_space_internal.h"

/* Page-table pages each CPU allocated and gave up; only pt_table_stats_sum() reads others'. */
static DEFINE_PER_CPU(struct pt_table_stats, pt_table_stats);

/* Bumped from preemptible paths too (mm_create, pt_pmd_table outside a fault). */
#define pt_table_stat_inc(field) this_cpu_inc_preemptible(pt_table_stats, field)

pte_t *pt_table_alloc(void)
{
	pte_t *t = mm_alloc_pages(NUMA_NO_NODE, 0, 0);
	if (!t)
		return NULL;
	/* The allocator initialised page->ptl unlocked; mark the page for debugging. */
	virt_to_page(t)->flags |= PG_PGTABLE;
	pt_table_stat_inc(allocated);
	return t;
}

void pt_table_retire(pte_t *table)
{
	virt_to_page(table)->flags &= ~PG_PGTABLE;
	pt_table_stat_inc(freed);
}

void pt_table_free(pte_t *table)
{
	pt_table_retire(table);
	free_pages(table, 0);
}

void pt_table_stats_sum(struct pt_table_stats *out)
{
	unsigned cpu;

	*out = (struct pt_table_stats){0};
	for_each_online_cpu(cpu) {
		out->allocated += READ_ONCE(per_cpu(pt_table_stats, cpu).allocated);
		out->freed += READ_ONCE(per_cpu(pt_table_stats, cpu).freed);
	}
}

pte_t *pt_pmd_table(struct mm *mm, uintptr_t va, int *err)
{
	pte_t *table = mm->root;

	for (int level = PT_TOP_LEVEL; level > PT_LEVEL_PMD; level--) {
		pte_t *e = &table[pt_index(va, level)];
		pte_t old = pt_entry_read(e);
		if (!pte_present(old)) {
			pte_t *next = pt_table_alloc();
			if (!next) {
				*err = -ENOMEM;
				return NULL;
			}
			pte_t new = pte_mk_table(virt_to_phys(next));
			/*
			 * Release: the zeroed table (and its ptl) before the pointer to it.
			 * Pairs with pt_entry_read(); when we lose, the acquire on failure pairs
			 * with the winner's cmpxchg here, so we may walk into its table.
			 */
			if (try_cmpxchg(e, &old, new)) {
				old = new;
			} else {
				/* Another CPU populated it first; old now holds its entry. */
				pt_table_free(next);
			}
		}
		if (pte_is_leaf(old)) {
			*err = -EFAULT;
			return NULL;
		}
		table = pt_table_of(old);
	}
	return table;
}

int pt_lookup(struct mm *mm, uintptr_t va, pte_t *pte, int *level)
{
	pte_t *table = mm->root;

	if (va >= USER_VA_END)
		return -ENOENT;
	for (int l = PT_TOP_LEVEL; l >= PT_LEVEL_PTE; l--) {
		pte_t e = pt_entry_read(&table[pt_index(va, l)]);
		if (!pte_present(e))
			return -ENOENT;
		if (pte_is_leaf(e)) {
			*pte = e;
			*level = l;
			return 0;
		}
		table = pt_table_of(e);
	}
	return -ENOENT;
}

/* Root entries [0, user_root_entries()) map the user half; the rest are the kernel's. */
static unsigned user_root_entries(void)
{
	return pt_index(USER_VA_END - 1, PT_TOP_LEVEL) + 1;
}

static void count_table(pte_t *table, int level, unsigned nr, struct pt_counts *c)
{
	for (unsigned i = 0; i < nr; i++) {
		pte_t e = pt_entry_read(&table[i]);
		if (!pte_present(e))
			continue;
		if (pte_is_leaf(e)) {
			if (level == PT_LEVEL_PTE)
				c->pages_4k++;
			else if (level == PT_LEVEL_PMD)
				c->pages_huge++;
			continue;
		}
		c->tables++;
		count_table(pt_table_of(e), level - 1, PT_ENTRIES, c);
	}
}

void pt_count(struct mm *mm, struct pt_counts *c)
{
	*c = (struct pt_counts){0};
	count_table(mm->root, PT_TOP_LEVEL, user_root_entries(), c);
}

bool pt_huge_straddles(struct mm *mm, uintptr_t va)
{
	pte_t pte;
	int level;

	if (IS_ALIGNED(va, pt_level_size(PT_LEVEL_PMD)))
		return false;
	return !pt_lookup(mm, va, &pte, &level) && level == PT_LEVEL_PMD;
}

static bool table_empty(const pte_t *table)
{
	for (unsigned i = 0; i < PT_ENTRIES; i++)
		if (pte_present(table[i]))
			return false;
	return true;
}

/*
 * Clear [start, end) inside `table` (a level-`level` table whose entry covers
 * base..). Returns true if the table is now empty, so the caller may unlink and
 * free it. Entries change under the table's lock (the VMA write lock already
 * excludes faults; the lock keeps the one rule for every writer of an entry).
 */
static bool clear_table(struct mm *mm, pte_t *table, int level, uintptr_t start, uintptr_t end,
			struct tlb_gather *g)
{
	u64 size = pt_level_size(level);
	uintptr_t va = start;

	while (va < end) {
		uintptr_t next = ALIGN_DOWN(va, size) + size;
		if (next > end || next < va)
			next = end;
		pte_t *e = &table[pt_index(va, level)];
		pte_t old = pt_entry_read(e);
		if (!pte_present(old)) {
			va = next;
			continue;
		}
		if (pte_is_leaf(old)) {
			/* The caller checked that no 2 MiB leaf straddles the range's edges. */
			spinlock_t *ptl = level <= PT_LEVEL_PMD ? pt_lock(mm, table) : NULL;
			pt_entry_write(e, 0);
			if (ptl)
				spin_unlock(ptl);
			mm_rss_add(mm, level, -1);
			tlb_gather_leaf(g, ALIGN_DOWN(va, size), old, level);
		} else {
			pte_t *child = pt_table_of(old);
			uintptr_t span = ALIGN_DOWN(va, size);
			/*
			 * A table that also maps part of a VMA left in place stays, even empty:
			 * a fault there holds only its own VMA and may be walking into it.
			 */
			if (clear_table(mm, child, level - 1, va, next, g) &&
			    !vma_overlaps_locked(mm, span, span + size)) {
				spinlock_t *ptl = level <= PT_LEVEL_PMD ? pt_lock(mm, table) : NULL;
				pt_entry_write(e, 0);
				if (ptl)
					spin_unlock(ptl);
				tlb_gather_table(g, child);
			}
		}
		va = next;
	}
	return table_empty(table);
}

void pt_clear_range(struct mm *mm, uintptr_t start, uintptr_t end, struct tlb_gather *g)
{
	if (start >= end || end > USER_VA_END)
		return;
	/* The root itself is never freed here, whatever clear_table says. */
	clear_table(mm, mm->root, PT_TOP_LEVEL, start, end, g);
}

static void free_table(pte_t *table, int level, unsigned nr)
{
	for (unsigned i = 0; i < nr; i++) {
		pte_t e = table[i];
		if (!pte_present(e))
			continue;
		if (pte_is_leaf(e)) {
			void *page = phys_to_virt(pte_phys(e));
			free_pages(page, level == PT_LEVEL_PMD ? HUGE_ORDER : 0);
			continue;
		}
		pte_t *child = pt_table_of(e);
		free_table(child, level - 1, PT_ENTRIES);
		pt_table_free(child);
	}
}

void pt_free_all(struct mm *mm)
{
	free_table(mm->root, PT_TOP_LEVEL, user_root_entries());
	pt_table_free(mm->root);
	mm->root = NULL;
}
