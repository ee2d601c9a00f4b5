/*
 * make bench BENCH=rtcache: the route-cache test of "8-CPU (SMP) #s for lockfree
 * rtcache" (Dipankar Sarma, 2002), which compared 2.5.3's rwlock-per-bucket
 * lookups with RCU ones by ip_route_output_key()'s profile counts. Its test
 * "sends a fixed number of packets to random destination addresses repeating
 * every dest for 5 packets", in two shapes:
 *
 *   test=8-1-32  32 processes, each with its own random seed for its destinations;
 *   test=8-4-8   8 sets of 4 processes, the 4 of a set sharing one seed (the same
 *                destinations, so 3 of each 4 misses of 8-1-32 are hits here);
 *
 * each with gc=default|tuned (the 2002 "gc" runs raised the thresholds and the
 * interval, to 31048576 and 60 s, to stop forced garbage collection: here both
 * the route cache's rt_gc_thresh/rt_gc_interval and the neighbour table's) and
 * pause=0|2ms (the "u2000" runs: a 2 ms sleep between bursts of 5 packets), and
 * here lookup=rcu|rwlock (rtcache_set_mode() before each row). Each row runs at
 * cpus = 1, 2, 4, ... up to the CPUs online; the 32 processes are spread over the
 * row's CPUs (process p on its (p mod cpus)-th), each CPU's thread sending one
 * burst per process in turn and, with pause, sleeping 2 ms after each round.
 *
 * A packet is one ip_route_output() in its own rcu_read_lock() section, to a
 * destination in 198.18.0.0/15 (RFC 2544's benchmarking range) drawn from the
 * process's xorshift stream, over a FIB of four routes that cover the range, out
 * of two devices of the benchmark's own (nothing is sent). The first packet of
 * each burst to an on-link destination also binds its neighbour
 * (neigh_update(create)), as 2.5.3's route-cache miss did (arp_bind_neighbour):
 * with random destinations that table overflows its threshold, which is the
 * forced gc that the 2002 "gc" rows turned off.
 *
 *   bench: rtcache arch=riscv64 online=4 cpus=4 test=8-1-32 gc=default pause=0 lookup=rcu
 *          lookups_per_sec=... per_cpu=...
 *
 * Each row starts from an empty route cache and neighbour table. Its phase is
 * test=<t>/gc=<g>/pause=<p>/lookup=<l>/cpus=<k>, so `make profile BENCH=rtcache
 * MODE=sharing` gives ip_route_output's instructions and cache-line transfers
 * per lookup (ops = lookups) and call_rcu's share, row by row; rtcache_rows=<glob>
 * (ARGS='rtcache_rows=*8-1-32/gc=default*') runs only the matching rows.
 */
#include <grace/bench.h>
#include <grace/cmdline.h>
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/neighbour.h>
#include <grace/netdevice.h>
#include <grace/printk.h>
#include <grace/rcupdate.h>
#include <grace/route.h>
#include <grace/sched.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/string.h>
#include <grace/time.h>
#include <asm/cpu.h>

#define RTB_PROCS 32				  /* the 2002 test's processes */
#define RTB_BURST 5				  /* packets per destination */
#define RTB_PAUSE_MS 2				  /* u2000: 2000 us between bursts */
#define RTB_TUNED 31048576			  /* the 2002 "gc" runs' threshold */
#define RTB_TUNED_INTERVAL_NS (60 * NSEC_PER_SEC) /* ... and interval */
#define RTB_NAME_MAX 96
/* Read the clock once a round (a burst per process): under TCG a clock read is costly. */

enum rtb_test { RTB_8_1_32, RTB_8_4_8, NR_RTB_TESTS };
static const char *const rtb_test_names[NR_RTB_TESTS] = {"8-1-32", "8-4-8"};
static const unsigned rtb_procs_per_seed[NR_RTB_TESTS] = {1, 4};

static struct net_device rtb_eth0 = {
    .name = "rtb0",
    .mac = {0x02, 0, 0, 0, 0xc0, 1},
    .flags = IFF_UP,
    .ifindex = 1201,
    .ipv4_addr = IPV4(198, 18, 0, 1),
};
static struct net_device rtb_eth1 = {
    .name = "rtb1",
    .mac = {0x02, 0, 0, 0, 0xc0, 2},
    .flags = IFF_UP,
    .ifindex = 1202,
    .ipv4_addr = IPV4(198, 19, 0, 1),
};

