/*
 * The FIB and the route cache: longest-prefix matching and its bad input, the
 * cache's hit and miss paths and counts, its gc (idle expiry, chain trimming over
 * the threshold), a storm of lookups against gc and flushes on every CPU in both
 * rtcache modes and across switches between them, and the RCU guarantee itself:
 * an entry a reader holds is not freed while it holds it. The routes are in
 * 198.18.0.0/15 (RFC 2544's benchmarking range) out of devices of the test's own,
 * which no driver backs: nothing here sends a packet.
 */
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/kthread.h>
#include <grace/netdevice.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/rcupdate.h>
#include <grace/route.h>
#include <grace/sched.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <grace/test.h>
#include <grace/time.h>
#include <asm/cpu.h>

static struct net_device rt_test_eth0 = {
    .name = "rt-test0",
    .mac = {0x02, 0, 0, 0, 0xa0, 1},
    .flags = IFF_UP,
    .ifindex = 1001,
    .ipv4_addr = IPV4(198, 18, 0, 1),
};
static struct net_device rt_test_eth1 = {
    .name = "rt-test1",
    .mac = {0x02, 0, 0, 0, 0xa0, 2},
    .flags = IFF_UP,
    .ifindex = 1002,
    .ipv4_addr = IPV4(198, 19, 0, 1),
};

struct rt_test_route {
	u32 prefix;
	unsigned len;
	u32 gateway;
	struct net_device *dev;
};

/* Nested on purpose, added in no order of length: the FIB must sort them. */
static const struct rt_test_route rt_test_routes[] = {
    {IPV4(198, 19, 1, 0), 24, 0, &rt_test_eth0},
    {IPV4(198, 18, 0, 0), 15, IPV4(198, 18, 0, 254), &rt_test_eth0},
    {IPV4(198, 19, 1, 128), 25, IPV4(198, 19, 0, 9), &rt_test_eth1},
    {IPV4(198, 18, 64, 0), 18, 0, &rt_test_eth1},
    {IPV4(198, 19, 0, 0), 16, IPV4(198, 19, 0, 254), &rt_test_eth1},
    {IPV4(198, 19, 1, 200), 32, IPV4(198, 18, 0, 7), &rt_test_eth0},
};

static int rt_test_add_routes(void)
{
	for (unsigned i = 0; i < ARRAY_SIZE(rt_test_routes); i++) {
		const struct rt_test_route *r = &rt_test_routes[i];
		int err = fib_add(r->prefix, r->len, r->gateway, r->dev);
		if (err)
			return err;
	}
	return 0;
}

static void rt_test_del_routes(void)
{
	for (unsigned i = 0; i < ARRAY_SIZE(rt_test_routes); i++)
		fib_del(rt_test_routes[i].prefix, rt_test_routes[i].len);
	rt_cache_flush();
	rcu_barrier();
}

/*
 * The test's own answer for (daddr, oif): the longest of its routes that matches,
 * by a plain search of the list, independent of the FIB's sorting.
 */
static bool rt_test_expect(u32 daddr, u32 oif, u32 *nexthop, struct net_device **dev)
{
	const struct rt_test_route *best = NULL;
	for (unsigned i = 0; i < ARRAY_SIZE(rt_test_routes); i++) {
		const struct rt_test_route *r = &rt_test_routes[i];
		u32 mask = r->len ? htonl(~0u << (32 - r->len)) : 0;
		if ((daddr & mask) != r->prefix || (oif && r->dev->ifindex != oif))
			continue;
		if (!best || r->len > best->len)
			best = r;
	}
	if (!best)
		return false;
	*nexthop = best->gateway ? best->gateway : daddr;
	*dev = best->dev;
	return true;
}

static u64 rt_test_count;
static void rt_test_count_fn(const struct rtable *rt, void *arg)
{
	(void)rt;
	(void)arg;
	rt_test_count++;
}

/* Entries a walk of the table finds. */
static u64 rt_test_walk(void)
{
	rt_test_count = 0;
	rt_cache_for_each(rt_test_count_fn, NULL);
	return rt_test_count;
}

