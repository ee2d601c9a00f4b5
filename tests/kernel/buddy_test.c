/*
 * Buddy allocator selftests: exact split and merge on a private zone fed one
 * MAX_ORDER block, natural alignment of every order, and an alloc/free storm from
 * every CPU at once in which every block is claimed by its owner (in its page
 * descriptor and in its memory) and checked on free, so a block handed out twice
 * is caught; afterwards the free count is back exactly where it started.
 *
 * The storm's work is a fixed total split over the CPUs: under QEMU 64 vCPUs may
 * share 2 host cores.
 */
#include <grace/page_alloc.h>
#include <grace/page.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/string.h>
#include <grace/test.h>
#include <mm/page_alloc_internal.h>
#include "lock_sizing.h"
#include "mm_test_util.h"

static bool zone_has_exactly(struct zone *z, const u64 want[MAX_ORDER + 1])
{
	bool ok = true;
	for (unsigned o = 0; o <= MAX_ORDER; o++)
		if (z->free[o].nr != want[o])
			ok = test_fail(__FILE__, __LINE__,
				       "order %u: %llu free blocks, expected %llu", o,
				       z->free[o].nr, want[o]);
	return ok;
}

TEST(buddy, split_and_merge_exact)
{
	static struct zone tz;
	struct page *block = alloc_page_block(NUMA_NO_NODE, MAX_ORDER, ALLOC_NOZERO | ALLOC_NOPCP);
	ASSERT_TRUE(block != NULL);
	tz = (struct zone){.lock = SPINLOCK_INIT, .node = block->node};
	block->flags = 0;
	buddy_free(&tz, block, MAX_ORDER);
	u64 want[MAX_ORDER + 1] = {0};
	want[MAX_ORDER] = 1;
	zone_has_exactly(&tz, want);

	/* One page splits the block into one free buddy of every lower order. */
	struct page *p0 = buddy_alloc(&tz, 0);
	EXPECT_TRUE(p0 == block);
	for (unsigned o = 0; o < MAX_ORDER; o++) {
		want[o] = 1;
		struct page *b = block + (1UL << o);
		EXPECT_TRUE((b->flags & PG_BUDDY) && b->order == o);
	}
	want[MAX_ORDER] = 0;
	zone_has_exactly(&tz, want);
	EXPECT_EQ(tz.nr_free, (1UL << MAX_ORDER) - 1);

	/* The order-3 request takes the free order-3 buddy as it is. */
	struct page *p3 = buddy_alloc(&tz, 3);
	EXPECT_TRUE(p3 == block + 8);
	want[3] = 0;
	zone_has_exactly(&tz, want);

	/* Freeing page 0 merges orders 0, 1, 2 and stops at the allocated order-3 buddy. */
	buddy_free(&tz, p0, 0);
	want[0] = want[1] = want[2] = 0;
	want[3] = 1;
	zone_has_exactly(&tz, want);
	EXPECT_TRUE((block->flags & PG_BUDDY) && block->order == 3);

	/* Freeing the order-3 block merges everything back into one block. */
	buddy_free(&tz, p3, 3);
	for (unsigned o = 0; o < MAX_ORDER; o++)
		want[o] = 0;
	want[MAX_ORDER] = 1;
	zone_has_exactly(&tz, want);
	EXPECT_EQ(tz.nr_free, 1UL << MAX_ORDER);

	/* Nothing bigger than MAX_ORDER exists. */
	struct page *all = buddy_alloc(&tz, MAX_ORDER);
	EXPECT_TRUE(all == block);
	EXPECT_TRUE(buddy_alloc(&tz, 0) == NULL);
	EXPECT_EQ(tz.nr_free, 0);
	buddy_free(&zones[block->node], block, MAX_ORDER);
}

TEST(buddy, every_order_aligned_and_zeroed)
{
	u64 before = mm_test_buddy_free();
	for (unsigned order = 0; order <= MAX_ORDER; order++) {
		u8 *p = alloc_pages(order);
		ASSERT_TRUE(p != NULL);
		size_t size = PAGE_SIZE << order;
		EXPECT_TRUE(IS_ALIGNED(virt_to_phys(p), size));
		EXPECT_TRUE(virt_to_page(p)->flags & PG_HEAD);
		EXPECT_EQ(virt_to_page(p)->order, order);
		/* Sampled: zeroing all 4 MiB byte by byte would dominate the run under TCG. */
		for (size_t off = 0; off < size; off += 512)
			if (p[off] || p[off + 511]) {
				test_fail(__FILE__, __LINE__, "order %u block not zeroed at +%zu",
					  order, off);
				break;
			}
		memset(p, 0x5a, size);
		free_pages(p, order);
	}
	EXPECT_TRUE(alloc_pages(MAX_ORDER + 1) == NULL);
	EXPECT_TRUE(alloc_pages_node(MAX_NODES, 0) == NULL);
	EXPECT_EQ(mm_test_buddy_free(), before);
}

