/*
 * The IPv4 route cache: every (daddr, saddr, tos, oif) an output asked for,
 * with the FIB's answer, in a hash table of 2^RT_HASH_BITS chains. Output is
 * one hash, one walk of a short chain and, on a miss, one FIB lookup and one
 * insert; the FIB is never searched twice for a destination that is in use.
 *
 * rtcache=rcu: a lookup walks its chain inside the caller's rcu_read_lock()
 * with no lock and no store to any shared line (the hit counter is per CPU and
 * lastuse_ns moves only once per tick). Inserts and removals take the chain's
 * bit lock (list_bl: bit 0 of the head) and publish with release stores; a
 * removed entry is freed by call_rcu(), after every reader that could be on it
 * has left, which is what makes the lock-free walk safe.
 * rtcache=rwlock: the 2002 baseline. Lookups take the bucket's rwlock for
 * reading (a store to the bucket's line on every lookup, by every CPU), inserts
 * and removals take it for writing as well as the bit lock, and removed entries
 * are freed by the remover itself, with no call_rcu: it gathers what it removed,
 * waits once for a grace period (the callers of ip_route_output still hold the
 * entries they got, inside rcu_read_lock(), as route.h promises; 2.5.3 held
 * them by a reference count instead) and frees the batch.
 *
 * Switching is safe with lookups in flight, with nothing to wait for: every
 * change to a chain is an RCU-safe publish or unlink under the bit lock and
 * every free waits out the RCU readers, so a walk in either mode is safe against
 * a writer in either mode; the write_lock writers add in rwlock mode is the
 * baseline's cost, not what keeps its readers safe. A writer reads the mode once
 * and uses it for its lock and its unlock.
 *
 * The garbage collector runs every rt_gc_interval from a delayed work item (in
 * a worker, not the timer: gc takes the bucket locks, which threads also hold),
 * as 2.4's rt_check_expire and rt_garbage_collect did in one pass: it removes
 * entries idle for rt_gc_timeout and, while the cache holds more than
 * rt_gc_thresh entries, every entry past the first rt_gc_elasticity of a chain
 * (the oldest: inserts go at the head). A pass that finds the cache empty reads
 * no chain (gc_idle counts those).
 *
 * Lock order: a bucket's rwlock, then its bit lock; one bucket at a time.
 * rt_gc_mutex serializes changes of the gc's interval (each re-queues the gc);
 * the gc itself takes neither it nor anything under it.
 */
#include <grace/cmdline.h>
#include <grace/errno.h>
#include <grace/hash.h>
#include <grace/inet.h>
#include <grace/list_bl.h>
#include <grace/mutex.h>
#include <grace/percpu_counter.h>
#include <grace/printk.h>
#include <grace/rculist.h>
#include <grace/route.h>
#include <grace/rwlock.h>
#include <grace/slab.h>
#include <grace/string.h>
#include <grace/timer.h>
#include <grace/workqueue.h>

#include "internal.h"

/*
 * 4096 chains (64 KiB with their rwlocks): with rt_gc_thresh at the table size,
 * as 2.4's ip_rt_init set it, a chain holds about one entry before gc trims.
 */
#define RT_HASH_BITS 12
#define RT_HASH_SIZE (1u << RT_HASH_BITS)

/* The 2.4 defaults (net/ipv4/route.c, ip_rt_gc_*): 1 s interval, 5 s idle, elasticity 8. */
#define RT_GC_INTERVAL_NS_DEFAULT (1 * NSEC_PER_SEC)
#define RT_GC_TIMEOUT_NS_DEFAULT (5 * NSEC_PER_SEC)
#define RT_GC_THRESH_DEFAULT RT_HASH_SIZE
#define RT_GC_ELASTICITY_DEFAULT 8

/*
 * A bucket: its chain (bit 0 of the head: the writers' lock; walked under RCU)
 * and, in an array of their own so that the chains' heads form one span for
 * the lock validator, its rwlock (rtcache=rwlock: readers share it, writers
 * exclude them).
 */
