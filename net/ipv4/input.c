/*
 * The receive path, from the Ethernet header to a protocol: what NET_RX calls
 * for every frame (net_rx_handler), and what the tests call with frames of
 * their own making.
 *
 * Every check reads only bytes the previous one proved are in the buffer, so no
 * input can make it read past skb->tail; and every frame ends in exactly one
 * place: a drop, counted by its reason (inet_drop_count) and freed, or a
 * protocol that takes it. The IPv4 checks follow RFC 1122 section 3.2.1 and
 * the order of Linux's ip_rcv_core(): version and header length, total length
 * against the frame, header checksum; then the frame is cut to the total
 * length, dropping the padding a short Ethernet frame carries (60 bytes at
 * least on the wire). The checksum covers the whole header, options included
 * (ihl * 4 bytes, RFC 791); the options themselves are checked once the
 * destination and source are known good (ip_options.c).
 */
#include <grace/boot_info.h>
#include <grace/inet.h>
#include <grace/string.h>

#include "ip.h"

DEFINE_PER_CPU(u64[NR_INET_STATS], inet_stats);

static const char *const inet_stat_names[NR_INET_STATS] = {
    [INET_RX_FRAMES] = "rx_frames",   [INET_RX_ARP] = "rx_arp",
    [INET_RX_UDP] = "rx_udp",	      [INET_RX_ICMP] = "rx_icmp",
    [INET_TX_PACKETS] = "tx_packets", [INET_TX_ICMP_REPLIES] = "tx_icmp_replies",
};

u64 inet_stat(enum inet_stat s)
{
	u64 sum = 0;
	if ((unsigned)s >= NR_INET_STATS)
		return 0;
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++)
		sum += READ_ONCE(per_cpu(inet_stats, cpu)[s]);
	return sum;
}

const char *inet_stat_name(enum inet_stat s)
{
	return (unsigned)s < NR_INET_STATS ? inet_stat_names[s] : "?";
}

/* 127.0.0.0/8: the first byte of the address as it lies in memory. */
static bool ipv4_is_loopback(u32 addr)
{
	return ((const u8 *)&addr)[0] == 127;
}

/*
 * For us: one of our addresses (any device's: the weak host model of RFC 1122
 * 3.3.4.2, as Linux), 127/8 but only as it arrives on the loopback device (a
 * 127/8 destination on the wire is a martian), the limited broadcast, or the
 * subnet broadcast of the device it came in on.
 */
static bool ip_dest_is_ours(const struct net_device *dev, u32 daddr)
{
	u32 mask = READ_ONCE(dev->ipv4_mask), addr = READ_ONCE(dev->ipv4_addr);

	if (daddr == 0xffffffff)
		return true;
	if (ipv4_is_loopback(daddr))
		return dev->flags & IFF_LOOPBACK;
	if (addr && mask != 0xffffffff && daddr == (addr | ~mask))
		return true;
	return inet_addr_is_local(daddr);
}

/*
 * A source no host can have (RFC 1122 3.2.1.3, 3.2.2.6): the limited or the arriving
 * device's subnet broadcast, multicast (224/4), this network (0/8, but 0.0.0.0 to the
 * limited broadcast is a host still learning its address), and 127/8 from off the
 * loopback device. Linux's ip_route_input_slow() calls these martians and drops them
 * before any protocol sees them, so nothing answers a forged broadcast sender.
 */
static bool ip_src_is_martian(const struct net_device *dev, u32 saddr, u32 daddr)
{
	u32 mask = READ_ONCE(dev->ipv4_mask), addr = READ_ONCE(dev->ipv4_addr);
	u8 first = ((const u8 *)&saddr)[0];

	if (saddr == 0xffffffff || (first & 0xf0) == 0xe0)
		return true;
	if (addr && mask != 0xffffffff && saddr == (addr | ~mask))
		return true;
	if (first == 0)
		return !(saddr == 0 && daddr == 0xffffffff);
	return ipv4_is_loopback(saddr) && !(dev->flags & IFF_LOOPBACK);
}

static void ip_rcv(struct sk_buff *skb)
{
	u32 len = skb_len(skb), ihl, tot_len;
	const struct iphdr *iph = (const struct iphdr *)skb->data;

	if (len < sizeof(*iph))
		return inet_drop(skb, DROP_IP_SHORT);
	if (iph->ihl_version >> 4 != 4)
		return inet_drop(skb, DROP_IP_VERSION);
	ihl = (iph->ihl_version & 0xf) * 4;
	if (ihl < sizeof(*iph) || ihl > len)
		return inet_drop(skb, DROP_IP_HDR_LEN);
	tot_len = ntohs(iph->tot_len);
	if (tot_len > len || tot_len < ihl)
		return inet_drop(skb, DROP_IP_LEN);
	if (csum_fold(csum_partial(iph, ihl, 0)))
		return inet_drop(skb, DROP_IP_CSUM);
	if (!skb_trim(skb, tot_len)) /* cannot fail: tot_len <= len */
		return inet_drop(skb, DROP_IP_LEN);
	if (ntohs(iph->frag_off) & (IP_MF | IP_OFFSET))
		return inet_drop(skb, DROP_IP_FRAGMENT);
	if (!ip_dest_is_ours(skb->dev, iph->daddr))
		return inet_drop(skb, DROP_IP_NOT_OURS);
	if (ip_src_is_martian(skb->dev, iph->saddr, iph->daddr))
		return inet_drop(skb, DROP_IP_MARTIAN_SRC);
	/* After the route's checks, as Linux's ip_rcv_finish_core() runs ip_rcv_options(). */
	if (ihl > sizeof(*iph)) {
		enum inet_drop why = ip_options_check((const u8 *)(iph + 1), ihl - sizeof(*iph));
		if (why != NR_INET_DROPS)
			return inet_drop(skb, why);
	}

	skb_set_network_header(skb);
	skb_pull(skb, ihl); /* cannot fail: ihl <= tot_len */
	skb_set_transport_header(skb);
	switch (iph->protocol) {
	case IPPROTO_UDP:
		return udp_rcv(skb);
	case IPPROTO_ICMP:
		return icmp_rcv(skb);
	default:
		return inet_drop(skb, DROP_IP_PROTO);
	}
}

void inet_rcv(struct sk_buff *skb)
{
	const struct ethhdr *eth = (const struct ethhdr *)skb->data;

	inet_stat_inc(INET_RX_FRAMES);
	if (skb_len(skb) < ETH_HLEN)
		return inet_drop(skb, DROP_ETH_SHORT);
	/*
	 * Unicast to another station: a device that hands up every frame on the wire
	 * (virtio-net under QEMU starts promiscuous) passes other hosts' traffic, which is
	 * not ours whatever its IP destination says. Linux's eth_type_trans() marks it
	 * PACKET_OTHERHOST, and ip_rcv_core() and arp_rcv() drop it.
	 */
	if (!(eth->h_dest[0] & 1) && memcmp(eth->h_dest, skb->dev->mac, ETH_ALEN))
		return inet_drop(skb, DROP_ETH_OTHERHOST);
	skb->protocol = ntohs(eth->h_proto);
	skb_pull(skb, ETH_HLEN);
	switch (skb->protocol) {
	case ETH_P_IP:
		return ip_rcv(skb);
	case ETH_P_ARP:
		inet_stat_inc(INET_RX_ARP);
		skb_set_network_header(skb);
		return arp_rcv(skb);
	default:
		return inet_drop(skb, DROP_ETH_PROTO);
	}
}
