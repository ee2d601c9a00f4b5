/*
 * VMAs: per mm, a sorted table of pointers to disjoint [start, end) ranges.
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
 * Writers (map, unmap) hold mm->vma_lock for writing: that serializes them and
 * excludes the faults that take it for reading. The faults of a VMA_LOOKUP_RCU
 * mm take nothing shared: they search the table under RCU, take the VMA's own
 * lock for reading (a try, never a wait), and then check that the VMA is this
 * mm's and holds the address: a VMA is unlocked only while a table holds it, and
 * a writer write-locks it before changing or removing it, so what the check sees
 * holds until the fault lets go. This is Linux 6.4's per-VMA locking, validated
 * as Linux 6.15 does it (vm_mm and the range, after the count is taken), with no
 * mm-wide sequence read. A fault that finds nothing, finds another mm's VMA or
 * one without its address, or finds its VMA held by a writer looks again under
 * mm->vma_lock (fault.c). Writers still bump mm->vma_seq around every change of
 * the table, for fork (mm/fork.c) to know that its copy is whole.
 *
 * A writer that changes or removes a VMA first takes that VMA's lock for writing,
 * which waits for the faults inside it to finish. A removed VMA stays
 * write-locked while it is free, so a lookup that still found it fails its try.
 * How its memory goes is vma_free= (vma_set_free_mode()): typesafe (the default)
 * frees it at once into a SLAB_TYPESAFE_BY_RCU cache, so a lookup may find it
 * reused as another VMA, of this mm or another; the check after the try refuses
 * it unless it is now this mm's VMA around the address. This is Linux 6.15's VMA
 * cache. rcu frees it after a grace period, so a lookup touches only
 * the VMA it found. Typesafe makes munmap queue no RCU callback, and so start no
 * grace period: a map/unmap loop on every CPU sends no IPI. A grown table is
 * always freed after a grace period (it is not type-stable memory). Page tables
 * are freed only where no VMA remains (vma_overlaps_locked): a fault in a
 * neighbouring VMA holds nothing the writer waits for and may be walking a table
 * that straddles both.
 *
 * So a munmap racing a fault of the same VMA either waits for the fault (the
 * page is mapped first, then unmapped and freed with the rest) or comes first:
 * the fault then fails its try or its check after it, finds no VMA under
 * mm->vma_lock and fails with -EFAULT.
 *
 * Nothing is allocated under the lock: VMAs before taking it; a bigger table
 * with the lock dropped, after which the writer checks that nobody grew it
 * meanwhile; the PTE tables that splitting a 2 MiB page an edge cuts needs, the
 * same way. vma_unmap() and vma_protect() edit the page tables under the lock
 * (which, held for writing, keeps the other writers out), then drop it before
 * the TLB shootdown, which waits for other CPUs (see mm/tlb.c). Pages are freed
 * only after that.
 *
 * Lock order: docs/locking.md.
 */
#include <grace/cmdline.h>
#include <grace/errno.h>
#include <grace/huge.h>
#include <grace/page_alloc.h>
#include <grace/pagewalk.h>
#include <grace/printk.h>
#include <grace/race_point.h>
#include <grace/slab.h>
#include <grace/string.h>
#include <grace/tlb.h>
#include <grace/vma.h>
#include "address_space_internal.h"
#include "slab_internal.h"

#define VMA_PROT_ALL (PROT_READ | PROT_WRITE | PROT_EXEC)
#define VMA_FLAGS_ALL (VMA_ANON | VMA_NOHUGE)

/* Read by every map and unmap: on a line of its own. */
static struct kmem_cache *vma_cache[2] __cacheline_aligned; /* by enum vma_free_mode */
static enum vma_free_mode free_mode = VMA_FREE_TYPESAFE;

/*
 * Every VMA not in a table is write-locked: so it comes from its slab, and so a
 * freed one stays, which keeps a lookup that found it before from taking its lock.
 */
static void vma_ctor(void *obj)
{
	((struct vma *)obj)->lock = VMA_LOCK_WRITER;
}

