/*
 * ARP: what arp_rcv() drops and counts (short, not Ethernet/IPv4, a bad opcode,
 * a reply nobody asked for), the answer to a request for our address and what it
 * teaches the neighbour table, and the resolution path end to end: a packet for
 * an unknown next hop waits on an INCOMPLETE entry while the request goes out,
 * and leaves with the right MAC once the reply comes; a request nobody answers
 * is sent again every retrans time, and after mcast_solicit of them the entry
 * gives up and its packets are dropped and counted. The device is the test's
 * own, registered once, whose driver keeps every frame for the test to read.
 */
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/neighbour.h>
#include <grace/netdevice.h>
#include <grace/sched.h>
#include <grace/skbuff.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include <grace/test.h>

#include "net_test_util.h"

#define ARP_TEST_FRAMES 8

static DEFINE_SPINLOCK(arp_test_lock);
static struct sk_buff *arp_test_sent[ARP_TEST_FRAMES]; /* under arp_test_lock */
static unsigned arp_test_nsent;

static int arp_test_xmit(struct sk_buff *skb, struct net_device *dev)
{
	(void)dev;
	spin_lock(&arp_test_lock);
	if (arp_test_nsent < ARP_TEST_FRAMES) {
		arp_test_sent[arp_test_nsent++] = skb;
		skb = NULL;
	}
	spin_unlock(&arp_test_lock);
	if (skb)
		kfree_skb(skb);
	return 0;
}

static const struct net_device_ops arp_test_ops = {.xmit = arp_test_xmit};
static struct net_device *arp_test_dev;

static struct net_device *arp_test_device(void)
{
	static const u8 mac[ETH_ALEN] = {0x02, 0, 0, 0, 0xd0, 1};
	if (arp_test_dev)
		return arp_test_dev;
	struct net_device *dev = alloc_netdev("arp-test0", 0);
	if (!dev)
		return NULL;
	memcpy(dev->mac, mac, ETH_ALEN);
	dev->mtu = ETH_DATA_LEN;
	dev->flags = IFF_UP;
	dev->ipv4_addr = IPV4(198, 18, 9, 1);
	dev->ipv4_mask = IPV4(255, 255, 255, 0);
	dev->ops = &arp_test_ops;
	if (register_netdev(dev))
		return NULL;
	return arp_test_dev = dev;
}

static void arp_test_forget_frames(void)
{
	spin_lock(&arp_test_lock);
	unsigned n = arp_test_nsent;
	arp_test_nsent = 0;
	spin_unlock(&arp_test_lock);
	for (unsigned i = 0; i < n; i++)
		kfree_skb(arp_test_sent[i]);
}

static unsigned arp_test_frames(void)
{
	spin_lock(&arp_test_lock);
	unsigned n = arp_test_nsent;
	spin_unlock(&arp_test_lock);
	return n;
}

/* Every stale entry out: the table as the test found it, less the test's entries. */
static void arp_test_clear_neigh(void)
{
	struct neigh_gc_params saved, p;
	neigh_gc_get_params(&saved);
	p = saved;
	p.stale_ns = p.resolve_timeout_ns = 0;
	neigh_gc_set_params(&p);
	neigh_gc_run();
	neigh_gc_set_params(&saved);
}

/* An ARP packet as arp_rcv() gets it (data at the ARP header), cut to len bytes. */
static struct sk_buff *arp_test_packet(struct net_device *dev, u16 op, const u8 *sha, u32 sip,
				       u32 tip, u32 len)
{
	static struct net_frame f; /* the tests run one at a time */
	net_frame_arp(&f, op, sha, sip, tip);
	struct sk_buff *skb = net_frame_skb(&f, f.len, dev);
	if (!skb)
		return NULL;
	skb_pull(skb, ETH_HLEN);
	skb_trim(skb, len);
	skb->protocol = ETH_P_ARP;
	return skb;
}

/*
 * The bound on every wait below: how long a loaded host may hold off the worker, not
 * a time anything is expected to take; each wait ends at its event.
 */
