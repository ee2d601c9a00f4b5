/*
 * Out of memory: fill all of memory, check that every level says so (NULL from the
 * page allocator on every node, from kmalloc of a fresh size, from a cache with no
 * slab yet, and from kmem_cache_create), then give everything back and check that
 * the free count is exactly where it was and allocation works again.
 */
#include <grace/page_alloc.h>
#include <grace/slab.h>
#include <grace/test.h>
#include "mm_test_util.h"

struct oom_block {
	struct oom_block *next;
	unsigned order;
};

TEST(oom, fill_memory_then_recover)
{
	struct kmem_cache *c = kmem_cache_create("test-oom", 512, 0, 0, NULL);
	ASSERT_TRUE(c != NULL);
	mm_test_drop_caches();
	u64 start = mm_test_buddy_free(), pages = 0;
	struct oom_block *chain = NULL;
	/* Largest blocks first, not zeroed: filling 512 MiB stays quick under TCG. */
	for (int order = MAX_ORDER; order >= 0; order--) {
		struct oom_block *b;
		while ((b = alloc_pages_flags(NUMA_NO_NODE, (unsigned)order, ALLOC_NOZERO))) {
			b->next = chain;
			b->order = (unsigned)order;
			chain = b;
			pages += 1ULL << order;
		}
	}
	EXPECT_EQ(pages, start);
	EXPECT_TRUE(alloc_pages(0) == NULL);
	for (unsigned n = 0; n < nr_nodes; n++) {
		EXPECT_TRUE(alloc_pages_node((int)n, 0) == NULL);
		EXPECT_EQ(node_free_pages((int)n), 0);
	}
	EXPECT_TRUE(kmalloc(2 * PAGE_SIZE) == NULL);
	EXPECT_TRUE(kmem_cache_alloc(c) == NULL);
	EXPECT_TRUE(kmem_cache_create("test-oom-2", 64, 0, 0, NULL) == NULL);

	while (chain) {
		struct oom_block *next = chain->next;
		free_pages(chain, chain->order);
		chain = next;
	}
	EXPECT_EQ(mm_test_buddy_free(), start);
	void *obj = kmem_cache_alloc(c);
	EXPECT_TRUE(obj != NULL);
	kmem_cache_free(c, obj);
	EXPECT_EQ(kmem_cache_destroy(c), 0);
	void *p = alloc_pages(MAX_ORDER);
	EXPECT_TRUE(p != NULL);
	free_pages(p, MAX_ORDER);
}
