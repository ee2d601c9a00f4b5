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

/* -1 until the first mm_create reads the command line; then a ptlock_mode. */
static int ptlock_default = -1;

const char *ptlock_mode_name(enum ptlock_mode mode)
{
	return mode == PTLOCK_MM ? "mm" : "split";
}

enum ptlock_mode mm_default_ptlock(void)
{
	int mode = READ_ONCE(ptlock_default);

	if (mode >= 0)
		return mode;
	/* Idempotent: two CPUs racing here compute and store the same value. */
	const char *v = cmdline_get("ptlock");
	mode = PTLOCK_SPLIT;
	if (v && !strcmp(v, "mm"))
		mode = PTLOCK_MM;
	else if (v && strcmp(v, "split"))
		pr_warn("mm: unknown ptlock='%s' (split|mm); using split\n", v);
	if (xchg_relaxed(&ptlock_default, mode) < 0)
		printk("mm: address spaces use %s page-table locks by default\n",
		       mode == PTLOCK_MM ? "one mm-wide" : "split (per-table)");
	return mode;
}

struct mm *mm_create_ptlock(enum ptlock_mode mode)
{
	if (mode != PTLOCK_SPLIT && mode != PTLOCK_MM)
		return NULL;
	struct mm *mm = mm_alloc_pages(NUMA_NO_NODE, 0, 0);
	if (!mm)
		return NULL;
	mm->root = pt_table_alloc();
	if (!mm->root) {
		free_pages(mm, 0);
		return NULL;
	}
	arch_mm_init_root(mm->root);
	mm->root_pa = virt_to_phys(mm->root);
	mm->ptlock = mode;
	mm->vma_lock = (rwlock_t)RWLOCK_INIT;
	spin_lock_init(&mm->page_table_lock);
	cpumask_clear(&mm->cpus);
	return mm;
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
	free_pages(mm, 0);
}
