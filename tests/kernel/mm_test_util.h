/* Helpers shared by the page-allocator selftests (buddy, pcp, numa, oom, slab, mm). */
#ifndef TESTS_MM_TEST_UTIL_H
#define TESTS_MM_TEST_UTIL_H

#include <grace/page_alloc.h>
#include <grace/numa.h>

/*
 * Free pages in every node's buddy lists, each read under its zone lock, after the
 * per-CPU lists were drained: exact as long as nothing else allocates meanwhile
 * (the selftests run one at a time and the other CPUs idle between them).
 */
static inline u64 mm_test_buddy_free(void)
{
	pcp_drain_all();
	u64 n = 0;
	for (unsigned node = 0; node < nr_nodes; node++)
		n += buddy_free_pages((int)node);
	return n;
}

#endif
