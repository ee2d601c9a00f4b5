/*
 * sink0: a device that takes every packet, counts it and frees it. An optional
 * per-packet cost (sink_cost_ns=<ns> at boot, sink_set_cost_ns() at run time) is
 * spent busy, holding the sink's own driver lock: a second contended lock on the
 * transmit path, held for a different time than the qdisc's root lock, as the
 * NIC's transmit lock was in the 2012 test behind the hashed backoff delays
 * ("x86,smp: auto tune spinlock backoff delay factor", Eric Dumazet's HTB run).
 *
 * Lock order: the sink's lock is taken with the root lock dropped (the runner
 * calls xmit outside it), and nothing is taken inside it but what the hook takes.
 */
#include <grace/cmdline.h>
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/netdevice.h>
#include <grace/printk.h>
#include <grace/string.h>
#include <grace/time.h>

#include "core.h"
#include "sink.h"

struct sink_priv {
	spinlock_t lock; /* the driver's transmit lock; serializes the hook's calls */
	u64 cost_ns;	 /* READ_ONCE: set at any time */
	void (*hook)(struct sk_buff *skb); /* READ_ONCE under lock */
};

static struct net_device *sink;

struct net_device *sink_dev(void)
{
	return sink;
}

int sink_set_cost_ns(u64 ns)
{
	if (ns > SINK_COST_MAX_NS)
		return -EINVAL;
	WRITE_ONCE(((struct sink_priv *)sink->priv)->cost_ns, ns);
	return 0;
}

u64 sink_cost_ns(void)
{
	return READ_ONCE(((struct sink_priv *)sink->priv)->cost_ns);
}

void sink_set_rx_hook(void (*fn)(struct sk_buff *skb))
{
	WRITE_ONCE(((struct sink_priv *)sink->priv)->hook, fn);
}

static int sink_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct sink_priv *sp = dev->priv;
	u32 len = skb_len(skb);

	spin_lock(&sp->lock);
	u64 cost = READ_ONCE(sp->cost_ns);
	if (cost)
		delay_ns(cost);
	void (*hook)(struct sk_buff *) = READ_ONCE(sp->hook);
	if (hook)
		hook(skb);
	spin_unlock(&sp->lock);
	netdev_stat_add(dev, NETDEV_TX_PACKETS, 1);
	netdev_stat_add(dev, NETDEV_TX_BYTES, len);
	kfree_skb(skb);
	return 0;
}

static const struct net_device_ops sink_ops = {
    .xmit = sink_xmit,
};

int sink_init(void)
{
	struct net_device *dev = alloc_netdev("sink0", sizeof(struct sink_priv));
	if (!dev)
		return -ENOMEM;
	struct sink_priv *sp = dev->priv;
	spin_lock_init(&sp->lock);
	dev->flags = IFF_NOARP | IFF_UP;
	dev->ipv4_addr = IPV4(10, 99, 0, 1);
	dev->ipv4_mask = IPV4(255, 255, 255, 0);
	dev->ops = &sink_ops;
	int err = register_netdev(dev);
	if (err)
		return err;
	sink = dev;

	sink_set_cost_ns(cmdline_get_uint("sink_cost_ns", 0, 0, SINK_COST_MAX_NS));
	return 0;
}
