/*
 * net/core and net/sched selftests: the sk_buff helpers' bounds, queues, the
 * per-CPU allocation counts, device lookup and statistics, pfifo's drops, tbf's
 * watchdog, loopback delivery to net_rx_handler, a backlog flooded past its limit
 * before NET_RX runs, and the qdisc storms: every
 * online CPU sends numbered packets through one root qdisc to sink0 at once, and
 * the sink checks that each sender's packets arrive in order, each once, and that
 * what arrived plus what was dropped is what was sent. A slow host changes how
 * many are dropped, never whether these hold.
 *
 * The tests use sink0 and put its root back to the default pfifo when done.
 */
#include <grace/errno.h>
#include <grace/netdevice.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/softirq.h>
#include <grace/string.h>
#include <grace/test.h>
#include <grace/time.h>
#include <net/core/sink.h>
#include <net/sched/sch_internal.h>
#include <asm/irq.h>

#define NET_TEST_MAGIC 0x6e657463u /* "netc": marks the storms' packets */
/* Packets over all CPUs in a storm, at least this many each. */
#define NET_STORM_TOTAL 8000
#define NET_STORM_MIN_PER_CPU 200
#define NET_STORM_PFIFO_LIMIT 8 /* small, so that a storm overflows it */
/* How long a queue may take to drain or a softirq to run before the test gives up. */
#define NET_TEST_WAIT_MS 20000

struct net_test_payload {
	u32 magic;
	u32 sender;
	u64 seq;
};

static struct sk_buff *net_test_skb(const void *bytes, u32 len)
{
	struct sk_buff *skb = skb_alloc();
	if (!skb)
		return NULL;
	void *p = skb_put(skb, len);
	if (!p) {
		kfree_skb(skb);
		return NULL;
	}
	memcpy(p, bytes, len);
	return skb;
}

static void net_test_restore_sink(void)
{
	sink_set_rx_hook(NULL);
	sink_set_cost_ns(0);
	EXPECT_EQ(qdisc_set_root(sink_dev(), "pfifo limit=1000"), 0);
}

/* Wait until q holds nothing and no CPU runs it; false after NET_TEST_WAIT_MS. */
static bool net_test_wait_drained(struct Qdisc *q)
{
	for (unsigned ms = 0; ms < NET_TEST_WAIT_MS; ms++) {
		spin_lock(&q->lock);
		bool idle = !q->q.qlen && !q->running;
		spin_unlock(&q->lock);
		if (idle)
			return true;
		msleep(1);
	}
	return false;
}

TEST(net_core, skb_alloc_reserves_headroom_and_is_empty)
{
	long before = skb_outstanding();
	struct sk_buff *skb = skb_alloc();
	ASSERT_TRUE(skb != NULL);
	EXPECT_EQ(skb_headroom(skb), SKB_HEADROOM);
	EXPECT_EQ(skb_len(skb), 0);
	EXPECT_EQ(skb_tailroom(skb), SKB_BUF_SIZE - SKB_HEADROOM);
	EXPECT_EQ(skb->end - skb->head, SKB_BUF_SIZE);
	EXPECT_EQ(skb_outstanding(), before + 1);
	kfree_skb(skb);
	EXPECT_EQ(skb_outstanding(), before);
	kfree_skb(NULL); /* a no-op, as in Linux */
}

/* Snapshot of the four pointers: a failing helper must leave all of them as they were. */
struct skb_ptrs {
	unsigned char *head, *data, *tail, *end;
};
static struct skb_ptrs skb_ptrs(const struct sk_buff *skb)
{
	return (struct skb_ptrs){skb->head, skb->data, skb->tail, skb->end};
}
static bool skb_ptrs_equal(struct skb_ptrs a, struct skb_ptrs b)
{
	return a.head == b.head && a.data == b.data && a.tail == b.tail && a.end == b.end;
}