void vma_init(void)
{
	static const char *const modes[] = {
	    [VMA_FREE_TYPESAFE] = "typesafe", [VMA_FREE_RCU] = "rcu"};
	vma_cache[VMA_FREE_TYPESAFE] = kmem_cache_create(
	    "vma", sizeof(struct vma), 0, SLAB_HWCACHE_ALIGN | SLAB_TYPESAFE_BY_RCU, vma_ctor);
	vma_cache[VMA_FREE_RCU] =
	    kmem_cache_create("vma_rcu", sizeof(struct vma), 0, SLAB_HWCACHE_ALIGN, vma_ctor);
	if (!vma_cache[VMA_FREE_TYPESAFE] || !vma_cache[VMA_FREE_RCU])
		panic("mm: no memory for the VMA caches");
	vma_set_free_mode(
	    cmdline_get_choice("vma_free", modes, ARRAY_SIZE(modes), VMA_FREE_TYPESAFE));
}

void vma_set_free_mode(enum vma_free_mode mode)
{
	WRITE_ONCE(free_mode, mode);
}

enum vma_free_mode vma_get_free_mode(void)
{
	return READ_ONCE(free_mode);
}

const char *vma_free_mode_name(enum vma_free_mode mode)
{
	return mode == VMA_FREE_RCU ? "rcu" : "typesafe";
}

/*
 * A VMA for [start, end), write-locked (as its slab keeps free ones), from the
 * cache of the mode in force: it is freed the way its cache says, whatever the
 * mode is by then. The lock word is not written: a lookup that found this memory
 * in an earlier life may be reading it.
 */
static struct vma *vma_alloc(uintptr_t start, uintptr_t end, unsigned prot, unsigned flags)
{
	struct vma *v = kmem_cache_alloc(vma_cache[vma_get_free_mode()]);
	if (!v)
		return NULL;
	BUG_ON(READ_ONCE(v->lock) != VMA_LOCK_WRITER);
	v->start = start;
	v->end = end;
	v->prot = prot;
	v->flags = flags;
	return v;
}

/* Free a VMA no table holds; it is write-locked, with no reader waiting. */
static void vma_free(struct vma *v)
{
	kmem_cache_free(slab_cache_of(v), v);
}

/* ---- the per-VMA lock ---- */

static bool vma_read_trylock(struct vma *v)
{
	u32 old = READ_ONCE(v->lock);
	do {
		if (old & VMA_LOCK_WRITER)
			return false;
	} while (!try_cmpxchg_acquire(&v->lock, &old, old + 1));
	return true;
}

void vma_read_unlock(struct vma *v)
{
	fetch_sub_release(&v->lock, 1);
	preempt_enable();
}

/*
 * Wait for the faults inside v to finish and keep new ones out. Writers are
 * serialized by mm->vma_lock, so the writer bit is never contended.
 */
static void vma_write_lock(struct vma *v)
{
	u32 old = READ_ONCE(v->lock);
	while (!try_cmpxchg(&v->lock, &old, old | VMA_LOCK_WRITER))
		;
	while (smp_load_acquire(&v->lock) != VMA_LOCK_WRITER)
		cpu_relax();
}

static void vma_write_unlock(struct vma *v)
{
	smp_store_release(&v->lock, 0);
}

static void vma_free_rcu(struct rcu_head *head)
{
	vma_free(container_of(head, struct vma, rcu));
}

/*
 * v has left the table, write-locked: a typesafe VMA may go at once (a lookup that
 * still holds it fails its try now, or its check after the try once v is reused); an
 * rcu one once no lookup can still hold it.
 */
static void vma_retire(struct vma *v)
{
	if (slab_cache_of(v) == vma_cache[VMA_FREE_TYPESAFE])
		vma_free(v);
	else
		call_rcu(&v->rcu, vma_free_rcu);
}

/* ---- the table ---- */

static unsigned table_capacity(unsigned order)
{
	return ((PAGE_SIZE << order) - sizeof(struct vma_table)) /
	       (sizeof(struct vma *) + sizeof(uintptr_t));
}

/* The first VMA at index *i or above, *i moved to it; NULL if none is. */
static struct vma *vma_from(struct mm *mm, unsigned *i)
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

/* Each VMA v of mm that overlaps [lo, hi), in address order; i is its index. */
#define for_each_vma_overlapping(mm, i, v, lo, hi)                                                 \
	for (unsigned i = vma_search_locked(mm, lo);                                               \
	     ((v) = vma_from(mm, &i)) && (v)->start < (hi); i++)

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

/*
 * Index of the first slot, VMA or hole, with end > addr (t->nr if none); t is
 * stable or validated by the caller.
 */
static unsigned table_search(struct vma_table *t, uintptr_t addr)
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

static unsigned vma_search_locked(struct mm *mm, uintptr_t addr)
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

