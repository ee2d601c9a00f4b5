/*
 * Races on purpose in the network (race_test_util.h): one CPU held inside a
 * lockless window of the receive or transmit path while another makes the change
 * the window must survive.
 *
 * - udp.rcv_found: a receiver has found its socket under RCU and not yet taken the
 *   queue lock; the socket is closed and a new one made from the same cache. The
 *   grace period before the free is what keeps the found memory a socket: the
 *   datagram goes to the socket it was sent to (purged with it), never into the
 *   new one, which cannot be the old memory while the receiver holds it.
 * - qdisc.run_unlocked: a runner has dequeued a packet and dropped the root lock
 *   to transmit it; the tbf watchdog fires for the same root on another CPU. The
 *   running flag keeps the watchdog's run out: one runner at a time, nothing sent
 *   while the owner is away, the FIFO's order on the wire, every packet counted.
 */
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/netdevice.h>
#include <grace/rcupdate.h>
#include <grace/sched.h>
#include <grace/skbuff.h>
#include <grace/smp.h>
#include <grace/softirq.h>
#include <grace/string.h>
#include <grace/test.h>
#include <net/core/sink.h>
#include <net/sched/sch_internal.h>
#include <asm/irq.h>

#include "net_test_util.h"
#include "race_test_util.h"

/* How long a queue may take to drain or a softirq to run before the test gives up. */
#define NET_RACE_WAIT_MS 20000

/* sink0's address and a peer on its subnet: a frame between them is ours, from a host's source. */
#define RACE_SINK_ADDR IPV4(10, 99, 0, 1)
#define RACE_PEER_ADDR IPV4(10, 99, 0, 2)

struct udp_close_race {
	struct net_device *dev;
	struct net_frame frame;	 /* to closed's port */
	struct udp_sock *closed; /* closed by the change */
	struct udp_sock *opened; /* made by the change, from the same cache */
	bool fed;
};

static void udp_close_racer(void *arg)
{
	struct udp_close_race *r = arg;
	/* Parks in udp_rcv() once it has found closed, before taking its queue lock. */
	r->fed = net_frame_feed(&r->frame, r->dev);
}

static void udp_close_change(void *arg)
{
	struct udp_close_race *r = arg;
	udp_close(r->closed);
	/* Had close freed it at once, closed would be what this CPU's array hands out next. */
	r->opened = udp_socket();
	if (r->opened && udp_bind(r->opened, 0)) {
		udp_close(r->opened);
		r->opened = NULL;
	}
}

TEST(net_race, a_receiver_holding_a_closed_udp_socket_never_writes_into_another)
{
	static struct udp_close_race r;
	static const char data[] = "sent to the socket being closed";
	struct net_counts a, b;
	char buf[64];

	memset(&r, 0, sizeof(r));
	r.dev = sink_dev();
	ASSERT_TRUE(r.dev != NULL && r.dev->ipv4_addr == RACE_SINK_ADDR);
	r.closed = udp_socket();
	ASSERT_TRUE(r.closed != NULL);
	ASSERT_EQ(udp_bind(r.closed, 0), 0);
	net_frame_udp(&r.frame, RACE_PEER_ADDR, 5000, RACE_SINK_ADDR, udp_port(r.closed), data,
		      sizeof(data));
	net_counts_read(&a);

	struct race race = {.point = "udp.rcv_found",
			    .key = r.closed,
			    .racer = udp_close_racer,
			    .change = udp_close_change,
			    .arg = &r};
	if (!race_run(&race)) {
		udp_close(r.closed); /* not closed if the change never ran */
		rcu_barrier();
		return;
	}
	/* The closed socket's queue is purged after the grace period. */
	rcu_barrier();
	net_counts_read(&b);
	EXPECT_TRUE(r.fed);
	ASSERT_TRUE(r.opened != NULL);
	/* While the receiver held closed, its memory was not handed out again. */
	EXPECT_TRUE(r.opened != r.closed);
	/* The new socket got nothing: the datagram was never sent to it. */
	EXPECT_EQ(udp_rcvq_len(r.opened), 0);
	EXPECT_EQ(udp_recvfrom(r.opened, buf, sizeof(buf), NULL, NULL, 0), -EAGAIN);
	/* Delivered to the socket it was sent to, before that one was gone, and freed with it. */
	EXPECT_TRUE(net_counts_expect_one(&a, &b, NR_INET_DROPS, INET_RX_UDP));
	udp_close(r.opened);
	rcu_barrier();
}

#define QDISC_RACE_MAGIC 0x71726163u /* "qrac": marks the race's packets */
#define QDISC_RACE_PACKETS 3	     /* one held by the parked runner, two queued behind it */

struct qdisc_race_payload {
	u32 magic;
	u32 pad;
	u64 seq;
};

static struct qdisc_race {
	struct Qdisc *q;
	/* Written by the sink's hook, under the sink's lock. */
	u64 received;
	s64 last_seq;
	u64 out_of_order;   /* a sequence number not above the one before */
	u64 without_runner; /* transmitted while q->running was clear */
	u64 foreign;
	/* Written by the change. */
	u64 sent_while_parked; /* the hook's count once the watchdog's run is over */
	u64 enqueued;
	int err;
	bool tx_ran; /* NET_TX ran on the change's CPU after the watchdog fired */
} qr;