static const struct {
	u32 prefix;
	unsigned len;
	u32 gateway;
	struct net_device *dev;
} rtb_routes[] = {
    {IPV4(198, 18, 0, 0), 15, IPV4(198, 18, 0, 254), &rtb_eth0},
    {IPV4(198, 18, 0, 0), 16, 0, &rtb_eth0},
    {IPV4(198, 19, 0, 0), 17, IPV4(198, 19, 0, 254), &rtb_eth1},
    {IPV4(198, 19, 128, 0), 17, 0, &rtb_eth1},
};

static struct rtb {
	struct task *leader;
	char phase[RTB_NAME_MAX];
	enum rtb_test test;
	bool pause;
	unsigned ncpus;
	u64 phase_ns;
	atomic_t next_index; /* each CPU's place among the row's: which processes it runs */
	struct smp_sync start;
	u64 deadline;
	u32 failed;
	struct rtb_cpu {
		u32 rand[RTB_PROCS]; /* the xorshift state of each of its processes */
		u64 lookups;
		u64 end_ns;
		int err;
	} __cacheline_aligned cpu[MAX_CPUS];
} rtb;

/* The 32 seeds: fixed, so that every run draws the same destinations. */
static u32 rtb_seed(unsigned i)
{
	u32 x = 0x9e3779b9u * (i + 1);
	x ^= x >> 16;
	return x ? x : 1;
}

