/*
 * The huge-page allocator (mm/huge.c): 2 MiB blocks (HUGE_ORDER) for PMD leaves,
 * from the faulting CPU's node first, then the other nodes nearest first. The
 * fault path falls back to 4 KiB pages when this returns NULL.
 */
#ifndef GRACE_HUGE_H
#define GRACE_HUGE_H

#include <grace/page_alloc.h>

#define HUGE_SIZE (PAGE_SIZE << HUGE_ORDER)

/* A zeroed 2 MiB block; node NUMA_NO_NODE = this CPU's node. NULL if no node has one. */
void *huge_alloc(int node);
void huge_free(void *block);

/*
 * Per-CPU counts summed over CPUs: blocks from the preferred node, from another,
 * none; and of every 2 MiB allocation (huge_alloc's or not), those served from a
 * CPU's per-CPU list without the zone lock, and the zone-lock holds that refilled
 * such a list or gave it back past its high mark (mm/pcp.c).
 */
struct huge_stats {
	u64 local, remote, failed;
	u64 pcp_hits, pcp_refills, pcp_spills;
};
void huge_stats_sum(struct huge_stats *out);
/* One CPU's local, remote and failed counts (the per-CPU list counts left 0), read alone. */
void huge_stats_cpu(unsigned cpu, struct huge_stats *out);

#endif
