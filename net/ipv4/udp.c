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
 *
 * A socket may name a local address (bind, or the source connect() chose) and
 * a peer (connect): the receive path then takes only datagrams to that address
 * and from that peer, as Linux's socket lookup scores them. Both are written
 * under udp_lock and read once by the receive path, which may see the old
 * value or the new one for a datagram that crosses a connect.
 */
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/printk.h>
#include <grace/race_point.h>
#include <grace/sched.h>
#include <grace/rculist.h>
#include <grace/slab.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include <grace/uio.h>
#include <grace/wait.h>

#include "ip.h"

/* 256 buckets: a few sockets in practice, and a test binding hundreds finds short chains. */
#define UDP_HASH_SIZE 256
/* The dynamic port range of RFC 6335 (IANA), which Linux's ip_local_port_range nears. */
#define UDP_EPHEMERAL_LOW 49152
#define UDP_EPHEMERAL_HIGH 65535

/* What bind() fixed, which a disconnect (connect to AF_UNSPEC) keeps. */
#define UDP_LOCK_ADDR (1u << 0)
#define UDP_LOCK_PORT (1u << 1)

struct udp_sock {
	struct hlist_node node; /* in udp_hash, under udp_lock; receivers walk it under RCU */
	u16 port;		/* host order, 0 until bound; written under udp_lock */
	u8 user_locks;		/* UDP_LOCK_*, under udp_lock */
	bool connected;		/* under udp_lock */
	u32 addr;		/* local address (network order), 0: any; written under udp_lock */
	u64 peer;		/* udp_peer_pack() of connect()'s peer, 0: none; under udp_lock */
	void (*data_ready)(void);  /* called once a datagram is queued; set before binding */
	struct sk_buff_head rcvq;  /* datagrams, data at the payload; its own lock */
	struct wait_queue_head wq; /* readers waiting for rcvq */
	u64 drops;		   /* queue full, under rcvq.lock */
	struct rcu_head rcu;
};

static struct kmem_cache *udp_sock_cache; /* set once, by udp_init() */
static struct hlist_head udp_hash[UDP_HASH_SIZE];
static DEFINE_SPINLOCK(udp_lock);
static u16 udp_next_ephemeral = UDP_EPHEMERAL_LOW; /* under udp_lock */

/* The peer in one word, so that the receive path reads address and port together. */
static u64 udp_peer_pack(u32 addr, u16 port)
{
	return (u64)addr << 16 | port;
}

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
	if (s->port || s->connected)
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
	return udp_bind_addr(s, 0, port);
}

/* 127.0.0.0/8: the first byte of the address as it lies in memory. */
static bool udp_addr_is_loopback(u32 addr)
{
	return ((const u8 *)&addr)[0] == 127;
}

int udp_bind_addr(struct udp_sock *s, u32 addr, u16 port)
{
	int err;

	/* Linux's inet_bind(): any address a device of ours has, and all of 127/8 (lo's route). */
	if (addr && !udp_addr_is_loopback(addr) && !inet_addr_is_local(addr))
		return -EADDRNOTAVAIL;
	spin_lock(&udp_lock);
	err = udp_bind_locked(s, port);
	if (!err) {
		WRITE_ONCE(s->addr, addr);
		s->user_locks = (addr ? UDP_LOCK_ADDR : 0) | (port ? UDP_LOCK_PORT : 0);
	}
	spin_unlock(&udp_lock);
	return err;
}

/* Leaves s's address as it is: a socket bound to an address alone keeps it. */
int udp_autobind(struct udp_sock *s)
{
	int err = 0;

	spin_lock(&udp_lock);
	if (!s->port)
		err = udp_bind_locked(s, 0);
	spin_unlock(&udp_lock);
	return err;
}

void udp_set_data_ready(struct udp_sock *s, void (*fn)(void))
{
	s->data_ready = fn;
}

/*
 * The route to daddr and the source address a datagram from s takes: its own
 * address if it has one, else the route's. A 0.0.0.0 destination is this host,
 * as Linux routes it; the limited broadcast needs SO_BROADCAST, which no socket
 * here has (-EACCES, as Linux).
 */
