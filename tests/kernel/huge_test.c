/*
 * Huge-page allocator selftests: blocks come zeroed (one written all over before
 * it was freed too) from the asked node while it has them, from the nearest other
 * node when it has none, and a huge-eligible fault falls back to 4 KiB pages when
 * no node has a 2 MiB block.
 */
#include <grace/numa.h>
#include "as_test.h"

/* Take every free 2 MiB block of node (strictly), chained through their first word. */
static void *take_node_blocks(int node)
{
	void *list = NULL;
	void **b;
	while ((b = alloc_pages_flags(node, HUGE_ORDER, ALLOC_STRICT | ALLOC_NOZERO))) {
		b[0] = list;
		list = b;
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

/* Words of a 2 MiB block that are not zero. */
static u64 nonzero_words(const u64 *block)
{
	u64 n = 0;
	for (size_t i = 0; i < HUGE_SIZE / sizeof(u64); i++)
		n += READ_ONCE(block[i]) != 0;
	return n;
}

/*
 * A block written all over and freed comes back (this CPU's list keeps the last
 * 2 MiB block freed here, and hands it out first) and must read zero: the memory
 * is taken ALLOC_NOZERO, so it is huge_alloc() itself that clears it.
 */
TEST(huge, alloc_zeroed_from_node)
{
	u64 before = as_free_bytes();

	for (unsigned node = 0; node < nr_nodes; node++) {
		u64 *block = huge_alloc(node);
		if (!block)
			continue; /* a node may have no memory at all */
		EXPECT_TRUE(IS_ALIGNED(virt_to_phys(block), HUGE_SIZE));
		EXPECT_EQ(page_node(virt_to_page(block)), node);
		EXPECT_EQ(nonzero_words(block), 0);
		for (size_t i = 0; i < HUGE_SIZE / sizeof(u64); i++)
			block[i] = ~0ULL;
		huge_free(block);
		u64 *again = huge_alloc(node);
		ASSERT_TRUE(again != NULL);
		/* The same block, or this test would not show that the dirt was cleared. */
		EXPECT_TRUE(again == block);
		EXPECT_EQ(nonzero_words(again), 0);
		huge_free(again);
	}
	EXPECT_EQ(as_free_bytes(), before);
}

TEST(huge, nearest_node_when_local_empty)
{
	if (nr_nodes < 2) {
		test_skip("one NUMA node");
		return;
	}
	u64 before = as_free_bytes();
	struct huge_stats s0, s1;
	int order[MAX_NODES];
	numa_fallback_order(1, order);

	void *hostage = take_node_blocks(1);
	huge_stats_sum(&s0);
	void *block = huge_alloc(1);
	huge_stats_sum(&s1);
	EXPECT_TRUE(block != NULL);
	if (block) {
		/* Node 1 had none left: the next in its fallback order served it. */
		EXPECT_EQ(page_node(virt_to_page(block)), order[1]);
		EXPECT_EQ(s1.remote - s0.remote, 1);
		huge_free(block);
	}
	give_blocks(hostage);
	EXPECT_EQ(as_free_bytes(), before);
}

TEST(huge, fault_falls_back_to_4k)
{
	u64 before = as_free_bytes();
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	uintptr_t va = as_slot(0);
	void *hostage[MAX_NODES];
	struct fault_stats s0, s1;
	int level;

	ASSERT_EQ(vma_map(mm, va, HUGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
	for (unsigned node = 0; node < nr_nodes; node++)
		hostage[node] = take_node_blocks(node);
	fault_stats_sum(&s0);
	int ret = mm_fault(mm, va, FAULT_WRITE);
	fault_stats_sum(&s1);
	for (unsigned node = 0; node < nr_nodes; node++)
		give_blocks(hostage[node]);

	EXPECT_EQ(ret, 0);
	as_pa(mm, va, &level);
	EXPECT_EQ(level, PT_LEVEL_PTE);
	EXPECT_EQ(s1.huge_fallback - s0.huge_fallback, 1);
	/* With blocks free again, the next 2 MiB of a fresh VMA gets one. */
	ASSERT_EQ(vma_map(mm, va + HUGE_SIZE, HUGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
	EXPECT_EQ(mm_fault(mm, va + HUGE_SIZE, FAULT_WRITE), 0);
	as_pa(mm, va + HUGE_SIZE, &level);
	EXPECT_EQ(level, PT_LEVEL_PMD);
	mm_destroy(mm);
	EXPECT_EQ(as_free_bytes(), before);
}
