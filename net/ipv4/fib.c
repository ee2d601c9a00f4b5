/*
 * The IPv4 forwarding information base: the routes the shell or the network
 * setup added, searched by longest prefix match. It is the route cache's slow
 * path, consulted once per cache miss, and holds a handful of routes, so it is an
 * array sorted by prefix length, longest first: the first match is the longest,
 * and a scan of a few entries beats any trie at this size.
 *
 * Readers take no lock: the array is published with rcu_assign_pointer() and
 * read inside rcu_read_lock(). A change (fib_add, fib_del) takes fib_mutex,
 * builds a new array, publishes it and frees the old one after a grace period,
 * so a reader sees the whole table before or after the change, never half of it.
 */
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/mutex.h>
#include <grace/netdevice.h>
#include <grace/printk.h>
#include <grace/rcupdate.h>
#include <grace/route.h>
#include <grace/slab.h>
#include <grace/string.h>

#include "internal.h"

struct fib_entry {
	u32 prefix, mask; /* network order */
	u32 gateway;	  /* network order; 0: on-link */
	unsigned len;
	struct net_device *dev;
};

struct fib_table {
	struct rcu_head rcu;
	unsigned nr;
	struct fib_entry e[]; /* by len, longest first; equal lengths in insertion order */
};

static DEFINE_MUTEX(fib_mutex);	      /* serializes changes */
static struct fib_table *fib_current; /* fib_mutex to replace; readers under RCU */

/* The netmask of a prefix length, in network order (len 0: 0, matching everything). */
static u32 fib_mask(unsigned len)
{
	return len ? htonl(~0u << (32 - len)) : 0;
}

static int fib_check(u32 prefix, unsigned len)
{
	if (len > 32 || (prefix & ~fib_mask(len)))
		return -EINVAL;
	return 0;
}

static struct fib_table *fib_table_alloc(unsigned nr)
{
	struct fib_table *t = kzalloc(sizeof(*t) + nr * sizeof(t->e[0]));
	if (t)
		t->nr = nr;
	return t;
}

/* Under fib_mutex: where prefix/len is in t, or -1. */
static int fib_find_locked(const struct fib_table *t, u32 prefix, unsigned len)
{
	BUG_ON(!mutex_is_mine(&fib_mutex));
	for (unsigned i = 0; t && i < t->nr; i++)
		if (t->e[i].len == len && t->e[i].prefix == prefix)
			return i;
	return -1;
}

/* Under fib_mutex: publish t in place of the current table, whose memory waits out the readers. */
static void fib_replace_locked(struct fib_table *t)
{
	struct fib_table *old = rcu_dereference_protected(fib_current);
	rcu_assign_pointer(fib_current, t); /* t's entries before t: pairs with rcu_dereference */
	if (old)
		kfree_rcu(old, rcu);
}

int fib_add(u32 prefix, unsigned len, u32 gateway, struct net_device *dev)
{
	int err = fib_check(prefix, len);
	if (err)
		return err;
	if (!dev)
		return -EINVAL;
	mutex_lock(&fib_mutex);
	struct fib_table *old = rcu_dereference_protected(fib_current);
	unsigned nr = old ? old->nr : 0, at = 0;
	if (fib_find_locked(old, prefix, len) >= 0) {
		mutex_unlock(&fib_mutex);
		return -EEXIST;
	}
	struct fib_table *t = fib_table_alloc(nr + 1);
	if (!t) {
		mutex_unlock(&fib_mutex);
		return -ENOMEM;
	}
	/* After every route at least as long: the order the lookup's first match relies on. */
	while (at < nr && old->e[at].len >= len)
		at++;
	if (nr)
		memcpy(t->e, old->e, at * sizeof(t->e[0]));
	t->e[at] = (struct fib_entry){prefix, fib_mask(len), gateway, len, dev};
	if (nr > at)
		memcpy(&t->e[at + 1], &old->e[at], (nr - at) * sizeof(t->e[0]));
	fib_replace_locked(t);
	mutex_unlock(&fib_mutex);
	return 0;
}

/* Delete prefix/len; only if it is on-link through dev when dev is not NULL. */
static int fib_del_match(u32 prefix, unsigned len, struct net_device *dev)
{
	int err = fib_check(prefix, len);
	if (err)
		return err;
	mutex_lock(&fib_mutex);
	struct fib_table *old = rcu_dereference_protected(fib_current);
	int at = fib_find_locked(old, prefix, len);
	if (at < 0 || (dev && (old->e[at].dev != dev || old->e[at].gateway))) {
		mutex_unlock(&fib_mutex);
		return -ENOENT;
	}
	struct fib_table *t = fib_table_alloc(old->nr - 1);
	if (!t) {
		mutex_unlock(&fib_mutex);
		return -ENOMEM;
	}
	memcpy(t->e, old->e, at * sizeof(t->e[0]));
	memcpy(&t->e[at], &old->e[at + 1], (old->nr - at - 1) * sizeof(t->e[0]));
	fib_replace_locked(t);
	mutex_unlock(&fib_mutex);
	return 0;
}

int fib_del(u32 prefix, unsigned len)
{
	return fib_del_match(prefix, len, NULL);
}

int fib_del_dev(u32 prefix, unsigned len, struct net_device *dev)
{
	return fib_del_match(prefix, len, dev);
}

int fib_lookup_oif(u32 daddr, u32 oif, u32 *nexthop, struct net_device **dev)
{
	int err = -ENETUNREACH;
	rcu_read_lock();
	const struct fib_table *t = rcu_dereference(fib_current);
	for (unsigned i = 0; t && i < t->nr; i++) {
		const struct fib_entry *e = &t->e[i];
		if ((daddr & e->mask) != e->prefix || (oif && e->dev->ifindex != oif))
			continue;
		*nexthop = e->gateway ? e->gateway : daddr;
		*dev = e->dev;
		err = 0;
		break;
	}
	rcu_read_unlock();
	return err;
}

int fib_lookup(u32 daddr, u32 *gateway, struct net_device **dev)
{
	return fib_lookup_oif(daddr, 0, gateway, dev);
}

void fib_for_each(void (*fn)(u32 prefix, unsigned len, u32 gateway, struct net_device *dev,
			     void *arg),
		  void *arg)
{
	rcu_read_lock();
	const struct fib_table *t = rcu_dereference(fib_current);
	for (unsigned i = 0; t && i < t->nr; i++)
		fn(t->e[i].prefix, t->e[i].len, t->e[i].gateway, t->e[i].dev, arg);
	rcu_read_unlock();
}
