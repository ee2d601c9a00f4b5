/*
 * Address spaces: creating, entering and destroying a struct mm (the structure and
 * its locks are described in grace/address_space.h).
 *
 * The struct mm takes a page of its own from the page allocator rather than a slab
 * object, so that "every page back after mm_destroy" is exact in the page
 * allocator's free count (slab caches keep empty slabs); mms are few.
 *
 * mm_load() keeps mm->cpus exact (see mm/tlb.c for why that is enough for
 * shootdowns): bit set, full barrier, tables loaded; tables unloaded (which flushes
 * the user half), then bit cleared. mm_switch() gives the calling thread an mm and
 * loads it; the scheduler calls mm_load() when it switches to a thread with an mm.
 */
#include <grace/boot_info.h>
#include <grace/cmdline.h>
#include <grace/errno.h>
#include <grace/page_alloc.h>
#include <grace/sched.h>
#include <grace/pagewalk.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <grace/vma.h>
#include <asm/cpu.h>
#include <asm/irq.h>
#include "address_space_internal.h"

BUILD_BUG_ON(sizeof(struct mm) > PAGE_SIZE);

static DEFINE_PER_CPU(struct mm *, cur_mm);

/* Fault injection state: see mm_inject_alloc_failures(). Shared, but read-mostly. */
static struct {
	u32 active;	 /* nonzero while injecting: the fast path reads only this */
	u32 skip, count; /* under inject_lock */
} inject;
static DEFINE_SPINLOCK(inject_lock); /* protects inject.skip, inject.count */

void mm_inject_alloc_failures(unsigned skip, unsigned count)
{
	spin_lock(&inject_lock);
	inject.skip = skip;
	inject.count = count;
	WRITE_ONCE(inject.active, count != 0);
	spin_unlock(&inject_lock);
}

bool mm_inject_fail(void)
{
	bool fail = false;

	if (likely(!READ_ONCE(inject.active)))
		return false;
	spin_lock(&inject_lock);
	if (inject.skip) {
		inject.skip--;
	} else if (inject.count) {
		fail = true;
		if (!--inject.count)
			WRITE_ONCE(inject.active, 0);
	}
	spin_unlock(&inject_lock);
	return fail;
}

/*
 * The value of key on the command line as an index into names[0..n) (names[0]
 * when absent or unknown; an unknown one is reported). The result is cached in
 * *cache (-1 until the first call); two CPUs racing here compute the same value.
 */
static int cmdline_mode(int *cache, const char *key, const char *const *names, unsigned n,
			const char *what)
{
	int mode = READ_ONCE(*cache);

	if (mode >= 0)
		return mode;
	mode = (int)cmdline_get_choice(key, names, n, 0);
	if (xchg_relaxed(cache, mode) < 0)
		printk("mm: address spaces use %s by default (%s=%s)\n", what, key, names[mode]);
	return mode;
}

static const char *const ptlock_names[] = {[PTLOCK_SPLIT] = "split", [PTLOCK_MM] = "mm"};
static const char *const vma_lookup_names[] = {
    [VMA_LOOKUP_RCU] = "rcu", [VMA_LOOKUP_LOCKED] = "locked"};
static const char *const pt_free_names[] = {[PT_FREE_EXIT] = "exit", [PT_FREE_UNMAP] = "unmap"};
static int ptlock_default = -1, vma_lookup_default = -1, pt_free_default = -1;

const char *pt_free_mode_name(enum pt_free_mode mode)
{
	return pt_free_names[mode == PT_FREE_UNMAP];
}

enum pt_free_mode mm_default_pt_free(void)
{
	return cmdline_mode(&pt_free_default, "pt_free", pt_free_names, ARRAY_SIZE(pt_free_names),
			    "page tables an unmap empties kept until exit, or freed by it");
}

void mm_set_pt_free(struct mm *mm, enum pt_free_mode mode)
{
	mm->pt_free = mode;
}

const char *ptlock_mode_name(enum ptlock_mode mode)
{
	return ptlock_names[mode == PTLOCK_MM];
}

const char *vma_lookup_name(enum vma_lookup mode)
{
	return vma_lookup_names[mode == VMA_LOOKUP_LOCKED];
}

enum ptlock_mode mm_default_ptlock(void)
{
	return cmdline_mode(&ptlock_default, "ptlock", ptlock_names, ARRAY_SIZE(ptlock_names),
			    "per-table (split) or mm-wide page-table locks");
}

enum vma_lookup mm_default_vma_lookup(void)
{
	return cmdline_mode(&vma_lookup_default, "vma_lookup", vma_lookup_names,
			    ARRAY_SIZE(vma_lookup_names),
			    "VMA lookups under RCU or under vma_lock");
}

void mm_set_default_modes(enum ptlock_mode ptlock, enum vma_lookup lookup)
{
	mm_default_ptlock(); /* the command line's said once, so it is not said over this */
	mm_default_vma_lookup();
	WRITE_ONCE(ptlock_default, ptlock);
	WRITE_ONCE(vma_lookup_default, lookup);
}

static unsigned rss_order(void)
{
	return pages_order(boot_info.nr_cpus * sizeof(struct mm_rss));
}

