/*
 * The root qdisc's lock and its runner. dev_queue_xmit() enqueues under the root
 * lock; then, if no CPU is running the qdisc, this CPU becomes the runner (the
 * running flag, under the lock) and dequeues and transmits until the qdisc gives
 * nothing more, dropping the lock around each driver call, as Linux's
 * qdisc_restart() does, so that other CPUs can enqueue meanwhile; they find the
 * flag set and leave at once. One runner at a time is what keeps a FIFO's order on
 * the wire. The root lock is still taken twice per packet, once to enqueue and
 * once to dequeue: the shape of the 2012 HTB test (tc qdisc add dev eth0 root htb
 * in "x86,smp: auto tune spinlock backoff delay factor"), where every sender
 * contends for it once per packet and the driver's own lock is a second contended
 * lock with a different hold time.
 *
 * A qdisc that holds packets it may not send yet (tbf without tokens) arms its
 * watchdog; the watchdog fires in a hard interrupt, where the root lock cannot be
 * taken (a thread on this CPU may hold it with interrupts on), so it puts the root
 * on this CPU's NET_TX list and raises SOFTIRQ_NET_TX, whose thread runs it.
 *
 * A driver whose ring is full answers NETDEV_TX_BUSY and stops its queue; the
 * runner keeps that packet in q->requeued, first in line, and dequeues nothing more
 * until the driver's completion wakes the queue (netif_wake_queue), which schedules
 * the root on NET_TX. So a packet waits or is dropped only here, by the limit.
 *
 * Lock order: the root lock, then a timer base lock (the watchdog). The driver's
 * locks are taken with the root lock dropped.
 */
#include <grace/atomic.h>
#include <grace/netdevice.h>
#include <grace/percpu.h>
#include <grace/race_point.h>
#include <grace/slab.h>
#include <grace/softirq.h>
#include <grace/time.h>
#include <asm/irq.h>

#include "sch_internal.h"

static DEFINE_PER_CPU(struct qdisc_root *, net_tx_list); /* interrupts off */

static struct qdisc_root *to_root(struct Qdisc *q)
{
	return container_of(q, struct qdisc_root, q);
}

/* Put q on this CPU's NET_TX list unless it is on one already. Any context. */
void qdisc_schedule(struct Qdisc *q)
{
	struct qdisc_root *r = to_root(q);
	if (test_and_set_bit(0, &r->scheduled))
		return;
	unsigned long flags = arch_irq_save();
	r->sched_next = this_cpu(net_tx_list);
	this_cpu(net_tx_list) = r;
	arch_irq_restore(flags);
	raise_softirq(SOFTIRQ_NET_TX);
}

static void qdisc_watchdog_fire(struct timer *t)
{
	qdisc_schedule(&container_of(t, struct qdisc_root, watchdog)->q);
}

void qdisc_watchdog_schedule_locked(struct Qdisc *q, u64 expires_ns)
{
	lockdep_assert_held(&q->lock);
	timer_modify(&to_root(q)->watchdog, expires_ns);
}

static void net_tx_action(void)
{
	unsigned long flags = arch_irq_save();
	struct qdisc_root *r = this_cpu(net_tx_list);
	this_cpu(net_tx_list) = NULL;
	arch_irq_restore(flags);
	while (r) {
		struct qdisc_root *next = r->sched_next;
		/* Cleared before the run: a watchdog that fires during it schedules q again. */
		clear_bit_unlock(0, &r->scheduled);
		qdisc_run(&r->q);
		r = next;
	}
}

void qdisc_init(void)
{
	open_softirq(SOFTIRQ_NET_TX, net_tx_action);
}

struct Qdisc *qdisc_create_default(struct net_device *dev)
{
	struct qdisc_root *r = kzalloc(sizeof(*r));
	if (!r)
		return NULL;
	struct Qdisc *q = &r->q;
	spin_lock_init(&q->lock);
	skb_queue_init(&q->q);
	q->dev = dev;
	q->ops = &pfifo_qdisc_ops;
	q->limit = QDISC_DEFAULT_LIMIT;
	timer_init(&r->watchdog, qdisc_watchdog_fire);
	return q;
}

/*
 * The runner's loop; the caller holds the root lock and has set running. Returns
 * with the lock held again. Each packet costs a second acquisition of the root
 * lock (the first was its enqueue), as in 2012 Linux's sch_direct_xmit().
 */
static void qdisc_restart_locked(struct Qdisc *q)
{
	struct sk_buff *skb;

	lockdep_assert_held(&q->lock);
	/*
	 * A stopped queue is read under the root lock after the driver stopped it under its
	 * own: a wake that comes before this read lets the loop go on, one after it finds
	 * running clear and runs q from NET_TX, so a requeued packet is never left behind.
	 */
	while (!netif_queue_stopped(q->dev)) {
		skb = q->requeued;
		if (skb)
			q->requeued = NULL;
		else if (!(skb = q->ops->dequeue(q)))
			break;
		spin_unlock(&q->lock);
		/*
		 * Away from the lock, this CPU still owns q: running, set under the lock,
		 * keeps every other sender, and the watchdog's NET_TX run, from dequeuing
		 * behind skb and putting a later packet on the wire first.
		 */
		race_point_key("qdisc.run_unlocked", q);
		/* The driver owns skb now and frees it, unless it is busy and hands it back. */
		int rc = q->dev->ops->xmit(skb, q->dev);
		spin_lock(&q->lock);
		if (rc == NETDEV_TX_BUSY)
			q->requeued = skb;
	}
}

int qdisc_xmit(struct Qdisc *q, struct sk_buff *skb)
{
	int rc;

	spin_lock(&q->lock);
	rc = q->ops->enqueue(skb, q);
	if (rc)
		q->drops++;
	/* A full queue still needs its runner: a dropped packet's sender may be the one. */
	if (!q->running) {
		q->running = 1;
		qdisc_restart_locked(q);
		q->running = 0;
	}
	spin_unlock(&q->lock);
	if (rc) {
		netdev_stat_add(q->dev, NETDEV_TX_DROPPED, 1);
		kfree_skb(skb);
	}
	return rc;
}

void qdisc_run(struct Qdisc *q)
{
	spin_lock(&q->lock);
	if (!q->running) {
		q->running = 1;
		qdisc_restart_locked(q);
		q->running = 0;
	}
	spin_unlock(&q->lock);
}
