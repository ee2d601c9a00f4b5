/*
 * Network devices: the list, per-CPU statistics, the transmit entry
 * (dev_queue_xmit, into the root qdisc: net/sched/sch_generic.c) and the receive
 * entry (netif_rx, onto this CPU's backlog for the NET_RX softirq).
 *
 * The device list is written under dev_list_lock (a mutex: registration sleeps to
 * allocate) and read by the lookups under RCU; a device is never unregistered, so
 * a pointer a lookup returns stays valid. The backlog is per CPU and touched only
 * by its CPU with interrupts off, since drivers call netif_rx() from interrupts.
 *
 * Lock order: dev_list_lock, then anything registration takes (the slab's locks).
 */
#include <grace/atomic.h>
#include <grace/boot_info.h>
#include <grace/errno.h>
#include <grace/mutex.h>
#include <grace/netdevice.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/rculist.h>
#include <grace/rcupdate.h>
#include <grace/slab.h>
#include <grace/softirq.h>
#include <grace/string.h>
#include <asm/irq.h>

#include "core.h"
#include "../sched/sch_internal.h"

static DEFINE_MUTEX(dev_list_lock);
static LIST_HEAD(dev_list);	 /* in ifindex order; writers under dev_list_lock, readers RCU */
static u32 dev_next_ifindex = 1; /* under dev_list_lock */

struct net_backlog {
	struct sk_buff_head q; /* the __ operations only, interrupts off */
	u64 dropped;	       /* full when netif_rx() came; written by its CPU, interrupts off */
} __cacheline_aligned;
static DEFINE_PER_CPU_ALIGNED(struct net_backlog, net_backlog);

void net_rx_drop(struct sk_buff *skb)
{
	if (skb->dev)
		netdev_stat_add(skb->dev, NETDEV_RX_DROPPED, 1);
	kfree_skb(skb);
}

void (*net_rx_handler)(struct sk_buff *skb) = net_rx_drop;

/* Rows for every CPU the machine has, rounded to a power of two: kmalloc aligns those to size. */
static size_t netdev_stats_size(void)
{
	size_t size = sizeof(u64[NETDEV_STATS_ROW]);
	while (size < boot_info.nr_cpus * sizeof(u64[NETDEV_STATS_ROW]))
		size *= 2;
	return size;
}

struct net_device *alloc_netdev(const char *name, size_t priv_size)
{
	if (!name || !*name || strlen(name) >= IFNAMSIZ)
		return NULL;
	struct net_device *dev = kzalloc(sizeof(*dev));
	if (!dev)
		return NULL;
	dev->stats = kzalloc(netdev_stats_size());
	dev->priv = priv_size ? kzalloc(priv_size) : NULL;
	if (!dev->stats || (priv_size && !dev->priv)) {
		kfree(dev->stats);
		kfree(dev->priv);
		kfree(dev);
		return NULL;
	}
	strlcpy(dev->name, name, IFNAMSIZ);
	dev->mtu = ETH_DATA_LEN;
	list_init(&dev->list);
	return dev;
}

static struct net_device *dev_find_by_name_locked(const char *name)
{
	struct net_device *dev;
	list_for_each_entry(dev, &dev_list, list)
		if (!strcmp(dev->name, name))
			return dev;
	return NULL;
}

int register_netdev(struct net_device *dev)
{
	if (!dev || !dev->ops || !dev->ops->xmit || dev->ifindex)
		return -EINVAL;
	struct Qdisc *q = qdisc_create_default(dev);
	if (!q)
		return -ENOMEM;
	mutex_lock(&dev_list_lock);
	if (dev_find_by_name_locked(dev->name)) {
		mutex_unlock(&dev_list_lock);
		kfree(q);
		return -EEXIST;
	}
	dev->qdisc = q;
	dev->ifindex = dev_next_ifindex++;
	/* Publishes the device's fields to the lookups; pairs with their rcu_dereference(). */
	list_add_tail_rcu(&dev->list, &dev_list);
	mutex_unlock(&dev_list_lock);
	return 0;
}

struct net_device *dev_get_by_name(const char *name)
{
	struct net_device *dev, *found = NULL;
	if (!name)
		return NULL;
	rcu_read_lock();
	list_for_each_entry_rcu(dev, &dev_list, list)
		if (!strncmp(dev->name, name, IFNAMSIZ)) {
			found = dev;
			break;
		}
	rcu_read_unlock();
	return found;
}