static int udp_route(struct udp_sock *s, u32 *daddr, struct net_device **dev, u32 *gateway,
		     u32 *saddr)
{
	u32 local = READ_ONCE(s->addr);
	int err;

	if (!*daddr)
		*daddr = IPV4(127, 0, 0, 1);
	if (*daddr == 0xffffffff)
		return -EACCES;
	err = ip_route_dev(*daddr, 0, dev, gateway, saddr);
	if (err)
		return err;
	/* Linux's __mkroute_output(): a loopback source leaves by loopback or not at all. */
	if (local && udp_addr_is_loopback(local) && !((*dev)->flags & IFF_LOOPBACK))
		return -EINVAL;
	if (local)
		*saddr = local;
	return 0;
}

int udp_connect(struct udp_sock *s, u32 daddr, u16 dport)
{
	struct net_device *dev;
	u32 gateway, saddr;
	int err;

	/* Linux's inet_dgram_connect() binds first, and a failure is -EAGAIN. */
	if (udp_autobind(s))
		return -EAGAIN;
	err = udp_route(s, &daddr, &dev, &gateway, &saddr);
	if (err)
		return err;
	spin_lock(&udp_lock);
	if (!s->addr)
		WRITE_ONCE(s->addr, saddr); /* receive on the address it sends from */
	WRITE_ONCE(s->peer, udp_peer_pack(daddr, dport));
	s->connected = true;
	spin_unlock(&udp_lock);
	return 0;
}

void udp_disconnect(struct udp_sock *s)
{
	spin_lock(&udp_lock);
	s->connected = false;
	WRITE_ONCE(s->peer, 0);
	if (!(s->user_locks & UDP_LOCK_ADDR))
		WRITE_ONCE(s->addr, 0);
	/*
	 * A port connect() chose is given back, as Linux's udp_disconnect() does. A
	 * receiver still on the node may follow it into another bucket once it is
	 * hashed again; every socket there has another port, so it finds none.
	 */
	if (!(s->user_locks & UDP_LOCK_PORT) && s->port) {
		hlist_del_init_rcu(&s->node);
		WRITE_ONCE(s->port, 0);
	}
	spin_unlock(&udp_lock);
}

int udp_getname(struct udp_sock *s, bool peer, u32 *addr, u16 *port)
{
	int err = 0;

	spin_lock(&udp_lock);
	if (!peer) {
		*addr = s->addr;
		*port = s->port;
	} else if (!s->connected || !(u16)s->peer) {
		err = -ENOTCONN; /* Linux: no peer port is no peer */
	} else {
		*addr = (u32)(s->peer >> 16);
		*port = (u16)s->peer;
	}
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
	struct iov_iter from;

	if (!buf && len)
		return -EINVAL;
	iov_iter_kbuf(&from, (void *)buf, len);
	return udp_sendto_iter(s, &from, daddr, dport);
}