#define ARP_TEST_WAIT_MS 10000

/*
 * Retransmit every retrans_ns, give up after solicit requests, and let no gc
 * interfere; the old settings in *saved, for arp_test_restore_probes().
 */
static void arp_test_set_probes(struct neigh_gc_params *saved, u64 retrans_ns, u64 solicit)
{
	struct neigh_gc_params p;
	neigh_gc_get_params(saved);
	p = *saved;
	p.retrans_ns = retrans_ns;
	p.mcast_solicit = solicit;
	p.resolve_timeout_ns = p.stale_ns = 3600 * NSEC_PER_SEC;
	EXPECT_EQ(neigh_gc_set_params(&p), 0);
}

#define ARP_TEST_FAST_PROBE_NS (20 * NSEC_PER_MSEC)
/* For a test that counts every frame an unresolved entry sends: none is sent again. */
#define ARP_TEST_NO_REPROBE_NS (3600 * NSEC_PER_SEC)

static void arp_test_restore_probes(const struct neigh_gc_params *saved)
{
	EXPECT_EQ(neigh_gc_set_params(saved), 0);
	arp_test_clear_neigh();
	arp_test_forget_frames();
}

TEST(arp, bad_and_unsolicited_packets_are_dropped_and_counted)
{
	static const u8 them[ETH_ALEN] = {0x02, 0x33, 0, 0, 0, 7};
	struct net_device *dev = arp_test_device();
	ASSERT_TRUE(dev != NULL);
	long outstanding = skb_outstanding();
	u64 shorts = inet_drops(DROP_ARP_SHORT), bad = inet_drops(DROP_ARP_BAD),
	    unsol = inet_drops(DROP_ARP_UNSOLICITED);
	u32 us = dev->ipv4_addr, peer = IPV4(198, 18, 9, 7);

	arp_rcv(arp_test_packet(dev, 1, them, peer, us, sizeof(struct arphdr) - 1));
	struct sk_buff *skb = arp_test_packet(dev, 1, them, peer, us, sizeof(struct arphdr));
	ASSERT_TRUE(skb != NULL);
	((struct arphdr *)skb->data)->ar_hrd = htons(6); /* IEEE 802, not Ethernet */
	arp_rcv(skb);
	skb = arp_test_packet(dev, 1, them, peer, us, sizeof(struct arphdr));
	ASSERT_TRUE(skb != NULL);
	((struct arphdr *)skb->data)->ar_pln = 16; /* an IPv6 length */
	arp_rcv(skb);
	arp_rcv(arp_test_packet(dev, 3, them, peer, us, sizeof(struct arphdr))); /* RARP's op */
	arp_rcv(arp_test_packet(dev, 2, them, peer, us, sizeof(struct arphdr))); /* unasked */

	EXPECT_EQ(inet_drops(DROP_ARP_SHORT) - shorts, 1);
	EXPECT_EQ(inet_drops(DROP_ARP_BAD) - bad, 3);
	EXPECT_EQ(inet_drops(DROP_ARP_UNSOLICITED) - unsol, 1);
	u8 mac[ETH_ALEN];
	EXPECT_FALSE(neigh_lookup(dev, peer, mac)); /* the unasked reply planted nothing */
	EXPECT_EQ(arp_test_frames(), 0);
	EXPECT_EQ(skb_outstanding(), outstanding);
	EXPECT_TRUE(inet_drop_name(DROP_ARP_UNSOLICITED) != NULL);
	EXPECT_EQ(strcmp(inet_drop_name(NR_INET_DROPS), "unknown"), 0);
}

/*
 * A request for us from a broadcast or multicast sender MAC: dropped and counted,
 * neither answered nor learned (an entry "at ff:ff:ff:ff:ff:ff" would broadcast every
 * unicast packet to that peer); the same request from a unicast MAC is answered.
 */
