/*
 * The receive path against bad input, frames fed straight into inet_rcv(): each
 * kind of malformed packet is dropped, counted under its own reason, and changes
 * nothing else (no other counter, no socket queue, no buffer left behind); a good
 * frame built the same way is delivered, so the builders are known to be right
 * and each drop is the one mutation's doing.
 */
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/neighbour.h>
#include <grace/skbuff.h>
#include <grace/string.h>
#include <grace/test.h>
#include <grace/sched.h>
#include <net/core/sink.h>

#include "net_test_util.h"

#define LOCALHOST IPV4(127, 0, 0, 1)
static const u8 peer_mac[ETH_ALEN] = {0x02, 0x00, 0x5e, 0x10, 0x20, 0x30};

/* The frame the malformed ones start from: 127.0.0.1:5000 to the socket's port, on lo. */
static void rx_good_frame(struct net_frame *f, u16 port)
{
	static const char data[] = "the good datagram";
	net_frame_udp(f, LOCALHOST, 5000, LOCALHOST, port, data, sizeof(data));
}

/*
 * Feed f (its first len bytes) on dev and expect it to have been dropped for
 * reason (NR_INET_DROPS: delivered as stat) with nothing else changed; rx's queue
 * grows only when it is delivered.
 */
static void rx_expect(const char *what, const struct net_frame *f, u32 len, struct net_device *dev,
		      struct udp_sock *rx, enum inet_drop reason, enum inet_stat stat)
{
	struct net_counts a, b;
	u32 q = udp_rcvq_len(rx);
	struct sk_buff *skb;

	net_counts_read(&a);
	skb = net_frame_skb(f, len, dev);
	if (!skb) {
		test_fail(__FILE__, __LINE__, "%s: no buffer", what);
		return;
	}
	inet_rcv(skb); /* which must free it, or queue it on rx */
	net_counts_read(&b);
	if (stat == INET_RX_UDP) {
		b.skbs--; /* the one queued on rx */
		EXPECT_EQ(udp_rcvq_len(rx), q + 1);
	} else {
		EXPECT_EQ(udp_rcvq_len(rx), q);
	}
	if (!net_counts_expect_one(&a, &b, reason, stat))
		test_fail(__FILE__, __LINE__, "%s: not dropped as %s", what,
			  reason < NR_INET_DROPS ? inet_drop_name(reason) : "(delivered)");
}