static struct hlist_bl_head rt_hash_chain[RT_HASH_SIZE];
static rwlock_t rt_hash_lock[RT_HASH_SIZE];
static struct lock_class_key rt_hash_key;
static struct kmem_cache *rt_cachep;

static enum rtcache_mode rt_mode;   /* read once per lookup and per change */
static DEFINE_MUTEX(rt_mode_mutex); /* serializes rtcache_set_mode() */

/* The knobs: written by rt_gc_set_params() and the boot arguments, read by the gc. */
static u64 rt_gc_interval_ns = RT_GC_INTERVAL_NS_DEFAULT;
static u64 rt_gc_timeout_ns = RT_GC_TIMEOUT_NS_DEFAULT;
static u64 rt_gc_thresh = RT_GC_THRESH_DEFAULT;
static u64 rt_gc_elasticity = RT_GC_ELASTICITY_DEFAULT;

static struct delayed_work rt_gc_work; /* queues itself again every rt_gc_interval */
static bool rt_gc_ready;	       /* ip_rt_init() queued rt_gc_work */
static DEFINE_MUTEX(rt_gc_mutex);      /* orders interval changes */

/*
 * Per CPU, each on its own line. Updated with preemption off (inside the
 * lookup's RCU section or a bucket lock), so no other thread on the CPU
 * interleaves; nothing updates them from interrupts, so a plain add will do
 * (pcpu_counter_add()'s preemption toggle would be redundant on the lookup path).
 * They are read as grace/percpu_counter.h's counters. entries goes up where an
 * entry was inserted and down where it was removed (a CPU's copy wraps below
 * zero): only the sum means anything.
 */
struct rt_pcpu_stats {
	u64 entries, hits, misses, gc_runs, gc_freed, inserts, gc_idle;
};
static DEFINE_PER_CPU_ALIGNED(struct rt_pcpu_stats, rt_stats);

#define rt_stat_add(field, v) WRITE_ONCE(this_cpu(rt_stats).field, this_cpu(rt_stats).field + (v))

static inline unsigned rt_bucket_of(u32 daddr, u32 saddr, u8 tos, u32 oif)
{
	/* The second half of the key is mixed first, so that it cannot cancel the first. */
	return hash_64(((u64)daddr << 32 | saddr) ^ ((u64)tos << 32 | oif) * GOLDEN_RATIO_64,
		       RT_HASH_BITS);
}

static inline bool rt_key_eq(const struct rtable *rt, u32 daddr, u32 saddr, u8 tos, u32 oif)
{
	return rt->daddr == daddr && rt->saddr == saddr && rt->tos == tos && rt->oif == oif;
}

/* The bucket's writer side in the mode the caller read. */
static void rt_bucket_lock(unsigned b, enum rtcache_mode mode)
{
	if (mode == RTCACHE_RWLOCK)
		write_lock(&rt_hash_lock[b]);
	hlist_bl_lock(&rt_hash_chain[b]);
}

static void rt_bucket_unlock(unsigned b, enum rtcache_mode mode)
{
	hlist_bl_unlock(&rt_hash_chain[b]);
	if (mode == RTCACHE_RWLOCK)
		write_unlock(&rt_hash_lock[b]);
}

static void rt_free_rcu(struct rcu_head *head)
{
	struct rtable *rt = container_of(head, struct rtable, rcu);
	/* Last: a reader that still held rt (a bug) sees the magic gone. */
	WRITE_ONCE(rt->magic, 0);
	kmem_cache_free(rt_cachep, rt);
}

/*
 * Entries removed by one pass (gc, flush), to be freed once no reader can be on
 * them: a list through their rcu heads.
 */
struct rt_free_batch {
	struct rcu_head *first;
	u64 n;
};

/* Under rt's bucket lock: unlink it and queue it for freeing. */
static void rt_remove_locked(unsigned b, struct rtable *rt, struct rt_free_batch *batch)
{
	BUG_ON(!hlist_bl_is_locked(&rt_hash_chain[b]));
	hlist_bl_del_rcu(&rt->hash);
	rt_stat_add(entries, -1);
	rt->rcu.next = batch->first;
	batch->first = &rt->rcu;
	batch->n++;
}

