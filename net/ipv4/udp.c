/*
 * UDP sockets (RFC 768): a table of bound ports, and a bounded receive queue
 * per socket.
 *
 * The port table is a hash of UDP_HASH_SIZE buckets under one lock, udp_lock,
 * which bind and close take; the receive path finds a socket under
 * rcu_read_lock() alone, so a datagram touches no shared line but its socket's.
 * close() unhashes the socket, frees what its queue holds, and frees it with
 * call_rcu(): a receiver that found it before the unhash may still queue to it
 * during the grace period, so the queue is purged again in the callback, after
 * the last such receiver is gone.
 * That grace period is the receiver's only guard, as SOCK_RCU_FREE is Linux's:
 * it takes no reference and rechecks nothing, so the memory it found must stay
 * a socket, and not become another one, until it leaves its read side. Sockets
 * come from a cache of their own (Linux's per-protocol slab), so a socket freed
 * early would be the very next one handed out.
 *
 * The receive path takes a socket's rcvq.lock and, after it, wakes the
 * socket's wait queue (its lock); nothing takes udp_lock with either held.
 */
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/printk.h>
#include <grace/race_point.h>
#include <grace/rculist.h>
#include <grace/slab.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include <grace/wait.h>

#include "ip.h"

/* 256 buckets: a few sockets in practice, and a test binding hundreds finds short chains. */
#define UDP_HASH_SIZE 256
/* The dynamic port range of RFC 6335 (IANA), which Linux's ip_local_port_range nears. */
#define UDP_EPHEMERAL_LOW 49152
#define UDP_EPHEMERAL_HIGH 65535

struct udp_sock {
	struct hlist_node node;	   /* in udp_hash, under udp_lock; receivers walk it under RCU */
	u16 port;		   /* host order, 0 until bound; written under udp_lock */
	struct sk_buff_head rcvq;  /* datagrams, data at the payload; its own lock */
	struct wait_queue_head wq; /* readers waiting for rcvq */
	u64 drops;		   /* queue full, under rcvq.lock */
	struct rcu_head rcu;
};

static struct kmem_cache *udp_sock_cache; /* set once, by udp_init() */
static struct hlist_head udp_hash[UDP_HASH_SIZE];
static DEFINE_SPINLOCK(udp_lock);
static u16 udp_next_ephemeral = UDP_EPHEMERAL_LOW; /* under udp_lock */

static struct hlist_head *udp_bucket(u16 port)
{
	return &udp_hash[port % UDP_HASH_SIZE];
}

/* The socket bound to port: under rcu_read_lock() or udp_lock. */
static struct udp_sock *udp_lookup_rcu(u16 port)
{
	struct udp_sock *s;
	hlist_for_each_entry_rcu(s, udp_bucket(port), node)
		if (READ_ONCE(s->port) == port)
			return s;
	return NULL;
}

void udp_init(void)
{
	udp_sock_cache = kmem_cache_create("udp_sock", sizeof(struct udp_sock), 0, 0, NULL);
	if (!udp_sock_cache)
		pr_err("udp: no socket cache: every socket() will fail\n");
}

struct udp_sock *udp_socket(void)
{
	struct udp_sock *s = udp_sock_cache ? kmem_cache_alloc(udp_sock_cache) : NULL;
	if (!s)
		return NULL;
	memset(s, 0, sizeof(*s));
	hlist_init_node(&s->node);
	skb_queue_init(&s->rcvq);
	wait_queue_init(&s->wq);
	return s;
}

/* Bind s to port, or to a free ephemeral port if port is 0; under udp_lock. */
static int udp_bind_locked(struct udp_sock *s, u16 port)
{
	BUG_ON(!spin_is_locked(&udp_lock));
	if (s->port)
		return -EINVAL;
	if (!port) {
		unsigned range = UDP_EPHEMERAL_HIGH - UDP_EPHEMERAL_LOW + 1;
		for (unsigned i = 0; i < range && !port; i++) {
			u16 p = udp_next_ephemeral;
			udp_next_ephemeral = p == UDP_EPHEMERAL_HIGH ? UDP_EPHEMERAL_LOW : p + 1;
			if (!udp_lookup_rcu(p))
				port = p;
		}
		if (!port)
			return -EADDRINUSE;
	} else if (udp_lookup_rcu(port)) {
		return -EADDRINUSE;
	}
	WRITE_ONCE(s->port, port);
	/* The socket's fields before its link: the release in hlist_add_head_rcu. */
	hlist_add_head_rcu(&s->node, udp_bucket(port));
	return 0;
}

int udp_bind(struct udp_sock *s, u16 port)
{
	int err;
	spin_lock(&udp_lock);
	err = udp_bind_locked(s, port);
	spin_unlock(&udp_lock);
	return err;
}

u16 udp_port(const struct udp_sock *s)
{
	return READ_ONCE(s->port);
}

u32 udp_rcvq_len(struct udp_sock *s)
{
	return READ_ONCE(s->rcvq.qlen);
}

static void udp_free_rcu(struct rcu_head *head)
{
	struct udp_sock *s = container_of(head, struct udp_sock, rcu);
	skb_queue_purge(&s->rcvq);
	kmem_cache_free(udp_sock_cache, s);
}

