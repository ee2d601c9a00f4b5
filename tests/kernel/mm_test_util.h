/* Helpers shared by the page-allocator selftests (buddy, pcp, numa, oom, slab, mm). */
#ifndef TESTS_MM_TEST_UTIL_H
#define TESTS_MM_TEST_UTIL_H

#include <grace/page_alloc.h>
#include <grace/numa.h>
#include <grace/rcupdate.h>
#include <grace/shrinker.h>

/*
 * Before a test that counts free pages: let every shrinker free what it can (the
 * dentry cache's unused dentries, left by earlier tests) and wait for what goes
 * through RCU, so that no cache gives pages back in the middle of the count.
 */
static inline void mm_test_drop_caches(void)
{
	while (shrink_caches(~0UL))
		;
	rcu_barrier();
}

/*
 * Free pages in every node's buddy lists, each read under its zone lock, after the
 * per-CPU lists were drained: exact as long as nothing else allocates meanwhile
 * (the selftests run one at a time and the other CPUs idle between them). What
 * earlier tests freed through RCU (an mm's VMAs and tables) has come back first,
 * so that it does not come back in the middle of a count.
 */
static inline u64 mm_test_buddy_free(void)
{
	rcu_barrier();
	pcp_drain_all();
	u64 n = 0;
	for (unsigned node = 0; node < nr_nodes; node++)
		n += buddy_free_pages((int)node);
	return n;
}

#endif
