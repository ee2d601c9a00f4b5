/*
 * Per-CPU page list selftests: an alloc/free pair on one CPU is served from its
 * own list without touching the zone, a list that grows past its high mark spills
 * back to the buddy, and after every CPU parked pages on its lists a drain brings
 * the zone's free count back exactly. The huge (2 MiB) list: a refill takes one
 * batch in one zone-lock hold, a strict allocation reaches every block parked on
 * other CPUs' lists, and all CPUs at once keep the counts exact; under both of its
 * modes (batch, single) where they differ.
 */
#include <grace/page_alloc.h>
#include <grace/page.h>
#include <grace/percpu.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/test.h>
#include <mm/page_alloc_internal.h>
#include "mm_test_util.h"

TEST(pcp, local_pair_skips_the_zone)
{
	u64 start = mm_test_buddy_free();
	int node = numa_this_node();
	void *first = alloc_pages(0); /* refills this CPU's list with a batch */
	ASSERT_TRUE(first != NULL);
	free_pages(first, 0);
	u64 zone_free = buddy_free_pages(node);
	for (int i = 0; i < 100; i++) {
		void *p = alloc_pages(0);
		ASSERT_TRUE(p != NULL);
		/* Last in, first out: the page just freed comes back, still cache-hot. */
		EXPECT_TRUE(p == first);
		free_pages(p, 0);
	}
	/* The zone's count never moved: no pair took the zone lock. */
	EXPECT_EQ(buddy_free_pages(node), zone_free);
	EXPECT_EQ(mm_test_buddy_free(), start);
}

/* Run fn with the order-0 marks in one mode, then put back the mode the boot chose. */
static void with_high_auto(bool on, void (*fn)(void))
{
	bool was = pcp_high_auto();
	pcp_set_high_auto(on);
	fn();
	pcp_set_high_auto(was);
}

static void *small_pages[3 * PCP_HIGH_MAX];

/*
 * The boot's mark: a list past it gives a batch back, whatever it refilled. (Under
 * pcp_high=auto the refills below would raise the mark instead.)
 */
static void long_list_spills(void)
{
	void **pages = small_pages;
	u64 start = mm_test_buddy_free();
	int node = numa_this_node();
	struct pcp_limits lim = pcp_limits(node, 0);
	unsigned N = 3 * lim.high;
	ASSERT_LE(lim.high, PCP_HIGH_MAX);
	ASSERT_LE(lim.batch, lim.high);
	for (unsigned i = 0; i < N; i++) {
		pages[i] = alloc_pages_node(node, 0);
		ASSERT_TRUE(pages[i] != NULL);
	}
	for (unsigned i = 0; i < N; i++)
		free_pages(pages[i], 0);
	/* Only this CPU freed; the rest went back in batches past the high mark. */
	EXPECT_LE(pcp_pages(node), lim.high);
	EXPECT_GE(pcp_pages(node), lim.high - lim.batch);
	EXPECT_EQ(mm_test_buddy_free(), start);
	EXPECT_EQ(pcp_pages(node), 0);
}

TEST(pcp, long_list_spills_to_buddy)
{
	with_high_auto(false, long_list_spills);
}

/*
 * This CPU's order-0 refills, spills and grows in n rounds of taking and freeing
 * count pages; *failed counts the allocations that failed. Preemption off, so
 * that every page comes from, and goes back to, this CPU's list.
 */
static struct pcp_stats cycle_pages(int node, unsigned count, unsigned rounds, unsigned *failed)
{
	struct pcp_stats before, after;
	unsigned cpu = smp_processor_id();
	pcp_stats_cpu(cpu, &before);
	for (unsigned r = 0; r < rounds; r++) {
		for (unsigned i = 0; i < count; i++)
			*failed += !(small_pages[i] = alloc_pages_node(node, 0));
		for (unsigned i = 0; i < count; i++)
			if (small_pages[i])
				free_pages(small_pages[i], 0);
	}
	pcp_stats_cpu(cpu, &after);
	return (struct pcp_stats){.small_refills = after.small_refills - before.small_refills,
				  .small_spills = after.small_spills - before.small_spills,
				  .small_grows = after.small_grows - before.small_grows};
}

