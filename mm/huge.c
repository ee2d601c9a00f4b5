/*
 * The huge-page allocator: zeroed 2 MiB blocks for PMD leaves, nearest memory
 * first. Each node is asked strictly (alloc_pages_strict semantics, ALLOC_STRICT)
 * in the order numa_fallback_order() gives for the faulting CPU's node: that node,
 * then the others by distance. Only when no node has a free 2 MiB block does the
 * fault path fall back to 4 KiB pages, which come from the local node again, so a
 * remote huge page is preferred to local small pages (one TLB entry and one fault
 * per 2 MiB are worth more than a distance of 20 vs 10 under QEMU's NUMA, which
 * has no real latency difference; on hardware the tradeoff is Linux's
 * "defrag"/"numa_balancing" debate, and this is its simplest policy).
 *
 * The blocks themselves come from the buddy allocator's per-CPU list for
 * HUGE_ORDER, refilled a batch at a time (mm/pcp.c), so most faults touch no
 * shared lock here. A strict allocation that finds the node empty drains every
 * CPU's lists of it and tries again before it fails (mm/page_alloc.c), so no node
 * is skipped while its blocks sit on another CPU's list.
 * No locks of its own.
 */
#include <grace/huge.h>
#include <grace/sched.h>
#include <grace/numa.h>
#include <grace/percpu_counter.h>
#include <grace/preempt.h>
#include "address_space_internal.h"
#include "page_alloc_internal.h"

static DEFINE_PER_CPU(struct huge_stats, huge_stats);

/* Bumped from preemptible fault paths. */
#define huge_stat_inc(field) pcpu_counter_inc(huge_stats, field)

/*
 * Zero a 2 MiB block a piece at a time with a preemption point after each, as
 * Linux's clear_huge_page() does per subpage: under TCG a whole block is about
 * 300,000 instructions, long enough for a tick or a grace period to come due
 * (cond_resched() is also an RCU quiescent point).
 */
#define HUGE_CLEAR_CHUNK (64 * 1024)

static void huge_clear(void *block)
{
	for (size_t off = 0; off < HUGE_SIZE; off += HUGE_CLEAR_CHUNK) {
		mm_clear_block((char *)block + off, HUGE_CLEAR_CHUNK);
		cond_resched();
	}
}

void *huge_alloc(int node)
{
	int order[MAX_NODES];

	if (node == NUMA_NO_NODE)
		node = numa_this_node();
	/* One injected failure stands for the whole search, as if every node were empty. */
	if (unlikely(mm_inject_fail())) {
		huge_stat_inc(failed);
		return NULL;
	}
	unsigned n = numa_fallback_order(node, order);
	for (unsigned i = 0; i < n; i++) {
		void *block = alloc_pages_flags(order[i], HUGE_ORDER, ALLOC_STRICT | ALLOC_NOZERO);
		if (block) {
			huge_clear(block);
			if (order[i] == node)
				huge_stat_inc(local);
			else
				huge_stat_inc(remote);
			return block;
		}
	}
	huge_stat_inc(failed);
	return NULL;
}

void huge_free(void *block)
{
	free_pages(block, HUGE_ORDER);
}

void huge_stats_cpu(unsigned cpu, struct huge_stats *out)
{
	pcpu_counters_read_cpu(out, &huge_stats, sizeof(*out), cpu);
	/* The per-CPU list counts are pcp.c's, summed below; one CPU's are not asked for. */
	out->pcp_hits = out->pcp_refills = out->pcp_spills = 0;
}

void huge_stats_sum(struct huge_stats *out)
{
	pcpu_counters_sum(out, &huge_stats, sizeof(*out));
	struct pcp_stats p;
	pcp_stats_sum(&p);
	out->pcp_hits = p.huge_hits;
	out->pcp_refills = p.huge_refills;
	out->pcp_spills = p.huge_spills;
}
