/*
 * The network core's shell commands: the root qdisc of a device, and sink0's
 * per-packet cost (the boot argument sink_cost_ns= at run time).
 */
#include <grace/errno.h>
#include <grace/netdevice.h>
#include <grace/printk.h>
#include <grace/shell.h>
#include <grace/string.h>

#include "sink.h"

#define QDISC_CMD_SPEC_MAX 96 /* "tbf rate=<n> burst=<n> limit=<n>" with room to spare */

static void qdisc_show(struct net_device *dev)
{
	struct Qdisc *q = dev->qdisc;
	spin_lock(&q->lock);
	const char *id = q->ops->id;
	u32 limit = q->limit, qlen = q->q.qlen;
	u64 drops = q->drops, rate = q->rate, burst = q->burst;
	spin_unlock(&q->lock);
	if (!strcmp(id, "tbf"))
		printk("%s: tbf rate=%llu burst=%llu limit=%u qlen=%u drops=%llu\n", dev->name,
		       rate, burst, limit, qlen, drops);
	else
		printk("%s: %s limit=%u qlen=%u drops=%llu\n", dev->name, id, limit, qlen, drops);
}

SHELL_CMD(qdisc, "<dev> [pfifo limit=<n> | tbf rate=<bytes/s> burst=<bytes> limit=<n>]",
	  "show or set a device's root qdisc")
{
	char spec[QDISC_CMD_SPEC_MAX];
	size_t len = 0;

	if (argc < 2)
		return SHELL_USAGE;
	struct net_device *dev = dev_get_by_name(argv[1]);
	if (!dev) {
		printk("qdisc: %s: no such device\n", argv[1]);
		return 1;
	}
	if (argc > 2) {
		for (int i = 2; i < argc; i++) {
			int n = snprintf(spec + len, sizeof(spec) - len, "%s%s", i > 2 ? " " : "",
					 argv[i]);
			if (n < 0 || (size_t)n >= sizeof(spec) - len) {
				printk("qdisc: %s: spec too long\n", dev->name);
				return 1;
			}
			len += n;
		}
		int err = qdisc_set_root(dev, spec);
		if (err == -EINVAL) {
			printk(
			    "qdisc: %s: bad spec '%s' (want pfifo limit=<n> | tbf rate=<bytes/s> "
			    "burst=<bytes> limit=<n>)\n",
			    dev->name, spec);
			return 1;
		}
		if (err) {
			printk("qdisc: %s: %s\n", dev->name, errno_name(err));
			return 1;
		}
	}
	qdisc_show(dev);
	return 0;
}

SHELL_CMD(sink_cost_ns, "[<ns>]", "show or set sink0's busy time per packet under its lock")
{
	u64 ns;
	if (argc > 2)
		return SHELL_USAGE;
	if (argc == 2) {
		if (parse_u64(argv[1], &ns) || sink_set_cost_ns(ns)) {
			printk("sink_cost_ns: %s: not a number of ns up to %llu\n", argv[1],
			       SINK_COST_MAX_NS);
			return 1;
		}
	}
	printk("sink_cost_ns: %llu\n", sink_cost_ns());
	return 0;
}