/*
 * Free what a pass removed: through call_rcu in rcu mode (the callbacks run
 * after a grace period), by the remover after one synchronize_rcu() in rwlock
 * mode. Thread context: it may sleep.
 */
static void rt_free_batch(struct rt_free_batch *batch, enum rtcache_mode mode)
{
	struct rcu_head *h, *next;
	if (!batch->first)
		return;
	if (mode == RTCACHE_RWLOCK)
		synchronize_rcu();
	for (h = batch->first; h; h = next) {
		next = h->next;
		if (mode == RTCACHE_RWLOCK)
			rt_free_rcu(h);
		else
			call_rcu(h, rt_free_rcu);
	}
	batch->first = NULL;
}

/* In b, under RCU or b's read lock: the entry for the key, or NULL. */
static struct rtable *rt_find(unsigned b, u32 daddr, u32 saddr, u8 tos, u32 oif)
{
	struct rtable *rt;
	hlist_bl_for_each_entry_rcu(rt, &rt_hash_chain[b], hash)
	{
		if (rt_key_eq(rt, daddr, saddr, tos, oif))
			return rt;
	}
	return NULL;
}

/* Mark rt used, storing only when the mark moved by more than a tick: no line per lookup. */
static inline void rt_touch(struct rtable *rt)
{
	u64 now = arch_clock_ns();
	if ((s64)(now - READ_ONCE(rt->lastuse_ns)) > (s64)TICK_NSEC)
		WRITE_ONCE(rt->lastuse_ns, now);
}

/* A miss: ask the FIB, and insert its answer unless a racing miss on another CPU already did. */
static int rt_insert(unsigned b, u32 daddr, u32 saddr, u8 tos, u32 oif, struct rtable **out)
{
	struct net_device *dev;
	u32 nexthop;
	int err = fib_lookup_oif(daddr, oif, &nexthop, &dev);
	if (err)
		return err;
	struct rtable *rt = kmem_cache_alloc(rt_cachep);
	if (!rt)
		return -ENOMEM;
	rt->daddr = daddr;
	rt->saddr = saddr;
	rt->tos = tos;
	rt->oif = oif;
	rt->gateway = nexthop;
	rt->dev = dev;
	rt->lastuse_ns = arch_clock_ns();
	rt->magic = RT_MAGIC;
	hlist_bl_init_node(&rt->hash);

	enum rtcache_mode mode = READ_ONCE(rt_mode);
	rt_bucket_lock(b, mode);
	struct rtable *found = rt_find(b, daddr, saddr, tos, oif);
	if (!found) {
		hlist_bl_add_head_rcu(&rt->hash, &rt_hash_chain[b]); /* rt's fields before rt */
		rt_stat_add(entries, 1);
		rt_stat_add(inserts, 1);
	}
	rt_bucket_unlock(b, mode);
	if (found) {
		/* Never published: no reader can hold it. */
		rt->magic = 0;
		kmem_cache_free(rt_cachep, rt);
		rt = found;
	}
	*out = rt;
	return 0;
}

int ip_route_output(u32 daddr, u32 saddr, u8 tos, u32 oif, struct rtable **out)
{
	unsigned b = rt_bucket_of(daddr, saddr, tos, oif);
	struct rtable *rt;

	if (READ_ONCE(rt_mode) == RTCACHE_RCU) {
		rt = rt_find(b, daddr, saddr, tos, oif);
		if (rt)
			rt_touch(rt);
	} else {
		read_lock(&rt_hash_lock[b]);
		rt = rt_find(b, daddr, saddr, tos, oif);
		if (rt)
			rt_touch(rt);
		read_unlock(&rt_hash_lock[b]);
	}
	if (rt) {
		rt_stat_add(hits, 1);
		*out = rt;
		return 0;
	}
	rt_stat_add(misses, 1);
	return rt_insert(b, daddr, saddr, tos, oif, out);
}

/*
 * One chain: remove what is idle past timeout and, when trim, what lies past the
 * first elasticity entries. With flush, everything.
 */