TEST(inet_rx, every_malformed_kind_is_dropped_under_its_reason_and_changes_nothing)
{
	struct net_device *lo, *sink;
	struct udp_sock *rx = udp_socket();
	struct net_frame f;
	struct iphdr *iph = NET_FRAME_IP(&f);
	struct udphdr *uh = (struct udphdr *)NET_FRAME_L4(&f);
	u16 port;

	ASSERT_TRUE(rx);
	if (!net_test_devices(&lo, &sink)) {
		udp_close(rx);
		return;
	}
	ASSERT_EQ(udp_bind(rx, 0), 0);
	port = udp_port(rx);

	/* The negative control: the good frame is delivered, and so is it with padding after it. */
	rx_good_frame(&f, port);
	rx_expect("good", &f, f.len, lo, rx, NR_INET_DROPS, INET_RX_UDP);
	rx_expect("padded", &f, f.len + 20, lo, rx, NR_INET_DROPS, INET_RX_UDP);
	uh->check = 0; /* no checksum is allowed */
	rx_expect("no udp checksum", &f, f.len, lo, rx, NR_INET_DROPS, INET_RX_UDP);

	/* Truncations at each layer. */
	rx_good_frame(&f, port);
	rx_expect("short ethernet", &f, ETH_HLEN - 1, lo, rx, DROP_ETH_SHORT, NR_INET_STATS);
	rx_expect("short ip", &f, ETH_HLEN + 19, lo, rx, DROP_IP_SHORT, NR_INET_STATS);
	rx_expect("truncated", &f, f.len - 1, lo, rx, DROP_IP_LEN, NR_INET_STATS);

	rx_good_frame(&f, port);
	((struct ethhdr *)f.b)->h_proto = htons(0x86dd);
	rx_expect("ipv6 ethertype", &f, f.len, lo, rx, DROP_ETH_PROTO, NR_INET_STATS);

	rx_good_frame(&f, port);
	iph->ihl_version = 0x65;
	net_frame_fix_ip_csum(&f);
	rx_expect("version 6", &f, f.len, lo, rx, DROP_IP_VERSION, NR_INET_STATS);

	rx_good_frame(&f, port);
	iph->ihl_version = 0x44;
	net_frame_fix_ip_csum(&f);
	rx_expect("ihl 4", &f, f.len, lo, rx, DROP_IP_HDR_LEN, NR_INET_STATS);
	iph->ihl_version = 0x4f; /* 60 bytes of header in a 20 + 26 byte packet */
	rx_expect("ihl 15", &f, ETH_HLEN + 40, lo, rx, DROP_IP_HDR_LEN, NR_INET_STATS);

	rx_good_frame(&f, port);
	iph->tot_len = htons(ntohs(iph->tot_len) + 1);
	net_frame_fix_ip_csum(&f);
	rx_expect("tot_len past the frame", &f, f.len, lo, rx, DROP_IP_LEN, NR_INET_STATS);
	iph->tot_len = htons(19);
	net_frame_fix_ip_csum(&f);
	rx_expect("tot_len below the header", &f, f.len, lo, rx, DROP_IP_LEN, NR_INET_STATS);

	rx_good_frame(&f, port);
	iph->check ^= htons(0x0100);
	rx_expect("ip checksum", &f, f.len, lo, rx, DROP_IP_CSUM, NR_INET_STATS);

	rx_good_frame(&f, port);
	iph->frag_off = htons(0x2000); /* more fragments */
	net_frame_fix_ip_csum(&f);
	rx_expect("first fragment", &f, f.len, lo, rx, DROP_IP_FRAGMENT, NR_INET_STATS);
	iph->frag_off = htons(0x0010); /* a later fragment, the last */
	net_frame_fix_ip_csum(&f);
	rx_expect("last fragment", &f, f.len, lo, rx, DROP_IP_FRAGMENT, NR_INET_STATS);
	iph->frag_off = htons(0x4000); /* don't fragment: a whole datagram */
	net_frame_fix_ip_csum(&f);
	rx_expect("DF set", &f, f.len, lo, rx, NR_INET_DROPS, INET_RX_UDP);

	rx_good_frame(&f, port);
	iph->daddr = IPV4(10, 1, 2, 3);
	net_frame_fix_ip_csum(&f);
	net_frame_fix_udp_csum(&f);
	rx_expect("another host's", &f, f.len, lo, rx, DROP_IP_NOT_OURS, NR_INET_STATS);
	rx_good_frame(&f, port);
	rx_expect("127/8 off loopback", &f, f.len, sink, rx, DROP_IP_NOT_OURS, NR_INET_STATS);

	rx_good_frame(&f, port);
	iph->protocol = 6; /* TCP */
	net_frame_fix_ip_csum(&f);
	rx_expect("tcp", &f, f.len, lo, rx, DROP_IP_PROTO, NR_INET_STATS);

	/* UDP. */
	rx_good_frame(&f, port);
	iph->tot_len = htons(20 + 7);
	net_frame_fix_ip_csum(&f);
	rx_expect("short udp", &f, ETH_HLEN + 27, lo, rx, DROP_UDP_SHORT, NR_INET_STATS);

	rx_good_frame(&f, port);
	((u8 *)(uh + 1))[3] ^= 0x20;
	rx_expect("udp checksum", &f, f.len, lo, rx, DROP_UDP_CSUM, NR_INET_STATS);

	rx_good_frame(&f, port);
	uh->len = htons(ntohs(uh->len) + 1);
	net_frame_fix_udp_csum(&f);
	rx_expect("udp length past the packet", &f, f.len, lo, rx, DROP_UDP_LEN, NR_INET_STATS);
	uh->len = htons(7);
	rx_expect("udp length below its header", &f, f.len, lo, rx, DROP_UDP_LEN, NR_INET_STATS);

	rx_good_frame(&f, port == 65535 ? 65534 : port + 1);
	rx_expect("unbound port", &f, f.len, lo, rx, DROP_UDP_NO_PORT, NR_INET_STATS);

	/* ICMP. */
	net_frame_icmp_echo(&f, LOCALHOST, LOCALHOST, 77, 1, 16);
	((u8 *)NET_FRAME_L4(&f))[12] ^= 1;
	rx_expect("icmp checksum", &f, f.len, lo, rx, DROP_ICMP_CSUM, NR_INET_STATS);
	iph->tot_len = htons(20 + 7);
	net_frame_fix_ip_csum(&f);
	rx_expect("short icmp", &f, ETH_HLEN + 27, lo, rx, DROP_ICMP_SHORT, NR_INET_STATS);

	/* ARP: a reply nobody asked for, and it teaches the table nothing. */
	net_frame_arp(&f, 2, peer_mac, IPV4(10, 99, 0, 77), sink->ipv4_addr);
	rx_expect("unsolicited arp reply", &f, f.len, sink, rx, DROP_ARP_UNSOLICITED, INET_RX_ARP);
	u8 mac[ETH_ALEN];
	EXPECT_FALSE(neigh_lookup(sink, IPV4(10, 99, 0, 77), mac));
	rx_expect("short arp", &f, ETH_HLEN + 10, sink, rx, DROP_ARP_SHORT, INET_RX_ARP);

	/* All that was delivered is still there: three, then the DF one. */
	EXPECT_EQ(udp_rcvq_len(rx), 4);
	udp_close(rx);
}

