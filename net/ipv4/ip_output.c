/*
 * IPv4 output: route, header, neighbour. No fragmentation: a datagram bigger
 * than the device's MTU is refused (-EMSGSIZE, DROP_TX_OVERSIZE), as Linux
 * refuses one with IP_PMTUDISC_DO.
 *
 * The identification field comes from a per-CPU counter, so sending touches no
 * shared line; each CPU starts in its own part of the 16-bit space, so two CPUs
 * do not hand out the same values side by side. Nothing here fragments, so the
 * field only has to be unique per RFC 6864 for fragments others may make.
 */
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/neighbour.h>
#include <grace/rcupdate.h>
#include <grace/route.h>

#include "ip.h"

static DEFINE_PER_CPU(u16, ip_ident);

/* 0x9e37: 2^16 over the golden ratio, so the CPUs' starting points spread over the space. */
static u16 ip_next_ident(void)
{
	u16 id;
	preempt_disable();
	id = (u16)(this_cpu(ip_ident)++ + smp_processor_id() * 0x9e37u);
	preempt_enable();
	return id;
}

int ip_route_dev(u32 daddr, u8 tos, struct net_device **dev, u32 *gateway, u32 *saddr)
{
	struct net_device *owner = inet_addr_dev(daddr);
	struct rtable *rt;
	int err;

	/* 127/8 goes by the FIB's route to lo; another device's own address is ours too. */
	if (owner && inet_loopback_dev && !(owner->flags & IFF_LOOPBACK)) {
		*dev = inet_loopback_dev;
		*gateway = *saddr = daddr;
		return 0;
	}
	rcu_read_lock();
	err = ip_route_output(daddr, 0, tos, 0, &rt);
	if (!err) {
		/* rt lasts until rcu_read_unlock(); the device for ever. */
		*dev = rt->dev;
		*gateway = rt->gateway;
		*saddr = READ_ONCE(rt->dev->ipv4_addr);
	}
	rcu_read_unlock();
	return err;
}

int ip_output_dev(struct sk_buff *skb, struct net_device *dev, u32 gateway, u32 saddr, u32 daddr,
		  u8 protocol, u8 tos)
{
	u32 tot_len = skb_len(skb) + IP_HDR_LEN;
	struct iphdr *iph;

	if (tot_len > dev->mtu) {
		inet_drop(skb, DROP_TX_OVERSIZE);
		return -EMSGSIZE;
	}
	iph = skb_push(skb, IP_HDR_LEN);
	if (!iph) { /* a sender that reserved no headroom */
		kfree_skb(skb);
		return -ENOBUFS;
	}
	skb_set_network_header(skb);
	iph->ihl_version = 0x40 | IP_HDR_LEN / 4;
	iph->tos = tos;
	iph->tot_len = htons((u16)tot_len);
	iph->id = htons(ip_next_ident());
	iph->frag_off = 0;
	iph->ttl = IP_TTL_DEFAULT;
	iph->protocol = protocol;
	iph->check = 0;
	iph->saddr = saddr;
	iph->daddr = daddr;
	iph->check = csum_fold(csum_partial(iph, IP_HDR_LEN, 0));
	skb->protocol = ETH_P_IP;
	skb->dev = dev;
	inet_stat_inc(INET_TX_PACKETS);
	return neigh_output(skb, gateway);
}

int ip_output(struct sk_buff *skb, u32 daddr, u8 protocol, u8 tos)
{
	struct net_device *dev;
	u32 gateway, saddr;
	int err = ip_route_dev(daddr, tos, &dev, &gateway, &saddr);

	if (err) {
		kfree_skb(skb);
		return err;
	}
	return ip_output_dev(skb, dev, gateway, saddr, daddr, protocol, tos);
}
