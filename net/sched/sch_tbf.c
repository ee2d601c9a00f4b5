/*
 * tbf: a token bucket in front of a FIFO. The bucket holds up to burst bytes of
 * tokens and fills at rate bytes per second, by the clock, whenever dequeue looks
 * (no timer ticks it). The head packet leaves when the bucket holds its length;
 * otherwise it stays queued, and the watchdog is armed for the moment the tokens
 * will be there, so a later dequeue sends it even when nobody sends again. Both
 * operations run under the root lock, which also protects tokens and last_ns.
 */
#include <grace/errno.h>
#include <grace/netdevice.h>
#include <grace/time.h>

#include "sch_internal.h"

static int tbf_enqueue(struct sk_buff *skb, struct Qdisc *q)
{
	lockdep_assert_held(&q->lock);
	/* A packet larger than the bucket would never leave and block the queue behind it. */
	if (q->q.qlen >= q->limit || skb_len(skb) > q->burst)
		return -ENOBUFS;
	__skb_queue_tail(&q->q, skb);
	return 0;
}

static void tbf_refill_locked(struct Qdisc *q, u64 now)
{
	if (now <= q->last_ns)
		return;
	u64 elapsed = now - q->last_ns;
	if (elapsed >= NSEC_PER_SEC || q->burst - q->tokens <= elapsed * q->rate / NSEC_PER_SEC) {
		q->tokens = q->burst;
		q->last_ns = now;
		return;
	}
	u64 added = elapsed * q->rate / NSEC_PER_SEC;
	q->tokens += added;
	/*
	 * Advance the clock only by the time the whole tokens stand for, so frequent
	 * looks at a slow bucket do not round its refill away.
	 */
	q->last_ns += added * NSEC_PER_SEC / q->rate;
}

static struct sk_buff *tbf_dequeue(struct Qdisc *q)
{
	lockdep_assert_held(&q->lock);
	struct sk_buff *skb = q->q.first;
	if (!skb)
		return NULL;
	u64 now = arch_clock_ns();
	tbf_refill_locked(q, now);
	u32 len = skb_len(skb);
	if (q->tokens < len) {
		u64 wait = ((len - q->tokens) * NSEC_PER_SEC + q->rate - 1) / q->rate;
		qdisc_watchdog_schedule_locked(q, now + wait);
		return NULL;
	}
	q->tokens -= len;
	return __skb_dequeue(&q->q);
}

const struct Qdisc_ops tbf_qdisc_ops = {
    .id = "tbf",
    .enqueue = tbf_enqueue,
    .dequeue = tbf_dequeue,
};