static inline u32 rtb_next(u32 *s)
{
	u32 x = *s;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

/* One burst: RTB_BURST packets to the process's next destination. 0 or -errno. */
static int rtb_burst(struct rtb_cpu *me, unsigned p)
{
	u32 daddr = IPV4(198, 18, 0, 0) | htonl(rtb_next(&me->rand[p]) & 0x1ffff);
	u32 nexthop = 0;
	struct net_device *dev = NULL;
	for (unsigned i = 0; i < RTB_BURST; i++) {
		struct rtable *rt;
		rcu_read_lock();
		int err = ip_route_output(daddr, 0, 0, 0, &rt);
		if (!err && i == 0) {
			nexthop = rt->gateway;
			dev = rt->dev;
		}
		rcu_read_unlock();
		if (err)
			return err;
	}
	if (nexthop == daddr) {
		u8 mac[ETH_ALEN] = {0x02, 0xbe, 0, 0, 0, 0};
		memcpy(&mac[2], &daddr, sizeof(daddr));
		neigh_update(dev, nexthop, mac, true);
	}
	return 0;
}

static void rtb_worker(void *arg)
{
	(void)arg;
	struct rtb_cpu *me = &rtb.cpu[smp_processor_id()];
	unsigned index = atomic_fetch_add(&rtb.next_index, 1), k = rtb.ncpus;
	u64 n = 0, deadline;
	int err = 0;

	for (unsigned p = index; p < RTB_PROCS; p += k)
		me->rand[p] = rtb_seed(p / rtb_procs_per_seed[rtb.test]);
	smp_sync_wait(&rtb.start, k);
	if (current == rtb.leader) {
		bench_phase_begin(rtb.phase, k);
		smp_store_release(&rtb.deadline, arch_clock_ns() + rtb.phase_ns);
	}
	/* Pairs with the smp_store_release() above. */
	while (!(deadline = smp_load_acquire(&rtb.deadline)))
		cpu_relax();
	while (!err) {
		for (unsigned p = index; p < RTB_PROCS && !err; p += k) {
			err = rtb_burst(me, p);
			n += RTB_BURST;
		}
		if (err || READ_ONCE(rtb.failed) || arch_clock_ns() >= deadline)
			break;
		if (rtb.pause)
			msleep(RTB_PAUSE_MS);
	}
	me->end_ns = arch_clock_ns();
	me->lookups = n;
	me->err = err;
	if (err)
		WRITE_ONCE(rtb.failed, 1);
}

static void rtb_set_gc(bool tuned, const struct rt_gc_params *rt0, const struct neigh_gc_params *n0)
{
	struct rt_gc_params rp = *rt0;
	struct neigh_gc_params np = *n0;
	if (tuned) {
		rp.thresh = np.thresh = RTB_TUNED;
		rp.interval_ns = np.interval_ns = RTB_TUNED_INTERVAL_NS;
	}
	rt_gc_set_params(&rp);
	neigh_gc_set_params(&np);
}

/* Empty both tables: a row starts cold, whatever the one before it left. */
static void rtb_clear(const struct neigh_gc_params *n0)
{
	struct neigh_gc_params np = *n0;
	np.stale_ns = np.resolve_timeout_ns = 0;
	rt_cache_flush();
	neigh_gc_set_params(&np);
	neigh_gc_run();
	neigh_gc_set_params(n0);
	rcu_barrier();
}

static void rtb_phase_name(char *buf, size_t size, enum rtb_test t, bool tuned, bool pause,
			   enum rtcache_mode mode, unsigned k)
{
	snprintf(buf, size, "test=%s/gc=%s/pause=%s/lookup=%s/cpus=%u", rtb_test_names[t],
		 tuned ? "tuned" : "default", pause ? "2ms" : "0", rtcache_mode_name(mode), k);
}

static int rtb_row(enum rtb_test t, bool tuned, bool pause, enum rtcache_mode mode, unsigned k,
		   const struct rt_gc_params *rt0, const struct neigh_gc_params *n0)
{
	unsigned cpu;
	rtb_set_gc(tuned, rt0, n0);
	rtcache_set_mode(mode);
	rtb_clear(n0);
	rtb_set_gc(tuned, rt0, n0);
	rtb_phase_name(rtb.phase, sizeof(rtb.phase), t, tuned, pause, mode, k);
	for_each_online_cpu(cpu) {
		rtb.cpu[cpu].lookups = 0;
		rtb.cpu[cpu].end_ns = 0;
		rtb.cpu[cpu].err = 0;
	}
	rtb.test = t;
	rtb.pause = pause;
	rtb.ncpus = k;
	atomic_set(&rtb.next_index, 0);
	rtb.start = (struct smp_sync){0};
	rtb.deadline = 0;
	rtb.failed = 0;
	rtb.leader = current;
	smp_run_on(k, rtb_worker, NULL);

	u64 start = rtb.deadline - rtb.phase_ns, end = start, total = 0;
	for_each_online_cpu(cpu) {
		total += rtb.cpu[cpu].lookups;
		end = MAX(end, rtb.cpu[cpu].end_ns);
	}
	bench_phase_end(total);
	for_each_online_cpu(cpu)
		if (rtb.cpu[cpu].err) {
			bench_error("rtcache", "%s: CPU %u: ip_route_output: %s", rtb.phase, cpu,
				    errno_name(rtb.cpu[cpu].err));
			return rtb.cpu[cpu].err;
		}
	u64 per_sec = total * NSEC_PER_SEC / MAX(end - start, 1);
	bench_report("rtcache", k,
		     "test=%s gc=%s pause=%s lookup=%s lookups_per_sec=%llu per_cpu=%llu",
		     rtb_test_names[t], tuned ? "tuned" : "default", pause ? "2ms" : "0",
		     rtcache_mode_name(mode), (unsigned long long)per_sec,
		     (unsigned long long)(per_sec / k));
	return 0;
}

static void rtb_rows(const struct rt_gc_params *rt0, const struct neigh_gc_params *n0)
{
	static const enum rtcache_mode modes[] = {RTCACHE_RWLOCK, RTCACHE_RCU};
	const char *rows = cmdline_get("rtcache_rows");
	unsigned online = num_online_cpus(), ran = 0;
	char phase[RTB_NAME_MAX], name[RTB_NAME_MAX + 16];

	for (enum rtb_test t = 0; t < NR_RTB_TESTS; t++)
		for (unsigned g = 0; g < 2; g++)
			for (unsigned pz = 0; pz < 2; pz++)
				for (unsigned k = 1; k; k = bench_cpus_next(k, online)) {
					for (unsigned m = 0; m < ARRAY_SIZE(modes); m++) {
						rtb_phase_name(phase, sizeof(phase), t, g, pz,
							       modes[m], k);
						snprintf(name, sizeof(name), "rtcache/%s", phase);
						if (rows && *rows && !glob_list_match(rows, name))
							continue;
						ran++;
						if (rtb_row(t, g, pz, modes[m], k, rt0, n0))
							return;
					}
				}
	if (!ran)
		bench_report("rtcache", 0, "rows=0 rtcache_rows=%s", rows);
}

BENCH(rtcache)
{
	enum rtcache_mode saved_mode = rtcache_get_mode();
	struct rt_gc_params rt0;
	struct neigh_gc_params n0;
	unsigned added = 0;
	int err = 0;

	rt_gc_get_params(&rt0);
	neigh_gc_get_params(&n0);
	rtb.phase_ns = bench_phase_ns();
	for (; added < ARRAY_SIZE(rtb_routes); added++) {
		err = fib_add(rtb_routes[added].prefix, rtb_routes[added].len,
			      rtb_routes[added].gateway, rtb_routes[added].dev);
		if (err) {
			bench_error("rtcache", "setup: fib_add: %s", errno_name(err));
			break;
		}
	}
	if (!err)
		rtb_rows(&rt0, &n0);
	rtcache_set_mode(saved_mode);
	rt_gc_set_params(&rt0);
	neigh_gc_set_params(&n0);
	while (added-- > 0)
		fib_del(rtb_routes[added].prefix, rtb_routes[added].len);
	rtb_clear(&n0);
}
