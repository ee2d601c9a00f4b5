/*
 * The edits of an mm's VMAs: map, and through one engine, vma_edit(), unmap,
 * mmap(MAP_FIXED)'s replace, madvise()'s discard and nohuge advice, and mprotect.
 * Writers hold mm->vma_lock for writing, write-lock each VMA they change or remove
 * (mm/vma_lock.c), change the table (mm/vma_table.c) inside a mm->vma_seq write
 * section, then the page tables, and retire the VMAs they took out once the lock is
 * dropped (mm/vma_free.c). Page tables are freed only where no VMA remains
 * (vma_overlaps_locked): a fault in a neighbouring VMA holds nothing the writer waits
 * for and may be walking a table that straddles both.
 *
 * Nothing is allocated under the lock: VMAs before taking it; a bigger table
 * with the lock dropped, after which the writer checks that nobody grew it
 * meanwhile; the PTE tables that splitting a 2 MiB page an edge cuts needs, the
 * same way. vma_unmap() and vma_protect() edit the page tables under the lock
 * (which, held for writing, keeps the other writers out), then drop it before
 * the TLB shootdown, which waits for other CPUs (see mm/tlb.c). Pages are freed
 * only after that.
 *
 * Lock order: mm->vma_lock, then the VMAs' locks, then one page-table lock at a time
 * (docs/locking.md).
 */
#include <grace/errno.h>
#include <grace/huge.h>
#include <grace/pagewalk.h>
#include <grace/tlb.h>
#include "vma_internal.h"

#define VMA_PROT_ALL (PROT_READ | PROT_WRITE | PROT_EXEC)
#define VMA_FLAGS_ALL (VMA_ANON | VMA_NOHUGE)

static int range_check(uintptr_t start, size_t len)
{
	uintptr_t end = start + len;
	if (!len || !IS_ALIGNED(start, PAGE_SIZE) || !IS_ALIGNED(len, PAGE_SIZE))
		return -EINVAL;
	if (end < start || start < VMA_MIN_ADDR || end > USER_VA_END)
		return -EINVAL;
	return 0;
}

int vma_map(struct mm *mm, uintptr_t start, size_t len, unsigned prot, unsigned flags)
{
	int err = range_check(start, len);
	if (err)
		return err;
	if ((prot & ~VMA_PROT_ALL) || (flags & ~VMA_FLAGS_ALL))
		return -EINVAL;
	uintptr_t end = start + len;
	struct vma *v = vma_alloc(start, end, prot, flags | VMA_ANON);
	if (!v)
		return -ENOMEM;

	write_lock(&mm->vma_lock);
	for (;;) {
		unsigned i = vma_search_locked(mm, start);
		if (vma_overlaps_locked(mm, start, end)) {
			write_unlock(&mm->vma_lock);
			vma_free(v);
			return -EEXIST;
		}
		bool relocked;
		err = vma_reserve_locked(mm, 1, &relocked);
		if (err) {
			vma_free(v);
			return err;
		}
		if (relocked)
			continue; /* the table may have changed: search again */
		write_seqcount_begin(&mm->vma_seq);
		table_place(mm, i, v);
		write_seqcount_end(&mm->vma_seq);
		vma_write_unlock(v);
		break;
	}
	write_unlock(&mm->vma_lock);
	return 0;
}

/*
 * May a 2 MiB leaf cut the edge at addr? Only if addr is not 2 MiB aligned and
 * the VMA around it may hold the whole aligned 2 MiB (the fault path's rule).
 * Counted from the VMAs, not the page tables: until the writer has the VMA
 * write-locked a lockless fault may still install such a leaf. A VMA_NOHUGE one
 * may too: madvise(MADV_NOHUGEPAGE) keeps the 2 MiB pages it finds.
 */
static bool vma_edge_may_cut_huge_locked(struct mm *mm, uintptr_t addr)
{
	uintptr_t base = ALIGN_DOWN(addr, HUGE_SIZE);
	struct vma *v = vma_find_locked(mm, addr);
	return addr != base && v && (v->flags & VMA_ANON) && base >= v->start &&
	       base + HUGE_SIZE <= v->end;
}

