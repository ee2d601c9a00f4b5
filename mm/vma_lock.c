/*
 * The per-VMA lock (a reader count and a writer bit in vma->lock) and the fault's
 * lookup that takes it under RCU. Writers (map, unmap) hold mm->vma_lock for writing:
 * that serializes them and excludes the faults that take it for reading. The faults
 * of a VMA_LOOKUP_RCU mm take nothing shared: they search the table under RCU, take
 * the VMA's own lock for reading (a try, never a wait), and then check that the VMA
 * is this mm's and holds the address: a VMA is unlocked only while a table holds it,
 * and a writer write-locks it before changing or removing it, so what the check sees
 * holds until the fault lets go. This is Linux 6.4's per-VMA locking, validated as
 * Linux 6.15 does it (vm_mm and the range, after the count is taken), with no mm-wide
 * sequence read. A fault that finds nothing, finds another mm's VMA or one without
 * its address, or finds its VMA held by a writer looks again under mm->vma_lock
 * (fault.c).
 *
 * A writer that changes or removes a VMA first takes that VMA's lock for writing,
 * which waits for the faults inside it to finish. A removed VMA stays write-locked
 * while it is free (mm/vma_free.c), so a lookup that still found it fails its try. So
 * a munmap racing a fault of the same VMA either waits for the fault (the page is
 * mapped first, then unmapped and freed with the rest) or comes first: the fault then
 * fails its try or its check after it, finds no VMA under mm->vma_lock and fails with
 * -EFAULT.
 *
 * Lock order: a VMA's lock for writing is taken inside mm->vma_lock for writing; for
 * reading, only tried, under RCU, with preemption off until vma_read_unlock()
 * (docs/locking.md).
 */
#include <grace/race_point.h>
#include "vma_internal.h"

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

void vma_write_lock(struct vma *v)
{
	/* Writers are serialized by mm->vma_lock, so the writer bit is never contended. */
	u32 old = READ_ONCE(v->lock);
	while (!try_cmpxchg(&v->lock, &old, old | VMA_LOCK_WRITER))
		;
	while (smp_load_acquire(&v->lock) != VMA_LOCK_WRITER)
		cpu_relax();
}

void vma_write_unlock(struct vma *v)
{
	smp_store_release(&v->lock, 0);
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
