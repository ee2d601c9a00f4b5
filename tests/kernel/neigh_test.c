/*
 * The neighbour table through neigh_update() and neigh_lookup() only (nothing
 * here sends a frame): entries made, changed and found; the timer-style gc
 * freeing stale entries and keeping fresh ones; an insert at the threshold
 * forcing a gc first. Devices are the test's own, and its knobs are put back.
 */
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/neighbour.h>
#include <grace/netdevice.h>
#include <grace/sched.h>
#include <grace/string.h>
#include <grace/test.h>
#include <grace/time.h>

static struct net_device nt_eth0 = {
    .name = "nt-test0",
    .mac = {0x02, 0, 0, 0, 0xb0, 1},
    .flags = IFF_UP,
    .ifindex = 1101,
    .ipv4_addr = IPV4(198, 18, 0, 1),
};
static struct net_device nt_eth1 = {
    .name = "nt-test1",
    .mac = {0x02, 0, 0, 0, 0xb0, 2},
    .flags = IFF_UP,
    .ifindex = 1102,
    .ipv4_addr = IPV4(198, 19, 0, 1),
};

static void nt_mac(u8 *mac, unsigned i)
{
	static const u8 base[ETH_ALEN] = {0x02, 0x11, 0x22, 0, 0, 0};
	memcpy(mac, base, ETH_ALEN);
	mac[4] = i >> 8;
	mac[5] = i;
}

static unsigned nt_mine;
static void nt_count_fn(struct net_device *dev, u32 ip, const u8 *mac, bool complete, void *arg)
{
	(void)ip;
	(void)mac;
	(void)complete;
	(void)arg;
	if (dev == &nt_eth0 || dev == &nt_eth1)
		nt_mine++;
}

/* The test devices' entries a walk finds. */
static unsigned nt_walk(void)
{
	nt_mine = 0;
	neigh_for_each(nt_count_fn, NULL);
	return nt_mine;
}

/* Free every entry: a gc pass that finds them all stale. */
static void nt_clear(void)
{
	struct neigh_gc_params saved, p;
	neigh_gc_get_params(&saved);
	p = saved;
	p.stale_ns = 0;
	p.resolve_timeout_ns = 0;
	neigh_gc_set_params(&p);
	neigh_gc_run();
	neigh_gc_set_params(&saved);
}

TEST(neigh, update_creates_changes_and_lookup_finds)
{
	u8 mac[ETH_ALEN], got[ETH_ALEN];
	u32 ip = IPV4(198, 18, 0, 20);
	nt_clear();
	EXPECT_FALSE(neigh_lookup(&nt_eth0, ip, got));
	nt_mac(mac, 1);
	neigh_update(&nt_eth0, ip, mac, false); /* not asked to create: nothing */
	EXPECT_FALSE(neigh_lookup(&nt_eth0, ip, got));
	EXPECT_EQ(nt_walk(), 0);
	neigh_update(&nt_eth0, ip, mac, true);
	ASSERT_TRUE(neigh_lookup(&nt_eth0, ip, got));
	EXPECT_EQ(memcmp(got, mac, ETH_ALEN), 0);
	/* Per device: the same address on another device is another neighbour. */
	EXPECT_FALSE(neigh_lookup(&nt_eth1, ip, got));
	nt_mac(mac, 2);
	neigh_update(&nt_eth0, ip, mac, false); /* it moved */
	ASSERT_TRUE(neigh_lookup(&nt_eth0, ip, got));
	EXPECT_EQ(got[5], 2);
	EXPECT_EQ(nt_walk(), 1);
	nt_clear();
	EXPECT_EQ(nt_walk(), 0);
}