/*
 * A CPU that takes more pages than its list holds and frees them again, round
 * after round (a 4 KiB fault loop's map and unmap): its refills raise its mark, so
 * after the first round every page comes from, and goes back to, its own list. The
 * boot's fixed mark refills and spills every round.
 */
static void cycling_cpu(void)
{
	int node = numa_this_node();
	struct pcp_limits lim = pcp_limits(node, 0);
	unsigned count = lim.high + 2 * lim.batch;
	u64 start = mm_test_buddy_free();
	if (count + lim.batch > pcp_small_high_max(node)) {
		test_skip("the node's ceiling leaves no room above the boot's mark");
		return;
	}
	unsigned failed = 0;
	preempt_disable(); /* the later rounds on the CPU whose mark the first raised */
	struct pcp_stats first = cycle_pages(node, count, 1, &failed);
	struct pcp_stats later = cycle_pages(node, count, 3, &failed);
	preempt_enable();
	EXPECT_EQ(failed, 0);
	if (pcp_high_auto()) {
		EXPECT_GT(first.small_grows, 0);
		EXPECT_EQ(later.small_refills, 0);
		EXPECT_EQ(later.small_spills, 0);
	} else {
		EXPECT_EQ(first.small_grows + later.small_grows, 0);
		EXPECT_GE(later.small_refills, 3);
		EXPECT_GE(later.small_spills, 3);
	}
	EXPECT_EQ(mm_test_buddy_free(), start);
}

TEST(pcp, cycling_cpu_keeps_its_pages_under_auto_marks)
{
	with_high_auto(true, cycling_cpu);
}

TEST(pcp, cycling_cpu_refills_every_round_under_fixed_marks)
{
	with_high_auto(false, cycling_cpu);
}

/* However much a CPU refilled, its list keeps no more than the node's ceiling. */
static void auto_mark_ceiling(void)
{
	int node = numa_this_node();
	unsigned ceiling = pcp_small_high_max(node);
	unsigned count = MIN(2 * ceiling, (unsigned)ARRAY_SIZE(small_pages));
	u64 start = mm_test_buddy_free();
	unsigned failed = 0;
	preempt_disable();
	cycle_pages(node, count, 2, &failed);
	unsigned kept = pcp_small_count(smp_processor_id(), node);
	preempt_enable();
	EXPECT_EQ(failed, 0);
	/* The last grow stops within a batch of the ceiling, the last spill a batch below that. */
	EXPECT_LE(kept, ceiling);
	EXPECT_GE(kept, ceiling - 2 * pcp_limits(node, 0).batch);
	EXPECT_EQ(mm_test_buddy_free(), start);
}

TEST(pcp, auto_mark_stops_at_the_ceiling)
{
	with_high_auto(true, auto_mark_ceiling);
}

/* Run fn with the huge lists in one mode, then put back the mode the boot chose. */
static void with_huge_batching(bool on, void (*fn)(void))
{
	bool was = pcp_huge_batching();
	pcp_set_huge_batching(on);
	fn();
	pcp_set_huge_batching(was);
}

/* The single design: no refill, and a CPU keeps one block it freed. */
static void huge_block_kept_once(void)
{
	u64 start = mm_test_buddy_free();
	void *a = alloc_pages_flags(NUMA_NO_NODE, HUGE_ORDER, ALLOC_NOZERO);
	void *b = alloc_pages_flags(NUMA_NO_NODE, HUGE_ORDER, ALLOC_NOZERO);
	ASSERT_TRUE(a && b);
	free_pages(a, HUGE_ORDER);
	free_pages(b, HUGE_ORDER);
	/* One block (the first freed) stays on this CPU's huge list and serves the next request. */
	EXPECT_EQ(pcp_pages(virt_to_page(a)->node), 1u << HUGE_ORDER);
	void *c = alloc_pages_flags(NUMA_NO_NODE, HUGE_ORDER, ALLOC_NOZERO);
	EXPECT_TRUE(c == a);
	free_pages(c, HUGE_ORDER);
	EXPECT_EQ(mm_test_buddy_free(), start);
}