static void qdisc_race_hook(struct sk_buff *skb)
{
	struct qdisc_race_payload p;

	if (skb_len(skb) != sizeof(p)) {
		qr.foreign++;
		return;
	}
	memcpy(&p, skb->data, sizeof(p));
	if (p.magic != QDISC_RACE_MAGIC) {
		qr.foreign++;
		return;
	}
	/* Only a runner transmits, and it keeps running set until it is done. */
	if (!READ_ONCE(qr.q->running))
		qr.without_runner++;
	if ((s64)p.seq <= qr.last_seq)
		qr.out_of_order++;
	qr.last_seq = (s64)p.seq;
	WRITE_ONCE(qr.received, qr.received + 1); /* the change reads it unlocked */
}

static void qdisc_race_send(u64 seq)
{
	struct qdisc_race_payload p = {QDISC_RACE_MAGIC, 0, seq};
	struct sk_buff *skb = skb_alloc();
	void *d = skb ? skb_put(skb, sizeof(p)) : NULL;

	if (!d) {
		kfree_skb(skb);
		qr.err = -ENOMEM;
		return;
	}
	memcpy(d, &p, sizeof(p));
	skb->dev = sink_dev();
	int rc = dev_queue_xmit(skb);
	if (rc)
		qr.err = rc;
	else
		qr.enqueued++;
}

static void qdisc_race_racer(void *arg)
{
	(void)arg;
	/* Becomes the runner, dequeues it, and parks with the root lock dropped. */
	qdisc_race_send(0);
}

static void qdisc_race_change(void *arg)
{
	struct qdisc_root *root = container_of(qr.q, struct qdisc_root, q);
	unsigned cpu = smp_processor_id();
	(void)arg;

	/* Behind the parked runner's packet: these find it running and only enqueue. */
	for (u64 seq = 1; seq < QDISC_RACE_PACKETS; seq++)
		qdisc_race_send(seq);
	/* The watchdog's expiry, as the timer interrupt calls it: interrupts off. */
	u64 runs = softirq_runs(cpu, SOFTIRQ_NET_TX);
	unsigned long flags = arch_irq_save();
	root->watchdog.fn(&root->watchdog);
	arch_irq_restore(flags);
	/*
	 * softirqd is urgent: once this thread runs again after the count moved, the
	 * handler, which neither sleeps nor waits on the parked CPU, has returned.
	 */
	for (unsigned ms = 0; ms < NET_RACE_WAIT_MS && !qr.tx_ran; ms++) {
		msleep(1);
		qr.tx_ran = softirq_runs(cpu, SOFTIRQ_NET_TX) > runs;
	}
	qr.sent_while_parked = READ_ONCE(qr.received);
}

/* Wait until q holds nothing and no CPU runs it; false after NET_RACE_WAIT_MS. */
static bool qdisc_race_wait_drained(struct Qdisc *q)
{
	for (unsigned ms = 0; ms < NET_RACE_WAIT_MS; ms++) {
		spin_lock(&q->lock);
		bool idle = !q->q.qlen && !q->running && !q->requeued;
		spin_unlock(&q->lock);
		if (idle)
			return true;
		msleep(1);
	}
	return false;
}

TEST(net_race, the_tbf_watchdog_firing_during_a_qdisc_run_does_not_start_a_second_runner)
{
	struct net_device *sink = sink_dev();
	ASSERT_TRUE(sink != NULL);
	long before = skb_outstanding();

	memset(&qr, 0, sizeof(qr));
	qr.q = sink->qdisc;
	qr.last_seq = -1;
	/*
	 * Two packets' worth of tokens (16 bytes each), refilled at 20 ms a packet: a
	 * second runner would find tokens for the next packet, and the third waits for
	 * the watchdog in earnest once the race is over.
	 */
	ASSERT_EQ(qdisc_set_root(sink, "tbf rate=800 burst=32 limit=10"), 0);
	sink_set_rx_hook(qdisc_race_hook);

	struct race race = {.point = "qdisc.run_unlocked",
			    .key = qr.q,
			    .racer = qdisc_race_racer,
			    .change = qdisc_race_change};
	bool raced = race_run(&race);
	bool drained = qdisc_race_wait_drained(qr.q);
	u64 drops = qr.q->drops, queued = qr.q->q.qlen;
	sink_set_rx_hook(NULL);
	EXPECT_EQ(qdisc_set_root(sink, "pfifo limit=1000"), 0);
	EXPECT_EQ(skb_outstanding(), before);
	if (!raced)
		return;
	EXPECT_TRUE(drained);
	EXPECT_EQ(qr.err, 0);
	EXPECT_TRUE(qr.tx_ran);
	/* The owner was parked: nobody else transmitted meanwhile. */
	EXPECT_EQ(qr.sent_while_parked, 0);
	EXPECT_EQ(qr.without_runner, 0);
	EXPECT_EQ(qr.out_of_order, 0);
	EXPECT_EQ(qr.foreign, 0);
	/* Sent once each, none lost: sent + dropped + queued == enqueued. */
	EXPECT_EQ(qr.enqueued, QDISC_RACE_PACKETS);
	EXPECT_EQ(qr.received + drops + queued, qr.enqueued);
	EXPECT_EQ(qr.received, QDISC_RACE_PACKETS);
}
