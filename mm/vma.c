/*
 * VMAs: a sorted array of disjoint [start, end) ranges per mm, under mm->vma_lock.
 * An array, not a tree: lookups are a binary search over a few cache lines, and
 * the address spaces Grace builds (tests, benchmarks: one VMA per CPU) hold tens
 * of VMAs, where inserting by memmove costs less than a tree's pointer chasing.
 *
 * The array is a block from the page allocator (2^vma_order pages). Growing it
 * needs an allocation, which is never made under the lock: the writer drops the
 * lock, allocates, retakes it and checks that nobody grew it meanwhile.
 *
 * vma_unmap() and vma_protect() hold the lock for writing while they edit the
 * array and the page tables (this excludes every fault), then drop it before the
 * TLB shootdown, which waits for other CPUs (see mm/tlb.c). Pages are freed only
 * after that. An edge that cuts a 2 MiB page splits it into 4 KiB leaves first,
 * with a PTE table allocated, like a bigger array, with the lock dropped.
 *
 * Lock order: docs/locking.md.
 */
#include <grace/errno.h>
#include <grace/page_alloc.h>
#include <grace/pagewalk.h>
#include <grace/string.h>
#include <grace/tlb.h>
#include <grace/vma.h>
#include "address_space_internal.h"

#define VMA_PROT_ALL (PROT_READ | PROT_WRITE | PROT_EXEC)
#define VMA_FLAGS_ALL (VMA_ANON | VMA_NOHUGE)

static unsigned vma_capacity(unsigned order)
{
	return (PAGE_SIZE << order) / sizeof(struct vma);
}