TEST(pcp, huge_block_kept_once_per_cpu)
{
	with_huge_batching(false, huge_block_kept_once);
}

/* Every CPU takes and frees pages so that each ends with pages parked on its lists. */
#define PARK_TOTAL 2048
#define PARK_MIN_PER_CPU 8
#define PARK_CHUNK 64 /* pages a worker holds at once, at most half its list's high mark */

struct park {
	struct smp_sync start;
	unsigned per_cpu;
	atomic_t failures;
};

static void park_worker(void *arg)
{
	struct park *t = arg;
	void *pages[PARK_CHUNK];
	unsigned half = MIN(pcp_limits(numa_this_node(), 0).high / 2, PARK_CHUNK);
	smp_sync_wait(&t->start, num_online_cpus());
	for (unsigned done = 0; done < t->per_cpu;) {
		unsigned n = MIN(t->per_cpu - done, half);
		for (unsigned i = 0; i < n; i++)
			if (!(pages[i] = alloc_pages(0)))
				atomic_inc(&t->failures);
		for (unsigned i = 0; i < n; i++)
			free_pages(pages[i], 0);
		done += n;
	}
}

TEST(pcp, drain_all_returns_every_page)
{
	static struct park t;
	u64 start = mm_test_buddy_free();
	unsigned per_cpu = PARK_TOTAL / num_online_cpus();
	t = (struct park){.per_cpu = MAX(per_cpu, PARK_MIN_PER_CPU)};
	smp_run_all(park_worker, &t);
	EXPECT_EQ(atomic_read(&t.failures), 0);

	u64 buddy = 0, parked = 0;
	for (unsigned node = 0; node < nr_nodes; node++) {
		buddy += buddy_free_pages((int)node);
		parked += pcp_pages((int)node);
	}
	/* Pages sit on the CPUs' lists: free, but not in the zones. */
	EXPECT_GT(parked, 0);
	EXPECT_EQ(buddy + parked, start);
	pcp_drain_all();
	for (unsigned node = 0; node < nr_nodes; node++)
		EXPECT_EQ(pcp_pages((int)node), 0);
	EXPECT_EQ(mm_test_buddy_free(), start);
}

/* Free pages of node, buddy and per-CPU lists together (exact while nothing else allocates). */
static u64 node_free_exact(int node)
{
	return buddy_free_pages(node) + pcp_pages(node);
}

/*
 * The batched design: an empty huge list takes `batch` blocks in one zone-lock
 * hold and hands one out; free/alloc pairs then stay on the list; a list pushed
 * past its high mark gives back down to `batch` in one hold; no page is lost or
 * counted twice on the way.
 */