static void rt_gc_bucket(unsigned b, enum rtcache_mode mode, u64 now, bool flush, bool trim,
			 struct rt_free_batch *batch)
{
	u64 timeout = READ_ONCE(rt_gc_timeout_ns), elasticity = READ_ONCE(rt_gc_elasticity);
	u64 kept = 0;
	if (!hlist_bl_first_rcu(&rt_hash_chain[b]))
		return;	   /* an empty chain costs a load, not a lock */
	preempt_disable(); /* the per-CPU entries count */
	rt_bucket_lock(b, mode);
	struct hlist_bl_node *n = hlist_bl_first(&rt_hash_chain[b]), *next;
	for (; n; n = next) {
		struct rtable *rt = container_of(n, struct rtable, hash);
		next = n->next;
		/* Signed: a lookup since `now` was read may have moved lastuse past it. */
		if (flush || (s64)(now - READ_ONCE(rt->lastuse_ns)) > (s64)timeout ||
		    (trim && kept >= elasticity))
			rt_remove_locked(b, rt, batch);
		else
			kept++;
	}
	rt_bucket_unlock(b, mode);
	preempt_enable();
}

static u64 rt_entries(void)
{
	struct rt_pcpu_stats sum;
	pcpu_counters_sum(&sum, &rt_stats, sizeof(sum));
	/* Below zero only while an insert on one CPU is summed before its removal on another. */
	return (s64)sum.entries > 0 ? sum.entries : 0;
}

static void rt_gc_pass(bool flush)
{
	enum rtcache_mode mode = READ_ONCE(rt_mode);
	struct rt_free_batch batch = {NULL, 0};
	u64 entries = rt_entries();
	if (!flush && !entries) {
		/*
		 * Nothing cached, so nothing to expire: the periodic pass reads no chain,
		 * where a machine with no traffic (a benchmark's) would spend 4096 loads
		 * every interval on one of its CPUs. An insert the sum missed waits for the
		 * next pass, as an entry made just after a pass does.
		 */
		preempt_disable();
		rt_stat_add(gc_runs, 1);
		rt_stat_add(gc_idle, 1);
		preempt_enable();
		return;
	}
	bool trim = !flush && entries > READ_ONCE(rt_gc_thresh);
	u64 now = arch_clock_ns();
	for (unsigned i = 0; i < RT_HASH_SIZE; i++)
		rt_gc_bucket(i, mode, now, flush, trim, &batch);
	preempt_disable();
	if (!flush) {
		rt_stat_add(gc_runs, 1);
		rt_stat_add(gc_freed, batch.n);
	}
	preempt_enable();
	rt_free_batch(&batch, mode);
}

void rt_gc_run(void)
{
	rt_gc_pass(false);
}

void rt_cache_flush(void)
{
	rt_gc_pass(true);
}

static void rt_gc_work_fn(struct work *w)
{
	rt_gc_run();
	queue_delayed_work(to_delayed_work(w), ns_to_jiffies(READ_ONCE(rt_gc_interval_ns)));
}

void rt_gc_get_params(struct rt_gc_params *p)
{
	p->interval_ns = READ_ONCE(rt_gc_interval_ns);
	p->timeout_ns = READ_ONCE(rt_gc_timeout_ns);
	p->thresh = READ_ONCE(rt_gc_thresh);
	p->elasticity = READ_ONCE(rt_gc_elasticity);
}

int rt_gc_set_params(const struct rt_gc_params *p)
{
	if (!p->interval_ns)
		return -EINVAL;
	WRITE_ONCE(rt_gc_timeout_ns, p->timeout_ns);
	WRITE_ONCE(rt_gc_thresh, p->thresh);
	WRITE_ONCE(rt_gc_elasticity, p->elasticity);
	mutex_lock(&rt_gc_mutex);
	if (p->interval_ns != READ_ONCE(rt_gc_interval_ns)) {
		WRITE_ONCE(rt_gc_interval_ns, p->interval_ns);
		/* A shorter interval takes effect now, not after the old one ran out. */
		if (rt_gc_ready) {
			cancel_delayed_work_sync(&rt_gc_work);
			queue_delayed_work(&rt_gc_work, ns_to_jiffies(p->interval_ns));
		}
	}
	mutex_unlock(&rt_gc_mutex);
	return 0;
}