/* The PTE tables splitting at [start, end)'s edges may need: 0, 1 or 2. */
static unsigned vma_split_tables_needed_locked(struct mm *mm, uintptr_t start, uintptr_t end)
{
	bool at_start = vma_edge_may_cut_huge_locked(mm, start);
	bool at_end = vma_edge_may_cut_huge_locked(mm, end);
	if (at_start && at_end && ALIGN_DOWN(start, HUGE_SIZE) == ALIGN_DOWN(end, HUGE_SIZE))
		return 1; /* one 2 MiB page, cut at both ends: one split */
	return (unsigned)at_start + (unsigned)at_end;
}

/*
 * With the lock held for writing: have in st a PTE table for each edge of
 * [start, end) that may cut a 2 MiB page. Tables are allocated with the lock
 * dropped, never under it; then *relocked is set and the caller must recheck
 * everything. 0 with the lock held, or -ENOMEM with it dropped. Those no split
 * used are freed after.
 */
static int vma_split_tables_locked(struct mm *mm, uintptr_t start, uintptr_t end,
				   struct pt_split_tables *st, bool *relocked)
{
	lockdep_assert_held(&mm->vma_lock);
	*relocked = false;
	while (st->nr < vma_split_tables_needed_locked(mm, start, end)) {
		write_unlock(&mm->vma_lock);
		pte_t *table = pt_table_alloc();
		write_lock(&mm->vma_lock);
		*relocked = true;
		if (!table) {
			write_unlock(&mm->vma_lock);
			return -ENOMEM;
		}
		st->table[st->nr++] = table;
	}
	return 0;
}

/* The VMAs a writer may add by splitting at its range's two edges: one each. */
struct vma_spares {
	struct vma *v[2];
};

static void vma_spares_free(struct vma_spares *sp)
{
	for (unsigned i = 0; i < 2; i++)
		if (sp->v[i])
			vma_free(sp->v[i]);
}

static int vma_spares_alloc(struct vma_spares *sp)
{
	sp->v[0] = vma_alloc(0, 0, 0, 0);
	sp->v[1] = sp->v[0] ? vma_alloc(0, 0, 0, 0) : NULL;
	if (sp->v[1])
		return 0;
	vma_spares_free(sp);
	return -ENOMEM;
}

/* VMAs that splitting at start and at end adds: one per edge strictly inside a VMA. */
static unsigned vma_edge_splits_locked(struct mm *mm, uintptr_t start, uintptr_t end)
{
	struct vma *first = vma_find_locked(mm, start), *last = vma_find_locked(mm, end - 1);
	return (first && first->start < start) + (last && last->end > end);
}

/* Does [start, end) lie inside VMAs with no hole? */
static bool vma_covers_locked(struct mm *mm, uintptr_t start, uintptr_t end)
{
	uintptr_t va = start;
	struct vma *v;

	for (unsigned i = vma_search_locked(mm, start); (v = vma_from(mm, &i)) && va < end; i++) {
		if (v->start > va)
			return false;
		va = v->end;
	}
	return va >= end;
}

/*
 * Everything a writer of [start, end) decides before it changes anything: that
 * VMAs cover the range (if it must be covered: -ENOMEM otherwise), room for the
 * VMAs its edges add (if it splits them) and for `inserts` more, and the PTE
 * tables its edges' 2 MiB splits need. 0 with the lock held for writing, or an
 * error with it dropped.
 */
static int vma_edit_prepare_locked(struct mm *mm, uintptr_t start, uintptr_t end, bool covered,
				   bool split_vmas, unsigned inserts, struct pt_split_tables *st)
{
	bool relocked;
	int err;

	for (;;) {
		if (covered && !vma_covers_locked(mm, start, end)) {
			write_unlock(&mm->vma_lock);
			return -ENOMEM;
		}
		unsigned splits = split_vmas ? vma_edge_splits_locked(mm, start, end) : 0;
		err = vma_reserve_locked(mm, splits + inserts, &relocked);
		if (err)
			return err;
		if (relocked)
			continue; /* the table may have changed: count again */
		err = vma_split_tables_locked(mm, start, end, st, &relocked);
		if (err || !relocked)
			return err;
	}
}

