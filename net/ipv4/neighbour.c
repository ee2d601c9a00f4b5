/*
 * The neighbour table: for each (device, IPv4 address) a next hop was sent to,
 * its MAC (the ARP cache). An entry is born INCOMPLETE when neigh_output() first
 * needs it: an ARP request goes out and up to NEIGH_QUEUE_MAX packets wait on the
 * entry; the reply (neigh_resolve, from arp_rcv) makes it REACHABLE and sends
 * them. As Linux's neigh_timer_handler(), the entry's own delayed work sends the
 * request again every retrans time while no reply comes, and after mcast_solicit
 * requests in all, one retrans time after the last, gives up: the entry is freed
 * with its packets, which are counted as dropped.
 *
 * The probe work and the entry's lifetime: while n->armed (the work is pending or
 * running and has not yet decided to stop), only the work frees n. Whoever
 * unlinks an armed entry (the gc) marks it dead and takes its packets; the work
 * finds it dead and frees it. Both decisions are made under the chain's lock, so
 * no one frees an entry a pending work still points at, and no
 * cancel_delayed_work_sync() is needed (the gc, in a worker, may not call it).
 *
 * A hash of NEIGH_HASH_SIZE chains, each under its own spinlock: the table is
 * consulted once per packet sent, by whatever CPU sends it, and small (a host's
 * neighbours), so a lock per chain keeps CPUs sending to different neighbours
 * apart without RCU's deferred frees. Entries are freed under no lock, after
 * being unlinked under their chain's, and only the chain's lock holder touches
 * them, so there is nothing for a reader to be left holding.
 *
 * The gc (a delayed work item every neigh_gc_interval, in a worker: gc takes the
 * chain locks, which threads hold) frees REACHABLE entries unused for the stale
 * time and INCOMPLETE ones past the resolve timeout (a backstop the probe work
 * normally makes moot, and what the tests set to 0 to flush). An insert that finds
 * neigh_gc_thresh entries or more first runs a forced gc, which, as Linux's
 * neigh_forced_gc, frees every entry but the INCOMPLETE ones still resolving:
 * the cost the 2002 thread's "gc" runs (thresh and interval raised to 31048576
 * and 60 s) took out of the random-destination tests.
 *
 * Lock order: one chain lock at a time; none is held across dev_queue_xmit(),
 * arp_send_request() or kfree_skb().
 */
#include <grace/atomic.h>
#include <grace/boot_info.h>
#include <grace/cmdline.h>
#include <grace/errno.h>
#include <grace/hash.h>
#include <grace/inet.h>
#include <grace/mutex.h>
#include <grace/neighbour.h>
#include <grace/printk.h>
#include <grace/slab.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include <grace/time.h>
#include <grace/timer.h>
#include <grace/workqueue.h>

#include "internal.h"

/* 256 chains: a host talks to tens of neighbours; the gc keeps the table near its thresh. */
#define NEIGH_HASH_BITS 8
#define NEIGH_HASH_SIZE (1u << NEIGH_HASH_BITS)

/*
 * Linux's defaults (net/ipv4/arp.c arp_tbl, 2.4 to now): gc every 30 s, gc_thresh
 * 1024 (its gc_thresh3, past which an insert forces a gc), stale after 60 s,
 * unres_qlen 3 packets queued (2.4's; Linux now counts bytes), a request re-sent
 * after retrans_time 1 s and the entry given up after mcast_solicit 3 of them.
 * The resolve timeout is the gc's, not Linux's: an INCOMPLETE entry the probe
 * work has not failed by then (it would have, at 3 s) is freed by the gc.
 */
