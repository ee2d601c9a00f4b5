/*
 * The IPv4 selftests' frame builders and counter snapshots (net_test_util.h).
 */
#include <grace/netdevice.h>
#include <grace/sched.h>
#include <grace/skbuff.h>
#include <grace/string.h>
#include <grace/test.h>

#include "net_test_util.h"

static void net_frame_eth_ip(struct net_frame *f, u32 saddr, u32 daddr, u8 protocol, u32 l4_len)
{
	struct ethhdr *eth = (struct ethhdr *)f->b;
	struct iphdr *iph = NET_FRAME_IP(f);

	memset(f, 0, sizeof(*f));
	/* To the zero MAC, lo's and the sink's own (the devices the tests feed): not another
	 * host's. */
	memset(eth->h_dest, 0, ETH_ALEN);
	memset(eth->h_source, 0x04, ETH_ALEN);
	eth->h_proto = htons(ETH_P_IP);
	iph->ihl_version = 0x45;
	iph->tot_len = htons((u16)(sizeof(*iph) + l4_len));
	iph->id = htons(0x1234);
	iph->ttl = 64;
	iph->protocol = protocol;
	iph->saddr = saddr;
	iph->daddr = daddr;
	net_frame_fix_ip_csum(f);
	f->len = ETH_HLEN + sizeof(*iph) + l4_len;
}

void net_frame_fix_ip_csum(struct net_frame *f)
{
	struct iphdr *iph = NET_FRAME_IP(f);
	u32 ihl = (iph->ihl_version & 0xf) * 4u;
	iph->check = 0;
	iph->check = csum_fold(csum_partial(iph, ihl < sizeof(*iph) ? sizeof(*iph) : ihl, 0));
}

void net_frame_ip_options(struct net_frame *f, const void *opt, u32 len)
{
	struct iphdr *iph = NET_FRAME_IP(f);
	u8 *l4 = NET_FRAME_L4(f);

	memmove(l4 + len, l4, f->len - ETH_HLEN - sizeof(*iph));
	memcpy(l4, opt, len);
	iph->ihl_version = (u8)(0x40 | (sizeof(*iph) + len) / 4);
	iph->tot_len = htons((u16)(ntohs(iph->tot_len) + len));
	f->len += len;
	net_frame_fix_ip_csum(f);
}

void net_frame_fix_udp_csum(struct net_frame *f)
{
	struct iphdr *iph = NET_FRAME_IP(f);
	struct udphdr *uh = (struct udphdr *)NET_FRAME_L4(f);
	u32 room = f->len > ETH_HLEN + sizeof(*iph) ? f->len - ETH_HLEN - sizeof(*iph) : 0;
	u32 len = ntohs(uh->len) < room ? ntohs(uh->len) : room;

	if (room < sizeof(*uh))
		return;
	uh->check = 0;
	uh->check = udp_checksum(iph->saddr, iph->daddr, uh, len);
	if (!uh->check)
		uh->check = 0xffff;
}

void net_frame_fix_icmp_csum(struct net_frame *f)
{
	struct icmphdr *ich = (struct icmphdr *)NET_FRAME_L4(f);
	u32 hdrs = ETH_HLEN + sizeof(struct iphdr);

	if (f->len < hdrs + sizeof(*ich))
		return;
	ich->checksum = 0;
	ich->checksum = csum_fold(csum_partial(ich, f->len - hdrs, 0));
}

void net_frame_udp(struct net_frame *f, u32 saddr, u16 sport, u32 daddr, u16 dport,
		   const void *data, u32 len)
{
	struct udphdr *uh;

	net_frame_eth_ip(f, saddr, daddr, IPPROTO_UDP, sizeof(*uh) + len);
	uh = (struct udphdr *)NET_FRAME_L4(f);
	uh->source = htons(sport);
	uh->dest = htons(dport);
	uh->len = htons((u16)(sizeof(*uh) + len));
	memcpy(uh + 1, data, len);
	net_frame_fix_udp_csum(f);
}