/*
 * Take every VMA overlapping [start, end) for writing (waiting out its faults)
 * and return the span they cover, [*lo, *hi): once the writer is done, the VMAs
 * in that span are exactly these and the pieces made of them.
 */
static void vma_write_lock_range(struct mm *mm, uintptr_t start, uintptr_t end, uintptr_t *lo,
				 uintptr_t *hi)
{
	struct vma *v;

	*lo = start;
	*hi = end;
	for_each_vma_overlapping(mm, i, v, start, end) {
		vma_write_lock(v);
		*lo = MIN(*lo, v->start);
		*hi = MAX(*hi, v->end);
	}
}

/* Let faults into the VMAs in [lo, hi) again: the page tables match them now. */
static void vma_write_unlock_range(struct mm *mm, uintptr_t lo, uintptr_t hi)
{
	struct vma *v;

	for_each_vma_overlapping(mm, i, v, lo, hi)
		vma_write_unlock(v);
}

/* Give the VMAs in [start, end) prot; its edges are VMA boundaries already. */
static void vma_set_prot_locked(struct mm *mm, uintptr_t start, uintptr_t end, unsigned prot)
{
	struct vma *v;
	for_each_vma_overlapping(mm, i, v, start, end)
		WRITE_ONCE(v->prot, prot);
}

/* What vma_edit() does to its range. */
enum vma_edit_op {
	VMA_EDIT_UNMAP,
	VMA_EDIT_REPLACE, /* unmap it and map a new VMA there, in one step */
	VMA_EDIT_DISCARD, /* drop its pages, keep its VMAs as they are */
	VMA_EDIT_PROTECT, /* give it prot (0: no access, PROT_NONE) */
	VMA_EDIT_NOHUGE,  /* no 2 MiB pages for its later faults */
	VMA_EDIT_HUGE,	  /* 2 MiB pages again where they fit */
};

static void vma_set_nohuge_locked(struct mm *mm, uintptr_t start, uintptr_t end, bool nohuge)
{
	struct vma *v;
	for_each_vma_overlapping(mm, i, v, start, end)
		WRITE_ONCE(v->flags, nohuge ? v->flags | VMA_NOHUGE : v->flags & ~VMA_NOHUGE);
}

/*
 * Apply op to [start, start + len) (every page must lie in a VMA but to unmap,
 * replace or discard): the VMAs it touches write-locked, its edges made VMA
 * boundaries (but to discard) and the 2 MiB pages they cut split, then the range
 * removed (and a VMA of prot and flags put in its place), given prot or its flags
 * changed, in the table and the page tables, or its pages dropped from the page
 * tables alone, and one TLB shootdown once the lock is dropped. Discarding a
 * range with holes drops the pages of the VMAs in it and returns -ENOMEM.
 */
static int vma_edit(struct mm *mm, uintptr_t start, size_t len, unsigned prot, unsigned flags,
		    enum vma_edit_op op)
{
	bool replace = op == VMA_EDIT_REPLACE, discard = op == VMA_EDIT_DISCARD;
	bool unmap = op == VMA_EDIT_UNMAP || replace;
	int err = range_check(start, len);
	if (err)
		return err;
	uintptr_t end = start + len, lo, hi;
	struct pt_split_tables st = {.nr = 0};
	struct vma_spares sp = {{NULL, NULL}}; /* a discard splits no VMA: none needed */
	struct vma *fresh = NULL;
	struct rcu_head *retired = NULL; /* the VMAs an unmap took out */
	struct tlb_gather g;