TEST(fib, longest_prefix_wins)
{
	ASSERT_EQ(rt_test_add_routes(), 0);
	static const u32 probes[] = {
	    IPV4(198, 18, 0, 5),   IPV4(198, 18, 64, 1),    IPV4(198, 18, 127, 255),
	    IPV4(198, 18, 128, 0), IPV4(198, 19, 0, 1),	    IPV4(198, 19, 1, 1),
	    IPV4(198, 19, 1, 127), IPV4(198, 19, 1, 128),   IPV4(198, 19, 1, 200),
	    IPV4(198, 19, 1, 201), IPV4(198, 19, 255, 255),
	};
	for (unsigned i = 0; i < ARRAY_SIZE(probes); i++) {
		u32 gw = 0, want_gw = 0;
		struct net_device *dev = NULL, *want_dev = NULL;
		ASSERT_TRUE(rt_test_expect(probes[i], 0, &want_gw, &want_dev));
		EXPECT_EQ(fib_lookup(probes[i], &gw, &dev), 0);
		EXPECT_EQ(ntohl(gw), ntohl(want_gw));
		EXPECT_TRUE(dev == want_dev);
	}
	/* Spot checks the oracle could share a mistake with. */
	u32 gw;
	struct net_device *dev;
	EXPECT_EQ(fib_lookup(IPV4(198, 19, 1, 200), &gw, &dev), 0);
	EXPECT_EQ(gw, IPV4(198, 18, 0, 7));
	EXPECT_EQ(fib_lookup(IPV4(198, 18, 70, 3), &gw, &dev), 0);
	EXPECT_EQ(gw, IPV4(198, 18, 70, 3)); /* on-link: the destination is the next hop */
	EXPECT_TRUE(dev == &rt_test_eth1);
	rt_test_del_routes();
}

TEST(fib, delete_falls_back_to_the_shorter_prefix)
{
	u32 gw;
	struct net_device *dev;
	ASSERT_EQ(rt_test_add_routes(), 0);
	EXPECT_EQ(fib_del(IPV4(198, 19, 1, 0), 24), 0);
	EXPECT_EQ(fib_lookup(IPV4(198, 19, 1, 1), &gw, &dev), 0);
	EXPECT_EQ(gw, IPV4(198, 19, 0, 254)); /* the /16 now */
	EXPECT_TRUE(dev == &rt_test_eth1);
	EXPECT_EQ(fib_del(IPV4(198, 19, 1, 0), 24), -ENOENT);
	rt_test_del_routes();
}

TEST(fib, rejects_bad_prefixes_and_duplicates)
{
	EXPECT_EQ(fib_add(IPV4(198, 18, 0, 0), 33, 0, &rt_test_eth0), -EINVAL);
	EXPECT_EQ(fib_add(IPV4(198, 18, 1, 1), 24, 0, &rt_test_eth0), -EINVAL); /* host bits */
	EXPECT_EQ(fib_add(IPV4(198, 18, 0, 0), 24, 0, NULL), -EINVAL);
	EXPECT_EQ(fib_del(IPV4(198, 18, 1, 1), 24), -EINVAL);
	EXPECT_EQ(fib_del(IPV4(198, 18, 0, 0), 40), -EINVAL);
	ASSERT_EQ(fib_add(IPV4(198, 18, 1, 0), 24, 0, &rt_test_eth0), 0);
	EXPECT_EQ(fib_add(IPV4(198, 18, 1, 0), 24, IPV4(198, 18, 0, 1), &rt_test_eth1), -EEXIST);
	EXPECT_EQ(fib_add(IPV4(198, 18, 1, 0), 25, 0, &rt_test_eth0), 0); /* same prefix, longer */
	EXPECT_EQ(fib_del(IPV4(198, 18, 1, 0), 25), 0);
	EXPECT_EQ(fib_del(IPV4(198, 18, 1, 0), 24), 0);
	EXPECT_EQ(fib_del(IPV4(198, 18, 1, 0), 24), -ENOENT);
}

