/*
 * The inside of net/sched, shared by its files and net/core/dev.c: the root's
 * private wrapper around struct Qdisc (the tbf watchdog and the NET_TX
 * scheduling link), the parsed form of a spec, and the two qdiscs' ops. The
 * white-box tests include it too.
 */
#ifndef NET_SCHED_SCH_INTERNAL_H
#define NET_SCHED_SCH_INTERNAL_H

#include <grace/netdevice.h>
#include <grace/timer.h>

/*
 * Packets a root queues at most when nobody sets a limit: Linux's default
 * tx_queue_len, 1000 packets, a few milliseconds of a 1 Gbit/s link.
 */
#define QDISC_DEFAULT_LIMIT 1000
/* The largest limit a spec may ask for: far more than any queue here needs to hold. */
#define QDISC_LIMIT_MAX (1u << 20)
/*
 * tbf's bounds. With rate <= 2^34 bytes/s (137 Gbit/s) the refill's elapsed (under
 * a second) times rate fits in 64 bits; with burst <= 2^30 bytes, the tokens
 * added times NSEC_PER_SEC does too.
 */
#define TBF_RATE_MAX (1ull << 34)
#define TBF_BURST_MAX (1ull << 30)

struct qdisc_root {
	struct Qdisc q;
	struct timer watchdog;	       /* tbf: the queue waits for tokens; fires qdisc_schedule() */
	struct qdisc_root *sched_next; /* on a CPU's NET_TX list; interrupts off */
	unsigned long scheduled;       /* bit 0: on a NET_TX list (test_and_set_bit) */
};

struct qdisc_spec {
	const struct Qdisc_ops *ops;
	u32 limit;
	u64 rate, burst; /* tbf */
};

extern const struct Qdisc_ops pfifo_qdisc_ops;
extern const struct Qdisc_ops tbf_qdisc_ops;

/* "pfifo limit=<n>" or "tbf rate=<r> burst=<b> limit=<n>": 0 or -EINVAL. */
int qdisc_parse_spec(const char *spec, struct qdisc_spec *out);
/* Set q to spec (under the root lock); what it held is dropped and counted. */
void qdisc_apply_spec(struct Qdisc *q, const struct qdisc_spec *spec);
/* A pfifo root for dev, not yet dev's; NULL on ENOMEM. */
struct Qdisc *qdisc_create_default(struct net_device *dev);
/* Enqueue skb under the root lock, then run the qdisc unless a CPU already does. */
int qdisc_xmit(struct Qdisc *q, struct sk_buff *skb);
/* Run q now, if no CPU does (the watchdog's NET_TX work). */
void qdisc_run(struct Qdisc *q);
/* Under the root lock: have a later NET_TX run dequeue q again at expires_ns. */
void qdisc_watchdog_schedule_locked(struct Qdisc *q, u64 expires_ns);
/* Have this CPU's NET_TX softirq run q (unless it is listed already). Any context. */
void qdisc_schedule(struct Qdisc *q);
/* Open SOFTIRQ_NET_TX (at net_core_init). */
void qdisc_init(void);

#endif