TEST(net_core, skb_helpers_past_the_buffer_return_null_and_change_nothing)
{
	struct sk_buff *skb = skb_alloc();
	ASSERT_TRUE(skb != NULL);
	struct skb_ptrs p = skb_ptrs(skb);
	u32 tailroom = skb_tailroom(skb), headroom = skb_headroom(skb);

	EXPECT_TRUE(skb_put(skb, tailroom + 1) == NULL);
	EXPECT_TRUE(skb_put(skb, UINT32_MAX) == NULL);
	EXPECT_TRUE(skb_push(skb, headroom + 1) == NULL);
	EXPECT_TRUE(skb_push(skb, UINT32_MAX) == NULL);
	EXPECT_TRUE(skb_pull(skb, 1) == NULL); /* empty */
	EXPECT_FALSE(skb_trim(skb, 1));
	EXPECT_FALSE(skb_reserve(skb, tailroom + 1));
	EXPECT_TRUE(skb_ptrs_equal(p, skb_ptrs(skb)));

	/* Exactly to the edges is allowed. */
	EXPECT_TRUE(skb_reserve(skb, 16));
	EXPECT_EQ(skb_headroom(skb), headroom + 16);
	unsigned char *d = skb_put(skb, 100);
	EXPECT_TRUE(d == skb->data);
	EXPECT_EQ(skb_len(skb), 100);
	EXPECT_FALSE(skb_reserve(skb, 1)); /* not empty any more */
	p = skb_ptrs(skb);
	EXPECT_TRUE(skb_pull(skb, 101) == NULL);
	EXPECT_FALSE(skb_trim(skb, 101));
	EXPECT_TRUE(skb_put(skb, skb_tailroom(skb) + 1) == NULL);
	EXPECT_TRUE(skb_push(skb, skb_headroom(skb) + 1) == NULL);
	EXPECT_TRUE(skb_ptrs_equal(p, skb_ptrs(skb)));

	EXPECT_TRUE(skb_push(skb, skb_headroom(skb)) == skb->head);
	EXPECT_TRUE(skb_put(skb, skb_tailroom(skb)) != NULL);
	EXPECT_EQ(skb_len(skb), SKB_BUF_SIZE);
	EXPECT_TRUE(skb_pull(skb, 14) == skb->head + 14);
	EXPECT_TRUE(skb_trim(skb, 10));
	EXPECT_EQ(skb_len(skb), 10);
	EXPECT_TRUE(skb_pull(skb, 10) == skb->tail);
	EXPECT_EQ(skb_len(skb), 0);
	kfree_skb(skb);
}

TEST(net_core, skb_headers_are_offsets_from_head)
{
	struct sk_buff *skb = skb_alloc();
	ASSERT_TRUE(skb != NULL);
	ASSERT_TRUE(skb_put(skb, 8) != NULL);
	skb_set_transport_header(skb);
	ASSERT_TRUE(skb_push(skb, 20) != NULL);
	skb_set_network_header(skb);
	EXPECT_TRUE(skb_network_header(skb) == skb->data);
	EXPECT_TRUE((unsigned char *)skb_transport_header(skb) == skb->data + 20);
	kfree_skb(skb);
}

TEST(net_core, skb_queue_is_fifo_and_purge_frees_everything)
{
	struct sk_buff_head q;
	long before = skb_outstanding();
	skb_queue_init(&q);
	EXPECT_TRUE(skb_dequeue(&q) == NULL);
	for (u64 i = 0; i < 10; i++) {
		struct sk_buff *skb = skb_alloc();
		ASSERT_TRUE(skb != NULL);
		skb->tstamp = i;
		skb_queue_tail(&q, skb);
	}
	EXPECT_EQ(q.qlen, 10);
	for (u64 i = 0; i < 5; i++) {
		struct sk_buff *skb = skb_dequeue(&q);
		ASSERT_TRUE(skb != NULL);
		EXPECT_EQ(skb->tstamp, i);
		EXPECT_TRUE(skb->next == NULL);
		kfree_skb(skb);
	}
	EXPECT_EQ(q.qlen, 5);
	skb_queue_purge(&q);
	EXPECT_EQ(q.qlen, 0);
	EXPECT_TRUE(q.first == NULL && q.last == NULL);
	EXPECT_EQ(skb_outstanding(), before);
	/* The queue still works after a purge. */
	struct sk_buff *skb = skb_alloc();
	ASSERT_TRUE(skb != NULL);
	__skb_queue_tail(&q, skb);
	EXPECT_TRUE(__skb_dequeue(&q) == skb);
	EXPECT_TRUE(__skb_dequeue(&q) == NULL);
	kfree_skb(skb);
}