struct net_device *dev_get_by_index(u32 ifindex)
{
	struct net_device *dev, *found = NULL;
	rcu_read_lock();
	list_for_each_entry_rcu(dev, &dev_list, list)
		if (dev->ifindex == ifindex) {
			found = dev;
			break;
		}
	rcu_read_unlock();
	return found;
}

/* Under the mutex, so fn may sleep (print, allocate); it must not register a device. */
void netdev_for_each(void (*fn)(struct net_device *dev, void *arg), void *arg)
{
	struct net_device *dev;
	mutex_lock(&dev_list_lock);
	list_for_each_entry(dev, &dev_list, list)
		fn(dev, arg);
	mutex_unlock(&dev_list_lock);
}

/* Interrupts off: a CPU's row is written from its threads and its interrupts alike. */
void netdev_stat_add(struct net_device *dev, enum netdev_stat s, u64 v)
{
	unsigned long flags = arch_irq_save();
	u64 *row = dev->stats[smp_processor_id()];
	WRITE_ONCE(row[s], row[s] + v);
	arch_irq_restore(flags);
}

u64 netdev_stat(const struct net_device *dev, enum netdev_stat s)
{
	u64 sum = 0;
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++)
		sum += READ_ONCE(dev->stats[cpu][s]);
	return sum;
}

void netif_stop_queue(struct net_device *dev)
{
	set_bit(NETDEV_QUEUE_STOPPED, &dev->state);
}

void netif_wake_queue(struct net_device *dev)
{
	if (test_and_clear_bit(NETDEV_QUEUE_STOPPED, &dev->state) && dev->qdisc)
		qdisc_schedule(dev->qdisc);
}

bool netif_queue_stopped(const struct net_device *dev)
{
	return test_bit(NETDEV_QUEUE_STOPPED, &dev->state);
}

int dev_queue_xmit(struct sk_buff *skb)
{
	if (!skb)
		return -EINVAL;
	struct net_device *dev = skb->dev;
	if (!dev || !dev->qdisc) {
		kfree_skb(skb);
		return -ENODEV;
	}
	if (!(READ_ONCE(dev->flags) & IFF_UP)) {
		netdev_stat_add(dev, NETDEV_TX_DROPPED, 1);
		kfree_skb(skb);
		return -ENODEV;
	}
	return qdisc_xmit(dev->qdisc, skb);
}

void netif_rx(struct sk_buff *skb)
{
	unsigned long flags = arch_irq_save();
	struct sk_buff_head *q = &this_cpu(net_backlog).q;
	bool queued = q->qlen < NET_RX_BACKLOG_MAX;
	if (queued)
		__skb_queue_tail(q, skb);
	else
		WRITE_ONCE(this_cpu(net_backlog).dropped, this_cpu(net_backlog).dropped + 1);
	arch_irq_restore(flags);
	if (!queued) {
		if (skb->dev)
			netdev_stat_add(skb->dev, NETDEV_RX_DROPPED, 1);
		kfree_skb(skb);
		return;
	}
	raise_softirq(SOFTIRQ_NET_RX);
}

void net_backlog_stat(unsigned cpu, struct net_backlog_stat *st)
{
	struct net_backlog *b = &per_cpu(net_backlog, cpu);
	st->qlen = READ_ONCE(b->q.qlen);
	st->dropped = READ_ONCE(b->dropped);
}

/* The NET_RX softirq: hand this CPU's backlog, taken whole, to the protocols. */
static void net_rx_action(void)
{
	struct sk_buff_head frames;
	struct sk_buff *skb;
	skb_queue_init(&frames);
	unsigned long flags = arch_irq_save();
	__skb_queue_splice_tail_init(&this_cpu(net_backlog).q, &frames);
	arch_irq_restore(flags);
	while ((skb = __skb_dequeue(&frames)) != NULL)
		READ_ONCE(net_rx_handler)(skb);
}

void net_core_init(void)
{
	skb_init();
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++)
		skb_queue_init(&per_cpu(net_backlog, cpu).q);
	qdisc_init();
	open_softirq(SOFTIRQ_NET_RX, net_rx_action);
	int err = loopback_init();
	if (!err)
		err = sink_init();
	if (err)
		panic("net: cannot register the software devices: %d", err);
}