#define NEIGH_GC_INTERVAL_NS_DEFAULT (30 * NSEC_PER_SEC)
#define NEIGH_GC_THRESH_DEFAULT 1024
#define NEIGH_GC_STALE_NS_DEFAULT (60 * NSEC_PER_SEC)
#define NEIGH_RESOLVE_TIMEOUT_NS_DEFAULT (60 * NSEC_PER_SEC)
#define NEIGH_RETRANS_NS_DEFAULT NSEC_PER_SEC
#define NEIGH_MCAST_SOLICIT_DEFAULT 3
#define NEIGH_MCAST_SOLICIT_MAX 255 /* n->probes is a u8 */
#define NEIGH_QUEUE_MAX 3

enum neigh_state { NEIGH_INCOMPLETE, NEIGH_REACHABLE };

struct neighbour {
	struct neighbour *next; /* these fields: under the chain's lock */
	struct net_device *dev;
	u32 ip; /* network order */
	u8 mac[ETH_ALEN];
	u8 state;	       /* enum neigh_state */
	u64 updated_ns;	       /* born, or confirmed by a reply */
	u64 used_ns;	       /* the last packet sent through it */
	u8 probes;	       /* INCOMPLETE: ARP requests sent for it */
	bool armed;	       /* probe_work pending or running: it alone frees the entry */
	bool dead;	       /* unlinked while armed: probe_work frees it */
	struct sk_buff_head q; /* INCOMPLETE: packets waiting, oldest first (__ ops only) */
	struct delayed_work probe_work; /* re-sends the request, then gives up */
};

struct neigh_bucket {
	spinlock_t lock;
	struct neighbour *first;
};

static struct neigh_bucket neigh_hash[NEIGH_HASH_SIZE];
/* Entries come and go on the gc's schedule: a cache of their own, apart from kmalloc's. */
static struct kmem_cache *neigh_cache;
static atomic_t neigh_entries; /* every insert and free: rare next to lookups */

static u64 neigh_gc_interval_ns = NEIGH_GC_INTERVAL_NS_DEFAULT;
static u64 neigh_gc_thresh = NEIGH_GC_THRESH_DEFAULT;
static u64 neigh_gc_stale_ns = NEIGH_GC_STALE_NS_DEFAULT;
static u64 neigh_resolve_timeout_ns = NEIGH_RESOLVE_TIMEOUT_NS_DEFAULT;
static u64 neigh_retrans_ns = NEIGH_RETRANS_NS_DEFAULT;
static u64 neigh_mcast_solicit = NEIGH_MCAST_SOLICIT_DEFAULT;

static struct delayed_work neigh_gc_work; /* queues itself again every neigh_gc_interval */
static DEFINE_MUTEX(neigh_gc_mutex);	  /* orders interval changes */
static bool neigh_ready;		  /* neigh_init() ran: the gc is queued */

/* Per CPU, a line each; updated with interrupts off (any thread on the CPU may count). */
struct neigh_pcpu_stats {
	u64 v[NR_NEIGH_STATS];
};
static DEFINE_PER_CPU_ALIGNED(struct neigh_pcpu_stats, neigh_stats_pcpu);

static void neigh_stat_add(enum neigh_stat s, u64 v)
{
	unsigned long flags = arch_irq_save();
	struct neigh_pcpu_stats *mine = this_cpu_ptr(&neigh_stats_pcpu);
	WRITE_ONCE(mine->v[s], mine->v[s] + v);
	arch_irq_restore(flags);
}

u64 neigh_stat(enum neigh_stat s)
{
	u64 sum = 0;
	if (s == NEIGH_ENTRIES)
		return (u64)atomic_read(&neigh_entries);
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++)
		sum += READ_ONCE(per_cpu(neigh_stats_pcpu, cpu).v[s]);
	return sum;
}

static struct neigh_bucket *neigh_bucket_of(const struct net_device *dev, u32 ip)
{
	return &neigh_hash[hash_64(((uintptr_t)dev >> 4) ^ ((u64)ip << 16), NEIGH_HASH_BITS)];
}

