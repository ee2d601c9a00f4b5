/*
 * The routing and neighbour shell commands: the FIB (`route`), the route cache's
 * mode and counts (`rtcache`), the neighbour table (`arp`), and each gc knob under
 * its boot argument's name, so that what a boot can set a prompt can too.
 */
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/neighbour.h>
#include <grace/netdevice.h>
#include <grace/printk.h>
#include <grace/route.h>
#include <grace/shell.h>
#include <grace/string.h>
#include <grace/time.h>

/* "a.b.c.d[/n]" into *ip (network order) and *len (32 without "/n"). */
static bool route_parse_prefix(const char *s, u32 *ip, unsigned *len)
{
	char addr[20]; /* four parts of up to four digits (inet_parse_addr's), three dots */
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	u64 bits = 32;

	if (n >= sizeof(addr) || (slash && (parse_u64(slash + 1, &bits) || bits > 32)))
		return false;
	memcpy(addr, s, n);
	addr[n] = '\0';
	*len = (unsigned)bits;
	return !inet_parse_addr(addr, ip);
}

static void route_show_one(u32 prefix, unsigned len, u32 gateway, struct net_device *dev, void *arg)
{
	char p[INET_ADDRSTRLEN], g[INET_ADDRSTRLEN];
	(void)arg;
	if (gateway)
		printk("%s/%u via %s dev %s\n", inet_format_addr(prefix, p), len,
		       inet_format_addr(gateway, g), dev->name);
	else
		printk("%s/%u dev %s\n", inet_format_addr(prefix, p), len, dev->name);
}

static void route_show_cached(const struct rtable *rt, void *arg)
{
	char d[INET_ADDRSTRLEN], s[INET_ADDRSTRLEN], g[INET_ADDRSTRLEN];
	(void)arg;
	printk("cache %s from %s tos %u oif %u via %s dev %s\n", inet_format_addr(rt->daddr, d),
	       inet_format_addr(rt->saddr, s), rt->tos, rt->oif, inet_format_addr(rt->gateway, g),
	       rt->dev ? rt->dev->name : "-");
}

SHELL_CMD(route, "[add <a.b.c.d/n> [via <a.b.c.d>] dev <name> | del <a.b.c.d/n>]",
	  "show the FIB and the route cache's entries, or add or delete a route (which flushes "
	  "the cache)")
{
	u32 prefix, gateway = 0;
	unsigned len;
	struct net_device *dev = NULL;
	int err;

	if (argc == 1) {
		fib_for_each(route_show_one, NULL);
		rt_cache_for_each(route_show_cached, NULL);
		return 0;
	}
	if (argc < 3 || !route_parse_prefix(argv[2], &prefix, &len))
		return SHELL_USAGE;
	if (!strcmp(argv[1], "del") && argc == 3) {
		err = fib_del(prefix, len);
	} else if (!strcmp(argv[1], "add")) {
		for (int i = 3; i + 1 < argc; i += 2) {
			if (!strcmp(argv[i], "via") && !inet_parse_addr(argv[i + 1], &gateway))
				continue;
			if (!strcmp(argv[i], "dev") && (dev = dev_get_by_name(argv[i + 1])))
				continue;
			printk("route: %s %s: not a gateway address or a device\n", argv[i],
			       argv[i + 1]);
			return 1;
		}
		if (!dev || argc % 2 == 0)
			return SHELL_USAGE;
		err = fib_add(prefix, len, gateway, dev);
	} else {
		return SHELL_USAGE;
	}
	if (err) {
		printk("route: %s %s: %s\n", argv[1], argv[2], errno_name(err));
		return 1;
	}
	rt_cache_flush();
	return 0;
}

SHELL_CMD(rtcache, "[rcu|rwlock|flush]",
	  "the route cache's counts; switch its lookups (boot argument rtcache=), or empty it")
{
	struct rt_cache_stats s;
	if (argc > 2)
		return SHELL_USAGE;
	if (argc == 2) {
		if (!strcmp(argv[1], "rcu"))
			rtcache_set_mode(RTCACHE_RCU);
		else if (!strcmp(argv[1], "rwlock"))
			rtcache_set_mode(RTCACHE_RWLOCK);
		else if (!strcmp(argv[1], "flush"))
			rt_cache_flush();
		else
			return SHELL_USAGE;
	}
	rt_cache_stats(&s);
	printk("rtcache: %s entries=%llu hits=%llu misses=%llu inserts=%llu gc_runs=%llu "
	       "gc_freed=%llu gc_idle=%llu\n",
	       rtcache_mode_name(rtcache_get_mode()), s.entries, s.hits, s.misses, s.inserts,
	       s.gc_runs, s.gc_freed, s.gc_idle);
	return 0;
}