/* Splice moves a whole queue in order onto another's end; a packet put back goes first. */
TEST(net_core, skb_queue_splice_keeps_order_and_head_puts_back_first)
{
	struct sk_buff_head a, b;
	struct sk_buff *skb;
	long before = skb_outstanding();
	skb_queue_init(&a);
	skb_queue_init(&b);
	__skb_queue_splice_tail_init(&a, &b); /* empty onto empty */
	EXPECT_TRUE(skb_queue_empty(&b));
	for (u64 i = 0; i < 6; i++) {
		skb = skb_alloc();
		ASSERT_TRUE(skb != NULL);
		skb->tstamp = i;
		__skb_queue_tail(i < 2 ? &b : &a, skb);
	}
	__skb_queue_splice_tail_init(&a, &b);
	EXPECT_TRUE(skb_queue_empty(&a) && a.last == NULL);
	EXPECT_EQ(skb_queue_len(&a), 0);
	EXPECT_EQ(skb_queue_len(&b), 6);
	skb = __skb_dequeue(&b);
	ASSERT_TRUE(skb != NULL);
	EXPECT_EQ(skb->tstamp, 0);
	__skb_queue_head(&b, skb);
	EXPECT_EQ(skb_queue_len(&b), 6);
	for (u64 i = 0; i < 6; i++) {
		skb = __skb_dequeue(&b);
		ASSERT_TRUE(skb != NULL);
		EXPECT_EQ(skb->tstamp, i);
		kfree_skb(skb);
	}
	EXPECT_TRUE(b.first == NULL && b.last == NULL);
	skb = skb_alloc(); /* head onto an empty queue is its last too */
	ASSERT_TRUE(skb != NULL);
	__skb_queue_head(&b, skb);
	EXPECT_TRUE(b.last == skb);
	EXPECT_TRUE(__skb_dequeue(&b) == skb);
	kfree_skb(skb);
	EXPECT_EQ(skb_outstanding(), before);
}

TEST(net_core, the_per_cpu_cache_gives_back_everything_it_is_given)
{
	enum { N = 200 }; /* past SKB_PCPU_CACHE_MAX, so the slab takes some back */
	static struct sk_buff *skbs[N];
	long before = skb_outstanding();
	for (unsigned i = 0; i < N; i++) {
		skbs[i] = skb_alloc();
		ASSERT_TRUE(skbs[i] != NULL);
		memset(skb_put(skbs[i], 64), i, 64);
	}
	EXPECT_EQ(skb_outstanding(), before + N);
	for (unsigned i = 0; i < N; i++)
		for (unsigned j = i + 1; j < N; j++)
			if (!EXPECT_TRUE(skbs[i]->head != skbs[j]->head))
				return;
	for (unsigned i = 0; i < N; i++)
		kfree_skb(skbs[i]);
	EXPECT_EQ(skb_outstanding(), before);
}

static void net_test_count_dev(struct net_device *dev, void *arg)
{
	u32 *last = arg;
	EXPECT_GT(dev->ifindex, *last);
	*last = dev->ifindex;
}

TEST(net_core, devices_are_found_by_name_and_index)
{
	struct net_device *lo = dev_get_by_name("lo"), *sink = dev_get_by_name("sink0");
	ASSERT_TRUE(lo != NULL);
	ASSERT_TRUE(sink != NULL);
	EXPECT_TRUE(sink == sink_dev());
	EXPECT_TRUE(dev_get_by_index(lo->ifindex) == lo);
	EXPECT_TRUE(dev_get_by_index(sink->ifindex) == sink);
	EXPECT_TRUE(dev_get_by_index(0) == NULL);
	EXPECT_TRUE(dev_get_by_name("nope0") == NULL);
	EXPECT_TRUE(dev_get_by_name(NULL) == NULL);
	EXPECT_EQ(lo->flags, IFF_LOOPBACK | IFF_NOARP | IFF_UP);
	EXPECT_EQ(sink->flags, IFF_NOARP | IFF_UP);
	const u8 *a = (const u8 *)&lo->ipv4_addr, *m = (const u8 *)&lo->ipv4_mask;
	EXPECT_TRUE(a[0] == 127 && a[1] == 0 && a[2] == 0 && a[3] == 1);
	EXPECT_TRUE(m[0] == 255 && m[1] == 0 && m[2] == 0 && m[3] == 0);
	a = (const u8 *)&sink->ipv4_addr;
	m = (const u8 *)&sink->ipv4_mask;
	EXPECT_TRUE(a[0] == 10 && a[1] == 99 && a[2] == 0 && a[3] == 1);
	EXPECT_TRUE(m[0] == 255 && m[1] == 255 && m[2] == 255 && m[3] == 0);
	EXPECT_TRUE(lo->qdisc != NULL && !strcmp(lo->qdisc->ops->id, "pfifo"));

	u32 last = 0;
	netdev_for_each(net_test_count_dev, &last);
	EXPECT_GE(last, sink->ifindex);

	/* A second device of a taken name is refused; a too long name is never made. */
	struct net_device *dup = alloc_netdev("lo", 0);
	ASSERT_TRUE(dup != NULL);
	dup->ops = lo->ops;
	EXPECT_EQ(register_netdev(dup), -EEXIST);
	kfree(dup->stats); /* never registered: nothing else knows of it */
	kfree(dup);
	EXPECT_TRUE(alloc_netdev("a-name-of-sixteen", 0) == NULL);
	EXPECT_TRUE(alloc_netdev("", 0) == NULL);
}

