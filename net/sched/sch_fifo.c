/*
 * pfifo: a FIFO of at most limit packets; what arrives at a full queue is dropped
 * (the caller counts it). Both operations run under the root lock.
 */
#include <grace/errno.h>
#include <grace/netdevice.h>

#include "sch_internal.h"

static int pfifo_enqueue(struct sk_buff *skb, struct Qdisc *q)
{
	lockdep_assert_held(&q->lock);
	if (q->q.qlen >= q->limit)
		return -ENOBUFS;
	__skb_queue_tail(&q->q, skb);
	return 0;
}

static struct sk_buff *pfifo_dequeue(struct Qdisc *q)
{
	lockdep_assert_held(&q->lock);
	return __skb_dequeue(&q->q);
}

const struct Qdisc_ops pfifo_qdisc_ops = {
    .id = "pfifo",
    .enqueue = pfifo_enqueue,
    .dequeue = pfifo_dequeue,
};