/* Under b's lock. */
static struct neighbour *neigh_find_locked(struct neigh_bucket *b, const struct net_device *dev,
					   u32 ip)
{
	BUG_ON(!spin_is_locked(&b->lock));
	for (struct neighbour *n = b->first; n; n = n->next)
		if (n->dev == dev && n->ip == ip)
			return n;
	return NULL;
}

/* Push the Ethernet header for mac and hand skb to its device's qdisc. */
static int neigh_xmit(struct sk_buff *skb, const u8 *mac)
{
	struct net_device *dev = skb->dev;
	struct ethhdr *eth = skb_push(skb, ETH_HLEN);
	if (!eth) {
		kfree_skb(skb);
		return -EINVAL; /* no headroom: the sender did not reserve it */
	}
	memcpy(eth->h_dest, mac, ETH_ALEN);
	memcpy(eth->h_source, dev->mac, ETH_ALEN);
	eth->h_proto = htons(ETH_P_IP);
	skb->protocol = ETH_P_IP;
	return dev_queue_xmit(skb);
}

/* Send the packets that waited for mac (they are ours now: unlinked, no lock held). */
static void neigh_send_queue(struct sk_buff_head *q, const u8 *mac)
{
	struct sk_buff *skb;
	while ((skb = __skb_dequeue(q)) != NULL)
		neigh_xmit(skb, mac);
}

static void neigh_drop_queue(struct sk_buff_head *q, enum neigh_stat why)
{
	struct sk_buff *skb;
	while ((skb = __skb_dequeue(q)) != NULL) {
		kfree_skb(skb);
		neigh_stat_add(why, 1);
	}
}

static u64 neigh_retrans_jiffies(void)
{
	return ns_to_jiffies(READ_ONCE(neigh_retrans_ns));
}

/*
 * An INCOMPLETE entry's timer (Linux's neigh_timer_handler): one retrans time
 * after each request, send another, or, mcast_solicit requests sent, give up:
 * unlink the entry and drop its packets. An entry that was resolved meanwhile
 * needs nothing more; one the gc unlinked (dead) is freed here, its packets gone.
 */
static void neigh_probe_work_fn(struct work *w)
{
	struct neighbour *n = container_of(to_delayed_work(w), struct neighbour, probe_work);
	struct net_device *dev = n->dev;
	u32 ip = n->ip;
	struct neigh_bucket *b = neigh_bucket_of(dev, ip);
	struct sk_buff_head q;
	bool probe = false, failed = false, free = false;

	skb_queue_init(&q);
	spin_lock(&b->lock);
	if (n->dead) {
		free = true;
	} else if (n->state != NEIGH_INCOMPLETE) {
		n->armed = false; /* resolved: whoever unlinks it frees it */
	} else if (n->probes >= READ_ONCE(neigh_mcast_solicit)) {
		struct neighbour **pp = &b->first;
		while (*pp != n)
			pp = &(*pp)->next;
		*pp = n->next;
		atomic_dec(&neigh_entries);
		__skb_queue_splice_tail_init(&n->q, &q);
		failed = free = true;
	} else {
		n->probes++;
		probe = true;
		queue_delayed_work(&n->probe_work, neigh_retrans_jiffies());
	}
	spin_unlock(&b->lock);
	if (free) {
		neigh_drop_queue(&q, NEIGH_UNRESOLVED_DROPS);
		/* The workqueue touches no work item after its function returned. */
		kmem_cache_free(neigh_cache, n);
	}
	if (failed)
		neigh_stat_add(NEIGH_RESOLVE_FAILED, 1);
	if (probe) {
		neigh_stat_add(NEIGH_PROBES, 1);
		arp_send_request(dev, ip);
	}
}