long udp_sendto_iter(struct udp_sock *s, struct iov_iter *from, u32 daddr, u16 dport)
{
	size_t len = iov_iter_count(from);
	struct net_device *dev;
	u32 gateway, saddr;
	struct sk_buff *skb;
	struct udphdr *uh;
	int err;

	if (!dport)
		return -EINVAL;
	if (!READ_ONCE(s->port)) { /* an unbound socket sends from an ephemeral port, as Linux */
		err = udp_autobind(s);
		if (err)
			return err;
	}
	if (len > SKB_BUF_SIZE - SKB_HEADROOM - sizeof(*uh)) {
		/* Past any MTU a buffer can carry: too big for one frame. */
		inet_drop_count(DROP_TX_OVERSIZE);
		return -EMSGSIZE;
	}
	err = udp_route(s, &daddr, &dev, &gateway, &saddr);
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
	if (copy_from_iter(uh + 1, len, from) != len) {
		kfree_skb(skb);
		return -EFAULT;
	}
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

long udp_send(struct udp_sock *s, struct iov_iter *from)
{
	u64 peer;
	bool connected;

	spin_lock(&udp_lock);
	connected = s->connected;
	peer = s->peer;
	spin_unlock(&udp_lock);
	if (!connected)
		return -EDESTADDRREQ;
	return udp_sendto_iter(s, from, (u32)(peer >> 16), (u16)peer);
}

/* The source of a queued datagram (data at its payload). */
static void udp_skb_source(const struct sk_buff *skb, u32 *saddr, u16 *sport)
{
	*saddr = ((const struct iphdr *)skb_network_header(skb))->saddr;
	*sport = ntohs(((const struct udphdr *)skb_transport_header(skb))->source);
}

long udp_recv_one(struct udp_sock *s, struct iov_iter *to, u32 *saddr, u16 *sport, bool peek)
{
	size_t len = iov_iter_count(to), copy;
	struct sk_buff *skb;
	void *kbuf = NULL;
	u32 n;

	/*
	 * A peek copies under the lock, since a reader taking the datagram meanwhile
	 * would free it; and into the kernel, since a copy to user memory may sleep.
	 * It takes nothing, so a copy out that faults afterwards loses nothing.
	 */
	if (peek && !(kbuf = kmalloc(MAX(MIN(len, (size_t)SKB_BUF_SIZE), (size_t)1))))
		return -ENOMEM;
	spin_lock(&s->rcvq.lock);
	skb = peek ? s->rcvq.first : __skb_dequeue(&s->rcvq);
	if (!skb) {
		spin_unlock(&s->rcvq.lock);
		kfree(kbuf);
		return -EAGAIN;
	}
	n = skb_len(skb);
	copy = MIN((size_t)n, len);
	udp_skb_source(skb, saddr, sport);
	if (peek) {
		memcpy(kbuf, skb->data, copy);
		spin_unlock(&s->rcvq.lock);
		bool copied = copy_to_iter(kbuf, copy, to) == copy;
		kfree(kbuf);
		return copied ? (long)n : -EFAULT;
	}
	spin_unlock(&s->rcvq.lock);
	/* The datagram is this reader's now: one that cannot be copied out is dropped. */
	bool copied = copy_to_iter(skb->data, copy, to) == copy;
	kfree_skb(skb);
	return copied ? (long)n : -EFAULT;
}

int udp_wait_rcv(struct udp_sock *s)
{
	return wait_event_interruptible(s->wq, udp_rcvq_len(s) != 0);
}

long udp_recvfrom(struct udp_sock *s, void *buf, size_t len, u32 *saddr, u16 *sport, u64 timeout_ns)
{
	struct iov_iter to;
	u32 from;
	u16 port;

	iov_iter_kbuf(&to, buf, len);
	long n = udp_recv_one(s, &to, &from, &port, false);

	if (n == -EAGAIN && timeout_ns) {
		if (timeout_ns == UINT64_MAX)
			wait_event(s->wq,
				   (n = udp_recv_one(s, &to, &from, &port, false)) != -EAGAIN);
		else
			wait_event_timeout(
			    s->wq, (n = udp_recv_one(s, &to, &from, &port, false)) != -EAGAIN,
			    timeout_ns);
	}
	if (n < 0)
		return n;
	if (saddr)
		*saddr = from;
	if (sport)
		*sport = port;
	return MIN((size_t)n, len);
}

/*
 * Does s take a datagram from saddr:sport to daddr? Its local address and its
 * peer, where it has them, must match; 0 matches anything (Linux's scoring in
 * udp4_lib_lookup, where a mismatch is no socket at all).
 */
static bool udp_accepts(const struct udp_sock *s, u32 saddr, u16 sport, u32 daddr)
{
	u32 local = READ_ONCE(s->addr);
	u64 peer = READ_ONCE(s->peer);
	u32 peer_addr = (u32)(peer >> 16);
	u16 peer_port = (u16)peer;

	return (!local || local == daddr) && (!peer_addr || peer_addr == saddr) &&
	       (!peer_port || peer_port == sport);
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
	if (s && !udp_accepts(s, iph->saddr, ntohs(uh->source), iph->daddr))
		s = NULL;
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
	if (s->data_ready)
		s->data_ready();
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