/*
 * An echo request from an address no host has, to sink0's own address as it would
 * arrive from the wire: dropped as a martian before ICMP sees it, so nothing is
 * answered (and no reply is sent to a broadcast or multicast group); the negative
 * control, the same request from a unicast peer, is taken by ICMP.
 */
TEST(inet_rx, echo_requests_from_martian_sources_are_dropped_not_answered)
{
	static const struct {
		const char *what;
		u32 saddr;
	} martians[] = {
	    {"limited broadcast", IPV4(255, 255, 255, 255)},
	    {"subnet broadcast", IPV4(10, 99, 0, 255)},
	    {"multicast 224.0.0.9", IPV4(224, 0, 0, 9)},
	    {"multicast 239.1.2.3", IPV4(239, 1, 2, 3)},
	    {"0.0.0.0", IPV4(0, 0, 0, 0)},
	    {"0/8", IPV4(0, 1, 2, 3)},
	    {"127.0.0.1 off loopback", LOCALHOST},
	};
	struct net_device *lo, *sink;
	struct udp_sock *rx = udp_socket();
	struct net_frame f;

	ASSERT_TRUE(rx);
	if (!net_test_devices(&lo, &sink)) {
		udp_close(rx);
		return;
	}
	for (unsigned i = 0; i < sizeof(martians) / sizeof(martians[0]); i++) {
		net_frame_icmp_echo(&f, martians[i].saddr, sink->ipv4_addr, 78, (u16)i, 16);
		rx_expect(martians[i].what, &f, f.len, sink, rx, DROP_IP_MARTIAN_SRC,
			  NR_INET_STATS);
	}
	/* 127.0.0.1 on lo itself is no martian: ping 127.0.0.1 is answered from there. */
	u64 replies = inet_stat(INET_TX_ICMP_REPLIES), martian = inet_drops(DROP_IP_MARTIAN_SRC);
	net_frame_icmp_echo(&f, LOCALHOST, LOCALHOST, 78, 100, 16);
	EXPECT_TRUE(net_frame_feed(&f, lo));
	net_frame_icmp_echo(&f, IPV4(10, 99, 0, 77), sink->ipv4_addr, 78, 101, 16);
	EXPECT_TRUE(net_frame_feed(&f, sink));
	EXPECT_EQ(inet_stat(INET_TX_ICMP_REPLIES) - replies, 2);
	EXPECT_EQ(inet_drops(DROP_IP_MARTIAN_SRC), martian);
	udp_close(rx);
}

static u32 rx_reply_saddr, rx_reply_daddr; /* written by the sink's hook, under its lock */
static unsigned rx_replies;

static void rx_reply_hook(struct sk_buff *skb)
{
	const struct iphdr *iph = (const struct iphdr *)(skb->data + ETH_HLEN);
	if (skb_len(skb) < ETH_HLEN + sizeof(*iph) || iph->protocol != IPPROTO_ICMP)
		return;
	WRITE_ONCE(rx_reply_saddr, iph->saddr);
	WRITE_ONCE(rx_reply_daddr, iph->daddr);
	WRITE_ONCE(rx_replies, rx_replies + 1);
}

/* Wait for the sink's first reply: the reply is made in NET_RX, on any CPU, however late. */
static void rx_wait_reply(void)
{
	for (unsigned ms = 0; ms < 20000 && !READ_ONCE(rx_replies); ms++)
		msleep(1);
}

