/*
 * TLB shootdown for address spaces (the scheme is described in grace/tlb.h).
 *
 * Which CPUs are asked: those in mm->cpus when the flush starts. mm_load() sets
 * a CPU's bit before it loads the mm's tables and clears it after it has switched
 * away (which flushed its user TLB entries), so the mask is exactly the CPUs that
 * have run the mm since their last flush. The flusher's barrier between clearing
 * entries and reading the mask pairs with mm_load()'s barrier between setting
 * the bit and loading the tables: a CPU the flusher does not see will walk the
 * cleared tables.
 *
 * One IPI per CPU: smp_call() without waiting to every target, then one wait on a
 * counter the targets decrement. The caller holds no lock while it waits (unmap
 * drops the VMA lock first), because a CPU spinning for that lock with interrupts
 * off could never answer. The request the targets read (what to flush) and the
 * counter they write are the flushing CPU's own, not on its stack: a line of the
 * stack that other CPUs read or wrote is one the flusher's next trap frame or
 * call must take back from them (Linux's x86 flush_tlb_info left the stack for a
 * per-CPU object alike). So a CPU flushes once at a time: preemption stays off
 * while it waits.
 */
#include <grace/atomic.h>
#include <grace/huge.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <grace/tlb.h>
#include <asm/cpu.h>
#include <asm/irq.h>
#include "address_space_internal.h"

struct tlb_flush {
	atomic_t pending; /* targets that have not flushed yet */
	bool all;	  /* the whole user TLB, or: */
	unsigned nr_vas;
	uintptr_t vas[TLB_FLUSH_MAX_PAGES];
};

static DEFINE_PER_CPU_ALIGNED(struct tlb_flush, tlb_flush_request);
static DEFINE_PER_CPU(u64, tlb_ipis);

u64 tlb_flush_ipis(unsigned cpu)
{
	return READ_ONCE(per_cpu(tlb_ipis, cpu));
}

void tlb_gather_init(struct tlb_gather *g, struct mm *mm)
{
	*g = (struct tlb_gather){.mm = mm};
}

static void gather_va(struct tlb_gather *g, uintptr_t va)
{
	if (g->flush_all)
		return;
	if (g->nr_vas == TLB_FLUSH_MAX_PAGES) {
		g->flush_all = true;
		return;
	}
	g->vas[g->nr_vas++] = va;
}

/* Chain a block to free through its head page's private field (ours while allocated). */
static void chain(struct page **list, void *block)
{
	struct page *page = virt_to_page(block);
	page->private = (uintptr_t)*list;
	*list = page;
}

void tlb_gather_leaf(struct tlb_gather *g, uintptr_t va, pte_t old, int level)
{
	void *block = phys_to_virt(pte_phys(old));

	gather_va(g, va);
	if (level == PT_LEVEL_PTE) {
		chain(&g->pages, block);
		g->nr_pages++;
	} else if (level == PT_LEVEL_PMD) {
		chain(&g->huge, block);
		g->nr_huge++;
	} else {
		/* Faults never make leaves above the PMD; leak rather than free a wrong size. */
		pr_err("tlb: unexpected level-%d leaf at %lx, not freeing it\n", level, va);
	}
}

void tlb_gather_range(struct tlb_gather *g, uintptr_t start, uintptr_t end)
{
	/* More pages than fit is a full flush anyway (gather_va sets it): skip the loop. */
	if ((end - start) / PAGE_SIZE > TLB_FLUSH_MAX_PAGES - g->nr_vas) {
		g->flush_all = true;
		return;
	}
	for (uintptr_t va = start; va < end; va += PAGE_SIZE)
		gather_va(g, va);
}

void tlb_gather_table(struct tlb_gather *g, pte_t *table)
{
	/* A freed table may sit in a CPU's paging-structure cache: only a full flush drops it. */
	g->flush_all = true;
	pt_table_retire(table);
	chain(&g->pages, table);
	g->nr_tables++;
}

static void flush_here(bool all, const uintptr_t *vas, unsigned nr_vas)
{
	if (all) {
		arch_flush_tlb_all();
		return;
	}
	for (unsigned i = 0; i < nr_vas; i++)
		arch_flush_tlb_page(vas[i]);
}

/* IPI handler: flush whether or not we still run the mm; a spare flush is harmless. */
static void flush_ipi(void *arg)
{
	struct tlb_flush *f = arg;
	flush_here(f->all, f->vas, f->nr_vas);
	this_cpu(tlb_ipis)++;
	/*
	 * Release: our flush is done before the flusher may free the pages. Pairs with
	 * the atomic_read_acquire() in flush_cpus().
	 */
	atomic_fetch_sub_release(&f->pending, 1);
}

static void flush_cpus(struct tlb_gather *g)
{
	struct cpumask targets;
	unsigned cpu, self;

	/* The cleared entries before the mask read; pairs with the barrier in mm_load(). */
	smp_mb();
	preempt_disable(); /* until the targets are done with this CPU's request */
	struct tlb_flush *f = this_cpu_ptr(&tlb_flush_request);
	unsigned long flags = arch_irq_save();
	self = smp_processor_id();
	/* A snapshot, word by word: CPUs joining later walk the cleared tables anyway. */
	for (unsigned i = 0; i < CPUMASK_WORDS; i++)
		targets.bits[i] = READ_ONCE(g->mm->cpus.bits[i]);
	if (cpumask_test_cpu(&targets, self))
		flush_here(g->flush_all, g->vas, g->nr_vas);
	cpumask_clear_cpu(&targets, self);
	arch_irq_restore(flags);

	unsigned n = cpumask_weight(&targets);
	if (!n) {
		preempt_enable();
		return;
	}
	f->all = g->flush_all;
	f->nr_vas = g->flush_all ? 0 : g->nr_vas;
	memcpy(f->vas, g->vas, f->nr_vas * sizeof(uintptr_t));
	atomic_set(&f->pending, n);
	for_each_cpu(cpu, &targets)
		if (smp_call(cpu, flush_ipi, f, false)) {
			/* Gone offline: it runs nothing, so nothing of ours is cached there. */
			atomic_dec(&f->pending);
		}
	/*
	 * Interrupts stay enabled: another CPU may be waiting for our flush meanwhile.
	 * Pairs with the release in flush_ipi(), each target's last touch of f.
	 */
	while (atomic_read_acquire(&f->pending))
		cpu_relax();
	preempt_enable();
}

static void free_list(struct page *page, unsigned order)
{
	while (page) {
		struct page *next = (struct page *)page->private;
		page->private = 0;
		/* An order-0 page that fork shared goes with its last user. */
		if (order == 0)
			mm_page_put(page_address(page));
		else
			free_pages(page_address(page), order);
		page = next;
	}
}

void tlb_finish(struct tlb_gather *g)
{
	if (g->nr_vas || g->flush_all)
		flush_cpus(g);
	free_list(g->pages, 0);
	free_list(g->huge, HUGE_ORDER);
	g->pages = g->huge = NULL;
	g->nr_vas = 0;
	g->flush_all = false;
}