/* Index of the first VMA with end > addr (nr_vmas if none). */
static unsigned vma_search_locked(struct mm *mm, uintptr_t addr)
{
	lockdep_assert_held(&mm->vma_lock); /* for reading or writing */
	unsigned lo = 0, hi = mm->nr_vmas;
	while (lo < hi) {
		unsigned mid = lo + (hi - lo) / 2;
		if (mm->vmas[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

struct vma *vma_find_locked(struct mm *mm, uintptr_t addr)
{
	lockdep_assert_held(&mm->vma_lock);
	unsigned i = vma_search_locked(mm, addr);
	if (i < mm->nr_vmas && mm->vmas[i].start <= addr)
		return &mm->vmas[i];
	return NULL;
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
 * With the lock held for writing, make room for `extra` more VMAs. Returns 0 with
 * the lock still held, or -ENOMEM with it dropped. May drop and retake the lock,
 * so the caller must recheck anything it decided before calling.
 */
static int vma_reserve_locked(struct mm *mm, unsigned extra, bool *relocked)
{
	lockdep_assert_held(&mm->vma_lock);
	*relocked = false;
	while (mm->nr_vmas + extra > vma_capacity(mm->vma_order) || !mm->vmas) {
		unsigned order = mm->vmas ? mm->vma_order + 1 : 0;
		if (mm->nr_vmas + extra > VMA_MAX_COUNT || order > MAX_ORDER) {
			write_unlock(&mm->vma_lock);
			return -ENOMEM;
		}
		write_unlock(&mm->vma_lock);
		struct vma *bigger = mm_alloc_pages(NUMA_NO_NODE, order, 0);
		write_lock(&mm->vma_lock);
		*relocked = true;
		if (!bigger) {
			write_unlock(&mm->vma_lock);
			return -ENOMEM;
		}
		if ((mm->vmas ? mm->vma_order + 1 : 0) != order) {
			/* Someone grew it meanwhile; ours is surplus. */
			write_unlock(&mm->vma_lock);
			free_pages(bigger, order);
			write_lock(&mm->vma_lock);
			continue;
		}
		struct vma *old = mm->vmas;
		unsigned old_order = mm->vma_order;
		if (old)
			memcpy(bigger, old, mm->nr_vmas * sizeof(struct vma));
		mm->vmas = bigger;
		mm->vma_order = order;
		if (old) {
			/* Readers hold the lock while they use the array: none can see old now. */
			write_unlock(&mm->vma_lock);
			free_pages(old, old_order);
			write_lock(&mm->vma_lock);
		}
	}
	return 0;
}

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

	write_lock(&mm->vma_lock);
	for (;;) {
		unsigned i = vma_search_locked(mm, start);
		if (i < mm->nr_vmas && mm->vmas[i].start < end) {
			write_unlock(&mm->vma_lock);
			return -EEXIST;
		}
		bool relocked;
		err = vma_reserve_locked(mm, 1, &relocked);
		if (err)
			return err;
		if (relocked)
			continue; /* the array may have changed: search again */
		memmove(&mm->vmas[i + 1], &mm->vmas[i], (mm->nr_vmas - i) * sizeof(struct vma));
		mm->vmas[i] = (struct vma){start, end, prot, flags | VMA_ANON};
		mm->nr_vmas++;
		break;
	}
	write_unlock(&mm->vma_lock);
	return 0;
}

/* Remove [start, end) from the array; the caller reserved room if a VMA splits. */
static void vma_cut_locked(struct mm *mm, uintptr_t start, uintptr_t end)
{
	lockdep_assert_held(&mm->vma_lock);
	unsigned i = vma_search_locked(mm, start);

	while (i < mm->nr_vmas && mm->vmas[i].start < end) {
		struct vma *v = &mm->vmas[i];
		if (v->start < start && v->end > end) {
			/* A hole in the middle: v keeps the low part, a copy takes the high part.
			 */
			memmove(&mm->vmas[i + 1], v, (mm->nr_vmas - i) * sizeof(struct vma));
			mm->nr_vmas++;
			v->end = start;
			mm->vmas[i + 1].start = end;
			return;
		}
		if (v->start < start) {
			v->end = start;
			i++;
		} else if (v->end > end) {
			v->start = end;
			return;
		} else {
			memmove(v, v + 1, (mm->nr_vmas - i - 1) * sizeof(struct vma));
			mm->nr_vmas--;
		}
	}
}

/*
 * With the lock held for writing: have in st a PTE table for each edge of
 * [start, end) that cuts a mapped 2 MiB page. Tables are allocated with the lock
 * dropped, never under it; then *relocked is set and the caller must recheck
 * everything. 0 with the lock held, or -ENOMEM with it dropped.
 */
static int vma_split_tables_locked(struct mm *mm, uintptr_t start, uintptr_t end,
				   struct pt_split_tables *st, bool *relocked)
{
	lockdep_assert_held(&mm->vma_lock);
	*relocked = false;
	while (st->nr < pt_split_needed(mm, start, end)) {
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

int vma_unmap(struct mm *mm, uintptr_t start, size_t len)
{
	int err = range_check(start, len);
	if (err)
		return err;
	uintptr_t end = start + len;
	struct pt_split_tables st = {.nr = 0};
	struct tlb_gather g;
	bool relocked;

	write_lock(&mm->vma_lock);
	for (;;) {
		/* A hole inside one VMA splits it: reserve the slot before changing anything. */
		unsigned i = vma_search_locked(mm, start);
		if (i < mm->nr_vmas && mm->vmas[i].start < start && mm->vmas[i].end > end) {
			err = vma_reserve_locked(mm, 1, &relocked);
			if (err)
				goto out_unlocked;
			if (relocked)
				continue;
		}
		/* Edges that cut a 2 MiB page split it: its tables before changing anything. */
		err = vma_split_tables_locked(mm, start, end, &st, &relocked);
		if (err)
			goto out_unlocked;
		if (!relocked)
			break;
	}
	vma_cut_locked(mm, start, end);
	tlb_gather_init(&g, mm);
	pt_split_edges(mm, start, end, &st, &g);
	pt_clear_range(mm, start, end, &g);
	write_unlock(&mm->vma_lock);
	/* Faults may resume now: the range has no VMA, so they fail; the old pages wait in g. */
	tlb_finish(&g);
out_unlocked:
	pt_split_tables_free(&st); /* tables a split did not need, or all on error */
	return err;
}

void vma_free_all(struct mm *mm)
{
	if (mm->vmas)
		free_pages(mm->vmas, mm->vma_order);
	mm->vmas = NULL;
	mm->nr_vmas = 0;
}

/* Does [start, end) lie inside VMAs with no hole? */
static bool vma_covers_locked(struct mm *mm, uintptr_t start, uintptr_t end)
{
	lockdep_assert_held(&mm->vma_lock);
	unsigned i = vma_search_locked(mm, start);
	uintptr_t va = start;

	for (; i < mm->nr_vmas && va < end; i++) {
		if (mm->vmas[i].start > va)
			return false;
		va = mm->vmas[i].end;
	}
	return va >= end;
}

/* VMAs that splitting at start and at end adds (the caller checked that VMAs cover both). */
static unsigned vma_edge_splits_locked(struct mm *mm, uintptr_t start, uintptr_t end)
{
	struct vma *first = vma_find_locked(mm, start), *last = vma_find_locked(mm, end - 1);
	return (first->start < start) + (last->end > end);
}

/* Make addr a VMA boundary: the VMA around it becomes two. Caller reserved the room. */
static void vma_split_at_locked(struct mm *mm, uintptr_t addr)
{
	lockdep_assert_held(&mm->vma_lock);
	unsigned i = vma_search_locked(mm, addr);
	if (i == mm->nr_vmas || mm->vmas[i].start >= addr)
		return; /* a boundary, or a hole, already */
	memmove(&mm->vmas[i + 1], &mm->vmas[i], (mm->nr_vmas - i) * sizeof(struct vma));
	mm->nr_vmas++;
	mm->vmas[i].end = addr;
	mm->vmas[i + 1].start = addr;
}

/*
 * Everything vma_protect() decides before it changes anything: that VMAs cover the
 * range, room for the VMAs the edges add, and the tables the edges' splits need.
 * 0 with the lock held for writing, or an error with it dropped.
 */
static int vma_protect_prepare_locked(struct mm *mm, uintptr_t start, uintptr_t end,
				      struct pt_split_tables *st)
{
	bool relocked;
	int err;

	for (;;) {
		if (!vma_covers_locked(mm, start, end)) {
			write_unlock(&mm->vma_lock);
			return -ENOMEM;
		}
		err = vma_reserve_locked(mm, vma_edge_splits_locked(mm, start, end), &relocked);
		if (err)
			return err;
		if (relocked)
			continue;
		err = vma_split_tables_locked(mm, start, end, st, &relocked);
		if (err || !relocked)
			return err;
	}
}

int vma_protect(struct mm *mm, uintptr_t start, size_t len, unsigned prot)
{
	int err = range_check(start, len);
	if (err)
		return err;
	if (!prot || (prot & ~VMA_PROT_ALL))
		return -EINVAL;
	uintptr_t end = start + len;
	struct pt_split_tables st = {.nr = 0};
	struct tlb_gather g;

	write_lock(&mm->vma_lock);
	err = vma_protect_prepare_locked(mm, start, end, &st);
	if (err)
		goto out_unlocked;
	vma_split_at_locked(mm, start);
	vma_split_at_locked(mm, end);
	for (unsigned i = vma_search_locked(mm, start); i < mm->nr_vmas && mm->vmas[i].start < end;
	     i++)
		mm->vmas[i].prot = prot;
	tlb_gather_init(&g, mm);
	pt_split_edges(mm, start, end, &st, &g);
	pt_protect_range(mm, start, end, prot | PROT_USER, &g);
	write_unlock(&mm->vma_lock);
	/*
	 * Faults already see the new prot; the shootdown makes every CPU drop the old
	 * permissions before we return (a CPU spinning for the lock could not answer it).
	 */
	tlb_finish(&g);
out_unlocked:
	pt_split_tables_free(&st);
	return err;
}