TEST(route, miss_inserts_then_hits_the_same_entry)
{
	struct rt_cache_stats a, b;
	struct rtable *rt1 = NULL, *rt2 = NULL;
	u32 d = IPV4(198, 19, 1, 130);
	ASSERT_EQ(rt_test_add_routes(), 0);
	rt_cache_flush();
	rt_cache_stats(&a);
	rcu_read_lock();
	EXPECT_EQ(ip_route_output(d, 0, 0, 0, &rt1), 0);
	EXPECT_EQ(ip_route_output(d, 0, 0, 0, &rt2), 0);
	EXPECT_TRUE(rt1 && rt1 == rt2);
	if (rt1) {
		EXPECT_EQ(rt1->daddr, d);
		EXPECT_EQ(rt1->gateway, IPV4(198, 19, 0, 9));
		EXPECT_TRUE(rt1->dev == &rt_test_eth1);
		EXPECT_EQ(rt1->magic, RT_MAGIC);
	}
	/* Another tos is another key: another entry. */
	EXPECT_EQ(ip_route_output(d, 0, 0x10, 0, &rt2), 0);
	EXPECT_TRUE(rt2 && rt2 != rt1 && rt2->tos == 0x10);
	/* An oif no route leaves by: unreachable, and nothing cached. */
	EXPECT_EQ(ip_route_output(IPV4(198, 19, 1, 130), 0, 0, 4242, &rt2), -ENETUNREACH);
	rcu_read_unlock();
	rt_cache_stats(&b);
	EXPECT_EQ(b.misses - a.misses, 3);
	EXPECT_EQ(b.hits - a.hits, 1);
	EXPECT_EQ(b.inserts - a.inserts, 2);
	EXPECT_EQ(b.entries, 2);
	EXPECT_EQ(rt_test_walk(), 2);
	rt_test_del_routes();
	rt_cache_stats(&b);
	EXPECT_EQ(b.entries, 0);
	EXPECT_EQ(rt_test_walk(), 0);
}

/* Fill the cache with n entries: 198.18.x.y for i < n. */
static int rt_test_fill(unsigned n)
{
	int err = 0;
	rcu_read_lock();
	for (unsigned i = 0; i < n && !err; i++) {
		struct rtable *rt;
		err = ip_route_output(IPV4(198, 18, (i >> 8) & 0xff, i & 0xff), 0, 0, 0, &rt);
	}
	rcu_read_unlock();
	return err;
}

TEST(route, gc_expires_idle_entries_only)
{
	struct rt_gc_params saved, p;
	struct rt_cache_stats a, b;
	ASSERT_EQ(rt_test_add_routes(), 0);
	rt_cache_flush();
	rt_gc_get_params(&saved);
	p = saved;
	p.timeout_ns = 200 * NSEC_PER_MSEC;
	p.interval_ns = 3600 * NSEC_PER_SEC; /* only this test's passes, not the timer's */
	ASSERT_EQ(rt_gc_set_params(&p), 0);
	ASSERT_EQ(rt_test_fill(100), 0);
	rt_cache_stats(&a);
	rt_gc_run(); /* nothing idle long enough yet */
	rt_cache_stats(&b);
	EXPECT_EQ(b.entries, 100);
	msleep(300);
	ASSERT_EQ(rt_test_fill(10), 0); /* these ten were used just now */
	rt_gc_run();
	rt_cache_stats(&b);
	EXPECT_EQ(b.entries, 10);
	EXPECT_EQ(b.gc_freed - a.gc_freed, 90);
	EXPECT_GE(b.gc_runs - a.gc_runs, 2);
	EXPECT_EQ(rt_test_walk(), 10);
	EXPECT_EQ(rt_gc_set_params(&saved), 0);
	rt_test_del_routes();
}

/*
 * More entries than chains (4096), so that some chains must hold two or more: the
 * hash spreads consecutive addresses so evenly that fewer might all sit alone.
 */
#define RT_TRIM_FILL 6000

TEST(route, gc_trims_chains_only_over_the_threshold)
{
	struct rt_gc_params saved, p;
	struct rt_cache_stats s;
	ASSERT_EQ(rt_test_add_routes(), 0);
	rt_cache_flush();
	rt_gc_get_params(&saved);
	p = saved;
	p.timeout_ns = 3600 * NSEC_PER_SEC;
	p.interval_ns = 3600 * NSEC_PER_SEC; /* only this test's passes, not the timer's */
	p.thresh = 2 * RT_TRIM_FILL;
	p.elasticity = 0;
	ASSERT_EQ(rt_gc_set_params(&p), 0);
	ASSERT_EQ(rt_test_fill(RT_TRIM_FILL), 0);
	rt_gc_run(); /* under the threshold: chains are left alone */
	rt_cache_stats(&s);
	EXPECT_EQ(s.entries, RT_TRIM_FILL);
	p.thresh = RT_TRIM_FILL - 1;
	p.elasticity = 1;
	ASSERT_EQ(rt_gc_set_params(&p), 0);
	rt_gc_run(); /* over it: each chain keeps its newest entry */
	rt_cache_stats(&s);
	u64 kept = s.entries;
	EXPECT_GT(kept, 0);
	EXPECT_LT(kept, RT_TRIM_FILL);
	EXPECT_LE(kept, 4096); /* RT_HASH_SIZE chains, one entry each at most */
	EXPECT_EQ(rt_test_walk(), kept);
	p.elasticity = 0;
	p.thresh = 0;
	ASSERT_EQ(rt_gc_set_params(&p), 0);
	rt_gc_run();
	rt_cache_stats(&s);
	EXPECT_EQ(s.entries, 0);
	EXPECT_EQ(rt_gc_set_params(&saved), 0);
	rt_test_del_routes();
}