static void huge_refill_and_spill(void)
{
	static void *held[PCP_HUGE_HIGH_MAX + 1];
	u64 start = mm_test_buddy_free();
	int node = numa_this_node();
	struct pcp_limits lim = pcp_limits(node, HUGE_ORDER);
	u64 zone0 = buddy_free_pages(node);
	struct pcp_stats s0, s1, s2;

	EXPECT_GE(lim.batch, 1u);
	EXPECT_LE(lim.batch, lim.high);
	EXPECT_LE(lim.high, PCP_HUGE_HIGH_MAX);
	if (node_free_blocks(node, HUGE_ORDER) < lim.high + 1) {
		test_skip("fewer free 2 MiB blocks than a list's high mark");
		return;
	}
	pcp_stats_sum(&s0);
	void *a = alloc_pages_flags(node, HUGE_ORDER, ALLOC_STRICT | ALLOC_NOZERO);
	pcp_stats_sum(&s1);
	EXPECT_TRUE(a != NULL);
	if (!a)
		return;
	/* One refill took a batch from the zone; all but the one handed out are parked. */
	EXPECT_EQ(s1.huge_refills - s0.huge_refills, 1);
	EXPECT_EQ(pcp_huge_blocks(node), lim.batch - 1);
	EXPECT_EQ(buddy_free_pages(node), zone0 - ((u64)lim.batch << HUGE_ORDER));
	EXPECT_EQ(node_free_exact(node) + (1u << HUGE_ORDER), zone0);

	for (int i = 0; i < 100; i++) {
		free_pages(a, HUGE_ORDER);
		void *b = alloc_pages_flags(node, HUGE_ORDER, ALLOC_STRICT | ALLOC_NOZERO);
		EXPECT_TRUE(b == a); /* last in, first out */
		a = b;
		if (!a)
			return;
	}
	pcp_stats_sum(&s2);
	/* Every pair was served by the list: no refill, no spill, the zone untouched. */
	EXPECT_EQ(s2.huge_hits - s1.huge_hits, 100);
	EXPECT_EQ(s2.huge_refills, s1.huge_refills);
	EXPECT_EQ(s2.huge_spills, s1.huge_spills);
	EXPECT_EQ(buddy_free_pages(node), zone0 - ((u64)lim.batch << HUGE_ORDER));
	free_pages(a, HUGE_ORDER);

	/* Take a list's high mark and one more, then free them all on this CPU. */
	unsigned n = 0;
	while (n < lim.high + 1 &&
	       (held[n] = alloc_pages_flags(node, HUGE_ORDER, ALLOC_STRICT | ALLOC_NOZERO)))
		n++;
	EXPECT_EQ(n, lim.high + 1);
	EXPECT_EQ(node_free_exact(node) + ((u64)n << HUGE_ORDER), zone0);
	pcp_stats_sum(&s1);
	for (unsigned i = 0; i < n; i++)
		free_pages(held[i], HUGE_ORDER);
	pcp_stats_sum(&s2);
	/* A spill gives back down to batch, so the list ends within [batch, high]. */
	EXPECT_GE(s2.huge_spills - s1.huge_spills, 1);
	EXPECT_GE(pcp_huge_blocks(node), lim.batch);
	EXPECT_LE(pcp_huge_blocks(node), lim.high);
	EXPECT_EQ(node_free_exact(node), zone0);
	EXPECT_EQ(mm_test_buddy_free(), start);
}

TEST(pcp, huge_refill_takes_a_batch_in_one_zone_lock_hold)
{
	with_huge_batching(true, huge_refill_and_spill);
}

TEST(pcp, turning_huge_batching_off_drains_every_huge_list)
{
	u64 start = mm_test_buddy_free();
	bool was = pcp_huge_batching();
	int node = numa_this_node();
	pcp_set_huge_batching(true);
	void *a = alloc_pages_flags(node, HUGE_ORDER, ALLOC_STRICT | ALLOC_NOZERO);
	void *b = alloc_pages_flags(node, HUGE_ORDER, ALLOC_STRICT | ALLOC_NOZERO);
	free_pages(a, HUGE_ORDER);
	free_pages(b, HUGE_ORDER);
	pcp_set_huge_batching(false);
	for (unsigned n = 0; n < nr_nodes; n++)
		EXPECT_EQ(pcp_huge_blocks((int)n), 0);
	/* From here the single design exactly: no refill, at most one block kept. */
	EXPECT_EQ(pcp_limits(node, HUGE_ORDER).batch, 0);
	EXPECT_EQ(pcp_limits(node, HUGE_ORDER).high, PCP_HUGE_HIGH);
	a = alloc_pages_flags(node, HUGE_ORDER, ALLOC_STRICT | ALLOC_NOZERO);
	EXPECT_EQ(pcp_huge_blocks(node), 0);
	free_pages(a, HUGE_ORDER);
	EXPECT_EQ(pcp_huge_blocks(node), a ? 1 : 0);
	pcp_set_huge_batching(was);
	EXPECT_EQ(mm_test_buddy_free(), start);
}

