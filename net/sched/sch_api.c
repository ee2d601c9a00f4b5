/*
 * Setting a device's root qdisc from a spec ("pfifo limit=<n>", "tbf rate=<bytes/s>
 * burst=<bytes> limit=<n>"). The root struct stays the device's for its lifetime:
 * a new spec changes its ops and parameters under the root lock, so a sender or a
 * runner never meets a freed qdisc. What the old one held is dropped and counted.
 */
#include <grace/errno.h>
#include <grace/netdevice.h>
#include <grace/printk.h>
#include <grace/string.h>
#include <grace/time.h>

#include "sch_internal.h"

#define QDISC_SPEC_WORD_MAX 32 /* "burst=1073741824" and room to spare */

/* The next space-separated word of *s into word; false at the end or if too long. */
static bool spec_next_word(const char **s, char *word, int *err)
{
	const char *p = *s;
	while (*p == ' ')
		p++;
	if (!*p)
		return false;
	size_t n = 0;
	while (p[n] && p[n] != ' ')
		n++;
	if (n >= QDISC_SPEC_WORD_MAX) {
		*err = -EINVAL;
		return false;
	}
	memcpy(word, p, n);
	word[n] = '\0';
	*s = p + n;
	return true;
}

/* "key=value" with value in [1, max]; 0, or -EINVAL. */
static int spec_value(const char *word, const char *key, u64 max, u64 *out, bool *seen)
{
	size_t k = strlen(key);
	if (*seen)
		return -EINVAL; /* given twice */
	if (parse_u64(word + k + 1, out) || *out == 0 || *out > max)
		return -EINVAL;
	*seen = true;
	return 0;
}

int qdisc_parse_spec(const char *spec, struct qdisc_spec *out)
{
	char word[QDISC_SPEC_WORD_MAX];
	bool seen_limit = false, seen_rate = false, seen_burst = false;
	int err = 0;
	u64 v;

	if (!spec || !spec_next_word(&spec, word, &err))
		return -EINVAL;
	*out = (struct qdisc_spec){.limit = QDISC_DEFAULT_LIMIT};
	if (!strcmp(word, "pfifo"))
		out->ops = &pfifo_qdisc_ops;
	else if (!strcmp(word, "tbf"))
		out->ops = &tbf_qdisc_ops;
	else
		return -EINVAL;
	while (spec_next_word(&spec, word, &err)) {
		if (!strncmp(word, "limit=", 6)) {
			err = spec_value(word, "limit", QDISC_LIMIT_MAX, &v, &seen_limit);
			out->limit = v;
		} else if (out->ops == &tbf_qdisc_ops && !strncmp(word, "rate=", 5)) {
			err = spec_value(word, "rate", TBF_RATE_MAX, &out->rate, &seen_rate);
		} else if (out->ops == &tbf_qdisc_ops && !strncmp(word, "burst=", 6)) {
			err = spec_value(word, "burst", TBF_BURST_MAX, &out->burst, &seen_burst);
		} else {
			err = -EINVAL;
		}
		if (err)
			return err;
	}
	if (err)
		return err;
	/* tc requires all three of tbf; pfifo's limit defaults to QDISC_DEFAULT_LIMIT. */
	if (out->ops == &tbf_qdisc_ops && !(seen_rate && seen_burst && seen_limit))
		return -EINVAL;
	return 0;
}

void qdisc_apply_spec(struct Qdisc *q, const struct qdisc_spec *spec)
{
	struct sk_buff_head gone;
	struct sk_buff *skb;
	u64 dropped = 0;

	skb_queue_init(&gone);
	spin_lock(&q->lock);
	q->ops = spec->ops;
	q->limit = spec->limit;
	q->rate = spec->rate;
	q->burst = spec->burst;
	q->tokens = spec->burst; /* a new bucket starts full, as tc's does */
	q->last_ns = arch_clock_ns();
	q->drops = 0;
	/* The queue is handed over whole; it is freed below, outside the lock. */
	if (q->requeued) {
		__skb_queue_head(&q->q, q->requeued);
		q->requeued = NULL;
	}
	dropped = skb_queue_len(&q->q);
	__skb_queue_splice_tail_init(&q->q, &gone);
	spin_unlock(&q->lock);

	if (dropped)
		netdev_stat_add(q->dev, NETDEV_TX_DROPPED, dropped);
	while ((skb = __skb_dequeue(&gone)) != NULL)
		kfree_skb(skb);
}

int qdisc_set_root(struct net_device *dev, const char *spec)
{
	struct qdisc_spec s;

	if (!dev || !dev->qdisc)
		return -EINVAL;
	/* The caller reports a bad spec: the shell on one line, a benchmark as its error. */
	int err = qdisc_parse_spec(spec, &s);
	if (err)
		return err;
	qdisc_apply_spec(dev->qdisc, &s);
	return 0;
}