/* Is n to go? INCOMPLETE ones past the resolve timeout always; forced: all the others. */
static bool neigh_expired(const struct neighbour *n, u64 now, bool forced)
{
	if (n->state == NEIGH_INCOMPLETE)
		return (s64)(now - n->updated_ns) > (s64)READ_ONCE(neigh_resolve_timeout_ns);
	u64 last = MAX(n->used_ns, n->updated_ns);
	return forced || (s64)(now - last) > (s64)READ_ONCE(neigh_gc_stale_ns);
}

static void neigh_gc_pass(bool forced)
{
	u64 now = arch_clock_ns(), freed = 0;
	for (unsigned i = 0; i < NEIGH_HASH_SIZE; i++) {
		struct neigh_bucket *b = &neigh_hash[i];
		struct neighbour *dead = NULL;
		struct sk_buff_head orphans; /* the packets of entries their probe work frees */
		if (!READ_ONCE(b->first))
			continue;
		skb_queue_init(&orphans);
		spin_lock(&b->lock);
		for (struct neighbour **pp = &b->first, *n; (n = *pp);) {
			if (!neigh_expired(n, now, forced)) {
				pp = &n->next;
				continue;
			}
			*pp = n->next;
			atomic_dec(&neigh_entries);
			freed++;
			if (n->armed) {
				n->dead = true;
				__skb_queue_splice_tail_init(&n->q, &orphans);
			} else {
				n->next = dead;
				dead = n;
			}
		}
		spin_unlock(&b->lock);
		neigh_drop_queue(&orphans, NEIGH_UNRESOLVED_DROPS);
		while (dead) {
			struct neighbour *next = dead->next;
			neigh_drop_queue(&dead->q, NEIGH_UNRESOLVED_DROPS);
			kmem_cache_free(neigh_cache, dead);
			dead = next;
		}
	}
	neigh_stat_add(forced ? NEIGH_FORCED_GC_RUNS : NEIGH_GC_RUNS, 1);
	neigh_stat_add(NEIGH_GC_FREED, freed);
}

void neigh_gc_run(void)
{
	neigh_gc_pass(false);
}

/*
 * Find (dev, ip) or make it, forcing a gc first when the table is full. Returns
 * with the entry's chain locked; *created says whether it is new (its state is
 * then the caller's to set). NULL (nothing locked) on ENOMEM.
 */
static struct neighbour *neigh_find_or_create(struct net_device *dev, u32 ip, bool *created)
{
	struct neigh_bucket *b = neigh_bucket_of(dev, ip);
	struct neighbour *n, *fresh;
	*created = false;
	spin_lock(&b->lock);
	n = neigh_find_locked(b, dev, ip);
	if (n)
		return n;
	spin_unlock(&b->lock);

	if ((u64)atomic_read(&neigh_entries) >= READ_ONCE(neigh_gc_thresh))
		neigh_gc_pass(true);
	fresh = kmem_cache_alloc(neigh_cache);
	if (!fresh)
		return NULL;
	memset(fresh, 0, sizeof(*fresh));
	fresh->dev = dev;
	fresh->ip = ip;
	skb_queue_init(&fresh->q);
	delayed_work_init(&fresh->probe_work, neigh_probe_work_fn);
	fresh->updated_ns = fresh->used_ns = arch_clock_ns();
	spin_lock(&b->lock);
	n = neigh_find_locked(b, dev, ip); /* another CPU's insert of the same key won the race */
	if (n) {
		kmem_cache_free(neigh_cache, fresh);
		return n;
	}
	fresh->next = b->first;
	b->first = fresh;
	atomic_inc(&neigh_entries);
	*created = true;
	return fresh;
}

