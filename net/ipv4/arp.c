/*
 * ARP (RFC 826) for IPv4 over Ethernet, and the receive path's drop counters.
 *
 * A request goes out when neigh_output() has a packet for a next hop whose MAC
 * it does not know. A received request for our address is answered (and, as
 * RFC 826 says, teaches us the asker's MAC); a received reply is believed only
 * when an INCOMPLETE neighbour entry is waiting for it, so a stranger's reply
 * cannot plant or change an entry, and is otherwise counted as unsolicited.
 *
 * The drop counters are per CPU, one line each, bumped with interrupts off: any
 * layer of the receive path on any CPU counts its drops without touching a line
 * another CPU writes.
 */
#include <grace/boot_info.h>
#include <grace/inet.h>
#include <grace/neighbour.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/skbuff.h>
#include <grace/string.h>
#include <asm/irq.h>

#include "internal.h"

#define ARPHRD_ETHER 1 /* ar_hrd: Ethernet */
#define ARPOP_REQUEST 1
#define ARPOP_REPLY 2
#define ARP_IPV4_LEN 4 /* ar_pln */

static const u8 eth_broadcast[ETH_ALEN] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

struct inet_drop_counts {
	u64 v[NR_INET_DROPS];
};
static DEFINE_PER_CPU_ALIGNED(struct inet_drop_counts, inet_drop_counts);

static const char *const inet_drop_names[NR_INET_DROPS] = {
    [DROP_ETH_SHORT] = "eth_short",
    [DROP_ETH_PROTO] = "eth_proto",
    [DROP_ETH_OTHERHOST] = "eth_otherhost",
    [DROP_IP_SHORT] = "ip_short",
    [DROP_IP_VERSION] = "ip_version",
    [DROP_IP_HDR_LEN] = "ip_hdr_len",
    [DROP_IP_LEN] = "ip_len",
    [DROP_IP_CSUM] = "ip_csum",
    [DROP_IP_FRAGMENT] = "ip_fragment",
    [DROP_IP_NOT_OURS] = "ip_not_ours",
    [DROP_IP_MARTIAN_SRC] = "ip_martian_src",
    [DROP_IP_OPTIONS] = "ip_options",
    [DROP_IP_SOURCE_ROUTE] = "ip_source_route",
    [DROP_IP_PROTO] = "ip_proto",
    [DROP_UDP_SHORT] = "udp_short",
    [DROP_UDP_LEN] = "udp_len",
    [DROP_UDP_CSUM] = "udp_csum",
    [DROP_UDP_NO_PORT] = "udp_no_port",
    [DROP_UDP_QUEUE_FULL] = "udp_queue_full",
    [DROP_ICMP_SHORT] = "icmp_short",
    [DROP_ICMP_CSUM] = "icmp_csum",
    [DROP_ICMP_BROADCAST] = "icmp_broadcast",
    [DROP_ARP_SHORT] = "arp_short",
    [DROP_ARP_BAD] = "arp_bad",
    [DROP_ARP_UNSOLICITED] = "arp_unsolicited",
    [DROP_ARP_BAD_SHA] = "arp_bad_sha",
    [DROP_TX_OVERSIZE] = "tx_oversize",
};

void inet_drop_count(enum inet_drop reason)
{
	if ((unsigned)reason >= NR_INET_DROPS)
		return;
	unsigned long flags = arch_irq_save();
	struct inet_drop_counts *mine = this_cpu_ptr(&inet_drop_counts);
	WRITE_ONCE(mine->v[reason], mine->v[reason] + 1);
	arch_irq_restore(flags);
}

u64 inet_drops(enum inet_drop reason)
{
	u64 sum = 0;
	if ((unsigned)reason >= NR_INET_DROPS)
		return 0;
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++)
		sum += READ_ONCE(per_cpu(inet_drop_counts, cpu).v[reason]);
	return sum;
}

const char *inet_drop_name(enum inet_drop reason)
{
	return (unsigned)reason < NR_INET_DROPS ? inet_drop_names[reason] : "unknown";
}

