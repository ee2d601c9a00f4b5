/*
 * lo: what is sent on it is received on it. xmit hands the same sk_buff to
 * netif_rx(), so a packet crosses the root qdisc and then the NET_RX softirq of
 * the sending CPU, the path a real device's packets take, with no copy.
 */
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/netdevice.h>

#include "core.h"

static int loopback_xmit(struct sk_buff *skb, struct net_device *dev)
{
	u32 len = skb_len(skb);
	netdev_stat_add(dev, NETDEV_TX_PACKETS, 1);
	netdev_stat_add(dev, NETDEV_TX_BYTES, len);
	netdev_stat_add(dev, NETDEV_RX_PACKETS, 1);
	netdev_stat_add(dev, NETDEV_RX_BYTES, len);
	skb->dev = dev;
	netif_rx(skb);
	return 0;
}

static const struct net_device_ops loopback_ops = {
    .xmit = loopback_xmit,
};

int loopback_init(void)
{
	struct net_device *dev = alloc_netdev("lo", 0);
	if (!dev)
		return -ENOMEM;
	dev->flags = IFF_LOOPBACK | IFF_NOARP | IFF_UP;
	/* Linux's loopback MTU since 4.0: 64 KiB, but a buffer here holds SKB_BUF_SIZE. */
	dev->mtu = ETH_DATA_LEN;
	dev->ipv4_addr = IPV4(127, 0, 0, 1);
	dev->ipv4_mask = IPV4(255, 0, 0, 0);
	dev->ops = &loopback_ops;
	return register_netdev(dev);
}
