/*
 * Network devices and their transmit queue discipline.
 *
 * Transmit: dev_queue_xmit(skb) hands the packet to the device's root qdisc
 * under the qdisc's root lock (a spinlock_t, so spinlock=plain|backoff and
 * spinlock_pv apply to it and lockstat shows it), then runs the qdisc: one CPU
 * at a time dequeues and calls the driver's xmit, the others only enqueue.
 * Receive: a driver calls netif_rx(skb) (from its interrupt or anywhere); the
 * packet goes on this CPU's backlog and the NET_RX softirq passes it to the
 * protocol (net_rx_handler) in thread context of the softirq.
 *
 * Statistics are per CPU, summed on read.
 */
#ifndef GRACE_NETDEVICE_H
#define GRACE_NETDEVICE_H

#include <grace/list.h>
#include <grace/skbuff.h>
#include <grace/spinlock.h>
#include <grace/types.h>

#define ETH_ALEN 6
#define ETH_HLEN 14
#define ETH_DATA_LEN 1500
#define IFNAMSIZ 16

#define IFF_UP (1u << 0)
#define IFF_LOOPBACK (1u << 1)
#define IFF_NOARP (1u << 2) /* no link-layer addresses: loopback, sink */

struct net_device;

struct net_device_ops {
	/*
	 * Send skb: 0 (the driver owns it from here and frees it when done), -errno (it was
	 * freed too), or NETDEV_TX_BUSY (not taken: skb is still the caller's, and the
	 * driver stopped the queue). The driver counts its own tx (and rx) packets and bytes.
	 */
	int (*xmit)(struct sk_buff *skb, struct net_device *dev);
};
/*
 * xmit's answer when its ring is full: it took nothing (skb is still the caller's) and
 * has stopped the queue (netif_stop_queue); the qdisc keeps skb first in line until the
 * driver's completion calls netif_wake_queue(), as Linux's NETDEV_TX_BUSY.
 */
#define NETDEV_TX_BUSY 1
#define NETDEV_QUEUE_STOPPED 0 /* bit of net_device.state */

enum netdev_stat {
	NETDEV_RX_PACKETS,
	NETDEV_RX_BYTES,
	NETDEV_TX_PACKETS,
	NETDEV_TX_BYTES,
	NETDEV_RX_DROPPED,
	NETDEV_TX_DROPPED, /* by the qdisc (full) or the driver */
	NR_NETDEV_STATS
};
/* u64s per CPU's row: NR_NETDEV_STATS padded to a 64-byte line, so no two CPUs share one. */
#define NETDEV_STATS_ROW 8
_Static_assert(NR_NETDEV_STATS <= NETDEV_STATS_ROW, "a stats row outgrew its line");

struct net_device {
	char name[IFNAMSIZ];
	u8 mac[ETH_ALEN];
	u32 mtu;
	u32 flags;		  /* IFF_* */
	u32 ifindex;		  /* from 1, in registration order */
	u32 ipv4_addr, ipv4_mask; /* network order; 0: none */
	const struct net_device_ops *ops;
	struct Qdisc *qdisc; /* the root: pfifo unless set otherwise */
	unsigned long state; /* NETDEV_QUEUE_STOPPED; atomic bit operations */
	void *priv;	     /* the driver's */
	struct list_head list;
	u64 (*stats)[NETDEV_STATS_ROW]; /* one row per possible CPU, each on its own line */
};

/* Allocate a device with priv_size bytes for the driver (zeroed); NULL on ENOMEM. */
struct net_device *alloc_netdev(const char *name, size_t priv_size);
/* Give it ifindex, a pfifo root qdisc, and list it; 0 or -errno. */
int register_netdev(struct net_device *dev);
struct net_device *dev_get_by_name(const char *name);
struct net_device *dev_get_by_index(u32 ifindex);
/* Call fn on every registered device, in ifindex order. */
void netdev_for_each(void (*fn)(struct net_device *dev, void *arg), void *arg);

void netdev_stat_add(struct net_device *dev, enum netdev_stat s, u64 v);
u64 netdev_stat(const struct net_device *dev, enum netdev_stat s);

/* The driver's ring is full: the qdisc stops handing it packets. Under the driver's tx lock. */
void netif_stop_queue(struct net_device *dev);
/* Room again (a completion): restart the queue and have NET_TX run the qdisc. Any context. */
void netif_wake_queue(struct net_device *dev);
bool netif_queue_stopped(const struct net_device *dev);

/* Send skb (skb->dev set) through dev's root qdisc. 0, or -errno (skb freed, drop counted). */
int dev_queue_xmit(struct sk_buff *skb);
/*
 * Frames a CPU's backlog holds before netif_rx() drops: Linux's netdev_max_backlog,
 * 1000, which covers an interrupt's worth of frames at 10 Gbit/s between two NET_RX runs.
 */
#define NET_RX_BACKLOG_MAX 1000
/*
 * A received frame (skb->dev set, data at the Ethernet header): queue it on this CPU's
 * backlog for NET_RX, or, if the backlog is full, free it and count it NETDEV_RX_DROPPED
 * on its device and dropped on this CPU's backlog.
 */
void netif_rx(struct sk_buff *skb);
/* One CPU's backlog, as a row of Linux's /proc/net/softnet_stat. */
struct net_backlog_stat {
	u32 qlen;    /* frames waiting for NET_RX (exact for this CPU with interrupts off) */
	u64 dropped; /* frames netif_rx() found no room for, since boot */
};
void net_backlog_stat(unsigned cpu, struct net_backlog_stat *st);
/* What NET_RX calls for each received frame (the protocols, net/ipv4); it owns skb. */
extern void (*net_rx_handler)(struct sk_buff *skb);
/* Free a frame no protocol takes and count it NETDEV_RX_DROPPED: net_rx_handler's default. */
void net_rx_drop(struct sk_buff *skb);

/* At boot, after vfs_init(): the sk_buff caches, NET_RX/NET_TX, and the lo and sink0 devices. */
void net_core_init(void);

/* Queue disciplines (net/sched). */
struct Qdisc;
struct Qdisc_ops {
	const char *id; /* "pfifo", "tbf" */
	/* Under the root lock. 0, or -ENOBUFS when the packet is dropped (the caller frees it). */
	int (*enqueue)(struct sk_buff *skb, struct Qdisc *q);
	/* Under the root lock: the next packet to send now, or NULL. */
	struct sk_buff *(*dequeue)(struct Qdisc *q);
};

struct Qdisc {
	const struct Qdisc_ops *ops;
	spinlock_t lock; /* the root lock */
	struct net_device *dev;
	struct sk_buff_head q;
	u32 limit;		  /* packets queued at most */
	u64 drops;		  /* under the lock */
	u32 running;		  /* a CPU is dequeuing (under the lock) */
	struct sk_buff *requeued; /* the driver was busy for it: sent first (under the lock) */
	/* tbf: a token bucket of rate bytes/s, burst bytes; tokens refilled by the clock. */
	u64 rate, burst, tokens, last_ns;
};

/* A root qdisc for dev: "pfifo limit=<n>" or "tbf rate=<bytes/s> burst=<bytes> limit=<n>". */
int qdisc_set_root(struct net_device *dev, const char *spec);

#endif