static void net_test_stat_bump(void *arg)
{
	for (unsigned i = 0; i < 1000; i++)
		netdev_stat_add(arg, NETDEV_RX_BYTES, 3);
}

TEST(net_core, stats_rows_are_lines_of_their_own_and_sum_over_cpus)
{
	struct net_device *sink = sink_dev();
	EXPECT_EQ(sizeof(sink->stats[0]), 64);
	EXPECT_EQ((uintptr_t)sink->stats % 64, 0);
	u64 before = netdev_stat(sink, NETDEV_RX_BYTES);
	smp_run_all(net_test_stat_bump, sink);
	EXPECT_EQ(netdev_stat(sink, NETDEV_RX_BYTES), before + 3000ull * num_online_cpus());
}

TEST(net_core, qdisc_specs_are_parsed_and_bad_ones_refused)
{
	struct net_device *sink = sink_dev();
	struct qdisc_spec s;
	EXPECT_EQ(qdisc_parse_spec("pfifo limit=5", &s), 0);
	EXPECT_TRUE(s.ops == &pfifo_qdisc_ops && s.limit == 5);
	EXPECT_EQ(qdisc_parse_spec("  pfifo  ", &s), 0);
	EXPECT_EQ(s.limit, QDISC_DEFAULT_LIMIT);
	EXPECT_EQ(qdisc_parse_spec("tbf rate=1000 burst=2000 limit=3", &s), 0);
	EXPECT_TRUE(s.ops == &tbf_qdisc_ops && s.rate == 1000 && s.burst == 2000 && s.limit == 3);
	EXPECT_EQ(qdisc_parse_spec("tbf limit=3 burst=2000 rate=0x10", &s), 0);
	EXPECT_EQ(s.rate, 16);

	static const char *const bad[] = {
	    "",
	    "htb",
	    "pfifo limit=",
	    "pfifo limit=0",
	    "pfifo limit=x",
	    "pfifo limit=5 limit=6",
	    "pfifo limit=99999999999",
	    "pfifo rate=5",
	    "pfifo limit=5 extra",
	    "tbf",
	    "tbf rate=1000 burst=2000",
	    "tbf rate=1000 limit=3",
	    "tbf burst=2000 limit=3",
	    "tbf rate=0 burst=2000 limit=3",
	    "tbf rate=1000 burst=0 limit=3",
	    "tbf rate=99999999999999 burst=2000 limit=3",
	    "tbf rate=1000 burst=2000 limit=3 peakrate=5",
	    "tbf rate=1000 burst=2000 limit=3 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (!EXPECT_EQ(qdisc_parse_spec(bad[i], &s), -EINVAL))
			printk("# the spec was '%s'\n", bad[i]);
	EXPECT_EQ(qdisc_set_root(sink, "tbf rate=1"), -EINVAL);
	EXPECT_EQ(qdisc_set_root(sink, NULL), -EINVAL);
	EXPECT_EQ(qdisc_set_root(NULL, "pfifo"), -EINVAL);
	EXPECT_TRUE(!strcmp(sink->qdisc->ops->id, "pfifo")); /* unchanged by the bad ones */
	EXPECT_EQ(qdisc_set_root(sink, "tbf rate=1000000 burst=4096 limit=10"), 0);
	EXPECT_TRUE(!strcmp(sink->qdisc->ops->id, "tbf"));
	EXPECT_EQ(sink->qdisc->limit, 10);
	net_test_restore_sink();
	EXPECT_TRUE(!strcmp(sink->qdisc->ops->id, "pfifo"));
}

/* What the sink saw, per sender: under the sink's lock (the hook runs under it). */
static struct net_test_rx {
	s64 last_seq;
	u64 received;
	u64 out_of_order; /* a sequence number not above the one before: reordered or duplicated */
} net_rx_seen[MAX_CPUS];
static u64 net_rx_foreign; /* packets that were not a sender's */

static void net_test_sink_hook(struct sk_buff *skb)
{
	struct net_test_payload p;
	if (skb_len(skb) != sizeof(p)) {
		net_rx_foreign++;
		return;
	}
	memcpy(&p, skb->data, sizeof(p));
	if (p.magic != NET_TEST_MAGIC || p.sender >= MAX_CPUS) {
		net_rx_foreign++;
		return;
	}
	struct net_test_rx *r = &net_rx_seen[p.sender];
	if ((s64)p.seq <= r->last_seq)
		r->out_of_order++;
	r->last_seq = p.seq;
	r->received++;
}

static void net_test_hook_reset(void)
{
	for (unsigned i = 0; i < MAX_CPUS; i++)
		net_rx_seen[i] = (struct net_test_rx){.last_seq = -1};
	net_rx_foreign = 0;
}

/* Send one numbered packet from sender; true if it was queued (false: dropped). */
static bool net_test_send(unsigned sender, u64 seq, int *err)
{
	struct net_test_payload p = {NET_TEST_MAGIC, sender, seq};
	struct sk_buff *skb = net_test_skb(&p, sizeof(p));
	if (!skb) {
		*err = -ENOMEM;
		return false;
	}
	skb->dev = sink_dev();
	int rc = dev_queue_xmit(skb);
	if (rc && rc != -ENOBUFS)
		*err = rc;
	return rc == 0;
}

TEST(net_core, pfifo_drops_past_its_limit_and_counts_each_drop)
{
	struct net_device *sink = sink_dev();
	struct Qdisc *q = sink->qdisc;
	int err = 0;
	long before = skb_outstanding();
	u64 tx_dropped = netdev_stat(sink, NETDEV_TX_DROPPED);

	ASSERT_EQ(qdisc_set_root(sink, "pfifo limit=4"), 0);
	net_test_hook_reset();
	sink_set_rx_hook(net_test_sink_hook);
	/* Stand in for a runner, so that nothing is dequeued while the queue fills. */
	spin_lock(&q->lock);
	q->running = 1;
	spin_unlock(&q->lock);
	unsigned queued = 0;
	for (u64 seq = 0; seq < 10; seq++)
		queued += net_test_send(0, seq, &err);
	EXPECT_EQ(err, 0);
	EXPECT_EQ(queued, 4);
	EXPECT_EQ(q->q.qlen, 4);
	EXPECT_EQ(q->drops, 6);
	EXPECT_EQ(netdev_stat(sink, NETDEV_TX_DROPPED), tx_dropped + 6);
	EXPECT_EQ(net_rx_seen[0].received, 0);

	spin_lock(&q->lock);
	q->running = 0;
	spin_unlock(&q->lock);
	qdisc_run(q);
	EXPECT_EQ(q->q.qlen, 0);
	EXPECT_EQ(net_rx_seen[0].received, 4);
	EXPECT_EQ(net_rx_seen[0].last_seq, 3); /* the first four got in; the rest were dropped */
	EXPECT_EQ(net_rx_seen[0].out_of_order, 0);
	net_test_restore_sink();
	EXPECT_EQ(skb_outstanding(), before);
}

TEST(net_core, tbf_holds_packets_without_tokens_and_its_watchdog_sends_them)
{
	struct net_device *sink = sink_dev();
	long before = skb_outstanding();
	int err = 0;
	u64 tx_runs = 0;
	unsigned cpu;
	for_each_online_cpu(cpu)
		tx_runs += softirq_runs(cpu, SOFTIRQ_NET_TX);

	/* One packet's worth of tokens, refilled in 20 ms: the rest must wait for them. */
	ASSERT_EQ(qdisc_set_root(sink, "tbf rate=800 burst=16 limit=10"), 0);
	net_test_hook_reset();
	sink_set_rx_hook(net_test_sink_hook);
	for (u64 seq = 0; seq < 5; seq++)
		EXPECT_TRUE(net_test_send(0, seq, &err));
	EXPECT_EQ(err, 0);
	EXPECT_TRUE(net_test_wait_drained(sink->qdisc));
	EXPECT_EQ(net_rx_seen[0].received, 5);
	EXPECT_EQ(net_rx_seen[0].out_of_order, 0);
	/* 80 bytes at 800 bytes/s past a 16-byte burst: at least one wait went through NET_TX. */
	u64 tx_runs_after = 0;
	for_each_online_cpu(cpu)
		tx_runs_after += softirq_runs(cpu, SOFTIRQ_NET_TX);
	EXPECT_GT(tx_runs_after, tx_runs);
	/* A packet larger than the bucket could never leave: dropped at once. */
	struct net_test_payload big[4] = {{NET_TEST_MAGIC, 0, 99}};
	struct sk_buff *skb = net_test_skb(big, sizeof(big));
	ASSERT_TRUE(skb != NULL);
	skb->dev = sink;
	EXPECT_EQ(dev_queue_xmit(skb), -ENOBUFS);
	net_test_restore_sink();
	EXPECT_EQ(skb_outstanding(), before);
}

static struct net_storm {
	unsigned per_cpu;
	struct smp_sync start;
	u64 sent[MAX_CPUS], queued[MAX_CPUS], dropped[MAX_CPUS];
	int err[MAX_CPUS];
} storm;

static void net_storm_sender(void *arg)
{
	unsigned cpu = smp_processor_id();
	smp_sync_wait(&storm.start, num_online_cpus());
	for (u64 seq = 0; seq < storm.per_cpu; seq++) {
		int err = 0;
		bool queued = net_test_send(cpu, seq, &err);
		if (err) {
			storm.err[cpu] = err;
			return;
		}
		storm.sent[cpu]++;
		if (queued)
			storm.queued[cpu]++;
		else
			storm.dropped[cpu]++;
	}
}

static void net_storm_run(const char *spec)
{
	struct net_device *sink = sink_dev();
	long before = skb_outstanding();
	unsigned cpu;

	ASSERT_EQ(qdisc_set_root(sink, spec), 0);
	u64 tx_dropped = netdev_stat(sink, NETDEV_TX_DROPPED);
	memset(&storm, 0, sizeof(storm));
	/*
	 * A fixed total split over the CPUs, not lock_sized_share(): every packet goes
	 * through one root lock and one sink lock, so at SMP=64 the total, not the
	 * share, is what the run time follows, and the checks need no more.
	 */
	storm.per_cpu = MAX(NET_STORM_TOTAL / num_online_cpus(), NET_STORM_MIN_PER_CPU);
	net_test_hook_reset();
	sink_set_rx_hook(net_test_sink_hook);
	smp_run_all(net_storm_sender, NULL);
	EXPECT_TRUE(net_test_wait_drained(sink->qdisc));

	u64 dropped = 0;
	for_each_online_cpu(cpu) {
		struct net_test_rx *r = &net_rx_seen[cpu];
		EXPECT_EQ(storm.err[cpu], 0);
		EXPECT_EQ(storm.sent[cpu], storm.per_cpu);
		if (!EXPECT_EQ(r->out_of_order, 0) ||
		    !EXPECT_EQ(r->received + storm.dropped[cpu], storm.sent[cpu]) ||
		    !EXPECT_EQ(r->received, storm.queued[cpu]))
			printk("# sender %u: sent %llu queued %llu dropped %llu received %llu "
			       "out of order %llu\n",
			       cpu, storm.sent[cpu], storm.queued[cpu], storm.dropped[cpu],
			       r->received, r->out_of_order);
		dropped += storm.dropped[cpu];
	}
	EXPECT_EQ(net_rx_foreign, 0);
	EXPECT_EQ(sink->qdisc->drops, dropped);
	EXPECT_EQ(netdev_stat(sink, NETDEV_TX_DROPPED), tx_dropped + dropped);
	net_test_restore_sink();
	EXPECT_EQ(skb_outstanding(), before);
}

TEST(net_core, pfifo_storm_keeps_each_senders_order_and_accounts_every_packet)
{
	char spec[32];
	snprintf(spec, sizeof(spec), "pfifo limit=%u", NET_STORM_PFIFO_LIMIT);
	net_storm_run(spec);
}

TEST(net_core, tbf_storm_keeps_each_senders_order_and_accounts_every_packet)
{
	/* 16-byte packets at 400 kB/s past a 4-packet burst: some wait for tokens, some drop. */
	net_storm_run("tbf rate=400000 burst=64 limit=16");
}

static struct net_test_lo {
	struct sk_buff *skb; /* what the handler got, kept for the test to read */
	unsigned calls;
} lo_seen;

static void net_test_rx_handler(struct sk_buff *skb)
{
	/* Pairs with the smp_load_acquire() in the test: the skb is written before. */
	lo_seen.calls++;
	smp_store_release(&lo_seen.skb, skb);
}

TEST(net_core, loopback_delivers_the_same_bytes_to_net_rx_handler)
{
	struct net_device *lo = dev_get_by_name("lo");
	ASSERT_TRUE(lo != NULL);
	long before = skb_outstanding();
	u64 rx = netdev_stat(lo, NETDEV_RX_PACKETS), rxb = netdev_stat(lo, NETDEV_RX_BYTES);
	u64 tx = netdev_stat(lo, NETDEV_TX_PACKETS), txb = netdev_stat(lo, NETDEV_TX_BYTES);
	u8 bytes[200];
	for (unsigned i = 0; i < sizeof(bytes); i++)
		bytes[i] = (u8)(i * 7 + 3);

	void (*saved)(struct sk_buff *) = net_rx_handler;
	lo_seen = (struct net_test_lo){0};
	WRITE_ONCE(net_rx_handler, net_test_rx_handler);
	struct sk_buff *skb = net_test_skb(bytes, sizeof(bytes));
	ASSERT_TRUE(skb != NULL);
	skb->dev = lo;
	EXPECT_EQ(dev_queue_xmit(skb), 0);
	struct sk_buff *got = NULL;
	for (unsigned ms = 0; ms < NET_TEST_WAIT_MS && !got; ms++) {
		got = smp_load_acquire(&lo_seen.skb);
		if (!got)
			msleep(1);
	}
	WRITE_ONCE(net_rx_handler, saved);
	ASSERT_TRUE(got != NULL);
	EXPECT_EQ(lo_seen.calls, 1);
	EXPECT_TRUE(got->dev == lo);
	EXPECT_EQ(skb_len(got), sizeof(bytes));
	EXPECT_EQ(memcmp(got->data, bytes, sizeof(bytes)), 0);
	kfree_skb(got);
	EXPECT_EQ(netdev_stat(lo, NETDEV_RX_PACKETS), rx + 1);
	EXPECT_EQ(netdev_stat(lo, NETDEV_TX_PACKETS), tx + 1);
	EXPECT_EQ(netdev_stat(lo, NETDEV_RX_BYTES), rxb + sizeof(bytes));
	EXPECT_EQ(netdev_stat(lo, NETDEV_TX_BYTES), txb + sizeof(bytes));
	EXPECT_EQ(skb_outstanding(), before);
}

TEST(net_core, the_default_rx_handler_frees_and_counts)
{
	struct net_device *lo = dev_get_by_name("lo");
	ASSERT_TRUE(lo != NULL);
	/* The default, whatever a protocol has put in its place since boot. */
	void (*saved)(struct sk_buff *) = net_rx_handler;
	WRITE_ONCE(net_rx_handler, net_rx_drop);
	long before = skb_outstanding();
	u64 dropped = netdev_stat(lo, NETDEV_RX_DROPPED);
	u8 junk[8] = {0};
	struct sk_buff *skb = net_test_skb(junk, sizeof(junk));
	ASSERT_TRUE(skb != NULL);
	skb->dev = lo;
	netif_rx(skb);
	for (unsigned ms = 0; ms < NET_TEST_WAIT_MS && skb_outstanding() != before; ms++)
		msleep(1);
	WRITE_ONCE(net_rx_handler, saved);
	EXPECT_EQ(skb_outstanding(), before);
	EXPECT_EQ(netdev_stat(lo, NETDEV_RX_DROPPED), dropped + 1);
}

/* Frames past NET_RX_BACKLOG_MAX in the flood: each must be dropped, none delivered. */
#define NET_BACKLOG_EXTRA 50

static struct net_backlog_seen {
	void (*next)(struct sk_buff *skb); /* the handler the test stood in front of */
	u64 delivered;			   /* the flood's frames, by NET_RX of one CPU */
} backlog_seen;

static void net_test_backlog_handler(struct sk_buff *skb)
{
	struct net_test_payload p;
	if (skb->dev == sink_dev() && skb_len(skb) == sizeof(p)) {
		memcpy(&p, skb->data, sizeof(p));
		if (p.magic == NET_TEST_MAGIC) {
			WRITE_ONCE(backlog_seen.delivered, backlog_seen.delivered + 1);
			kfree_skb(skb);
			return;
		}
	}
	backlog_seen.next(skb);
}

TEST(net_core, a_backlog_flooded_before_net_rx_runs_delivers_its_limit_and_drops_the_rest)
{
	const unsigned total = NET_RX_BACKLOG_MAX + NET_BACKLOG_EXTRA;
	struct net_device *sink = sink_dev();
	struct net_backlog_stat st, full;
	struct sk_buff_head flood;
	struct sk_buff *skb;
	unsigned long flags;
	unsigned cpu;

	ASSERT_TRUE(sink != NULL);
	long before = skb_outstanding();
	u64 rx_dropped = netdev_stat(sink, NETDEV_RX_DROPPED);
	skb_queue_init(&flood);
	for (u64 seq = 0; seq < total; seq++) {
		struct net_test_payload p = {NET_TEST_MAGIC, 0, seq};
		skb = net_test_skb(&p, sizeof(p));
		if (!skb)
			break;
		skb->dev = sink;
		__skb_queue_tail(&flood, skb);
	}
	if (!EXPECT_EQ(skb_queue_len(&flood), total)) {
		skb_queue_purge(&flood);
		return;
	}
	backlog_seen = (struct net_backlog_seen){.next = net_rx_handler};
	WRITE_ONCE(net_rx_handler, net_test_backlog_handler);

	/*
	 * Interrupts off from an empty backlog to the end of the flood: no driver adds a
	 * frame of its own, and softirqd, a thread, cannot run NET_RX on this CPU before.
	 */
	for (unsigned ms = 0;; ms++) {
		flags = arch_irq_save();
		cpu = smp_processor_id();
		net_backlog_stat(cpu, &st);
		if (!st.qlen)
			break;
		arch_irq_restore(flags);
		if (!EXPECT_LT(ms, NET_TEST_WAIT_MS)) {
			WRITE_ONCE(net_rx_handler, backlog_seen.next);
			skb_queue_purge(&flood);
			return;
		}
		msleep(1);
	}
	while ((skb = __skb_dequeue(&flood)) != NULL)
		netif_rx(skb);
	net_backlog_stat(cpu, &full);
	arch_irq_restore(flags);

	/* Every frame is delivered or dropped once NET_RX has run. */
	for (unsigned ms = 0; ms < NET_TEST_WAIT_MS; ms++) {
		u64 dropped = netdev_stat(sink, NETDEV_RX_DROPPED) - rx_dropped;
		if (READ_ONCE(backlog_seen.delivered) + dropped >= total)
			break;
		msleep(1);
	}
	WRITE_ONCE(net_rx_handler, backlog_seen.next);
	struct net_backlog_stat after;
	net_backlog_stat(cpu, &after);
	EXPECT_EQ(full.qlen, NET_RX_BACKLOG_MAX); /* held, not yet run */
	EXPECT_EQ(backlog_seen.delivered, NET_RX_BACKLOG_MAX);
	EXPECT_EQ(netdev_stat(sink, NETDEV_RX_DROPPED) - rx_dropped, NET_BACKLOG_EXTRA);
	EXPECT_EQ(after.dropped - st.dropped, NET_BACKLOG_EXTRA);
	EXPECT_EQ(skb_outstanding(), before);
}

TEST(net_core, a_device_that_is_down_drops)
{
	struct net_device *sink = sink_dev();
	long before = skb_outstanding();
	u64 dropped = netdev_stat(sink, NETDEV_TX_DROPPED);
	u8 b[4] = {0};
	struct sk_buff *skb = net_test_skb(b, sizeof(b));
	ASSERT_TRUE(skb != NULL);
	WRITE_ONCE(sink->flags, sink->flags & ~IFF_UP);
	skb->dev = sink;
	EXPECT_EQ(dev_queue_xmit(skb), -ENODEV);
	WRITE_ONCE(sink->flags, sink->flags | IFF_UP);
	skb = net_test_skb(b, sizeof(b));
	ASSERT_TRUE(skb != NULL);
	EXPECT_EQ(dev_queue_xmit(skb), -ENODEV); /* no dev */
	EXPECT_EQ(netdev_stat(sink, NETDEV_TX_DROPPED), dropped + 1);
	EXPECT_EQ(skb_outstanding(), before);
}