void net_frame_icmp_echo(struct net_frame *f, u32 saddr, u32 daddr, u16 id, u16 seq, u32 len)
{
	struct icmphdr *ich;

	net_frame_eth_ip(f, saddr, daddr, IPPROTO_ICMP, sizeof(*ich) + len);
	ich = (struct icmphdr *)NET_FRAME_L4(f);
	ich->type = 8;
	ich->id = htons(id);
	ich->sequence = htons(seq);
	for (u32 i = 0; i < len; i++)
		((u8 *)(ich + 1))[i] = (u8)(i * 7);
	net_frame_fix_icmp_csum(f);
}

void net_frame_arp(struct net_frame *f, u16 op, const u8 *sha, u32 sip, u32 tip)
{
	struct ethhdr *eth = (struct ethhdr *)f->b;
	struct arphdr *arp = (struct arphdr *)(f->b + ETH_HLEN);

	memset(f, 0, sizeof(*f));
	memset(eth->h_dest, 0xff, ETH_ALEN);
	memcpy(eth->h_source, sha, ETH_ALEN);
	eth->h_proto = htons(ETH_P_ARP);
	arp->ar_hrd = htons(1);
	arp->ar_pro = htons(ETH_P_IP);
	arp->ar_hln = ETH_ALEN;
	arp->ar_pln = 4;
	arp->ar_op = htons(op);
	memcpy(arp->ar_sha, sha, ETH_ALEN);
	arp->ar_sip = sip;
	arp->ar_tip = tip;
	f->len = ETH_HLEN + sizeof(*arp);
}

struct sk_buff *net_frame_skb(const struct net_frame *f, u32 len, struct net_device *dev)
{
	struct sk_buff *skb = skb_alloc();
	void *p;

	if (!skb)
		return NULL;
	p = skb_put(skb, len);
	if (!p) {
		kfree_skb(skb);
		return NULL;
	}
	memcpy(p, f->b, len);
	skb->dev = dev;
	return skb;
}

bool net_frame_feed(const struct net_frame *f, struct net_device *dev)
{
	struct sk_buff *skb = net_frame_skb(f, f->len, dev);
	if (!skb)
		return false;
	inet_rcv(skb);
	return true;
}

void net_counts_read(struct net_counts *c)
{
	for (unsigned r = 0; r < NR_INET_DROPS; r++)
		c->drops[r] = inet_drops(r);
	for (unsigned s = 0; s < NR_INET_STATS; s++)
		c->stats[s] = inet_stat(s);
	c->skbs = skb_outstanding();
}

bool net_counts_expect_one(const struct net_counts *a, const struct net_counts *b,
			   enum inet_drop reason, enum inet_stat stat)
{
	bool ok = true;

	for (unsigned r = 0; r < NR_INET_DROPS; r++) {
		u64 want = a->drops[r] + (r == (unsigned)reason);
		if (b->drops[r] != want)
			ok = test_fail(__FILE__, __LINE__, "drop %s: expected %llu, got %llu",
				       inet_drop_name(r), want, b->drops[r]);
	}
	for (unsigned s = 0; s < NR_INET_STATS; s++) {
		u64 want = a->stats[s] + (s == INET_RX_FRAMES) + (s == (unsigned)stat);
		if (b->stats[s] != want)
			ok = test_fail(__FILE__, __LINE__, "stat %s: expected %llu, got %llu",
				       inet_stat_name(s), want, b->stats[s]);
	}
	if (b->skbs != a->skbs)
		ok = test_fail(__FILE__, __LINE__, "skb_outstanding: expected %ld, got %ld",
			       a->skbs, b->skbs);
	return ok;
}

bool net_test_devices(struct net_device **lo, struct net_device **sink)
{
	*lo = dev_get_by_name("lo");
	*sink = dev_get_by_name("sink0");
	if (!*lo || !*sink || !(*lo)->ipv4_addr || !(*sink)->ipv4_addr) {
		test_skip("no lo or sink0 with an address");
		return false;
	}
	return true;
}

bool net_wait_skbs(long skbs, u64 timeout_ms)
{
	for (u64 waited = 0; skb_outstanding() != skbs; waited += 10) {
		if (waited >= timeout_ms)
			return false;
		msleep(10);
	}
	return true;
}
