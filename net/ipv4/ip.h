/*
 * What the IPv4 files share and nothing outside net/ needs: the receive-path
 * entries of each protocol, the two halves of ip_output() (UDP computes its
 * checksum between them, once the source address is known), and the per-CPU
 * statistics.
 */
#ifndef NET_IPV4_IP_H
#define NET_IPV4_IP_H

#include <grace/inet.h>
#include <grace/percpu.h>
#include <grace/preempt.h>

#define IP_TTL_DEFAULT 64 /* RFC 1700's recommended TTL, Linux's ip_default_ttl */
#define IP_HDR_LEN 20	  /* a header without options, all we send */
#define IP_MF 0x2000	  /* more fragments, in frag_off (host order) */
#define IP_OFFSET 0x1fff  /* the fragment's offset, in 8-byte units */
#define ICMP_ECHOREPLY 0
#define ICMP_ECHO 8
#define ICMP_ADDRESS 17 /* address mask request (RFC 950) */
#define ICMP_ADDRESSREPLY 18

DECLARE_PER_CPU(u64[NR_INET_STATS], inet_stats);

/* Preemption off: a thread that calls inet_rcv() may be preempted by NET_RX on its CPU. */
static inline void inet_stat_inc(enum inet_stat s)
{
	preempt_disable();
	this_cpu(inet_stats)[s]++;
	preempt_enable();
}

/* Drop skb for reason: counted, freed. */
static inline void inet_drop(struct sk_buff *skb, enum inet_drop reason)
{
	inet_drop_count(reason);
	kfree_skb(skb);
}

/*
 * The route to daddr: the device to leave by, the next hop and the source
 * address (the device's), copied out of the route cache under rcu_read_lock()
 * (devices are never freed). A local address goes out of the loopback device
 * whatever device has it, from itself, as Linux's local table sends it. 0 or
 * -ENETUNREACH.
 */
int ip_route_dev(u32 daddr, u8 tos, struct net_device **dev, u32 *gateway, u32 *saddr);
/* ip_output() once the route is known; consumes skb. */
int ip_output_dev(struct sk_buff *skb, struct net_device *dev, u32 gateway, u32 saddr, u32 daddr,
		  u8 protocol, u8 tos);

/*
 * A received header's options, len bytes (the header past its first 20): the drop
 * reason (DROP_IP_OPTIONS, DROP_IP_SOURCE_ROUTE) or NR_INET_DROPS when they pass.
 */
enum inet_drop ip_options_check(const u8 *opt, u32 len);

/* The protocols' receive entries: data at their header, network_header set; they own skb. */
void icmp_rcv(struct sk_buff *skb);
void udp_rcv(struct sk_buff *skb);

/* The device whose address addr is, or NULL. */
struct net_device *inet_addr_dev(u32 addr);
/* The loopback device, once net_init() found it (NULL before). */
extern struct net_device *inet_loopback_dev;

/* The socket cache, before the first udp_socket(). */
void udp_init(void);
/* Start the echo service's thread; 0 or -errno. */
int udp_echo_start(void);

#endif
