/*
 * The neighbour table: IPv4 address to MAC (the ARP cache), per device. An
 * entry is INCOMPLETE while its ARP request is out (packets wait on it, a few
 * at most), REACHABLE once a reply came. A timer-driven gc frees entries unused
 * for gc_stale_ns every gc_interval; an insert that finds more than gc_thresh
 * entries forces a gc first, as the 2002 thread's "gc" rows (boot arguments and
 * runtime settings neigh_gc_thresh, neigh_gc_interval).
 */
#ifndef GRACE_NEIGHBOUR_H
#define GRACE_NEIGHBOUR_H

#include <grace/netdevice.h>
#include <grace/types.h>

/*
 * Send skb (an IPv4 packet, skb->dev set) to next hop ip: with the MAC known,
 * the Ethernet header is pushed and it goes to dev_queue_xmit(); else it waits
 * for the ARP reply (an ARP request is sent). 0 or -errno (skb freed).
 */
int neigh_output(struct sk_buff *skb, u32 ip);
/* An ARP reply or request told us ip is at mac on dev: update (or create, if asked). */
void neigh_update(struct net_device *dev, u32 ip, const u8 *mac, bool create);
/* Copy the MAC of ip on dev into mac: true if known. */
bool neigh_lookup(struct net_device *dev, u32 ip, u8 *mac);
/* Call fn on every entry (the shell's arp). */
void neigh_for_each(void (*fn)(struct net_device *dev, u32 ip, const u8 *mac, bool complete,
			       void *arg),
		    void *arg);

/* Counters, per CPU and summed (NEIGH_ENTRIES: the entries now). */
enum neigh_stat {
	NEIGH_ENTRIES,
	NEIGH_GC_RUNS,		/* timer-driven (and neigh_gc_run) passes */
	NEIGH_FORCED_GC_RUNS,	/* passes forced by an insert at gc_thresh */
	NEIGH_GC_FREED,		/* entries either pass freed */
	NEIGH_QUEUED,		/* packets that waited for a reply */
	NEIGH_QUEUE_OVERFLOWS,	/* ... dropped because more came before it */
	NEIGH_UNRESOLVED_DROPS, /* ... dropped with their entry: no reply in time */
	NEIGH_PROBES,		/* ARP requests sent to resolve an entry, first and again */
	NEIGH_RESOLVE_FAILED,	/* entries given up after mcast_solicit requests */
	NR_NEIGH_STATS
};
u64 neigh_stat(enum neigh_stat s);

/*
 * The table's knobs: boot arguments neigh_gc_interval=<ms> neigh_gc_thresh=<n>
 * neigh_retrans_time=<ms> neigh_mcast_solicit=<n>, and these (the stale time and
 * the gc's resolve timeout too). An INCOMPLETE entry's ARP request is sent again
 * every retrans_ns (Linux's retrans_time, 1 s) until mcast_solicit requests (3)
 * went unanswered, and one retrans_ns after the last the entry fails. -EINVAL
 * for a zero interval, a retrans time under 1 ms, mcast_solicit 0 or past 255.
 */
struct neigh_gc_params {
	u64 interval_ns, thresh, stale_ns, resolve_timeout_ns;
	u64 retrans_ns, mcast_solicit;
};
void neigh_gc_get_params(struct neigh_gc_params *p);
int neigh_gc_set_params(const struct neigh_gc_params *p);
/* One timer-style gc pass now (thread context). */
void neigh_gc_run(void);

/* Boot: the table, the boot arguments, the gc timer. */
void neigh_init(void);

#endif