/*
 * A request to eth0's address that came in on sink0 goes back out of sink0 (the
 * route to the asker), but from eth0's address, the one the asker wrote to: the
 * reply's source is the request's destination, not the leaving device's address.
 */
TEST(inet_rx, an_echo_reply_comes_from_the_address_the_request_was_sent_to)
{
	struct net_device *lo, *sink, *eth = dev_get_by_name("eth0");
	struct net_frame f;
	u32 peer = IPV4(10, 99, 0, 78);

	if (!net_test_devices(&lo, &sink))
		return;
	if (!eth || !eth->ipv4_addr) {
		test_skip("no eth0 with an address");
		return;
	}
	WRITE_ONCE(rx_replies, 0);
	sink_set_rx_hook(rx_reply_hook);
	net_frame_icmp_echo(&f, peer, eth->ipv4_addr, 79, 1, 16);
	EXPECT_TRUE(net_frame_feed(&f, sink));
	rx_wait_reply();
	sink_set_rx_hook(NULL);
	ASSERT_EQ(READ_ONCE(rx_replies), 1);
	char want[INET_ADDRSTRLEN], got[INET_ADDRSTRLEN];
	if (READ_ONCE(rx_reply_saddr) != eth->ipv4_addr)
		test_fail(__FILE__, __LINE__, "reply from %s, expected %s",
			  inet_format_addr(READ_ONCE(rx_reply_saddr), got),
			  inet_format_addr(eth->ipv4_addr, want));
	EXPECT_EQ(READ_ONCE(rx_reply_daddr), peer);
}

/* The good frame with len bytes of options after its 20-byte header. */
static void rx_options_frame(struct net_frame *f, u16 port, const u8 *opt, u32 len)
{
	rx_good_frame(f, port);
	net_frame_ip_options(f, opt, len);
}

/*
 * The header checksum covers the whole header, ihl * 4 bytes, options included
 * (RFC 791): headers with options that parse, checksummed over all of it, are
 * delivered (an option a host does not act on is ignored, RFC 1122 3.2.1.8), and
 * the same header with one option byte changed afterwards is a bad checksum, even
 * where the changed byte still makes options that parse.
 */
TEST(inet_rx, the_header_checksum_covers_the_options)
{
	/* Record Route with room for one address, then End of Option List. */
	static const u8 rr[] = {7, 7, 4, 0, 0, 0, 0, 0};
	static const u8 nop_eol[] = {1, 1, 1, 0};
	/* Timestamp, timestamps only, room for two; an unknown option (type 0x9e, 4 bytes). */
	static const u8 ts[] = {68, 12, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0};
	static const u8 unknown[] = {0x9e, 4, 0xab, 0xcd};
	struct net_device *lo, *sink;
	struct udp_sock *rx = udp_socket();
	struct net_frame f;
	const u32 opt_at = ETH_HLEN + sizeof(struct iphdr);

	ASSERT_TRUE(rx);
	if (!net_test_devices(&lo, &sink)) {
		udp_close(rx);
		return;
	}
	ASSERT_EQ(udp_bind(rx, 0), 0);
	u16 port = udp_port(rx);

	rx_options_frame(&f, port, rr, sizeof(rr));
	EXPECT_EQ(NET_FRAME_IP(&f)->ihl_version, 0x47);
	rx_expect("record route", &f, f.len, lo, rx, NR_INET_DROPS, INET_RX_UDP);
	f.b[opt_at + 4] ^= 0x5a; /* the address slot: still a Record Route that parses */
	rx_expect("record route, a slot byte changed", &f, f.len, lo, rx, DROP_IP_CSUM,
		  NR_INET_STATS);

	rx_options_frame(&f, port, nop_eol, sizeof(nop_eol));
	rx_expect("nop, nop, nop, eol", &f, f.len, lo, rx, NR_INET_DROPS, INET_RX_UDP);
	f.b[opt_at + 3] = 1; /* the End of Option List made a fourth No Operation */
	rx_expect("nop, nop, nop, eol made nop", &f, f.len, lo, rx, DROP_IP_CSUM, NR_INET_STATS);

	rx_options_frame(&f, port, ts, sizeof(ts));
	rx_expect("timestamp", &f, f.len, lo, rx, NR_INET_DROPS, INET_RX_UDP);
	f.b[opt_at + sizeof(ts) - 1] ^= 0x80; /* the last byte of a 32-byte header */
	rx_expect("timestamp, its last byte changed", &f, f.len, lo, rx, DROP_IP_CSUM,
		  NR_INET_STATS);

	rx_options_frame(&f, port, unknown, sizeof(unknown));
	rx_expect("an unknown option", &f, f.len, lo, rx, NR_INET_DROPS, INET_RX_UDP);

	EXPECT_EQ(udp_rcvq_len(rx), 4);
	udp_close(rx);
}

