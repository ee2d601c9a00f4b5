/*
 * What the VMA files share and nobody else needs. mm/vma_free.c makes VMAs and frees
 * them the way vma_free= says; mm/vma_lock.c is the per-VMA lock and the fault's
 * lookup under RCU that takes it; mm/vma_table.c is an mm's sorted table of VMAs with
 * its holes, and the only file that changes a table; mm/vma.c is the edits (map,
 * unmap, replace, discard, protect, nohuge) made of them. Lock order: mm->vma_lock,
 * then a VMA's lock, then one page-table lock at a time (docs/locking.md).
 */
#ifndef MM_VMA_INTERNAL_H
#define MM_VMA_INTERNAL_H

#include <grace/vma.h>

/* ---- making and freeing VMAs (mm/vma_free.c) ---- */

/*
 * A VMA for [start, end), write-locked (as its slab keeps free ones), from the
 * cache of the mode in force: it is freed the way its cache says, whatever the
 * mode is by then.
 */
struct vma *vma_alloc(uintptr_t start, uintptr_t end, unsigned prot, unsigned flags);

/* Free a VMA no table holds; it is write-locked, with no reader waiting. */
void vma_free(struct vma *v);

/*
 * Free the VMAs vma_remove_range_locked() chained on retired, each the way its
 * cache says; once mm->vma_lock is dropped: no writer frees under it.
 */
void vma_retire_all(struct rcu_head *retired);

/* ---- the per-VMA lock (mm/vma_lock.c) ---- */

/* Wait for the faults inside v to finish and keep new ones out. */
void vma_write_lock(struct vma *v);
void vma_write_unlock(struct vma *v);

/* ---- the table (mm/vma_table.c) ---- */

/*
 * Index of the first slot, VMA or hole, with end > addr (t->nr if none); t is
 * stable or validated by the caller. Inline: the fault's lookup under RCU
 * (mm/vma_lock.c) runs it on every fault.
 */
static inline unsigned table_search(struct vma_table *t, uintptr_t addr)
{
	const uintptr_t *ends = vma_table_ends(t);
	unsigned lo = 0, hi = MIN(READ_ONCE(t->nr), t->cap);
	/* A write section moving the ends may misdirect us: the caller's checks see it. */
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		if (READ_ONCE(ends[mid]) <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* table_search() in mm's table, under mm->vma_lock (either side). */
unsigned vma_search_locked(struct mm *mm, uintptr_t addr);

/* The first VMA at index *i or above, *i moved to it; NULL if none is. */
struct vma *vma_from(struct mm *mm, unsigned *i);

/* Each VMA v of mm that overlaps [lo, hi), in address order; i is its index. */
#define for_each_vma_overlapping(mm, i, v, lo, hi)                                                 \
	for (unsigned i = vma_search_locked(mm, lo);                                               \
	     ((v) = vma_from(mm, &i)) && (v)->start < (hi); i++)

/*
 * With the lock held for writing, make room for `extra` more VMAs: compacting the
 * table if that is enough, growing it if not. Returns 0 with the lock still held,
 * or -ENOMEM with it dropped. May drop and retake the lock or move the slots, so
 * the caller must recheck anything it decided before calling.
 */
int vma_reserve_locked(struct mm *mm, unsigned extra, bool *relocked);

/*
 * Put v (write-locked) at index i of mm's table, where the search for its start
 * led, no VMA at or above i starting below v's end: into the hole at i if there
 * is one, once the holes that end inside v are out, else into a slot made by
 * moving those above up one. Inside a vma_seq write section; a new slot needs
 * the room reserved.
 */
void table_place(struct mm *mm, unsigned i, struct vma *v);

/*
 * Make addr a VMA boundary: the VMA around it keeps the part below and a spare,
 * write-locked like it, takes the part above. Inside a vma_seq write section;
 * the caller reserved the room.
 */
void vma_split_at_locked(struct mm *mm, uintptr_t addr, struct vma **spare);

/*
 * Remove [start, end) from the table, leaving holes; its edges are VMA boundaries
 * already. The VMAs stay write-locked (a lookup that found one fails its try) and go onto
 * *retired, chained through their rcu heads, for vma_retire_all() once vma_lock
 * is dropped: no writer frees under it.
 */
void vma_remove_range_locked(struct mm *mm, uintptr_t start, uintptr_t end,
			     struct rcu_head **retired);

#endif