void udp_close(struct udp_sock *s)
{
	if (!s)
		return;
	spin_lock(&udp_lock);
	if (!hlist_unhashed(&s->node))
		hlist_del_rcu(&s->node);
	spin_unlock(&udp_lock);
	/* The datagrams nobody will read go now, not a grace period later. */
	skb_queue_purge(&s->rcvq);
	call_rcu(&s->rcu, udp_free_rcu);
}

long udp_sendto(struct udp_sock *s, const void *buf, size_t len, u32 daddr, u16 dport)
{
	struct net_device *dev;
	u32 gateway, saddr;
	struct sk_buff *skb;
	struct udphdr *uh;
	int err;

	if (!dport || (!buf && len))
		return -EINVAL;
	if (!READ_ONCE(s->port)) { /* an unbound socket sends from an ephemeral port, as Linux */
		err = udp_bind(s, 0);
		if (err && err != -EINVAL) /* -EINVAL: another thread bound it meanwhile */
			return err;
	}
	if (len > SKB_BUF_SIZE - SKB_HEADROOM - sizeof(*uh)) {
		/* Past any MTU a buffer can carry: too big for one frame. */
		inet_drop_count(DROP_TX_OVERSIZE);
		return -EMSGSIZE;
	}
	err = ip_route_dev(daddr, 0, &dev, &gateway, &saddr);
	if (err)
		return err;
	skb = skb_alloc();
	if (!skb)
		return -ENOMEM;
	uh = skb_put(skb, sizeof(*uh) + len);
	if (!uh) {
		kfree_skb(skb);
		return -EMSGSIZE;
	}
	memcpy(uh + 1, buf, len);
	uh->source = htons(READ_ONCE(s->port));
	uh->dest = htons(dport);
	uh->len = htons((u16)(sizeof(*uh) + len));
	uh->check = 0;
	uh->check = udp_checksum(saddr, daddr, uh, sizeof(*uh) + len);
	if (!uh->check) /* RFC 768: a sum of 0 is sent as all ones; 0 means "none" */
		uh->check = 0xffff;
	skb_set_transport_header(skb);
	err = ip_output_dev(skb, dev, gateway, saddr, daddr, IPPROTO_UDP, 0);
	return err ? err : (long)len;
}

long udp_recvfrom(struct udp_sock *s, void *buf, size_t len, u32 *saddr, u16 *sport, u64 timeout_ns)
{
	struct sk_buff *skb = skb_dequeue(&s->rcvq);
	u32 n;

	if (!skb && timeout_ns) {
		if (timeout_ns == UINT64_MAX)
			wait_event(s->wq, (skb = skb_dequeue(&s->rcvq)) != NULL);
		else
			wait_event_timeout(s->wq, (skb = skb_dequeue(&s->rcvq)) != NULL,
					   timeout_ns);
	}
	if (!skb)
		return -EAGAIN;
	n = skb_len(skb) < len ? skb_len(skb) : (u32)len;
	memcpy(buf, skb->data, n);
	if (saddr)
		*saddr = ((const struct iphdr *)skb_network_header(skb))->saddr;
	if (sport)
		*sport = ntohs(((const struct udphdr *)skb_transport_header(skb))->source);
	kfree_skb(skb);
	return n;
}

void udp_rcv(struct sk_buff *skb)
{
	const struct iphdr *iph = skb_network_header(skb);
	const struct udphdr *uh = (const struct udphdr *)skb->data;
	u32 len = skb_len(skb);
	struct udp_sock *s;

	if (len < sizeof(*uh))
		return inet_drop(skb, DROP_UDP_SHORT);
	if (ntohs(uh->len) != len)
		return inet_drop(skb, DROP_UDP_LEN);
	if (uh->check && udp_checksum(iph->saddr, iph->daddr, uh, len))
		return inet_drop(skb, DROP_UDP_CSUM);

	rcu_read_lock();
	s = udp_lookup_rcu(ntohs(uh->dest));
	if (!s) {
		rcu_read_unlock();
		return inet_drop(skb, DROP_UDP_NO_PORT);
	}
	skb_pull(skb, sizeof(*uh)); /* cannot fail: len >= 8 */
	/*
	 * s may be closing from here on: only this read side keeps it a socket (and
	 * its lock a lock) until the purge, which frees what is queued below.
	 */
	race_point_key("udp.rcv_found", s);
	spin_lock(&s->rcvq.lock);
	if (s->rcvq.qlen >= UDP_RCVQ_MAX) {
		s->drops++;
		spin_unlock(&s->rcvq.lock);
		rcu_read_unlock();
		return inet_drop(skb, DROP_UDP_QUEUE_FULL);
	}
	__skb_queue_tail(&s->rcvq, skb);
	spin_unlock(&s->rcvq.lock);
	inet_stat_inc(INET_RX_UDP);
	wake_up(&s->wq);
	rcu_read_unlock();
}

void udp_for_each(void (*fn)(u16 port, u32 rcvq, u64 drops, void *arg), void *arg)
{
	struct udp_sock *s;

	spin_lock(&udp_lock);
	for (unsigned b = 0; b < UDP_HASH_SIZE; b++)
		hlist_for_each_entry_rcu(s, &udp_hash[b], node)
			fn(s->port, READ_ONCE(s->rcvq.qlen), READ_ONCE(s->drops), arg);
	spin_unlock(&udp_lock);
}