/*
 * Options that do not parse, checksummed right, are dropped as Linux's
 * ip_options_compile() drops them (an option running past the header, a length
 * below 2, a pointer out of its option, a second Record Route or Timestamp, a short
 * Router Alert); a source route is refused as Linux's accept_source_route=0 does;
 * a full Record Route (its pointer past its end) is no error.
 */
TEST(inet_rx, malformed_ip_options_are_dropped_and_a_source_route_refused)
{
	static const struct {
		const char *what;
		u8 opt[12];
		u8 len;
		enum inet_drop reason; /* NR_INET_DROPS: delivered */
	} cases[] = {
	    {"length past the header", {7, 12, 4, 0}, 4, DROP_IP_OPTIONS},
	    {"length past the header after a nop", {1, 0x9e, 4, 0}, 4, DROP_IP_OPTIONS},
	    {"length 1", {0x9e, 1, 0, 0}, 4, DROP_IP_OPTIONS},
	    {"length 0", {0x9e, 0, 0, 0}, 4, DROP_IP_OPTIONS},
	    {"a type with no length byte", {1, 1, 1, 7}, 4, DROP_IP_OPTIONS},
	    {"record route, pointer 3", {7, 7, 3, 0, 0, 0, 0, 0}, 8, DROP_IP_OPTIONS},
	    {"record route, a slot that does not fit",
	     {7, 7, 5, 0, 0, 0, 0, 0},
	     8,
	     DROP_IP_OPTIONS},
	    {"record route, length 2", {7, 2, 1, 0}, 4, DROP_IP_OPTIONS},
	    {"two record routes", {7, 3, 4, 7, 3, 4, 0, 0}, 8, DROP_IP_OPTIONS},
	    {"timestamp, length 3", {68, 3, 5, 0}, 4, DROP_IP_OPTIONS},
	    {"timestamp, pointer 4", {68, 8, 4, 0, 0, 0, 0, 0}, 8, DROP_IP_OPTIONS},
	    {"timestamp full, overflow 15", {68, 8, 9, 0xf0, 0, 0, 0, 0}, 8, DROP_IP_OPTIONS},
	    {"router alert, length 2", {148, 2, 1, 0}, 4, DROP_IP_OPTIONS},
	    {"loose source route", {131, 7, 4, 10, 0, 0, 1, 0}, 8, DROP_IP_SOURCE_ROUTE},
	    {"strict source route", {137, 7, 8, 10, 0, 0, 1, 0}, 8, DROP_IP_SOURCE_ROUTE},
	    {"record route, full", {7, 7, 8, 10, 0, 0, 1, 0}, 8, NR_INET_DROPS},
	    {"router alert", {148, 4, 0, 0}, 4, NR_INET_DROPS},
	    {"bytes after the end of the list", {0, 7, 99, 1}, 4, NR_INET_DROPS},
	};
	struct net_device *lo, *sink;
	struct udp_sock *rx = udp_socket();
	struct net_frame f;
	unsigned delivered = 0;

	ASSERT_TRUE(rx);
	if (!net_test_devices(&lo, &sink)) {
		udp_close(rx);
		return;
	}
	ASSERT_EQ(udp_bind(rx, 0), 0);
	for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rx_options_frame(&f, udp_port(rx), cases[i].opt, cases[i].len);
		bool ok = cases[i].reason == NR_INET_DROPS;
		rx_expect(cases[i].what, &f, f.len, lo, rx, cases[i].reason,
			  ok ? INET_RX_UDP : NR_INET_STATS);
		delivered += ok;
	}
	EXPECT_EQ(udp_rcvq_len(rx), delivered);
	udp_close(rx);
}