TEST(arp, a_broadcast_or_multicast_sender_mac_is_dropped_and_not_learned)
{
	static const u8 bad[][ETH_ALEN] = {
	    {0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
	    {0x01, 0x00, 0x5e, 0x00, 0x00, 0x09},
	    {0x33, 0x33, 0x00, 0x00, 0x00, 0x01},
	};
	static const u8 good[ETH_ALEN] = {0x02, 0x33, 0, 0, 0, 9};
	struct net_device *dev = arp_test_device();
	ASSERT_TRUE(dev != NULL);
	u32 peer = IPV4(198, 18, 9, 33);
	u8 mac[ETH_ALEN];
	arp_test_forget_frames();
	arp_test_clear_neigh();
	u64 bad_sha = inet_drops(DROP_ARP_BAD_SHA);

	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		arp_rcv(
		    arp_test_packet(dev, 1, bad[i], peer, dev->ipv4_addr, sizeof(struct arphdr)));
	EXPECT_EQ(inet_drops(DROP_ARP_BAD_SHA) - bad_sha, 3);
	EXPECT_EQ(arp_test_frames(), 0);
	EXPECT_FALSE(neigh_lookup(dev, peer, mac));

	arp_rcv(arp_test_packet(dev, 1, good, peer, dev->ipv4_addr, sizeof(struct arphdr)));
	EXPECT_EQ(arp_test_frames(), 1);
	EXPECT_TRUE(neigh_lookup(dev, peer, mac));
	EXPECT_EQ(inet_drops(DROP_ARP_BAD_SHA) - bad_sha, 3);
	arp_test_forget_frames();
	arp_test_clear_neigh();
}

TEST(arp, a_request_for_us_is_answered_and_teaches_the_asker)
{
	static const u8 them[ETH_ALEN] = {0x02, 0x33, 0, 0, 0, 8};
	struct net_device *dev = arp_test_device();
	ASSERT_TRUE(dev != NULL);
	u32 peer = IPV4(198, 18, 9, 8);
	arp_test_forget_frames();
	arp_test_clear_neigh();

	/* For another address: no answer. */
	arp_rcv(arp_test_packet(dev, 1, them, peer, IPV4(198, 18, 9, 2), sizeof(struct arphdr)));
	EXPECT_EQ(arp_test_frames(), 0);
	arp_rcv(arp_test_packet(dev, 1, them, peer, dev->ipv4_addr, sizeof(struct arphdr)));
	ASSERT_EQ(arp_test_frames(), 1);
	struct sk_buff *r = arp_test_sent[0];
	ASSERT_EQ(skb_len(r), ETH_HLEN + sizeof(struct arphdr));
	struct ethhdr *eth = (struct ethhdr *)r->data;
	struct arphdr *arp = (struct arphdr *)(r->data + ETH_HLEN);
	EXPECT_EQ(memcmp(eth->h_dest, them, ETH_ALEN), 0);
	EXPECT_EQ(memcmp(eth->h_source, dev->mac, ETH_ALEN), 0);
	EXPECT_EQ(ntohs(eth->h_proto), ETH_P_ARP);
	EXPECT_EQ(ntohs(arp->ar_op), 2);
	EXPECT_EQ(memcmp(arp->ar_sha, dev->mac, ETH_ALEN), 0);
	EXPECT_EQ(arp->ar_sip, dev->ipv4_addr);
	EXPECT_EQ(memcmp(arp->ar_tha, them, ETH_ALEN), 0);
	EXPECT_EQ(arp->ar_tip, peer);
	u8 mac[ETH_ALEN];
	EXPECT_TRUE(neigh_lookup(dev, peer, mac) && !memcmp(mac, them, ETH_ALEN));
	arp_test_forget_frames();
	arp_test_clear_neigh();
}

TEST(arp, a_packet_waits_for_the_reply_and_leaves_with_its_mac)
{
	static const u8 them[ETH_ALEN] = {0x02, 0x33, 0, 0, 0, 9};
	static const u8 bcast[ETH_ALEN] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct net_device *dev = arp_test_device();
	ASSERT_TRUE(dev != NULL);
	u32 peer = IPV4(198, 18, 9, 9);
	u64 queued = neigh_stat(NEIGH_QUEUED);
	struct neigh_gc_params saved;
	arp_test_forget_frames();
	arp_test_clear_neigh();
	arp_test_set_probes(&saved, ARP_TEST_NO_REPROBE_NS, 3);

	struct sk_buff *skb = skb_alloc();
	ASSERT_TRUE(skb != NULL);
	struct iphdr *ip = skb_put(skb, sizeof(*ip));
	ASSERT_TRUE(ip != NULL);
	memset(ip, 0, sizeof(*ip));
	ip->ihl_version = 0x45;
	ip->daddr = peer;
	skb->dev = dev;
	EXPECT_EQ(neigh_output(skb, peer), 0);
	EXPECT_EQ(neigh_stat(NEIGH_QUEUED) - queued, 1);
	ASSERT_EQ(arp_test_frames(), 1); /* the request, and the packet still waiting */
	struct sk_buff *req = arp_test_sent[0];
	struct ethhdr *eth = (struct ethhdr *)req->data;
	struct arphdr *arp = (struct arphdr *)(req->data + ETH_HLEN);
	EXPECT_EQ(memcmp(eth->h_dest, bcast, ETH_ALEN), 0);
	EXPECT_EQ(ntohs(arp->ar_op), 1);
	EXPECT_EQ(arp->ar_tip, peer);
	EXPECT_EQ(arp->ar_sip, dev->ipv4_addr);

	u64 unsol = inet_drops(DROP_ARP_UNSOLICITED);
	arp_rcv(arp_test_packet(dev, 2, them, peer, dev->ipv4_addr, sizeof(struct arphdr)));
	EXPECT_EQ(inet_drops(DROP_ARP_UNSOLICITED), unsol);
	ASSERT_EQ(arp_test_frames(), 2);
	struct sk_buff *out = arp_test_sent[1];
	eth = (struct ethhdr *)out->data;
	EXPECT_EQ(memcmp(eth->h_dest, them, ETH_ALEN), 0);
	EXPECT_EQ(ntohs(eth->h_proto), ETH_P_IP);
	EXPECT_EQ(((struct iphdr *)(out->data + ETH_HLEN))->daddr, peer);
	u8 mac[ETH_ALEN];
	EXPECT_TRUE(neigh_lookup(dev, peer, mac) && !memcmp(mac, them, ETH_ALEN));
	/* A second reply finds no INCOMPLETE entry: unsolicited. */
	arp_rcv(arp_test_packet(dev, 2, them, peer, dev->ipv4_addr, sizeof(struct arphdr)));
	EXPECT_EQ(inet_drops(DROP_ARP_UNSOLICITED) - unsol, 1);
	arp_test_restore_probes(&saved);
}

TEST(arp, waiting_packets_are_capped_and_dropped_when_no_reply_comes)
{
	struct net_device *dev = arp_test_device();
	ASSERT_TRUE(dev != NULL);
	u32 peer = IPV4(198, 18, 9, 10);
	struct neigh_gc_params saved;
	arp_test_forget_frames();
	arp_test_clear_neigh();
	arp_test_set_probes(&saved, ARP_TEST_NO_REPROBE_NS, 3);
	long outstanding = skb_outstanding();
	u64 queued = neigh_stat(NEIGH_QUEUED), over = neigh_stat(NEIGH_QUEUE_OVERFLOWS),
	    unres = neigh_stat(NEIGH_UNRESOLVED_DROPS);

	for (unsigned i = 0; i < 5; i++) {
		struct sk_buff *skb = skb_alloc();
		ASSERT_TRUE(skb != NULL);
		ASSERT_TRUE(skb_put(skb, sizeof(struct iphdr)) != NULL);
		skb->dev = dev;
		EXPECT_EQ(neigh_output(skb, peer), 0);
	}
	EXPECT_EQ(neigh_stat(NEIGH_QUEUED) - queued, 5);
	EXPECT_EQ(neigh_stat(NEIGH_QUEUE_OVERFLOWS) - over, 2); /* 3 wait, the 2 oldest went */
	EXPECT_EQ(arp_test_frames(), 1); /* one request: a packet sends none, the timer the next */
	arp_test_forget_frames();
	EXPECT_EQ(skb_outstanding(), outstanding + 3);
	arp_test_clear_neigh(); /* a resolve timeout of 0: the entry has waited too long */
	EXPECT_EQ(neigh_stat(NEIGH_UNRESOLVED_DROPS) - unres, 3);
	EXPECT_EQ(skb_outstanding(), outstanding);
	u8 mac[ETH_ALEN];
	EXPECT_FALSE(neigh_lookup(dev, peer, mac));
	arp_test_restore_probes(&saved);
}

/* A bare IPv4 header for peer, as ip_output() hands neigh_output() a packet. */
static int arp_test_send_ip(struct net_device *dev, u32 peer)
{
	struct sk_buff *skb = skb_alloc();
	if (!skb)
		return -ENOMEM;
	struct iphdr *ip = skb_put(skb, sizeof(*ip));
	if (!ip) {
		kfree_skb(skb);
		return -ENOBUFS;
	}
	memset(ip, 0, sizeof(*ip));
	ip->ihl_version = 0x45;
	ip->daddr = peer;
	skb->dev = dev;
	return neigh_output(skb, peer);
}

/* Of the frames the device kept: broadcast ARP requests for peer, and IPv4 packets to mac. */
static void arp_test_count_sent(u32 peer, const u8 *mac, unsigned *requests, unsigned *ip)
{
	*requests = *ip = 0;
	spin_lock(&arp_test_lock);
	for (unsigned i = 0; i < arp_test_nsent; i++) {
		const struct sk_buff *skb = arp_test_sent[i];
		const struct ethhdr *eth = (const struct ethhdr *)skb->data;
		if (skb_len(skb) < ETH_HLEN + sizeof(struct iphdr))
			continue;
		if (ntohs(eth->h_proto) == ETH_P_ARP &&
		    skb_len(skb) >= ETH_HLEN + sizeof(struct arphdr)) {
			const struct arphdr *arp = (const struct arphdr *)(skb->data + ETH_HLEN);
			if (ntohs(arp->ar_op) == 1 && arp->ar_tip == peer && (eth->h_dest[0] & 1))
				++*requests;
		} else if (ntohs(eth->h_proto) == ETH_P_IP && mac &&
			   !memcmp(eth->h_dest, mac, ETH_ALEN) &&
			   ((const struct iphdr *)(skb->data + ETH_HLEN))->daddr == peer) {
			++*ip;
		}
	}
	spin_unlock(&arp_test_lock);
}

static bool arp_test_has_entry_found;
static u32 arp_test_has_entry_ip;
static void arp_test_has_entry_fn(struct net_device *dev, u32 ip, const u8 *mac, bool complete,
				  void *arg)
{
	(void)mac;
	(void)complete;
	if (dev == arg && ip == arp_test_has_entry_ip)
		arp_test_has_entry_found = true;
}

/* Is there an entry, complete or not, for ip on dev? */
static bool arp_test_has_entry(struct net_device *dev, u32 ip)
{
	arp_test_has_entry_found = false;
	arp_test_has_entry_ip = ip;
	neigh_for_each(arp_test_has_entry_fn, dev);
	return arp_test_has_entry_found;
}

/*
 * The peer ignores the first request: the entry's timer sends it again after the
 * retrans time, and when that one is answered the waiting packet leaves with the
 * peer's MAC. Once the retransmission is seen, the entry is left to wait without
 * sending more, so however late the test thread runs the entry is still waiting
 * when the reply comes.
 */
TEST(arp, an_unanswered_request_is_sent_again_and_the_reply_sends_the_packet)
{
	static const u8 them[ETH_ALEN] = {0x02, 0x33, 0, 0, 0, 11};
	struct net_device *dev = arp_test_device();
	ASSERT_TRUE(dev != NULL);
	u32 peer = IPV4(198, 18, 9, 11);
	unsigned requests, ip;
	struct neigh_gc_params saved;
	arp_test_forget_frames();
	arp_test_clear_neigh();
	arp_test_set_probes(&saved, ARP_TEST_FAST_PROBE_NS, 255);
	u64 probes = neigh_stat(NEIGH_PROBES);

	EXPECT_EQ(arp_test_send_ip(dev, peer), 0);
	arp_test_count_sent(peer, them, &requests, &ip);
	EXPECT_EQ(requests, 1);
	EXPECT_EQ(ip, 0);
	arp_test_forget_frames(); /* lost on the way: nobody answers it */

	for (unsigned ms = 0; ms < ARP_TEST_WAIT_MS && !arp_test_frames(); ms++)
		msleep(1);
	arp_test_count_sent(peer, them, &requests, &ip);
	EXPECT_GE(requests, 1); /* the retransmission */
	EXPECT_EQ(ip, 0);
	EXPECT_GE(neigh_stat(NEIGH_PROBES) - probes, 2);
	/* The next time the entry's work runs it takes this interval; it sends no more. */
	struct neigh_gc_params slow;
	arp_test_set_probes(&slow, ARP_TEST_NO_REPROBE_NS, 255);
	arp_test_forget_frames();

	arp_rcv(arp_test_packet(dev, 2, them, peer, dev->ipv4_addr, sizeof(struct arphdr)));
	arp_test_count_sent(peer, them, &requests, &ip);
	EXPECT_EQ(ip, 1);
	u8 mac[ETH_ALEN];
	EXPECT_TRUE(neigh_lookup(dev, peer, mac) && !memcmp(mac, them, ETH_ALEN));
	arp_test_restore_probes(&saved);
}

/*
 * Nobody answers: mcast_solicit (3) requests go out, each a retrans time after the
 * one before, and one retrans time after the last the entry gives up; the packets
 * that waited are dropped and counted, no buffer is left, and the entry is gone.
 */
TEST(arp, after_mcast_solicit_unanswered_requests_the_waiting_packets_are_dropped)
{
	struct net_device *dev = arp_test_device();
	ASSERT_TRUE(dev != NULL);
	u32 peer = IPV4(198, 18, 9, 12);
	unsigned requests, ip;
	struct neigh_gc_params saved;
	arp_test_forget_frames();
	arp_test_clear_neigh();
	long outstanding = skb_outstanding();
	arp_test_set_probes(&saved, ARP_TEST_FAST_PROBE_NS, 3);
	u64 probes = neigh_stat(NEIGH_PROBES), failed = neigh_stat(NEIGH_RESOLVE_FAILED),
	    unres = neigh_stat(NEIGH_UNRESOLVED_DROPS);

	EXPECT_EQ(arp_test_send_ip(dev, peer), 0);
	EXPECT_EQ(arp_test_send_ip(dev, peer), 0);
	EXPECT_TRUE(arp_test_has_entry(dev, peer));
	/* The failure is counted last, after the entry is gone and its packets dropped. */
	for (unsigned ms = 0; ms < ARP_TEST_WAIT_MS && neigh_stat(NEIGH_RESOLVE_FAILED) == failed;
	     ms++)
		msleep(1);
	EXPECT_GE(neigh_stat(NEIGH_RESOLVE_FAILED) - failed, 1);
	EXPECT_FALSE(arp_test_has_entry(dev, peer));
	arp_test_count_sent(peer, NULL, &requests, &ip);
	EXPECT_EQ(requests, 3);
	EXPECT_EQ(arp_test_frames(), 3);
	EXPECT_GE(neigh_stat(NEIGH_PROBES) - probes, 3);
	EXPECT_GE(neigh_stat(NEIGH_UNRESOLVED_DROPS) - unres, 2);
	arp_test_forget_frames();
	EXPECT_TRUE(net_wait_skbs(outstanding, ARP_TEST_WAIT_MS));

	/* A packet after the failure starts over: a new entry, a first request. */
	EXPECT_EQ(arp_test_send_ip(dev, peer), 0);
	arp_test_count_sent(peer, NULL, &requests, &ip);
	EXPECT_EQ(requests, 1);
	arp_test_restore_probes(&saved);
}
