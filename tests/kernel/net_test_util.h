/*
 * Helpers shared by the IPv4 selftests (net_inet, net_rx, net_fuzz): frames built
 * byte by byte the way a peer would send them, fed straight into the receive
 * path (inet_rcv), and a snapshot of every counter the receive path keeps, so
 * that "dropped for this reason and nothing else changed" is one comparison.
 * The definitions are in net_test_util.c.
 */
#ifndef TESTS_NET_TEST_UTIL_H
#define TESTS_NET_TEST_UTIL_H

#include <grace/inet.h>
#include <grace/types.h>

/*
 * A frame under construction: Ethernet (to the zero MAC, lo's and the sink's),
 * IPv4 (no options unless net_frame_ip_options() put some in), then UDP or ICMP.
 */
#define NET_FRAME_MAX 1514
struct net_frame {
	u8 b[NET_FRAME_MAX];
	u32 len;
};
#define NET_FRAME_IP(f) ((struct iphdr *)((f)->b + ETH_HLEN))
#define NET_FRAME_L4(f) ((f)->b + ETH_HLEN + sizeof(struct iphdr)) /* without options */

/* A UDP datagram from saddr:sport to daddr:dport carrying len bytes of data, checksums right. */
void net_frame_udp(struct net_frame *f, u32 saddr, u16 sport, u32 daddr, u16 dport,
		   const void *data, u32 len);
/* An ICMP echo request (id, seq) with len bytes of data, checksums right. */
void net_frame_icmp_echo(struct net_frame *f, u32 saddr, u32 daddr, u16 id, u16 seq, u32 len);
/* An Ethernet/IPv4 ARP packet of opcode op (1 request, 2 reply). */
void net_frame_arp(struct net_frame *f, u16 op, const u8 *sha, u32 sip, u32 tip);
/* Recompute the IPv4 header checksum over the header length it says (at least 20 bytes). */
void net_frame_fix_ip_csum(struct net_frame *f);
/*
 * Put len bytes of options (a multiple of 4, at most 40) after the 20-byte header of
 * a frame that has none: the header length, the total length and the checksum follow.
 */
void net_frame_ip_options(struct net_frame *f, const void *opt, u32 len);
/* Recompute the UDP checksum over the UDP length the header says (capped at the frame). */
void net_frame_fix_udp_csum(struct net_frame *f);
void net_frame_fix_icmp_csum(struct net_frame *f);

/* An skb holding the first len bytes of f, received on dev; NULL on ENOMEM. */
struct sk_buff *net_frame_skb(const struct net_frame *f, u32 len, struct net_device *dev);
/* Feed f (its whole length) into inet_rcv() as received on dev: false on ENOMEM. */
bool net_frame_feed(const struct net_frame *f, struct net_device *dev);

/* Every counter of the receive path at one moment. */
struct net_counts {
	u64 drops[NR_INET_DROPS];
	u64 stats[NR_INET_STATS];
	long skbs;
};
void net_counts_read(struct net_counts *c);
/*
 * Expect that from a to b exactly one frame came in (stats[INET_RX_FRAMES] + 1),
 * the drop counter for reason rose by one (NR_INET_DROPS: none did) and stat by
 * one (NR_INET_STATS: none), and nothing else moved, buffers included; false
 * (with the failures recorded) otherwise.
 */
bool net_counts_expect_one(const struct net_counts *a, const struct net_counts *b,
			   enum inet_drop reason, enum inet_stat stat);

/* The loopback and sink devices; the test is skipped (false) if either is missing. */
bool net_test_devices(struct net_device **lo, struct net_device **sink);

/* Wait up to timeout_ms for skb_outstanding() to come back to skbs: true if it did. */
bool net_wait_skbs(long skbs, u64 timeout_ms);

#endif