	if (replace) {
		if ((prot & ~VMA_PROT_ALL) || (flags & ~VMA_FLAGS_ALL))
			return -EINVAL;
		/* Write-locked until the old pages are gone: no fault may map into it before. */
		fresh = vma_alloc(start, end, prot, flags | VMA_ANON);
		if (!fresh)
			return -ENOMEM;
	}
	if (!discard && vma_spares_alloc(&sp)) {
		err = -ENOMEM;
		goto out_fresh;
	}
	write_lock(&mm->vma_lock);
	err = vma_edit_prepare_locked(mm, start, end, !unmap && !discard, !discard, replace, &st);
	if (err)
		goto out_unlocked;
	bool holes = discard && !vma_covers_locked(mm, start, end);
	vma_write_lock_range(mm, start, end, &lo, &hi);
	if (!discard) {
		write_seqcount_begin(&mm->vma_seq);
		vma_split_at_locked(mm, start, &sp.v[0]);
		vma_split_at_locked(mm, end, &sp.v[1]);
		if (op == VMA_EDIT_PROTECT)
			vma_set_prot_locked(mm, start, end, prot);
		else if (unmap)
			vma_remove_range_locked(mm, start, end, &retired);
		else
			vma_set_nohuge_locked(mm, start, end, op == VMA_EDIT_NOHUGE);
		if (replace) {
			table_place(mm, vma_search_locked(mm, start), fresh);
			fresh = NULL;
		}
		write_seqcount_end(&mm->vma_seq);
	}
	tlb_gather_init(&g, mm);
	pt_split_edges(mm, start, end, &st, &g);
	if (unmap || discard)
		pt_clear_range(mm, start, end, &g); /* a table stays while a VMA overlaps it */
	else if (op != VMA_EDIT_PROTECT)
		; /* the pages already there stay as they are, 2 MiB ones too, as on Linux */
	else if (prot)
		pt_protect_range(mm, start, end, prot | PROT_USER, &g);
	else
		/*
		 * PROT_NONE: a leaf cannot forbid reading (grace/pgtable.h), so the pages
		 * stay mapped for the kernel only. A user access faults, and the VMA's prot
		 * of 0 refuses it; the pages keep their bytes for a later mprotect.
		 */
		pt_protect_range(mm, start, end, PROT_READ, &g);
	vma_write_unlock_range(mm, lo, hi); /* what is left of them: the page tables match now */
	write_unlock(&mm->vma_lock);
	vma_retire_all(retired);
	/*
	 * Faults may resume now: an unmapped range has no VMA, so they fail, and its old
	 * pages wait in g; a discarded or replaced one's fault in zeroed pages; a
	 * protected one's see the new prot. The shootdown makes every CPU drop the old
	 * entries before we return; it waits for the slowest CPU's answer, which no
	 * fault or writer should wait for behind vma_lock.
	 */
	tlb_finish(&g);
	if (holes)
		err = -ENOMEM;
out_unlocked:
	vma_spares_free(&sp);
	pt_split_tables_free(&st); /* tables a split did not need, or all on error */
out_fresh:
	if (fresh)
		vma_free(fresh);
	return err;
}

int vma_unmap(struct mm *mm, uintptr_t start, size_t len)
{
	return vma_edit(mm, start, len, 0, 0, VMA_EDIT_UNMAP);
}

int vma_map_replace(struct mm *mm, uintptr_t start, size_t len, unsigned prot, unsigned flags)
{
	return vma_edit(mm, start, len, prot, flags, VMA_EDIT_REPLACE);
}

int vma_discard(struct mm *mm, uintptr_t start, size_t len)
{
	return vma_edit(mm, start, len, 0, 0, VMA_EDIT_DISCARD);
}

int vma_protect(struct mm *mm, uintptr_t start, size_t len, unsigned prot)
{
	if (prot & ~VMA_PROT_ALL)
		return -EINVAL;
	return vma_edit(mm, start, len, prot, 0, VMA_EDIT_PROTECT);
}

int vma_set_nohuge(struct mm *mm, uintptr_t start, size_t len, bool nohuge)
{
	return vma_edit(mm, start, len, 0, 0, nohuge ? VMA_EDIT_NOHUGE : VMA_EDIT_HUGE);
}