/*
 * An echo request to the limited broadcast or to sink0's subnet broadcast, from a
 * unicast peer, is dropped under its reason and draws no reply (Linux's
 * icmp_echo_ignore_broadcasts=1: no host of the subnet answers, so one request
 * cannot draw a flood); the same request to sink0's own address is answered, and
 * its reply, sent after anything the others could have drawn, is the only one.
 */
TEST(inet_rx, echo_requests_to_a_broadcast_address_draw_no_reply)
{
	struct net_device *lo, *sink;
	struct udp_sock *rx = udp_socket();
	struct net_frame f;
	u32 peer = IPV4(10, 99, 0, 79);

	ASSERT_TRUE(rx);
	if (!net_test_devices(&lo, &sink)) {
		udp_close(rx);
		return;
	}
	u32 subnet_bcast = sink->ipv4_addr | ~sink->ipv4_mask;
	WRITE_ONCE(rx_replies, 0);
	sink_set_rx_hook(rx_reply_hook);
	net_frame_icmp_echo(&f, peer, IPV4(255, 255, 255, 255), 80, 1, 16);
	rx_expect("to 255.255.255.255", &f, f.len, sink, rx, DROP_ICMP_BROADCAST, NR_INET_STATS);
	net_frame_icmp_echo(&f, peer, subnet_bcast, 80, 2, 16);
	rx_expect("to the subnet broadcast", &f, f.len, sink, rx, DROP_ICMP_BROADCAST,
		  NR_INET_STATS);

	u64 replies = inet_stat(INET_TX_ICMP_REPLIES);
	net_frame_icmp_echo(&f, peer, sink->ipv4_addr, 80, 3, 16);
	EXPECT_TRUE(net_frame_feed(&f, sink));
	rx_wait_reply();
	sink_set_rx_hook(NULL);
	EXPECT_EQ(inet_stat(INET_TX_ICMP_REPLIES) - replies, 1);
	EXPECT_EQ(READ_ONCE(rx_replies), 1);
	EXPECT_EQ(READ_ONCE(rx_reply_daddr), peer);
	udp_close(rx);
}

/*
 * A frame unicast to another station's MAC, though its IP destination is ours,
 * is not for this host (a promiscuous device hands up everything on the wire):
 * dropped before IP or ARP sees it, as Linux drops PACKET_OTHERHOST; the same
 * frames to our MAC, to the broadcast MAC and to a multicast MAC are taken.
 */
TEST(inet_rx, a_frame_for_another_hosts_mac_is_dropped_whatever_its_ip_says)
{
	static const u8 other[ETH_ALEN] = {0x02, 0x00, 0x5e, 0x10, 0x20, 0x31};
	static const u8 bcast[ETH_ALEN] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	static const u8 mcast[ETH_ALEN] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
	struct net_device *lo, *sink;
	struct udp_sock *rx = udp_socket();
	struct net_frame f;
	struct ethhdr *eth = (struct ethhdr *)f.b;

	ASSERT_TRUE(rx);
	if (!net_test_devices(&lo, &sink)) {
		udp_close(rx);
		return;
	}
	ASSERT_EQ(udp_bind(rx, 0), 0);
	u16 port = udp_port(rx);

	rx_good_frame(&f, port);
	memcpy(eth->h_dest, other, ETH_ALEN);
	rx_expect("udp to another mac", &f, f.len, lo, rx, DROP_ETH_OTHERHOST, NR_INET_STATS);
	net_frame_arp(&f, 1, peer_mac, IPV4(10, 99, 0, 77), sink->ipv4_addr);
	memcpy(eth->h_dest, other, ETH_ALEN);
	rx_expect("arp request to another mac", &f, f.len, sink, rx, DROP_ETH_OTHERHOST,
		  NR_INET_STATS);

	rx_good_frame(&f, port);
	memcpy(eth->h_dest, lo->mac, ETH_ALEN);
	rx_expect("udp to our mac", &f, f.len, lo, rx, NR_INET_DROPS, INET_RX_UDP);
	memcpy(eth->h_dest, bcast, ETH_ALEN);
	rx_expect("udp to the broadcast mac", &f, f.len, lo, rx, NR_INET_DROPS, INET_RX_UDP);
	memcpy(eth->h_dest, mcast, ETH_ALEN);
	rx_expect("udp to a multicast mac", &f, f.len, lo, rx, NR_INET_DROPS, INET_RX_UDP);
	EXPECT_EQ(udp_rcvq_len(rx), 3);
	udp_close(rx);
}
