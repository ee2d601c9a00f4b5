/*
 * VMA tables: per mm, a sorted table of pointers to disjoint [start, end) ranges.
 * A table, not a tree: lookups are a binary search over a few cache lines, and
 * the address spaces Grace builds (tests, benchmarks: one VMA per CPU) hold tens
 * of VMAs, where inserting by moving pointers costs less than a tree's rebalancing.
 *
 * An unmap leaves a hole: the slot emptied, its end kept. A map of the same range
 * fills it again, writing the end only if it changed, so an mm whose threads map
 * and unmap their own ranges over and over leaves the table's lines as they were,
 * and the other threads' faults keep reading them from their own caches. The ends
 * stay sorted, holes' too, and a hole's end lies between the end of the VMA below
 * it and the start of the one above: so the search for an address inside a VMA
 * still lands on that VMA, and for any other address on a hole or a VMA above
 * it. A map whose range ends past a hole's end takes the hole out; the table is
 * compacted, holes squeezed out, before it would grow.
 *
 * This file is the only one that changes a table, with mm->vma_lock held for writing
 * and inside a mm->vma_seq write section (fork, mm/fork.c, reads it to know that its
 * copy is whole); faults read it under RCU (mm/vma_lock.c), so every slot and end is
 * written with WRITE_ONCE. A bigger table is allocated with the lock dropped, after
 * which the writer checks that nobody grew it meanwhile, and the table it replaces is
 * always freed after a grace period (it is not type-stable memory).
 *
 * Lock order: mm->vma_lock alone; vma_free_all(), at teardown, takes each VMA's lock
 * with nothing held (docs/locking.md).
 */
#include <grace/errno.h>
#include <grace/page_alloc.h>
#include <grace/printk.h>
#include <grace/string.h>
#include "address_space_internal.h"
#include "vma_internal.h"

static unsigned table_capacity(unsigned order)
{
	return ((PAGE_SIZE << order) - sizeof(struct vma_table)) /
	       (sizeof(struct vma *) + sizeof(uintptr_t));
}

struct vma *vma_from(struct mm *mm, unsigned *i)
{
	struct vma_table *t = mm->vmat;
	for (; t && *i < t->nr; (*i)++)
		if (t->slot[*i])
			return t->slot[*i];
	return NULL;
}

/* The last VMA below index *i, *i moved to it; NULL if none is. */
static struct vma *vma_before(struct mm *mm, unsigned *i)
{
	while (*i) {
		struct vma *v = mm->vmat->slot[--*i];
		if (v)
			return v;
	}
	return NULL;
}

struct vma *vma_next_locked(struct mm *mm, unsigned *i)
{
	lockdep_assert_held(&mm->vma_lock);
	return vma_from(mm, i);
}

unsigned vma_count(struct mm *mm)
{
	unsigned n = 0;
	read_lock(&mm->vma_lock);
	for (unsigned i = 0; vma_from(mm, &i); i++)
		n++;
	read_unlock(&mm->vma_lock);
	return n;
}

unsigned vma_search_locked(struct mm *mm, uintptr_t addr)
{
	lockdep_assert_held(&mm->vma_lock); /* for reading or writing */
	return mm->vmat ? table_search(mm->vmat, addr) : 0;
}

/* The VMA at index i: NULL for a hole or past the table's end. */
static struct vma *vma_at(struct mm *mm, unsigned i)
{
	return mm->vmat && i < mm->vmat->nr ? mm->vmat->slot[i] : NULL;
}

struct vma *vma_find_locked(struct mm *mm, uintptr_t addr)
{
	struct vma *v = vma_at(mm, vma_search_locked(mm, addr));
	return v && v->start <= addr ? v : NULL;
}

bool vma_overlaps_locked(struct mm *mm, uintptr_t start, uintptr_t end)
{
	unsigned i = vma_search_locked(mm, start);
	struct vma *v = vma_from(mm, &i);
	return v && v->start < end;
}

bool vma_lookup(struct mm *mm, uintptr_t addr, struct vma *out)
{
	read_lock(&mm->vma_lock);
	struct vma *v = vma_find_locked(mm, addr);
	if (v)
		*out = *v;
	read_unlock(&mm->vma_lock);
	return v != NULL;
}

/*
 * Squeeze the holes out of mm's table, in a vma_seq write section; false if it
 * had none. Lookups racing it may be misdirected: their checks see it.
 */
static bool table_compact(struct mm *mm)
{
	struct vma_table *t = mm->vmat;
	uintptr_t *ends = vma_table_ends(t);
	unsigned to = 0;

	while (to < t->nr && t->slot[to])
		to++; /* the first hole: the slots below it stay as they are */
	if (to == t->nr)
		return false;
	write_seqcount_begin(&mm->vma_seq);
	for (unsigned i = to; vma_from(mm, &i); i++, to++) {
		WRITE_ONCE(t->slot[to], t->slot[i]);
		WRITE_ONCE(ends[to], ends[i]);
	}
	for (unsigned i = to; i < t->nr; i++)
		WRITE_ONCE(t->slot[i], NULL);
	WRITE_ONCE(t->nr, to);
	write_seqcount_end(&mm->vma_seq);
	return true;
}

static void table_free_rcu(struct rcu_head *head)
{
	struct vma_table *t = container_of(head, struct vma_table, rcu);
	free_pages(t, t->order);
}