/*
 * A pass over an empty cache reads no chain: a machine with no traffic spends
 * nothing on the periodic gc but the sum of the entry counts.
 */
TEST(route, gc_pass_over_an_empty_cache_reads_no_chain)
{
	struct rt_gc_params saved, p;
	struct rt_cache_stats a, b;
	ASSERT_EQ(rt_test_add_routes(), 0);
	rt_gc_get_params(&saved);
	p = saved;
	p.interval_ns = 3600 * NSEC_PER_SEC; /* only this test's passes, not the timer's */
	ASSERT_EQ(rt_gc_set_params(&p), 0);
	rt_cache_flush();
	rt_cache_stats(&a);
	rt_gc_run();
	rt_cache_stats(&b);
	EXPECT_EQ(b.gc_runs - a.gc_runs, 1);
	EXPECT_EQ(b.gc_idle - a.gc_idle, 1);
	ASSERT_EQ(rt_test_fill(10), 0);
	rt_gc_run();
	rt_cache_stats(&a);
	EXPECT_EQ(a.gc_runs - b.gc_runs, 1);
	EXPECT_EQ(a.gc_idle - b.gc_idle, 0);
	EXPECT_EQ(a.entries, 10); /* none idle long enough to go */
	EXPECT_EQ(rt_gc_set_params(&saved), 0);
	rt_test_del_routes();
}

/* Nobody calls rt_gc_run(): the timer does, every interval, and idle entries go. */
TEST(route, gc_timer_runs_every_interval)
{
	struct rt_gc_params saved, p;
	struct rt_cache_stats a, b;
	ASSERT_EQ(rt_test_add_routes(), 0);
	rt_cache_flush();
	rt_gc_get_params(&saved);
	p = saved;
	p.interval_ns = 50 * NSEC_PER_MSEC;
	p.timeout_ns = 20 * NSEC_PER_MSEC;
	ASSERT_EQ(rt_gc_set_params(&p), 0);
	ASSERT_EQ(rt_test_fill(200), 0);
	rt_cache_stats(&a);
	msleep(400);
	rt_cache_stats(&b);
	EXPECT_GE(b.gc_runs - a.gc_runs, 2); /* 8 due; a loaded host delays the kworker */
	EXPECT_EQ(b.entries, 0);
	EXPECT_EQ(rt_gc_set_params(&saved), 0);
	rt_test_del_routes();
}

TEST(route, gc_params_reject_a_zero_interval)
{
	struct rt_gc_params saved, p;
	rt_gc_get_params(&saved);
	p = saved;
	p.interval_ns = 0;
	EXPECT_EQ(rt_gc_set_params(&p), -EINVAL);
	rt_gc_get_params(&p);
	EXPECT_EQ(p.interval_ns, saved.interval_ns);
}

/*
 * The storm. Even CPUs (and a lone CPU) look up keys drawn from a set, checking
 * every answer against the test's own longest match and the entry's key against
 * what was asked, and the entry's magic both at once and after a pause inside the
 * same read-side section (a freed entry loses it); odd CPUs interleave lookups
 * with gc passes on a 1 ms idle timeout, a threshold of 64 and chains of 2, and
 * every eighth pass a flush; with flip, the first gc CPU also switches the mode
 * every pass. Afterwards the counts must agree with a walk.
 */
#define RT_STORM_MS 400
#define RT_STORM_DESTS 512
#define RT_STORM_PAUSE_LOOPS 64

static struct rt_storm {
	u64 deadline;
	bool flip;
	struct rt_storm_cpu {
		u64 lookups, gcs, bad, first_bad_line;
		u32 seed;
	} __cacheline_aligned cpu[MAX_CPUS];
} storm;

