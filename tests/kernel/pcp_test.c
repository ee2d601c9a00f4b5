/*
 * Per-CPU page list selftests: an alloc/free pair on one CPU is served from its
 * own list without touching the zone, a list that grows past its high mark spills
 * back to the buddy, and after every CPU parked pages on its lists a drain brings
 * the zone's free count back exactly.
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

TEST(pcp, long_list_spills_to_buddy)
{
	enum { N = 3 * PCP_HIGH };
	static void *pages[N];
	u64 start = mm_test_buddy_free();
	int node = numa_this_node();
	for (int i = 0; i < N; i++) {
		pages[i] = alloc_pages_node(node, 0);
		ASSERT_TRUE(pages[i] != NULL);
	}
	for (int i = 0; i < N; i++)
		free_pages(pages[i], 0);
	/* Only this CPU freed; the rest went back in batches past the high mark. */
	EXPECT_LE(pcp_pages(node), PCP_HIGH);
	EXPECT_GE(pcp_pages(node), PCP_HIGH - PCP_BATCH);
	EXPECT_EQ(mm_test_buddy_free(), start);
	EXPECT_EQ(pcp_pages(node), 0);
}

TEST(pcp, huge_block_kept_once_per_cpu)
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

/* Every CPU takes and frees pages so that each ends with pages parked on its lists. */
#define PARK_TOTAL 2048
#define PARK_MIN_PER_CPU 8

struct park {
	struct smp_sync start;
	unsigned per_cpu;
	atomic_t failures;
};

static void park_worker(void *arg)
{
	struct park *t = arg;
	void *pages[PCP_HIGH];
	smp_sync_wait(&t->start, num_online_cpus());
	for (unsigned done = 0; done < t->per_cpu;) {
		unsigned n = MIN(t->per_cpu - done, (unsigned)PCP_HIGH / 2);
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