int vma_reserve_locked(struct mm *mm, unsigned extra, bool *relocked)
{
	lockdep_assert_held(&mm->vma_lock);
	*relocked = false;
	while (extra) {
		struct vma_table *old = mm->vmat;
		unsigned nr = old ? old->nr : 0;
		if (old && nr + extra <= old->cap)
			return 0;
		if (old && table_compact(mm)) {
			*relocked = true; /* not dropped, but the indexes moved */
			continue;
		}
		unsigned order = old ? old->order + 1 : 0;
		if (nr + extra > VMA_MAX_COUNT || order > MAX_ORDER) {
			write_unlock(&mm->vma_lock);
			return -ENOMEM;
		}
		write_unlock(&mm->vma_lock);
		struct vma_table *bigger = mm_alloc_pages(NUMA_NO_NODE, order, 0);
		write_lock(&mm->vma_lock);
		*relocked = true;
		if (!bigger) {
			write_unlock(&mm->vma_lock);
			return -ENOMEM;
		}
		/* Other writers ran meanwhile: decide again from the table as it is now. */
		old = mm->vmat;
		nr = old ? old->nr : 0;
		if ((old && (old->order >= order || nr + extra <= old->cap)) ||
		    nr + extra > table_capacity(order)) {
			/* Grown, or shrunk to fit, or grown past what ours holds: ours is surplus.
			 */
			write_unlock(&mm->vma_lock);
			free_pages(bigger, order);
			write_lock(&mm->vma_lock);
			continue;
		}
		bigger->order = order;
		bigger->cap = table_capacity(order);
		bigger->nr = nr;
		if (old) {
			memcpy(bigger->slot, old->slot, nr * sizeof(struct vma *));
			memcpy(vma_table_ends(bigger), vma_table_ends(old), nr * sizeof(uintptr_t));
		}
		/* The copy before the pointer to it: pairs with rcu_dereference() in lookups. */
		rcu_assign_pointer(mm->vmat, bigger);
		if (old)
			call_rcu(&old->rcu, table_free_rcu);
	}
	return 0;
}

/* Take the hole at index i out, moving the slots above down one. */
static void table_remove_hole(struct vma_table *t, unsigned i)
{
	uintptr_t *ends = vma_table_ends(t);
	for (unsigned j = i; j + 1 < t->nr; j++) {
		WRITE_ONCE(t->slot[j], t->slot[j + 1]);
		WRITE_ONCE(ends[j], ends[j + 1]);
	}
	WRITE_ONCE(t->slot[t->nr - 1], NULL);
	WRITE_ONCE(t->nr, t->nr - 1);
}

void table_place(struct mm *mm, unsigned i, struct vma *v)
{
	struct vma_table *t = mm->vmat;
	uintptr_t *ends = vma_table_ends(t);

	WRITE_ONCE(v->mm, mm); /* a lookup that still holds v from an earlier life may read it */
	while (i < t->nr && !t->slot[i] && ends[i] < v->end)
		table_remove_hole(t, i);
	if (i < t->nr && !t->slot[i]) {
		if (ends[i] != v->end) /* a range mapped again leaves the line as it was */
			WRITE_ONCE(ends[i], v->end);
		WRITE_ONCE(t->slot[i], v);
		return;
	}
	BUG_ON(t->nr == t->cap);
	for (unsigned j = t->nr; j > i; j--) {
		WRITE_ONCE(t->slot[j], t->slot[j - 1]);
		WRITE_ONCE(ends[j], ends[j - 1]);
	}
	WRITE_ONCE(t->slot[i], v);
	WRITE_ONCE(ends[i], v->end);
	WRITE_ONCE(t->nr, t->nr + 1);
}

void vma_split_at_locked(struct mm *mm, uintptr_t addr, struct vma **spare)
{
	unsigned i = vma_search_locked(mm, addr);
	struct vma *v = vma_at(mm, i);
	if (!v || v->start >= addr)
		return; /* a boundary, or a hole, already */
	struct vma *high = *spare;
	*spare = NULL;
	high->start = addr;
	high->end = v->end;
	high->prot = v->prot;
	high->flags = v->flags;
	WRITE_ONCE(v->end, addr);
	WRITE_ONCE(vma_table_ends(mm->vmat)[i], addr);
	table_place(mm, i + 1, high);
}

void vma_remove_range_locked(struct mm *mm, uintptr_t start, uintptr_t end,
			     struct rcu_head **retired)
{
	struct vma *v;

	for_each_vma_overlapping(mm, i, v, start, end) {
		WRITE_ONCE(mm->vmat->slot[i], NULL);
		v->rcu.next = *retired;
		*retired = &v->rcu;
	}
}

uintptr_t vma_find_gap(struct mm *mm, size_t len, uintptr_t below)
{
	uintptr_t found = 0, end = MIN(below, USER_VA_END);

	read_lock(&mm->vma_lock);
	unsigned i = vma_search_locked(mm, end), above_i = i;
	struct vma *above = vma_from(mm, &above_i);
	if (above && above->start < end)
		end = above->start;
	/* Walk down from the highest VMA that ends at or below end, gap by gap. */
	for (;;) {
		struct vma *v = vma_before(mm, &i);
		uintptr_t floor = v ? v->end : VMA_MIN_ADDR;
		if (end >= floor && end - floor >= len) {
			found = end - len;
			break;
		}
		if (!v)
			break;
		end = v->start;
	}
	read_unlock(&mm->vma_lock);
	return found;
}

void vma_free_all(struct mm *mm)
{
	struct vma_table *t = mm->vmat;
	if (!t)
		return;
	/*
	 * No thread uses mm and no CPU has it loaded: no lookup can be inside it. One
	 * of another mm may hold a VMA here that was once its own, typesafe, until its
	 * check after the try: the write lock waits for that.
	 */
	struct vma *v;
	for (unsigned i = 0; (v = vma_from(mm, &i)); i++) {
		vma_write_lock(v);
		vma_free(v);
	}
	free_pages(t, t->order);
	mm->vmat = NULL;
}