static u32 rt_storm_rand(u32 *s)
{
	/* xorshift32: each CPU its own stream, no shared state. */
	u32 x = *s;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

#define rt_storm_check(me, cond)                                                                   \
	do {                                                                                       \
		if (!(cond) && !(me)->bad++)                                                       \
			(me)->first_bad_line = __LINE__;                                           \
	} while (0)

static void rt_storm_lookup(struct rt_storm_cpu *me)
{
	u32 r = rt_storm_rand(&me->seed);
	unsigned i = r % RT_STORM_DESTS;
	/* Spread over every route: 198.18.0.0/15 in steps that land in each of them. */
	u32 daddr = IPV4(198, 18 + (i & 1), (i >> 1) & 0xff, (i * 37) & 0xff);
	if (i % 7 == 0)
		daddr = IPV4(198, 19, 1, 200); /* the /32, hammered */
	u32 saddr = (r >> 16) & 1 ? IPV4(198, 18, 0, 1) : 0;
	u8 tos = (r >> 17) & 1 ? 0x10 : 0;
	u32 oif = (r >> 18) & 3 ? 0 : ((r >> 20) & 1 ? rt_test_eth0.ifindex : rt_test_eth1.ifindex);
	u32 want_gw = 0;
	struct net_device *want_dev = NULL;
	bool reachable = rt_test_expect(daddr, oif, &want_gw, &want_dev);
	struct rtable *rt = NULL;

	rcu_read_lock();
	int err = ip_route_output(daddr, saddr, tos, oif, &rt);
	if (!reachable) {
		rt_storm_check(me, err == -ENETUNREACH);
	} else {
		rt_storm_check(me, err == 0 && rt);
		if (!err && rt) {
			rt_storm_check(me, READ_ONCE(rt->magic) == RT_MAGIC);
			rt_storm_check(me, rt->daddr == daddr && rt->saddr == saddr &&
					       rt->tos == tos && rt->oif == oif);
			rt_storm_check(me, rt->gateway == want_gw && rt->dev == want_dev);
			if (!oif) {
				u32 gw;
				struct net_device *dev;
				rt_storm_check(me, fib_lookup(daddr, &gw, &dev) == 0 &&
						       gw == rt->gateway && dev == rt->dev);
			}
			for (unsigned k = 0; k < RT_STORM_PAUSE_LOOPS; k++)
				cpu_relax();
			rt_storm_check(me, READ_ONCE(rt->magic) == RT_MAGIC && rt->daddr == daddr);
		}
	}
	rcu_read_unlock();
	me->lookups++;
}

static void rt_storm_fn(void *arg)
{
	(void)arg;
	unsigned cpu = smp_processor_id(), index = (unsigned)smp_online_index(cpu);
	struct rt_storm_cpu *me = &storm.cpu[cpu];
	/* Roles by online index: every other CPU collects, one flips, whatever the ids. */
	bool gc = (index & 1) || num_online_cpus() == 1;
	bool flipper = storm.flip && (index == 1 || num_online_cpus() == 1);
	me->seed = 0x9e3779b9u * (cpu + 1);
	while (arch_clock_ns() < storm.deadline) {
		for (unsigned i = 0; i < (gc ? 64 : 256); i++)
			rt_storm_lookup(me);
		if (!gc)
			continue;
		if (++me->gcs % 8 == 0)
			rt_cache_flush();
		else
			rt_gc_run();
		if (flipper)
			rtcache_set_mode(rtcache_get_mode() == RTCACHE_RCU ? RTCACHE_RWLOCK
									   : RTCACHE_RCU);
	}
}

static void rt_storm_run(enum rtcache_mode mode, bool flip)
{
	struct rt_gc_params saved, p;
	enum rtcache_mode saved_mode = rtcache_get_mode();
	struct rt_cache_stats s;
	ASSERT_EQ(rt_test_add_routes(), 0);
	rt_gc_get_params(&saved);
	p = saved;
	p.timeout_ns = NSEC_PER_MSEC;
	p.thresh = 64;
	p.elasticity = 2;
	ASSERT_EQ(rt_gc_set_params(&p), 0);
	rtcache_set_mode(mode);
	memset(&storm, 0, sizeof(storm));
	storm.flip = flip;
	storm.deadline = arch_clock_ns() + RT_STORM_MS * NSEC_PER_MSEC;
	smp_run_all(rt_storm_fn, NULL);
	rtcache_set_mode(saved_mode);
	EXPECT_EQ(rt_gc_set_params(&saved), 0);

	u64 lookups = 0, gcs = 0, cpu;
	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		struct rt_storm_cpu *c = &storm.cpu[cpu];
		lookups += c->lookups;
		gcs += c->gcs;
		if (c->bad)
			test_fail(__FILE__, __LINE__,
				  "CPU %llu: %llu bad lookups, the first at route_test.c:%llu",
				  (unsigned long long)cpu, (unsigned long long)c->bad,
				  (unsigned long long)c->first_bad_line);
	}
	EXPECT_GT(lookups, 0);
	EXPECT_GT(gcs, 0);
	rcu_barrier();
	rt_cache_stats(&s);
	EXPECT_EQ(s.entries, rt_test_walk());
	rt_test_del_routes();
	rt_cache_stats(&s);
	EXPECT_EQ(s.entries, 0);
	EXPECT_EQ(rt_test_walk(), 0);
}

