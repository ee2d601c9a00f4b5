/*
 * NUMA selftests: CPUs spread evenly over the nodes and every node has memory
 * (`make test NUMA=n`), the distance table's rules, local allocation by default and
 * node-directed allocation from every CPU, and fallback to the nearest node once a
 * node is exhausted. On a one-node machine they check the trivial topology.
 */
#include <grace/boot_info.h>
#include <grace/page_alloc.h>
#include <grace/numa.h>
#include <grace/page.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <grace/test.h>
#include "mm_test_util.h"

TEST(numa, cpus_spread_evenly_and_nodes_have_memory)
{
	unsigned cpus[MAX_NODES] = {0};
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++) {
		int node = cpu_to_node(cpu);
		ASSERT_TRUE(node >= 0 && (unsigned)node < nr_nodes);
		cpus[node]++;
	}
	unsigned lo = ~0u, hi = 0;
	for (unsigned n = 0; n < nr_nodes; n++) {
		lo = MIN(lo, cpus[n]);
		hi = MAX(hi, cpus[n]);
		/* A node may have no CPUs, but QEMU's -numa gives each node memory. */
		EXPECT_GT(node_managed_pages((int)n), 0);
	}
	/* QEMU's -numa as `make NUMA=n` sets it up: CPU counts differ by at most one. */
	EXPECT_LE(hi - lo, 1);
	printk("# %u nodes, %u to %u CPUs each\n", nr_nodes, lo, hi);
}

TEST(numa, distance_table_rules)
{
	for (unsigned a = 0; a < nr_nodes; a++) {
		int order[MAX_NODES];
		unsigned n = numa_fallback_order((int)a, order);
		EXPECT_EQ(n, nr_nodes);
		EXPECT_EQ(order[0], (int)a);
		for (unsigned i = 1; i < n; i++)
			EXPECT_LE(node_distance((int)a, order[i - 1]),
				  node_distance((int)a, order[i]));
		for (unsigned b = 0; b < nr_nodes; b++) {
			if (a == b)
				EXPECT_EQ(node_distance((int)a, (int)b), LOCAL_DISTANCE);
			else
				EXPECT_GT(node_distance((int)a, (int)b), LOCAL_DISTANCE);
			EXPECT_EQ(node_distance((int)a, (int)b), node_distance((int)b, (int)a));
		}
	}
	EXPECT_EQ(node_distance(0, (int)nr_nodes), 255);
	/* `make NUMA=n` passes distances (DT /distance-map, ACPI SLIT): they must have been read.
	 */
	if (nr_nodes > 1) {
		EXPECT_TRUE(numa_distance_from_firmware);
		printk("# distance 0 -> %u: %u (%s)\n", nr_nodes - 1,
		       node_distance(0, (int)nr_nodes - 1),
		       numa_distance_from_firmware ? "firmware" : "default");
	}
}

struct placement {
	atomic_t wrong_local, wrong_remote, failures;
};

static void placement_worker(void *arg)
{
	struct placement *t = arg;
	int here = numa_this_node();
	struct page *local = alloc_page_block(NUMA_NO_NODE, 0, 0);
	if (!local || page_node(local) != here)
		atomic_inc(local ? &t->wrong_local : &t->failures);
	free_page_block(local, 0);
	for (unsigned n = 0; n < nr_nodes; n++) {
		struct page *p = alloc_page_block((int)n, 0, 0);
		if (!p || page_node(p) != (int)n)
			atomic_inc(p ? &t->wrong_remote : &t->failures);
		free_page_block(p, 0);
	}
}

TEST(numa, allocations_land_on_the_requested_node)
{
	static struct placement t;
	t = (struct placement){0};
	u64 start = mm_test_buddy_free();
	smp_run_all(placement_worker, &t);
	EXPECT_EQ(atomic_read(&t.failures), 0);
	EXPECT_EQ(atomic_read(&t.wrong_local), 0);
	EXPECT_EQ(atomic_read(&t.wrong_remote), 0);
	/* 2 MiB blocks too, the huge-page fault path's size, strictly and not. */
	for (unsigned n = 0; n < nr_nodes; n++) {
		void *h = alloc_pages_flags((int)n, HUGE_ORDER, ALLOC_NOZERO);
		void *s = alloc_pages_flags((int)n, HUGE_ORDER, ALLOC_NOZERO | ALLOC_STRICT);
		EXPECT_TRUE(h && page_node(virt_to_page(h)) == (int)n);
		EXPECT_TRUE(s && page_node(virt_to_page(s)) == (int)n);
		free_pages(h, HUGE_ORDER);
		free_pages(s, HUGE_ORDER);
	}
	EXPECT_EQ(mm_test_buddy_free(), start);
}

/* Blocks chained through their first words, to give back later. */
struct held_block {
	struct held_block *next;
	unsigned order;
};

static struct held_block *exhaust_node(int node, u64 *pages)
{
	struct held_block *chain = NULL;
	for (int order = MAX_ORDER; order >= 0; order--) {
		struct held_block *b;
		while (
		    (b = alloc_pages_flags(node, (unsigned)order, ALLOC_NOZERO | ALLOC_STRICT))) {
			b->next = chain;
			b->order = (unsigned)order;
			chain = b;
			*pages += 1ULL << order;
		}
	}
	return chain;
}

static void free_chain(struct held_block *b)
{
	while (b) {
		struct held_block *next = b->next;
		free_pages(b, b->order);
		b = next;
	}
}

TEST(numa, full_node_falls_back_to_nearest)
{
	if (nr_nodes < 2) {
		test_skip("one node");
		return;
	}
	int full = (int)nr_nodes - 1, order[MAX_NODES];
	numa_fallback_order(full, order);
	u64 start = mm_test_buddy_free(), pages = 0;
	u64 node_free = buddy_free_pages(full);
	struct held_block *chain = exhaust_node(full, &pages);
	EXPECT_EQ(pages, node_free);
	EXPECT_EQ(node_free_pages(full), 0);
	EXPECT_TRUE(alloc_pages_strict_node(full, 0) == NULL);
	void *p = alloc_pages_node(full, 0);
	EXPECT_TRUE(p && page_node(virt_to_page(p)) == order[1]);
	free_pages(p, 0);
	free_chain(chain);
	EXPECT_EQ(mm_test_buddy_free(), start);
}