/*
 * Storm: every CPU keeps up to STORM_HELD blocks, replacing one per step; orders
 * cycle through 0 (per-CPU lists), 1-3 (buddy) and now and then HUGE_ORDER.
 * STORM_TOTAL steps over all CPUs. Three steps in ten take the zone lock; at
 * SMP=64 on 2 host cores a ticket-lock convoy there can cost ~100 ms per hand-off
 * without paravirtual spinlock waits (a 6000-step storm once took 226 s, another run
 * of it 0.35 s), so keep it small; with them every CPU does its SMP=4 share
 * (lock_sizing.h).
 */
#define STORM_TOTAL 1500
#define STORM_MIN_PER_CPU 16
#define STORM_HELD 12
#define STORM_HUGE_EVERY 97

struct storm {
	struct smp_sync start;
	unsigned steps; /* per CPU */
	bool huge;	/* memory enough for every CPU to hold 2 MiB blocks too */
	atomic_t failures, stolen, not_zeroed;
};

static unsigned storm_order(const struct storm *t, unsigned step)
{
	if (t->huge && step % STORM_HUGE_EVERY == STORM_HUGE_EVERY - 1)
		return HUGE_ORDER;
	static const u8 orders[] = {0, 0, 0, 1, 0, 2, 0, 0, 3, 0};
	return orders[step % sizeof(orders)];
}

static void storm_claim(struct storm *t, struct page *page, unsigned order, u64 tag)
{
	uintptr_t expected = 0;
	if (!try_cmpxchg(&page->private, &expected, (uintptr_t)tag))
		atomic_inc(&t->stolen);
	u64 *first = page_address(page), *last = (u64 *)((char *)first + (PAGE_SIZE << order)) - 1;
	if (*first || *last)
		atomic_inc(&t->not_zeroed);
	*first = *last = tag;
}

static void storm_release(struct storm *t, struct page *page, unsigned order, u64 tag)
{
	u64 *first = page_address(page), *last = (u64 *)((char *)first + (PAGE_SIZE << order)) - 1;
	/* Someone else got this block too: their claim or their zeroing shows here. */
	if (READ_ONCE(page->private) != tag || READ_ONCE(*first) != tag || READ_ONCE(*last) != tag)
		atomic_inc(&t->stolen);
	WRITE_ONCE(page->private, 0);
	free_page_block(page, order);
}

/* Owner tag: "STORM", the CPU and the order, so a stolen block shows whose it was. */
static u64 storm_tag(unsigned cpu, unsigned order)
{
	return 0x53544f524d000000ULL | (u64)cpu << 16 | order;
}

static void storm_worker(void *arg)
{
	struct storm *t = arg;
	struct page *held[STORM_HELD] = {0};
	u8 held_order[STORM_HELD];
	unsigned cpu = smp_processor_id();

	smp_sync_wait(&t->start, num_online_cpus());
	for (unsigned step = 0; step < t->steps; step++) {
		unsigned slot = step % STORM_HELD;
		if (held[slot])
			storm_release(t, held[slot], held_order[slot],
				      storm_tag(cpu, held_order[slot]));
		unsigned order = storm_order(t, step + cpu);
		held[slot] = alloc_page_block(NUMA_NO_NODE, order, 0);
		held_order[slot] = (u8)order;
		if (!held[slot]) {
			atomic_inc(&t->failures);
			continue;
		}
		storm_claim(t, held[slot], order, storm_tag(cpu, order));
	}
	for (unsigned slot = 0; slot < STORM_HELD; slot++)
		if (held[slot])
			storm_release(t, held[slot], held_order[slot],
				      storm_tag(cpu, held_order[slot]));
}

TEST(buddy, storm_every_cpu_no_block_twice)
{
	static struct storm t;
	u64 bad_before = mm_bad_free_count();
	u64 before = mm_test_buddy_free();
	t = (struct storm){.steps =
			       lock_sized_share(STORM_TOTAL, num_online_cpus(), STORM_MIN_PER_CPU)};
	/*
	 * Twice what all CPUs could hold at once (a huge block, 8-page blocks, their
	 * order-0 lists at the boot's marks; a grown order-0 list and a huge list's
	 * blocks are drained before an allocation fails).
	 */
	u64 need = 2ULL * num_online_cpus() *
		   ((1u << HUGE_ORDER) + STORM_HELD * 8 + pcp_limits(numa_this_node(), 0).high);
	t.huge = before >= need;
	if (!t.huge)
		printk("# %u CPUs, %llu free pages: no 2 MiB blocks in this storm\n",
		       num_online_cpus(), before);
	smp_run_all(storm_worker, &t);
	EXPECT_EQ(atomic_read(&t.failures), 0);
	EXPECT_EQ(atomic_read(&t.stolen), 0);
	EXPECT_EQ(atomic_read(&t.not_zeroed), 0);
	EXPECT_EQ(mm_bad_free_count(), bad_before);
	EXPECT_EQ(mm_test_buddy_free(), before);
}
