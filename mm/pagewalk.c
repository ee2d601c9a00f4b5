/*
 * The generic page-table walker for address spaces: table allocation, the
 * population of the levels above the PMD, lookup and counting for tests, range
 * clearing for unmap, splitting 2 MiB leaves, rewriting permissions and the
 * teardown walk. The rules for who may change which entry are in
 * include/grace/pagewalk.h.
 *
 * The levels above the PMD: an entry there only ever goes from empty to "points
 * to a zeroed table" while faults run (clearing needs the VMA lock for writing,
 * and happens only where no VMA remains, so no fault walks there), so a cmpxchg
 * from 0 decides a race and the loser frees its table. That is the PUD level's
 * split lock taken to its end: each entry is its own, so faults installing PMD
 * tables in two 1 GiB regions never wait for each other (they share at most the
 * entry's cache line, eight regions to a line), where a lock per PUD table would
 * be one line every CPU installing anywhere in its 512 GiB shares (on Sv39, the
 * whole user half: the root is the PUD table). With PTLOCK_MM a PUD entry is
 * installed under mm->page_table_lock instead, as Linux's __pmd_alloc() took it
 * before the split: there a PMD-table install waits for every page-table change
 * of the mm. Above the PUD (the x86 PML4) it is cmpxchg in both modes.
 *
 * Splitting: a 2 MiB leaf is replaced, under its PMD table's lock, by a PTE table
 * (allocated by the caller before it took mm->vma_lock) of 512 leaves for the same
 * pages with the same permissions, so a CPU that still holds the old 2 MiB
 * translation and one that walks the new table read the same bytes; the block
 * becomes 512 order-0 pages (split_page_block) so each can be unmapped alone.
 *
 * Lock order: docs/locking.md. Clearing, splitting and protecting hold one
 * page-table lock at a time (pt_lock), inside mm->vma_lock; the teardown walk
 * takes none.
 */
#include <grace/errno.h>
#include <grace/fault.h>
#include <grace/page_alloc.h>
#include <grace/pagewalk.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/race_point.h>
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

/*
 * The table that *e (an entry of `table`, a level-`level` table above the PMD)
 * points to, installing a zeroed one if it is empty. Memory is allocated with no
 * lock held; then the entry is filled by cmpxchg from 0, or, where the level has
 * a lock (a PUD entry with PTLOCK_MM), rechecked and filled under it. Whoever
 * loses frees its table. 0 and *out, or -ENOMEM.
 */
static int populate_entry(struct mm *mm, pte_t *table, pte_t *e, int level, pte_t *out)
{
	pte_t old = pt_entry_read(e);
	if (pte_present(old)) {
		*out = old;
		return 0;
	}
	pte_t *next = pt_table_alloc();
	if (!next)
		return -ENOMEM;
	pte_t new = pte_mk_table(virt_to_phys(next));
	/* *e was empty with no lock held: another CPU may fill it now. */
	race_point_key("pt.populate_entry", mm);
	spinlock_t *ptl = pt_lock_level(mm, table, level);
	if (ptl) {
		old = *e;
		if (!pte_present(old)) {
			/* Release: the zeroed table (and its ptl) before the pointer to it. */
			pt_entry_write(e, new);
			old = new;
			next = NULL;
		}
		spin_unlock(ptl);
	} else if (try_cmpxchg(e, &old, new)) {
		/*
		 * Release, as above. When we lose, the acquire on failure pairs with the
		 * winner's cmpxchg here, so we may walk into its table.
		 */
		old = new;
		next = NULL;
	}
	if (next)
		pt_table_free(next); /* another CPU populated it first; old holds its entry */
	*out = old;
	return 0;
}

pte_t *pt_pmd_table(struct mm *mm, uintptr_t va, int *err)
{
	pte_t *table = mm->root;

	for (int level = PT_TOP_LEVEL; level > PT_LEVEL_PMD; level--) {
		pte_t e;
		int ret = populate_entry(mm, table, &table[pt_index(va, level)], level, &e);
		if (ret) {
			*err = ret;
			return NULL;
		}
		if (pte_is_leaf(e)) {
			*err = -EFAULT;
			return NULL;
		}
		table = pt_table_of(e);
	}
	return table;
}