/*
 * Every CPU but the caller's, of the first `parkers` online, takes up to a list's
 * high mark of 2 MiB blocks from each node and frees them, so each ends with blocks
 * parked on its huge lists. At most half the blocks there are get parked: with more
 * CPUs than that (512 CPUs in 512 MiB), a strict allocation would find the node
 * empty and take the parked blocks back, perhaps after the last free.
 */
struct huge_park {
	unsigned caller, parkers;
};

static void huge_park_worker(void *arg)
{
	struct huge_park *t = arg;
	void *held[PCP_HUGE_HIGH_MAX];
	unsigned cpu = smp_processor_id();
	if (cpu == t->caller || (unsigned)smp_online_index(cpu) >= t->parkers)
		return;
	for (unsigned node = 0; node < nr_nodes; node++) {
		unsigned high = pcp_limits((int)node, HUGE_ORDER).high, n = 0;
		while (n < high && (held[n] = alloc_pages_flags((int)node, HUGE_ORDER,
								ALLOC_STRICT | ALLOC_NOZERO)))
			n++;
		while (n)
			free_pages(held[--n], HUGE_ORDER);
	}
}

/* Take every 2 MiB block of node strictly, chained through their first word; count them. */
static void *take_node_blocks(int node, u64 *count)
{
	void *list = NULL;
	void **b;
	*count = 0;
	while ((b = alloc_pages_flags(node, HUGE_ORDER, ALLOC_STRICT | ALLOC_NOZERO))) {
		b[0] = list;
		list = b;
		(*count)++;
	}
	return list;
}

static void give_blocks(void *list)
{
	while (list) {
		void **b = list;
		list = b[0];
		free_pages(b, HUGE_ORDER);
	}
}

static void strict_reaches_parked(void)
{
	static struct huge_park t;
	u64 free_blocks[MAX_NODES], got[MAX_NODES], parked = 0, all_blocks = 0;
	unsigned high_max = 1;
	void *taken[MAX_NODES];
	u64 start = mm_test_buddy_free();

	for (unsigned node = 0; node < nr_nodes; node++) {
		free_blocks[node] = node_free_blocks((int)node, HUGE_ORDER);
		all_blocks += free_blocks[node];
		high_max = MAX(high_max, pcp_limits((int)node, HUGE_ORDER).high);
	}
	t.parkers = (unsigned)MAX(all_blocks / 2 / high_max, 2ULL);
	t.caller = smp_processor_id();
	smp_run_all(huge_park_worker, &t);
	for (unsigned node = 0; node < nr_nodes; node++)
		parked += pcp_huge_blocks((int)node);
	if (num_online_cpus() > 1)
		EXPECT_GT(parked, 0);
	/* This CPU's lists are empty: whatever is parked is on the others'. */
	EXPECT_EQ(mm_free_bytes() >> PAGE_SHIFT, start);
	for (unsigned node = 0; node < nr_nodes; node++)
		taken[node] = take_node_blocks((int)node, &got[node]);
	for (unsigned node = 0; node < nr_nodes; node++) {
		/* Every block the node had, those on other CPUs' lists too. */
		EXPECT_EQ(got[node], free_blocks[node]);
		give_blocks(taken[node]);
	}
	EXPECT_EQ(mm_test_buddy_free(), start);
}

TEST(pcp, strict_huge_allocation_reaches_blocks_parked_on_other_cpus)
{
	with_huge_batching(true, strict_reaches_parked);
	with_huge_batching(false, strict_reaches_parked);
}

/* All CPUs take and free 2 MiB blocks at once, each tagging its own. */
#define HUGE_STORM_ROUNDS 20