int neigh_output(struct sk_buff *skb, u32 ip)
{
	static const u8 zero_mac[ETH_ALEN];
	struct net_device *dev = skb->dev;
	u8 mac[ETH_ALEN];
	bool created, probe;

	if (!dev) {
		kfree_skb(skb);
		return -EINVAL;
	}
	if (dev->flags & IFF_NOARP)
		return neigh_xmit(skb, zero_mac);

	struct neighbour *n = neigh_find_or_create(dev, ip, &created);
	if (!n) {
		kfree_skb(skb);
		return -ENOMEM;
	}
	struct neigh_bucket *b = neigh_bucket_of(dev, ip);
	u64 now = arch_clock_ns();
	if (n->state == NEIGH_REACHABLE) {
		memcpy(mac, n->mac, ETH_ALEN);
		if (now - n->used_ns > TICK_NSEC)
			n->used_ns = now;
		spin_unlock(&b->lock);
		return neigh_xmit(skb, mac);
	}
	/* INCOMPLETE: wait for the reply, dropping the oldest waiter when full (as Linux). */
	struct sk_buff *old = NULL;
	if (skb_queue_len(&n->q) == NEIGH_QUEUE_MAX)
		old = __skb_dequeue(&n->q);
	__skb_queue_tail(&n->q, skb);
	/* The first request now; the probe work sends the others (none for a packet). */
	probe = created;
	if (probe) {
		n->probes = 1;
		n->armed = true;
		queue_delayed_work(&n->probe_work, neigh_retrans_jiffies());
	}
	spin_unlock(&b->lock);
	neigh_stat_add(NEIGH_QUEUED, 1);
	if (old) {
		kfree_skb(old);
		neigh_stat_add(NEIGH_QUEUE_OVERFLOWS, 1);
	}
	if (probe) {
		neigh_stat_add(NEIGH_PROBES, 1);
		arp_send_request(dev, ip);
	}
	return 0;
}

/* Under n's chain lock: n is at mac now. Its waiting packets move to q, for the caller to send. */
static void neigh_confirm_locked(struct neighbour *n, const u8 *mac, struct sk_buff_head *q)
{
	memcpy(n->mac, mac, ETH_ALEN);
	n->state = NEIGH_REACHABLE;
	n->updated_ns = arch_clock_ns();
	__skb_queue_splice_tail_init(&n->q, q);
}

void neigh_update(struct net_device *dev, u32 ip, const u8 *mac, bool create)
{
	struct neigh_bucket *b = neigh_bucket_of(dev, ip);
	struct neighbour *n;
	bool created;

	if (create) {
		n = neigh_find_or_create(dev, ip, &created);
		if (!n)
			return; /* ENOMEM: the next request or reply tries again */
	} else {
		spin_lock(&b->lock);
		n = neigh_find_locked(b, dev, ip);
		if (!n) {
			spin_unlock(&b->lock);
			return;
		}
	}
	struct sk_buff_head q;
	skb_queue_init(&q);
	neigh_confirm_locked(n, mac, &q);
	spin_unlock(&b->lock);
	neigh_send_queue(&q, mac);
}

bool neigh_resolve(struct net_device *dev, u32 ip, const u8 *mac)
{
	struct neigh_bucket *b = neigh_bucket_of(dev, ip);
	spin_lock(&b->lock);
	struct neighbour *n = neigh_find_locked(b, dev, ip);
	if (!n || n->state != NEIGH_INCOMPLETE) {
		spin_unlock(&b->lock);
		return false;
	}
	struct sk_buff_head q;
	skb_queue_init(&q);
	neigh_confirm_locked(n, mac, &q);
	spin_unlock(&b->lock);
	neigh_send_queue(&q, mac);
	return true;
}

bool neigh_lookup(struct net_device *dev, u32 ip, u8 *mac)
{
	struct neigh_bucket *b = neigh_bucket_of(dev, ip);
	spin_lock(&b->lock);
	struct neighbour *n = neigh_find_locked(b, dev, ip);
	bool known = n && n->state == NEIGH_REACHABLE;
	if (known)
		memcpy(mac, n->mac, ETH_ALEN);
	spin_unlock(&b->lock);
	return known;
}