/* The PMD table covering va if every level above it exists, else NULL. Allocates nothing. */
static pte_t *find_pmd_table(struct mm *mm, uintptr_t va)
{
	pte_t *table = mm->root;

	for (int level = PT_TOP_LEVEL; level > PT_LEVEL_PMD; level--) {
		pte_t e = pt_entry_read(&table[pt_index(va, level)]);
		if (!pte_present(e) || pte_is_leaf(e))
			return NULL;
		table = pt_table_of(e);
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
 * free it. Entries of PUD, PMD and PTE tables change under the table's lock (the
 * VMA write lock already excludes faults; the lock keeps the one rule for every
 * writer of an entry); the levels above the PUD take none.
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
			/* The caller split every 2 MiB leaf that straddled the range's edges. */
			spinlock_t *ptl = pt_lock_level(mm, table, level);
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
			 * With PT_FREE_EXIT an empty PMD or PUD table stays too, until the
			 * mm goes: the next map there then rewrites no entry of the table
			 * above, whose line it shares with the neighbouring regions'.
			 */
			if (clear_table(mm, child, level - 1, va, next, g) &&
			    (level - 1 == PT_LEVEL_PTE || mm->pt_free == PT_FREE_UNMAP) &&
			    !vma_overlaps_locked(mm, span, span + size)) {
				spinlock_t *ptl = pt_lock_level(mm, table, level);
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

int pt_split_huge(struct mm *mm, uintptr_t va, pte_t *new_table, struct tlb_gather *g)
{
	lockdep_assert_held(&mm->vma_lock);
	pte_t *pmd_table = find_pmd_table(mm, va);
	if (!pmd_table)
		return 0;
	pte_t *pmd = &pmd_table[pt_index(va, PT_LEVEL_PMD)];
	u64 huge = pt_level_size(PT_LEVEL_PMD);
	uintptr_t base = ALIGN_DOWN(va, huge);

	spinlock_t *ptl = pt_lock(mm, pmd_table);
	pte_t old = *pmd;
	if (!pte_is_leaf(old)) {
		spin_unlock(ptl);
		return 0;
	}
	phys_addr_t pa = pte_phys(old);
	unsigned prot = pte_leaf_prot(old);
	for (unsigned i = 0; i < PT_ENTRIES; i++)
		new_table[i] = pte_mk_leaf(pa + (phys_addr_t)i * PAGE_SIZE, prot, PT_LEVEL_PTE);
	/*
	 * Release: the filled table before the entry that links it; a hardware walker
	 * may follow the entry at once.
	 */
	pt_entry_write(pmd, pte_mk_table(virt_to_phys(new_table)));
	spin_unlock(ptl);
	/* The pages are ours alone: the VMA lock held for writing keeps every unmap out. */
	split_page_block(phys_to_page(pa), HUGE_ORDER);
	tlb_gather_range(g, base, base + huge);
	mm_rss_add(mm, PT_LEVEL_PMD, -1);
	mm_rss_add(mm, PT_LEVEL_PTE, PT_ENTRIES);
	fault_stat_inc(split_huge);
	return 1;
}

void pt_split_edges(struct mm *mm, uintptr_t start, uintptr_t end, struct pt_split_tables *st,
		    struct tlb_gather *g)
{
	uintptr_t edges[2] = {start, end};

	for (unsigned i = 0; i < 2; i++) {
		if (!pt_huge_straddles(mm, edges[i]))
			continue; /* aligned, unmapped, 4 KiB, or split at the other edge */
		if (!st->nr)
			panic("pagewalk: no table to split the 2 MiB leaf at %lx", edges[i]);
		if (pt_split_huge(mm, edges[i], st->table[st->nr - 1], g))
			st->table[--st->nr] = NULL;
	}
}

void pt_split_tables_free(struct pt_split_tables *st)
{
	while (st->nr)
		pt_table_free(st->table[--st->nr]);
}

/* Give the leaf *e of table (mapping va, level-`level`) the permissions prot. */
static void protect_leaf(struct mm *mm, pte_t *table, pte_t *e, int level, uintptr_t va,
			 unsigned prot, struct tlb_gather *g)
{
	/* A page fork shared stays read-only: its first write must still copy it. */
	if (level == PT_LEVEL_PTE && atomic_read(&phys_to_page(pte_phys(*e))->refcount) > 1)
		prot &= ~PROT_WRITE;
	spinlock_t *ptl = pt_lock(mm, table);
	pte_t old = *e, new = pte_leaf_with_prot(old, prot, level);
	if (new != old)
		pt_entry_write(e, new);
	spin_unlock(ptl);
	if (new != old)
		tlb_gather_range(g, va, va + PAGE_SIZE); /* one address drops a leaf of any size */
}

static void protect_table(struct mm *mm, pte_t *table, int level, uintptr_t start, uintptr_t end,
			  unsigned prot, struct tlb_gather *g)
{
	u64 size = pt_level_size(level);
	uintptr_t va = start;

	while (va < end) {
		uintptr_t base = ALIGN_DOWN(va, size), next = base + size;
		if (next > end || next < va)
			next = end;
		pte_t *e = &table[pt_index(va, level)];
		pte_t old = pt_entry_read(e);
		if (pte_is_leaf(old)) {
			if (base < start || next < base + size)
				panic("pagewalk: protecting part of the level-%d leaf at %lx",
				      level, base);
			protect_leaf(mm, table, e, level, base, prot, g);
		} else if (pte_present(old)) {
			protect_table(mm, pt_table_of(old), level - 1, va, next, prot, g);
		}
		va = next;
	}
}

void pt_protect_range(struct mm *mm, uintptr_t start, uintptr_t end, unsigned prot,
		      struct tlb_gather *g)
{
	lockdep_assert_held(&mm->vma_lock);
	if (start >= end || end > USER_VA_END)
		return;
	protect_table(mm, mm->root, PT_TOP_LEVEL, start, end, prot, g);
}

static void free_table(pte_t *table, int level, unsigned nr)
{
	for (unsigned i = 0; i < nr; i++) {
		pte_t e = table[i];
		if (!pte_present(e))
			continue;
		if (pte_is_leaf(e)) {
			void *page = phys_to_virt(pte_phys(e));
			if (level == PT_LEVEL_PTE)
				mm_page_put(page); /* fork may share it */
			else
				free_pages(page, HUGE_ORDER);
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
