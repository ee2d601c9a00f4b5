/*
 * IPv4 routing: the FIB, a table of prefixes searched by longest match (the slow
 * path), under a route cache keyed by (daddr, saddr, tos, oif) that answers the
 * common case.
 *
 * rtcache=rcu (default): lookups walk a bucket under rcu_read_lock(), take no
 * lock and write no shared line; the entry they return is valid until
 * rcu_read_unlock() (no reference is taken). Inserts and deletes take the
 * bucket's lock; a removed entry is freed with call_rcu().
 * rtcache=rwlock: the 2002 baseline, the same table read under a reader-writer
 * lock per bucket (read_lock on every lookup: a store to a shared line).
 *
 * A timer-driven garbage collector expires entries idle for rt_gc_timeout and,
 * when the cache holds more than rt_gc_thresh entries, trims chains longer than
 * rt_gc_elasticity, every rt_gc_interval (boot arguments and runtime settings
 * of those names, as in the 2002 thread's tuned runs).
 */
#ifndef GRACE_ROUTE_H
#define GRACE_ROUTE_H

#include <grace/list_bl.h>
#include <grace/rcupdate.h>
#include <grace/types.h>

struct net_device;

/* The key and the FIB's answer are written before the entry is published and never after. */
struct rtable {
	u32 daddr, saddr; /* network order */
	u8 tos;
	u32 oif;     /* output interface asked for, 0: any */
	u32 gateway; /* next hop (network order): daddr when on-link */
	struct net_device *dev;
	u64 lastuse_ns; /* written only when it moved by more than a tick: no line per lookup */
	/* route.c's: */
	struct hlist_bl_node hash; /* its chain's bit lock; readers under RCU */
	struct rcu_head rcu;	   /* the deferred free */
	u32 magic;		   /* RT_MAGIC from allocation until the free: 0 in a freed entry */
};
#define RT_MAGIC 0x72746162u /* "rtab" */

/*
 * Add a route: prefix/len via gateway (0: on-link) out of dev. 0 or -errno (-EEXIST,
 * -ENOMEM; -EINVAL for len > 32, host bits set in prefix, or no dev). Thread context.
 */
int fib_add(u32 prefix, unsigned len, u32 gateway, struct net_device *dev);
/* 0, -EINVAL as fib_add, -ENOENT for no such route. Thread context. */
int fib_del(u32 prefix, unsigned len);
/* The same, but only the on-link route through dev (an address's own route); else -ENOENT. */
int fib_del_dev(u32 prefix, unsigned len, struct net_device *dev);
/*
 * The longest match for daddr: 0 with *gateway (the next hop: daddr when on-link)
 * and *dev set, or -ENETUNREACH. Any context.
 */
int fib_lookup(u32 daddr, u32 *gateway, struct net_device **dev);
/* Call fn on every route, longest prefix first, inside rcu_read_lock() (fn must not sleep). */
void fib_for_each(void (*fn)(u32 prefix, unsigned len, u32 gateway, struct net_device *dev,
			     void *arg),
		  void *arg);

/*
 * The route for (daddr, saddr, tos, oif), from the cache or, on a miss, from the
 * FIB (then cached). Call inside rcu_read_lock(): the entry lasts until
 * rcu_read_unlock(). 0 with *rt set, or -errno (-ENETUNREACH, -ENOMEM).
 */
int ip_route_output(u32 daddr, u32 saddr, u8 tos, u32 oif, struct rtable **rt);
/* Empty the cache (after a FIB change). Thread context: it may wait for a grace period. */
void rt_cache_flush(void);

enum rtcache_mode { RTCACHE_RCU, RTCACHE_RWLOCK };
void rtcache_set_mode(enum rtcache_mode mode);
enum rtcache_mode rtcache_get_mode(void);
const char *rtcache_mode_name(enum rtcache_mode mode); /* "rcu", "rwlock" */

struct rt_cache_stats {
	u64 entries, hits, misses, gc_runs, gc_freed, inserts;
	u64 gc_idle; /* of gc_runs, those that found the cache empty and read no chain */
};
void rt_cache_stats(struct rt_cache_stats *s);
/* Call fn on every cached entry inside rcu_read_lock() (fn must not sleep): shell, tests. */
void rt_cache_for_each(void (*fn)(const struct rtable *rt, void *arg), void *arg);

/* The gc's knobs: boot arguments rt_gc_interval=<ms> rt_gc_timeout=<ms> rt_gc_thresh=<n>
 * rt_gc_elasticity=<n>, and these. -EINVAL for a zero interval. */
struct rt_gc_params {
	u64 interval_ns, timeout_ns, thresh, elasticity;
};
void rt_gc_get_params(struct rt_gc_params *p);
int rt_gc_set_params(const struct rt_gc_params *p);
/* One gc pass now, as the timer's (thread context). */
void rt_gc_run(void);

/* Boot: the table, the cache of entries, the boot arguments, the gc timer. */
void ip_rt_init(void);

#endif