/* Is v mm's VMA around addr? Stable only while v is read-locked. */
static bool vma_holds(struct vma *v, struct mm *mm, uintptr_t addr)
{
	return READ_ONCE(v->mm) == mm && READ_ONCE(v->start) <= addr && addr < READ_ONCE(v->end);
}

struct vma *vma_read_lock_rcu(struct mm *mm, uintptr_t addr)
{
	struct vma *found = NULL;

	/* Held until vma_read_unlock(): a writer waiting for us must not be this CPU's next thread.
	 */
	preempt_disable();
	rcu_read_lock();
	struct vma_table *t = rcu_dereference(mm->vmat);
	/* A writer may replace t now: only the grace period keeps t's memory ours to read. */
	race_point_key("vma.lookup_table", mm);
	if (t) {
		unsigned i = table_search(t, addr);
		struct vma *v = i < MIN(READ_ONCE(t->nr), t->cap) ? READ_ONCE(t->slot[i]) : NULL;
		/*
		 * NULL is a hole: no VMA holds addr, or a writer is filling it. Otherwise v came
		 * from a table reachable in this section, so its memory is a VMA until we leave:
		 * with vma_free=rcu the grace period keeps it from being freed; typesafe, it may be
		 * freed and reused at once, but only as a VMA, of this mm or another. A writer
		 * moving the slots may also have sent the search to the wrong one. None of that
		 * needs a sequence count: a VMA is unlocked only while a table holds it, and a
		 * writer write-locks it before changing or removing it. So once the try succeeds, v
		 * sits in the table of v->mm with the range it shows, and stays so until we let go:
		 * if that is mm's and holds addr, v is the VMA the fault wants (mm's VMAs are
		 * disjoint). The check before the try only spares v's lock a futile write.
		 * Faults so read no line that every map and unmap writes (Linux 6.15's
		 * lookup checks vm_mm and the range after taking the VMA's count alike).
		 */
		if (v && vma_holds(v, mm, addr)) {
			race_point_key("vma.lookup_try", mm);
			if (vma_read_trylock(v)) {
				if (vma_holds(v, mm, addr))
					found = v;
				else
					fetch_sub_release(&v->lock, 1);
			}
		}
	}
	rcu_read_unlock();
	if (!found)
		preempt_enable();
	return found;
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

/*
 * With the lock held for writing, make room for `extra` more VMAs: compacting the
 * table if that is enough, growing it if not. Returns 0 with the lock still held,
 * or -ENOMEM with it dropped. May drop and retake the lock or move the slots, so
 * the caller must recheck anything it decided before calling.
 */
static int vma_reserve_locked(struct mm *mm, unsigned extra, bool *relocked)
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

/*
 * Put v (write-locked) at index i of mm's table, where the search for its start
 * led, no VMA at or above i starting below v's end: into the hole at i if there
 * is one, once the holes that end inside v are out, else into a slot made by
 * moving those above up one. Inside a vma_seq write section; a new slot needs
 * the room reserved.
 */
static void table_place(struct mm *mm, unsigned i, struct vma *v)
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

/*
 * Make addr a VMA boundary: the VMA around it keeps the part below and a spare,
 * write-locked like it, takes the part above. Inside a vma_seq write section;
 * the caller reserved the room.
 */
static void vma_split_at_locked(struct mm *mm, uintptr_t addr, struct vma **spare)
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

/*
 * Remove [start, end) from the table, leaving holes; its edges are VMA boundaries
 * already. The VMAs stay write-locked (a lookup that found one fails its try) and go onto
 * *retired, chained through their rcu heads, for vma_retire_all() once vma_lock
 * is dropped: no writer frees under it.
 */
static void vma_remove_range_locked(struct mm *mm, uintptr_t start, uintptr_t end,
				    struct rcu_head **retired)
{
	struct vma *v;

	for_each_vma_overlapping(mm, i, v, start, end) {
		WRITE_ONCE(mm->vmat->slot[i], NULL);
		v->rcu.next = *retired;
		*retired = &v->rcu;
	}
}

static void vma_retire_all(struct rcu_head *retired)
{
	while (retired) {
		struct rcu_head *next = retired->next; /* before call_rcu() reuses the head */
		vma_retire(container_of(retired, struct vma, rcu));
		retired = next;
	}
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

void vma_quiesce(void)
{
	rcu_barrier();
	kmem_cache_shrink(vma_cache[VMA_FREE_TYPESAFE]);
	kmem_cache_shrink(vma_cache[VMA_FREE_RCU]);
	rcu_barrier(); /* the typesafe cache's empty slabs go after a grace period */
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