void mm_rss_add(struct mm *mm, int level, long delta)
{
	preempt_disable();
	struct mm_rss *r = &mm->rss[smp_processor_id()];
	if (level == PT_LEVEL_PMD)
		WRITE_ONCE(r->pages_huge, r->pages_huge + delta);
	else
		WRITE_ONCE(r->pages_4k, r->pages_4k + delta);
	preempt_enable();
}

void mm_rss(struct mm *mm, struct mm_rss_sum *out)
{
	long small = 0, huge = 0;
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++) {
		small += READ_ONCE(mm->rss[cpu].pages_4k);
		huge += READ_ONCE(mm->rss[cpu].pages_huge);
	}
	out->pages_4k = (u64)small;
	out->pages_huge = (u64)huge;
}

struct mm *mm_create_modes(enum ptlock_mode ptlock, enum vma_lookup lookup)
{
	if ((ptlock != PTLOCK_SPLIT && ptlock != PTLOCK_MM) ||
	    (lookup != VMA_LOOKUP_RCU && lookup != VMA_LOOKUP_LOCKED))
		return NULL;
	struct mm *mm = mm_alloc_pages(NUMA_NO_NODE, 0, 0);
	if (!mm)
		return NULL;
	mm->rss = mm_alloc_pages(NUMA_NO_NODE, rss_order(), 0);
	mm->root = mm->rss ? pt_table_alloc() : NULL;
	if (!mm->root) {
		free_pages(mm->rss, rss_order());
		free_pages(mm, 0);
		return NULL;
	}
	arch_mm_init_root(mm->root);
	mm->root_pa = virt_to_phys(mm->root);
	mm->ptlock = ptlock;
	mm->vma_lookup = lookup;
	mm->pt_free = mm_default_pt_free();
	mm->vma_seq = (seqcount_t)SEQCOUNT_INIT;
	mm->vma_lock = (rwlock_t)RWLOCK_INIT;
	spin_lock_init(&mm->page_table_lock);
	cpumask_clear(&mm->cpus);
	return mm;
}

struct mm *mm_create_ptlock(enum ptlock_mode mode)
{
	return mm_create_modes(mode, mm_default_vma_lookup());
}

struct mm *mm_create(void)
{
	return mm_create_ptlock(mm_default_ptlock());
}

struct mm *current_mm(void)
{
	return current->mm;
}

void mm_load(struct mm *mm)
{
	unsigned long flags = arch_irq_save();
	unsigned cpu = smp_processor_id();
	struct mm *old = this_cpu(cur_mm);

	if (old == mm) {
		arch_irq_restore(flags);
		return;
	}
	if (mm) {
		cpumask_set_cpu(&mm->cpus, cpu);
		/* Bit visible before we walk the tables; pairs with smp_mb() in flush_cpus(). */
		smp_mb();
	}
	this_cpu(cur_mm) = mm;
	fault_forget_spurious();
	arch_switch_mm(mm ? mm->root_pa : 0);
	if (old) {
		/*
		 * The switch flushed old's entries from this TLB; only now stop asking us.
		 * Pairs with the reads of the mask, each after an smp_mb(), in flush_cpus()
		 * and mm_leave_all().
		 */
		smp_mb();
		cpumask_clear_cpu(&old->cpus, cpu);
	}
	arch_irq_restore(flags);
}

void mm_switch(struct mm *mm)
{
	/* Interrupts off: a preemption between the two would load the old mm elsewhere. */
	unsigned long flags = arch_irq_save();
	current->mm = mm;
	mm_load(mm);
	arch_irq_restore(flags);
}

static void leave_mm_ipi(void *arg)
{
	if (this_cpu(cur_mm) == arg) {
		if (current->mm == arg)
			current->mm = NULL;
		mm_load(NULL);
	}
}

static void forget_mm(struct task *p, void *mm)
{
	if (p->mm == mm) {
		pr_warn("mm: destroying an mm that thread '%s' still uses; it loses it\n", p->name);
		p->mm = NULL;
	}
}

/*
 * Take mm away from every thread and CPU. Threads should have left it already
 * (mm_switch(NULL)); CPUs may still have its tables loaded lazily, from a thread
 * that left since (the scheduler loads tables only for threads that have an mm),
 * and are switched off it by IPI. Wait until its CPU mask is empty.
 */
static void mm_leave_all(struct mm *mm)
{
	unsigned cpu;

	if (current_mm() == mm)
		mm_switch(NULL);
	sched_for_each_task(forget_mm, mm);
	/* The threads' mm cleared before the mask read; pairs with the smp_mb()s in mm_load(). */
	smp_mb();
	for_each_cpu(cpu, &mm->cpus)
		smp_call(cpu, leave_mm_ipi, mm, true);
	while (cpumask_weight(&mm->cpus))
		cpu_relax();
}

void mm_destroy(struct mm *mm)
{
	if (!mm)
		return;
	mm_leave_all(mm);
	/* No CPU runs mm and none can enter it: nothing caches its tables any more. */
	pt_free_all(mm);
	vma_free_all(mm);
	free_pages(mm->rss, rss_order());
	free_pages(mm, 0);
}