static void arp_show_one(struct net_device *dev, u32 ip, const u8 *mac, bool complete, void *arg)
{
	char a[INET_ADDRSTRLEN];
	(void)arg;
	inet_format_addr(ip, a);
	if (complete)
		printk("%s at %02x:%02x:%02x:%02x:%02x:%02x dev %s reachable\n", a, mac[0], mac[1],
		       mac[2], mac[3], mac[4], mac[5], dev->name);
	else
		printk("%s at (incomplete) dev %s incomplete\n", a, dev->name);
}

SHELL_CMD(arp, "", "the neighbour (ARP) table, then its counts")
{
	if (argc != 1)
		return SHELL_USAGE;
	neigh_for_each(arp_show_one, NULL);
	printk("arp: entries=%llu forced_gc=%llu queued=%llu unresolved_drops=%llu probes=%llu "
	       "failed=%llu\n",
	       neigh_stat(NEIGH_ENTRIES), neigh_stat(NEIGH_FORCED_GC_RUNS),
	       neigh_stat(NEIGH_QUEUED), neigh_stat(NEIGH_UNRESOLVED_DROPS),
	       neigh_stat(NEIGH_PROBES), neigh_stat(NEIGH_RESOLVE_FAILED));
	return 0;
}

/* A knob of either table: its name (the boot argument's), where it lives, its unit. */
enum knob_table { KNOB_RT, KNOB_NEIGH };
struct net_knob {
	enum knob_table table;
	size_t offset; /* of the u64 in struct rt_gc_params or struct neigh_gc_params */
	bool ms;       /* shown and set in ms, kept in ns */
};

static int net_knob_cmd(const struct net_knob *k, int argc, char **argv)
{
	struct rt_gc_params rp;
	struct neigh_gc_params np;
	void *params = k->table == KNOB_RT ? (void *)&rp : (void *)&np;
	u64 *v, n;

	if (argc > 2)
		return SHELL_USAGE;
	rt_gc_get_params(&rp);
	neigh_gc_get_params(&np);
	v = (u64 *)((char *)params + k->offset);
	if (argc == 2) {
		if (parse_u64(argv[1], &n) || (k->ms && n > ~0ull / NSEC_PER_MSEC)) {
			printk("%s: %s: not a number\n", argv[0], argv[1]);
			return 1;
		}
		*v = k->ms ? n * NSEC_PER_MSEC : n;
		int err = k->table == KNOB_RT ? rt_gc_set_params(&rp) : neigh_gc_set_params(&np);
		if (err) {
			printk("%s: %s: %s\n", argv[0], argv[1], errno_name(err));
			return 1;
		}
	}
	printk("%s: %llu%s\n", argv[0], k->ms ? *v / NSEC_PER_MSEC : *v, k->ms ? " ms" : "");
	return 0;
}

#define NET_KNOB_CMD(name, tbl, type, field, is_ms, help)                                          \
	SHELL_CMD(name, is_ms ? "[<ms>]" : "[<n>]", help)                                          \
	{                                                                                          \
		static const struct net_knob k = {tbl, offsetof(type, field), is_ms};              \
		return net_knob_cmd(&k, argc, argv);                                               \
	}

NET_KNOB_CMD(rt_gc_interval, KNOB_RT, struct rt_gc_params, interval_ns, true,
	     "show or set how often the route cache's gc runs")
NET_KNOB_CMD(rt_gc_timeout, KNOB_RT, struct rt_gc_params, timeout_ns, true,
	     "show or set how long a route-cache entry may sit idle")
NET_KNOB_CMD(rt_gc_thresh, KNOB_RT, struct rt_gc_params, thresh, false,
	     "show or set the entries above which the route cache's gc trims chains")
NET_KNOB_CMD(rt_gc_elasticity, KNOB_RT, struct rt_gc_params, elasticity, false,
	     "show or set the entries a trimmed route-cache chain keeps")
NET_KNOB_CMD(neigh_gc_interval, KNOB_NEIGH, struct neigh_gc_params, interval_ns, true,
	     "show or set how often the neighbour table's gc runs")
NET_KNOB_CMD(neigh_gc_thresh, KNOB_NEIGH, struct neigh_gc_params, thresh, false,
	     "show or set the entries at which an insert forces a neighbour gc")
NET_KNOB_CMD(neigh_retrans_time, KNOB_NEIGH, struct neigh_gc_params, retrans_ns, true,
	     "show or set how long an unanswered ARP request waits before the next")
NET_KNOB_CMD(neigh_mcast_solicit, KNOB_NEIGH, struct neigh_gc_params, mcast_solicit, false,
	     "show or set the unanswered ARP requests after which resolving gives up")