TEST(route, storm_rcu_never_returns_a_freed_or_wrong_entry)
{
	rt_storm_run(RTCACHE_RCU, false);
}

TEST(route, storm_rwlock_never_returns_a_freed_or_wrong_entry)
{
	rt_storm_run(RTCACHE_RWLOCK, false);
}

TEST(route, storm_survives_mode_switches_with_lookups_in_flight)
{
	rt_storm_run(RTCACHE_RCU, true);
}

/* Run a function on another CPU, at a moment of the test's choosing (tests/kernel/dcache_test.c).
 */
struct rt_remote {
	void (*fn)(void);
	u32 go, done;
	struct task *t;
};

static int rt_remote_thread(void *arg)
{
	struct rt_remote *rc = arg;
	while (!smp_load_acquire(&rc->go))
		cpu_relax();
	rc->fn();
	smp_store_release(&rc->done, 1);
	return 0;
}

static int rt_other_cpu(void)
{
	unsigned cpu, me = smp_processor_id();
	for_each_online_cpu(cpu)
		if (cpu != me)
			return cpu;
	return -1;
}

/*
 * A reader inside rcu_read_lock() holds an entry while another CPU flushes the
 * cache: the entry is unlinked at once (the count drops) but stays intact, magic
 * and key, until the reader leaves; after a grace period it is gone. In rcu mode
 * the flush returns at once (call_rcu); in rwlock mode it waits in
 * synchronize_rcu() for this very reader, so the reader does not wait for it.
 */
static void rt_held_entry_survives_flush(enum rtcache_mode mode)
{
	int cpu = rt_other_cpu();
	if (cpu < 0) {
		test_skip("needs a second CPU");
		return;
	}
	enum rtcache_mode saved_mode = rtcache_get_mode();
	struct rt_cache_stats s;
	struct rtable *rt = NULL;
	u32 d = IPV4(198, 19, 1, 130);
	ASSERT_EQ(rt_test_add_routes(), 0);
	rtcache_set_mode(mode);
	rt_cache_flush();
	struct rt_remote rc = {.fn = rt_cache_flush};
	rc.t = kthread_create_on_cpu(rt_remote_thread, &rc, cpu, "route_test");
	ASSERT_TRUE(rc.t != NULL);
	wake_up_process(rc.t);
	rcu_barrier();

	rcu_read_lock();
	EXPECT_EQ(ip_route_output(d, 0, 0, 0, &rt), 0);
	smp_store_release(&rc.go, 1);
	if (mode == RTCACHE_RCU) {
		while (!smp_load_acquire(&rc.done))
			cpu_relax();
	} else {
		do
			rt_cache_stats(&s);
		while (s.entries);
	}
	rt_cache_stats(&s);
	EXPECT_EQ(s.entries, 0);
	if (rt) {
		EXPECT_EQ(READ_ONCE(rt->magic), RT_MAGIC);
		EXPECT_EQ(rt->daddr, d);
		EXPECT_EQ(rt->gateway, IPV4(198, 19, 0, 9));
	}
	rcu_read_unlock();
	kthread_join(rc.t);
	rcu_barrier();
	rtcache_set_mode(saved_mode);
	rt_test_del_routes();
}

TEST(route, rcu_reader_keeps_entry_until_it_leaves)
{
	rt_held_entry_survives_flush(RTCACHE_RCU);
}

TEST(route, rwlock_reader_keeps_entry_until_it_leaves)
{
	rt_held_entry_survives_flush(RTCACHE_RWLOCK);
}