TEST(neigh, gc_frees_stale_entries_and_keeps_fresh_ones)
{
	struct neigh_gc_params saved, p;
	u8 mac[ETH_ALEN], got[ETH_ALEN];
	nt_clear();
	neigh_gc_get_params(&saved);
	p = saved;
	p.stale_ns = 200 * NSEC_PER_MSEC;
	p.interval_ns = 3600 * NSEC_PER_SEC; /* only this test's passes, not the timer's */
	ASSERT_EQ(neigh_gc_set_params(&p), 0);
	for (unsigned i = 0; i < 40; i++) {
		nt_mac(mac, i);
		neigh_update(i & 1 ? &nt_eth1 : &nt_eth0, IPV4(198, 18, 1, i), mac, true);
	}
	u64 freed = neigh_stat(NEIGH_GC_FREED), runs = neigh_stat(NEIGH_GC_RUNS);
	neigh_gc_run();
	EXPECT_EQ(nt_walk(), 40);
	msleep(300);
	for (unsigned i = 0; i < 10; i++) { /* replies confirm these ten again */
		nt_mac(mac, i);
		neigh_update(i & 1 ? &nt_eth1 : &nt_eth0, IPV4(198, 18, 1, i), mac, false);
	}
	neigh_gc_run();
	EXPECT_EQ(nt_walk(), 10);
	EXPECT_EQ(neigh_stat(NEIGH_GC_FREED) - freed, 30);
	EXPECT_EQ(neigh_stat(NEIGH_GC_RUNS) - runs, 2);
	EXPECT_TRUE(neigh_lookup(&nt_eth1, IPV4(198, 18, 1, 9), got));
	EXPECT_FALSE(neigh_lookup(&nt_eth0, IPV4(198, 18, 1, 10), got));
	EXPECT_EQ(neigh_gc_set_params(&saved), 0);
	nt_clear();
}

TEST(neigh, insert_at_the_threshold_forces_a_gc_first)
{
	struct neigh_gc_params saved, p;
	u8 mac[ETH_ALEN], got[ETH_ALEN];
	nt_clear();
	neigh_gc_get_params(&saved);
	p = saved;
	p.thresh = neigh_stat(NEIGH_ENTRIES) + 16;
	ASSERT_EQ(neigh_gc_set_params(&p), 0);
	u64 forced = neigh_stat(NEIGH_FORCED_GC_RUNS);
	for (unsigned i = 0; i < 16; i++) {
		nt_mac(mac, i);
		neigh_update(&nt_eth0, IPV4(198, 18, 2, i), mac, true);
	}
	EXPECT_EQ(neigh_stat(NEIGH_FORCED_GC_RUNS), forced); /* up to the threshold: no gc */
	EXPECT_EQ(nt_walk(), 16);
	/* An update of a known entry inserts nothing: no gc either. */
	neigh_update(&nt_eth0, IPV4(198, 18, 2, 3), mac, true);
	EXPECT_EQ(neigh_stat(NEIGH_FORCED_GC_RUNS), forced);
	nt_mac(mac, 99);
	neigh_update(&nt_eth0, IPV4(198, 18, 2, 99), mac, true);
	EXPECT_EQ(neigh_stat(NEIGH_FORCED_GC_RUNS), forced + 1);
	/* The forced gc took every complete entry; the new one came after it. */
	EXPECT_EQ(nt_walk(), 1);
	EXPECT_TRUE(neigh_lookup(&nt_eth0, IPV4(198, 18, 2, 99), got));
	EXPECT_FALSE(neigh_lookup(&nt_eth0, IPV4(198, 18, 2, 0), got));
	EXPECT_EQ(neigh_gc_set_params(&saved), 0);
	nt_clear();
}

/* Nobody calls neigh_gc_run(): the timer does, every interval. */
TEST(neigh, gc_timer_runs_every_interval)
{
	struct neigh_gc_params saved, p;
	u8 mac[ETH_ALEN];
	nt_clear();
	neigh_gc_get_params(&saved);
	p = saved;
	p.interval_ns = 50 * NSEC_PER_MSEC;
	p.stale_ns = 20 * NSEC_PER_MSEC;
	ASSERT_EQ(neigh_gc_set_params(&p), 0);
	for (unsigned i = 0; i < 20; i++) {
		nt_mac(mac, i);
		neigh_update(&nt_eth0, IPV4(198, 18, 3, i), mac, true);
	}
	u64 runs = neigh_stat(NEIGH_GC_RUNS);
	msleep(400);
	EXPECT_GE(neigh_stat(NEIGH_GC_RUNS) - runs,
		  2); /* 8 due; a loaded host delays the kworker */
	EXPECT_EQ(nt_walk(), 0);
	EXPECT_EQ(neigh_gc_set_params(&saved), 0);
}

TEST(neigh, gc_params_reject_a_zero_interval)
{
	struct neigh_gc_params saved, p;
	neigh_gc_get_params(&saved);
	p = saved;
	p.interval_ns = 0;
	EXPECT_EQ(neigh_gc_set_params(&p), -EINVAL);
	neigh_gc_get_params(&p);
	EXPECT_EQ(p.interval_ns, saved.interval_ns);
}
