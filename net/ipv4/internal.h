/*
 * What the IPv4 routing, neighbour and ARP files share and nobody else needs:
 * the FIB lookup with an output interface, the neighbour table's "resolve only
 * what we asked for" update, and the boot-argument helper both tables use.
 */
#ifndef NET_IPV4_INTERNAL_H
#define NET_IPV4_INTERNAL_H

#include <grace/netdevice.h>
#include <grace/types.h>

/*
 * fib_lookup() restricted to routes out of the device whose ifindex is oif (0:
 * any): 0 with *nexthop (daddr when on-link) and *dev set, or -ENETUNREACH. Any
 * context; it takes no lock (RCU inside).
 */
int fib_lookup_oif(u32 daddr, u32 oif, u32 *nexthop, struct net_device **dev);

/*
 * An ARP reply said ip is at mac on dev: complete the INCOMPLETE entry waiting
 * for it and send what was queued on it. False (nothing changed) when no such
 * entry waits: the reply was not asked for.
 */
bool neigh_resolve(struct net_device *dev, u32 ip, const u8 *mac);

/*
 * A boot argument key=<n> in milliseconds, at least min_ms, as nanoseconds; ns
 * when it is absent or bad (cmdline_get_uint() reports a bad one).
 */
u64 net_cmdline_ms(const char *key, u64 ns, u64 min_ms);

#endif
