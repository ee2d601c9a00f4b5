/*
 * The shape of the RCU tree for CPU counts this machine may not have: the booted
 * tree covers only the CPUs online, so the shapes at 255 and 512 CPUs (and at the
 * narrowest fanouts) are checked here, on the function rcu_build_tree() uses.
 */
#include <grace/boot_info.h>
#include <grace/test.h>
#include "../../kernel/rcu/rcu_internal.h"

/* width[] of a tree: leaves first, then each level's parents, ending in one root. */
static bool shape_is(unsigned ncpus, unsigned leaf, unsigned fanout, unsigned levels,
		     const unsigned *want)
{
	unsigned width[RCU_MAX_LEVELS];
	unsigned got = rcu_tree_shape(ncpus, leaf, fanout, width);
	if (!EXPECT_EQ(got, levels))
		return false;
	for (unsigned l = 0; l < levels; l++)
		if (!EXPECT_EQ(width[l], want[l]))
			return false;
	return true;
}

TEST(rcu_tree, shape_gains_a_level_past_one_leaf)
{
	/* Defaults (16, 64): one node up to 16 CPUs, then leaves under one root. */
	shape_is(1, 16, 64, 1, (const unsigned[]){1});
	shape_is(16, 16, 64, 1, (const unsigned[]){1});
	shape_is(17, 16, 64, 2, (const unsigned[]){2, 1});
	shape_is(64, 16, 64, 2, (const unsigned[]){4, 1});
	shape_is(255, 16, 64, 2, (const unsigned[]){16, 1});
	shape_is(512, 16, 64, 2, (const unsigned[]){32, 1});
	/* The narrowest: 256 leaves of 2, then halving to the root. */
	shape_is(512, 2, 2, 9, (const unsigned[]){256, 128, 64, 32, 16, 8, 4, 2, 1});
	/* A root of more than 64 children is what a wider leaf fanout avoids. */
	shape_is(512, 2, 64, 3, (const unsigned[]){256, 4, 1});
}

TEST(rcu_tree, every_cpu_count_and_fanout_fits)
{
	static const unsigned fanouts[] = {2, 3, 7, 16, 63, 64};
	for (unsigned ncpus = 1; ncpus <= MAX_CPUS; ncpus++)
		for (unsigned i = 0; i < ARRAY_SIZE(fanouts); i++)
			for (unsigned j = 0; j < ARRAY_SIZE(fanouts); j++) {
				unsigned leaf = fanouts[i], fanout = fanouts[j];
				unsigned width[RCU_MAX_LEVELS];
				unsigned levels = rcu_tree_shape(ncpus, leaf, fanout, width);
				/* Every level's nodes have room for the level below's. */
				bool ok = levels <= RCU_MAX_LEVELS && width[levels - 1] == 1 &&
					  width[0] * leaf >= ncpus;
				for (unsigned l = 1; ok && l < levels; l++)
					ok = width[l] * fanout >= width[l - 1] &&
					     (width[l] - 1) * fanout < width[l - 1];
				if (!ok) {
					test_fail(__FILE__, __LINE__,
						  "%u CPUs, fanouts %u and %u: a bad tree of %u "
						  "levels",
						  ncpus, leaf, fanout, levels);
					return;
				}
			}
}