void rtcache_set_mode(enum rtcache_mode mode)
{
	/* Nothing to wait for: see the top of the file. The mutex orders concurrent switches. */
	mutex_lock(&rt_mode_mutex);
	WRITE_ONCE(rt_mode, mode);
	mutex_unlock(&rt_mode_mutex);
}

enum rtcache_mode rtcache_get_mode(void)
{
	return READ_ONCE(rt_mode);
}

static const char *const rtcache_mode_names[] = {
    [RTCACHE_RCU] = "rcu", [RTCACHE_RWLOCK] = "rwlock"};

const char *rtcache_mode_name(enum rtcache_mode mode)
{
	return rtcache_mode_names[mode];
}

void rt_cache_stats(struct rt_cache_stats *s)
{
	struct rt_pcpu_stats sum;
	pcpu_counters_sum(&sum, &rt_stats, sizeof(sum));
	s->hits = sum.hits;
	s->misses = sum.misses;
	s->gc_runs = sum.gc_runs;
	s->gc_freed = sum.gc_freed;
	s->inserts = sum.inserts;
	s->entries = (s64)sum.entries > 0 ? sum.entries : 0;
	s->gc_idle = sum.gc_idle;
}

void rt_cache_for_each(void (*fn)(const struct rtable *rt, void *arg), void *arg)
{
	struct rtable *rt;
	rcu_read_lock();
	for (unsigned i = 0; i < RT_HASH_SIZE; i++)
		hlist_bl_for_each_entry_rcu(rt, &rt_hash_chain[i], hash)
		{
			fn(rt, arg);
		}
	rcu_read_unlock();
}

static void rt_apply_cmdline(void)
{
	struct rt_gc_params p;
	rt_gc_get_params(&p);
	p.interval_ns = net_cmdline_ms("rt_gc_interval", p.interval_ns, 1);
	p.timeout_ns = net_cmdline_ms("rt_gc_timeout", p.timeout_ns, 0);
	p.thresh = cmdline_get_uint("rt_gc_thresh", p.thresh, 0, ~0ull);
	p.elasticity = cmdline_get_uint("rt_gc_elasticity", p.elasticity, 0, ~0ull);
	rt_gc_set_params(&p); /* cannot fail: the interval is at least 1 ms */
	rtcache_set_mode(cmdline_get_choice("rtcache", rtcache_mode_names,
					    ARRAY_SIZE(rtcache_mode_names), RTCACHE_RCU));
}

u64 net_cmdline_ms(const char *key, u64 ns, u64 min_ms)
{
	if (!cmdline_get(key))
		return ns; /* absent: kept to the nanosecond, not rounded to a millisecond */
	return cmdline_get_uint(key, ns / NSEC_PER_MSEC, min_ms, ~0ull / NSEC_PER_MSEC) *
	       NSEC_PER_MSEC;
}

void ip_rt_init(void)
{
	for (unsigned i = 0; i < RT_HASH_SIZE; i++) {
		hlist_bl_init_head(&rt_hash_chain[i]);
		rwlock_init(&rt_hash_lock[i]);
	}
	bit_spin_lock_set_class(rt_hash_chain, sizeof(rt_hash_chain), &rt_hash_key,
				"rt_hash_chain");
	rt_cachep = kmem_cache_create("rtable", sizeof(struct rtable), 0, SLAB_FAILSLAB, NULL);
	if (!rt_cachep)
		panic("route: cannot create the rtable cache");
	delayed_work_init(&rt_gc_work, rt_gc_work_fn);
	rt_apply_cmdline(); /* before the gc is queued: its interval is set, not re-queued */
	queue_delayed_work(&rt_gc_work, ns_to_jiffies(READ_ONCE(rt_gc_interval_ns)));
	rt_gc_ready = true;
}