void neigh_for_each(void (*fn)(struct net_device *dev, u32 ip, const u8 *mac, bool complete,
			       void *arg),
		    void *arg)
{
	for (unsigned i = 0; i < NEIGH_HASH_SIZE; i++) {
		struct neigh_bucket *b = &neigh_hash[i];
		spin_lock(&b->lock);
		for (struct neighbour *n = b->first; n; n = n->next)
			fn(n->dev, n->ip, n->mac, n->state == NEIGH_REACHABLE, arg);
		spin_unlock(&b->lock);
	}
}

static void neigh_gc_work_fn(struct work *w)
{
	neigh_gc_run();
	queue_delayed_work(to_delayed_work(w), ns_to_jiffies(READ_ONCE(neigh_gc_interval_ns)));
}

void neigh_gc_get_params(struct neigh_gc_params *p)
{
	p->interval_ns = READ_ONCE(neigh_gc_interval_ns);
	p->thresh = READ_ONCE(neigh_gc_thresh);
	p->stale_ns = READ_ONCE(neigh_gc_stale_ns);
	p->resolve_timeout_ns = READ_ONCE(neigh_resolve_timeout_ns);
	p->retrans_ns = READ_ONCE(neigh_retrans_ns);
	p->mcast_solicit = READ_ONCE(neigh_mcast_solicit);
}

int neigh_gc_set_params(const struct neigh_gc_params *p)
{
	if (!p->interval_ns || p->retrans_ns < NSEC_PER_MSEC || !p->mcast_solicit ||
	    p->mcast_solicit > NEIGH_MCAST_SOLICIT_MAX)
		return -EINVAL;
	WRITE_ONCE(neigh_gc_thresh, p->thresh);
	WRITE_ONCE(neigh_gc_stale_ns, p->stale_ns);
	WRITE_ONCE(neigh_resolve_timeout_ns, p->resolve_timeout_ns);
	WRITE_ONCE(neigh_retrans_ns, p->retrans_ns);
	WRITE_ONCE(neigh_mcast_solicit, p->mcast_solicit);
	mutex_lock(&neigh_gc_mutex);
	if (p->interval_ns != READ_ONCE(neigh_gc_interval_ns)) {
		WRITE_ONCE(neigh_gc_interval_ns, p->interval_ns);
		/* A shorter interval takes effect now, not after the old one ran out. */
		if (neigh_ready) {
			cancel_delayed_work_sync(&neigh_gc_work);
			queue_delayed_work(&neigh_gc_work, ns_to_jiffies(p->interval_ns));
		}
	}
	mutex_unlock(&neigh_gc_mutex);
	return 0;
}

void neigh_init(void)
{
	struct neigh_gc_params p;
	neigh_cache =
	    kmem_cache_create("neighbour", sizeof(struct neighbour), 0, SLAB_FAILSLAB, NULL);
	if (!neigh_cache)
		panic("neigh: cannot create the neighbour cache");
	for (unsigned i = 0; i < NEIGH_HASH_SIZE; i++) {
		spin_lock_init_named(&neigh_hash[i].lock, "neigh_hash");
		neigh_hash[i].first = NULL;
	}
	neigh_gc_get_params(&p);
	p.interval_ns = net_cmdline_ms("neigh_gc_interval", p.interval_ns, 1);
	p.thresh = cmdline_get_uint("neigh_gc_thresh", p.thresh, 0, ~0ull);
	p.retrans_ns = net_cmdline_ms("neigh_retrans_time", p.retrans_ns, 1);
	p.mcast_solicit =
	    cmdline_get_uint("neigh_mcast_solicit", p.mcast_solicit, 1, NEIGH_MCAST_SOLICIT_MAX);
	neigh_gc_set_params(&p); /* cannot fail: each value was held to its range */
	delayed_work_init(&neigh_gc_work, neigh_gc_work_fn);
	queue_delayed_work(&neigh_gc_work, ns_to_jiffies(READ_ONCE(neigh_gc_interval_ns)));
	neigh_ready = true;
}