/* Fill an Ethernet/IPv4 ARP packet in skb (data at the ARP header) and send it to dest. */
static void arp_fill_and_send(struct sk_buff *skb, struct net_device *dev, u16 op, const u8 *dest,
			      const u8 *tha, u32 tip)
{
	struct arphdr *arp = (struct arphdr *)skb->data;
	arp->ar_hrd = htons(ARPHRD_ETHER);
	arp->ar_pro = htons(ETH_P_IP);
	arp->ar_hln = ETH_ALEN;
	arp->ar_pln = ARP_IPV4_LEN;
	arp->ar_op = htons(op);
	memcpy(arp->ar_sha, dev->mac, ETH_ALEN);
	arp->ar_sip = dev->ipv4_addr;
	memcpy(arp->ar_tha, tha, ETH_ALEN);
	arp->ar_tip = tip;
	skb_set_network_header(skb);

	struct ethhdr *eth = skb_push(skb, ETH_HLEN);
	if (!eth) {
		kfree_skb(skb);
		return;
	}
	memcpy(eth->h_dest, dest, ETH_ALEN);
	memcpy(eth->h_source, dev->mac, ETH_ALEN);
	eth->h_proto = htons(ETH_P_ARP);
	skb->dev = dev;
	skb->protocol = ETH_P_ARP;
	dev_queue_xmit(skb);
}

void arp_send_request(struct net_device *dev, u32 ip)
{
	static const u8 unknown[ETH_ALEN];
	struct sk_buff *skb = skb_alloc();
	if (!skb)
		return; /* the next packet for ip asks again */
	if (!skb_put(skb, sizeof(struct arphdr))) {
		kfree_skb(skb);
		return;
	}
	arp_fill_and_send(skb, dev, ARPOP_REQUEST, eth_broadcast, unknown, ip);
}

static void arp_drop(struct sk_buff *skb, enum inet_drop why)
{
	inet_drop_count(why);
	kfree_skb(skb);
}

void arp_rcv(struct sk_buff *skb)
{
	struct net_device *dev = skb->dev;
	if (skb_len(skb) < sizeof(struct arphdr))
		return arp_drop(skb, DROP_ARP_SHORT);
	/* A frame padded to Ethernet's minimum: the padding is no part of the packet. */
	skb_trim(skb, sizeof(struct arphdr));
	struct arphdr *arp = (struct arphdr *)skb->data;
	u16 op = ntohs(arp->ar_op);
	if (ntohs(arp->ar_hrd) != ARPHRD_ETHER || ntohs(arp->ar_pro) != ETH_P_IP ||
	    arp->ar_hln != ETH_ALEN || arp->ar_pln != ARP_IPV4_LEN ||
	    (op != ARPOP_REQUEST && op != ARPOP_REPLY))
		return arp_drop(skb, DROP_ARP_BAD);
	/*
	 * The group bit (the first byte's lowest) marks broadcast and multicast: no host has
	 * such a MAC, and learning one would send our unicast traffic to everybody (Linux's
	 * arp_process() drops it the same way).
	 */
	if (arp->ar_sha[0] & 1)
		return arp_drop(skb, DROP_ARP_BAD_SHA);

	u8 sha[ETH_ALEN];
	u32 sip = arp->ar_sip, tip = arp->ar_tip;
	memcpy(sha, arp->ar_sha, ETH_ALEN);
	if (op == ARPOP_REPLY) {
		if (!sip || !neigh_resolve(dev, sip, sha))
			return arp_drop(skb, DROP_ARP_UNSOLICITED);
		kfree_skb(skb);
		return;
	}
	/* A request: answer only for our own address; others' requests are no drop. */
	if (!dev->ipv4_addr || tip != dev->ipv4_addr) {
		kfree_skb(skb);
		return;
	}
	/* The asker will talk to us next: learn its MAC now (not for a probe from 0.0.0.0). */
	if (sip)
		neigh_update(dev, sip, sha, true);
	/* Turn the request around in its own buffer: same length, headers in front. */
	arp_fill_and_send(skb, dev, ARPOP_REPLY, sha, sha, sip);
}