struct huge_storm {
	struct smp_sync start;
	unsigned per_cpu; /* blocks each CPU holds at once */
	atomic_t failures, stolen, allocs;
};

static u64 huge_storm_tag(unsigned cpu, unsigned round, unsigned i)
{
	return 0x4855474500000000ULL | (u64)cpu << 24 | (u64)round << 8 | i; /* "HUGE" */
}

static void huge_storm_worker(void *arg)
{
	struct huge_storm *t = arg;
	u64 *held[PCP_HUGE_HIGH_MAX];
	unsigned cpu = smp_processor_id();
	const size_t last = (PAGE_SIZE << HUGE_ORDER) / sizeof(u64) - 1;

	smp_sync_wait(&t->start, num_online_cpus());
	for (unsigned round = 0; round < HUGE_STORM_ROUNDS; round++) {
		unsigned n = 0;
		for (; n < t->per_cpu; n++) {
			held[n] = alloc_pages_flags(NUMA_NO_NODE, HUGE_ORDER, ALLOC_NOZERO);
			if (!held[n]) {
				atomic_inc(&t->failures);
				break;
			}
			atomic_inc(&t->allocs);
			WRITE_ONCE(held[n][0], huge_storm_tag(cpu, round, n));
			WRITE_ONCE(held[n][last], huge_storm_tag(cpu, round, n));
		}
		while (n--) {
			u64 tag = huge_storm_tag(cpu, round, n);
			/* Someone else was handed this block too: their tag shows here. */
			if (READ_ONCE(held[n][0]) != tag || READ_ONCE(held[n][last]) != tag)
				atomic_inc(&t->stolen);
			free_pages(held[n], HUGE_ORDER);
		}
	}
}

static void huge_storm(void)
{
	static struct huge_storm t;
	u64 start = mm_test_buddy_free(), blocks = 0;
	unsigned min_batch = PCP_HUGE_BATCH_MAX;
	struct pcp_stats s0, s1;

	for (unsigned node = 0; node < nr_nodes; node++) {
		blocks += node_free_blocks((int)node, HUGE_ORDER);
		if (node_free_blocks((int)node, HUGE_ORDER))
			min_batch = MIN(min_batch, pcp_limits((int)node, HUGE_ORDER).batch);
	}
	/*
	 * A quarter of the blocks held at once, so no CPU should find every node empty;
	 * a batch each (single design: the block kept and one more from the zone).
	 */
	unsigned cap = min_batch ? min_batch : PCP_HUGE_HIGH + 1;
	t = (struct huge_storm){.per_cpu =
				    (unsigned)MIN(blocks / (4 * num_online_cpus()), (u64)cap)};
	if (!t.per_cpu) {
		test_skip("fewer than 4 free 2 MiB blocks per CPU");
		return;
	}
	pcp_stats_sum(&s0);
	smp_run_all(huge_storm_worker, &t);
	pcp_stats_sum(&s1);
	EXPECT_EQ(atomic_read(&t.failures), 0);
	EXPECT_EQ(atomic_read(&t.stolen), 0);
	u64 allocs = (u64)atomic_read(&t.allocs);
	u64 hits = s1.huge_hits - s0.huge_hits, refills = s1.huge_refills - s0.huge_refills;
	/* Each allocation came from a list or from the zone, never from both. */
	EXPECT_LE(hits + refills, allocs);
	if (min_batch > 1)
		/* Batched: most allocations were served by the list with no zone-lock hold. */
		EXPECT_GT(hits, refills);
	/* Free pages are all in the zones or on the lists, none lost or doubled. */
	u64 free = 0;
	for (unsigned node = 0; node < nr_nodes; node++)
		free += node_free_exact((int)node);
	EXPECT_EQ(free, start);
	EXPECT_EQ(mm_test_buddy_free(), start);
}

TEST(pcp, huge_blocks_taken_on_every_cpu_at_once_keep_counts_exact)
{
	with_huge_batching(true, huge_storm);
	with_huge_batching(false, huge_storm);
}
