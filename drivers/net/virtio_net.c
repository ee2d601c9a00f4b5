/*
 * virtio-net (virtio 1.1, 5.1): an Ethernet net_device over the first receive queue
 * (0) and transmit queue (1) of a virtio network device, on either transport.
 *
 * Every frame on the wire of the rings carries a 12-byte struct virtio_net_hdr in
 * front (the virtio 1.0 header, num_buffers included, whatever MRG_RXBUF says). We
 * negotiate no offloads, so the header we send is all zeros and the one we receive
 * says nothing we need. Without VIRTIO_NET_F_MRG_RXBUF each receive buffer must hold
 * a whole frame plus the header: one sk_buff's room after its headroom does.
 *
 * Receive: the queue is kept full of empty sk_buffs. The used-buffer interrupt takes
 * each filled one off the ring, strips the header, refills the slot and hands the
 * frame to netif_rx() once the queue's lock is dropped.
 * Transmit: xmit() pushes a zeroed header in front of the frame and adds it as one
 * device-readable buffer; the sk_buff is freed when the device is done with it, by
 * the transmit interrupt or the next xmit(). A full ring stops the device's queue and
 * hands the frame back (NETDEV_TX_BUSY) to the qdisc, which keeps it; the transmit
 * interrupt that frees descriptors wakes the queue.
 *
 * Locks: rx_lock serialises the receive queue (interrupt, probe, and xmit's refill of
 * slots an allocation failure left empty), tx_lock the
 * transmit queue (xmit, which may run on any CPU under the qdisc's root lock, and the
 * interrupt). They are never nested, and both are taken with interrupts off because
 * the interrupt handler takes them.
 */
#include <grace/atomic.h>
#include <grace/cmdline.h>
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/netdevice.h>
#include <grace/printk.h>
#include <grace/skbuff.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include <grace/virtio.h>
#include <asm/memory.h>

#define VIRTIO_NET_F_MAC 5 /* the device has a MAC address in its configuration space */
#define VIRTIO_NET_CONFIG_MAC 0
#define VIRTIO_NET_RX_QUEUE 0
#define VIRTIO_NET_TX_QUEUE 1
/*
 * Descriptors per queue: 64 receive buffers are 128 KiB of sk_buffs held for good,
 * more than the packets the tests have in flight and small beside MEM=96M; QEMU offers
 * 256 and the lower limit wins.
 */
#define VIRTIO_NET_QUEUE_SIZE 64
/* Receive data from here on puts the IPv4 header after the 14-byte Ethernet one 4-aligned. */
#define VIRTIO_NET_IP_ALIGN 2

/*
 * QEMU's user networking (slirp) hands the first guest 10.0.2.15/24 behind the gateway
 * 10.0.2.2 (which reaches the host's loopback) and has no DHCP client to ask here, so
 * the first device takes those. A later one takes its address from a boot argument named
 * after it, eth1=10.0.3.15/24 (tests/harness/nethost.py's second NIC), and has no gateway.
 */
#define SLIRP_GUEST_ADDR IPV4(10, 0, 2, 15)
#define SLIRP_NETMASK IPV4(255, 255, 255, 0)
#define SLIRP_GATEWAY IPV4(10, 0, 2, 2)

struct virtio_net_hdr {
	u8 flags;
	u8 gso_type;
	u16 hdr_len;
	u16 gso_size;
	u16 csum_start;
	u16 csum_offset;
	u16 num_buffers;
} __packed;

struct virtio_net {
	struct virtio_device *vdev;
	struct net_device *dev;
	struct virtqueue *rx, *tx;
	spinlock_t rx_lock; /* the receive queue */
	spinlock_t tx_lock; /* the transmit queue */
	bool tx_held;	    /* frames posted, the device not told: virtio_net_hold_tx() */
};

static unsigned nr_virtio_net; /* devices made, for their names; boot only */

/* Post empty buffers until the queue is full or memory runs out. rx_lock held. */
static unsigned virtio_net_refill_locked(struct virtio_net *vn)
{
	unsigned posted = 0;
	lockdep_assert_held(&vn->rx_lock);
	while (vn->rx->num_free) {
		struct sk_buff *skb = skb_alloc();
		if (!skb)
			break;
		skb_reserve(skb, VIRTIO_NET_IP_ALIGN);
		struct vq_buf b = {virt_to_phys(skb->data), skb_tailroom(skb)};
		if (virtqueue_add(vn->rx, &b, 0, 1, skb)) {
			kfree_skb(skb);
			break;
		}
		posted++;
	}
	return posted;
}

/* Refill the receive queue if it has empty slots: after an allocation failure in the
 * interrupt nothing else would, with no buffer left for the device to complete. */
static void virtio_net_refill(struct virtio_net *vn)
{
	unsigned long flags = spin_lock_irqsave(&vn->rx_lock);
	if (virtio_net_refill_locked(vn))
		virtqueue_kick(vn->rx);
	spin_unlock_irqrestore(&vn->rx_lock, flags);
}

/* The receive queue's used-buffer interrupt. */
static void virtio_net_rx_done(struct virtqueue *vq)
{
	struct virtio_net *vn = vq->driver_priv;
	struct net_device *dev = vn->dev;
	struct sk_buff_head frames; /* taken off the ring, for netif_rx() after the lock */
	struct sk_buff *skb;
	u32 len;

	skb_queue_init(&frames);
	unsigned long flags = spin_lock_irqsave(&vn->rx_lock);
	while ((skb = virtqueue_get_used(vq, &len)) != NULL) {
		/* A runt past the header goes on: inet_rcv() counts it under eth_short. */
		if (len < sizeof(struct virtio_net_hdr) || !skb_put(skb, len)) {
			netdev_stat_add(dev, NETDEV_RX_DROPPED, 1);
			kfree_skb(skb);
			continue;
		}
		skb_pull(skb, sizeof(struct virtio_net_hdr));
		skb->dev = dev;
		__skb_queue_tail(&frames, skb);
	}
	if (virtio_net_refill_locked(vn))
		virtqueue_kick(vq);
	spin_unlock_irqrestore(&vn->rx_lock, flags);

	while ((skb = __skb_dequeue(&frames)) != NULL) {
		netdev_stat_add(dev, NETDEV_RX_PACKETS, 1);
		netdev_stat_add(dev, NETDEV_RX_BYTES, skb_len(skb));
		netif_rx(skb);
	}
}

/* Take what the device has sent off the ring, onto done. tx_lock held. */
static void virtio_net_reap_tx_locked(struct virtio_net *vn, struct sk_buff_head *done)
{
	struct sk_buff *skb;
	lockdep_assert_held(&vn->tx_lock);
	while ((skb = virtqueue_get_used(vn->tx, NULL)) != NULL)
		__skb_queue_tail(done, skb);
}

static void virtio_net_free_all(struct sk_buff_head *l)
{
	struct sk_buff *skb;
	while ((skb = __skb_dequeue(l)) != NULL)
		kfree_skb(skb);
}

/* The transmit queue's used-buffer interrupt. */
static void virtio_net_tx_done(struct virtqueue *vq)
{
	struct virtio_net *vn = vq->driver_priv;
	struct sk_buff_head done; /* sent, to free after the lock */

	skb_queue_init(&done);
	unsigned long flags = spin_lock_irqsave(&vn->tx_lock);
	virtio_net_reap_tx_locked(vn, &done);
	/* Under tx_lock, as xmit stops the queue: a stop is never missed by its wake. */
	if (!skb_queue_empty(&done))
		netif_wake_queue(vn->dev);
	spin_unlock_irqrestore(&vn->tx_lock, flags);
	virtio_net_free_all(&done);
}

static int virtio_net_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct virtio_net *vn = dev->priv;
	struct sk_buff_head done; /* sent, to free after the lock */
	u32 frame_len = skb_len(skb);

	struct virtio_net_hdr *hdr = skb_push(skb, sizeof(*hdr));
	if (!hdr) {
		netdev_stat_add(dev, NETDEV_TX_DROPPED, 1);
		kfree_skb(skb);
		return -ENOSPC;
	}
	memset(hdr, 0, sizeof(*hdr));
	struct vq_buf b = {virt_to_phys(skb->data), skb_len(skb)};

	skb_queue_init(&done);
	unsigned long flags = spin_lock_irqsave(&vn->tx_lock);
	virtio_net_reap_tx_locked(vn, &done);
	int err = virtqueue_add(vn->tx, &b, 1, 0, skb);
	if (err)
		netif_stop_queue(dev); /* woken by virtio_net_tx_done() under this lock */
	else if (!vn->tx_held)
		virtqueue_kick(vn->tx);
	spin_unlock_irqrestore(&vn->tx_lock, flags);
	virtio_net_free_all(&done);
	if (READ_ONCE(vn->rx->num_free))
		virtio_net_refill(vn);

	if (err) {
		/* The ring is full of frames the device has not sent yet: the qdisc keeps skb. */
		skb_pull(skb, sizeof(*hdr));
		return NETDEV_TX_BUSY;
	}
	netdev_stat_add(dev, NETDEV_TX_PACKETS, 1);
	netdev_stat_add(dev, NETDEV_TX_BYTES, frame_len);
	return 0;
}

static const struct net_device_ops virtio_net_ops = {
    .xmit = virtio_net_xmit,
};

/*
 * While held, xmit posts frames without notifying the device. A device that is idle
 * (it has given back every descriptor and re-enabled notifications) does not look at
 * the ring again until the release kicks it, so a held ring fills at its size whatever
 * the speed of the host: how a test makes a full ring on purpose.
 */
int virtio_net_hold_tx(struct net_device *dev, bool hold)
{
	if (dev->ops != &virtio_net_ops)
		return -ENODEV;
	struct virtio_net *vn = dev->priv;
	unsigned long flags = spin_lock_irqsave(&vn->tx_lock);
	vn->tx_held = hold;
	if (!hold)
		virtqueue_kick(vn->tx);
	spin_unlock_irqrestore(&vn->tx_lock, flags);
	return 0;
}

/* Transmit descriptors not yet given back and reaped (0: every frame sent and freed). */
int virtio_net_tx_in_flight(struct net_device *dev)
{
	if (dev->ops != &virtio_net_ops)
		return -ENODEV;
	struct virtio_net *vn = dev->priv;
	return vn->tx->num - READ_ONCE(vn->tx->num_free);
}

static void virtio_net_read_mac(struct virtio_net *vn)
{
	u8 *mac = vn->dev->mac;
	if (virtio_has_feature(vn->vdev, VIRTIO_NET_F_MAC)) {
		for (unsigned i = 0; i < ETH_ALEN; i++)
			mac[i] = vn->vdev->ops->config_read8(vn->vdev, VIRTIO_NET_CONFIG_MAC + i);
		return;
	}
	/* No address from the device: a locally administered unicast one (02:...), per device. */
	static const u8 local[ETH_ALEN] = {0x02, 0x00, 0x00, 0x00, 0x00, 0x00};
	memcpy(mac, local, ETH_ALEN);
	mac[ETH_ALEN - 1] = (u8)(nr_virtio_net + 1);
}

static int virtio_net_probe(struct virtio_device *vdev)
{
	char name[IFNAMSIZ];
	snprintf(name, sizeof(name), "eth%u", nr_virtio_net);

	int err = virtio_negotiate(vdev, 1ull << VIRTIO_NET_F_MAC);
	if (err)
		return err;
	struct net_device *dev = alloc_netdev(name, sizeof(struct virtio_net));
	if (!dev) {
		virtio_device_fail(vdev);
		return -ENOMEM;
	}
	struct virtio_net *vn = dev->priv;
	vn->vdev = vdev;
	vn->dev = dev;
	spin_lock_init(&vn->rx_lock);
	spin_lock_init(&vn->tx_lock);
	vdev->priv = vn;
	vn->rx =
	    virtio_setup_vq(vdev, VIRTIO_NET_RX_QUEUE, VIRTIO_NET_QUEUE_SIZE, virtio_net_rx_done);
	vn->tx =
	    virtio_setup_vq(vdev, VIRTIO_NET_TX_QUEUE, VIRTIO_NET_QUEUE_SIZE, virtio_net_tx_done);
	if (!vn->rx || !vn->tx) {
		/* The queues stay with the failed device: it may still hold their addresses. */
		virtio_device_fail(vdev);
		return -ENOMEM;
	}
	vn->rx->driver_priv = vn;
	vn->tx->driver_priv = vn;
	virtio_net_read_mac(vn);
	dev->mtu = ETH_DATA_LEN;
	dev->ops = &virtio_net_ops;
	dev->flags |= IFF_UP;

	unsigned long flags = spin_lock_irqsave(&vn->rx_lock);
	unsigned posted = virtio_net_refill_locked(vn);
	/* Buffers may be added before DRIVER_OK, but the device may not be notified (3.1.1). */
	virtio_device_ready(vdev);
	virtqueue_kick(vn->rx);
	spin_unlock_irqrestore(&vn->rx_lock, flags);

	err = register_netdev(dev);
	if (err) {
		virtio_device_fail(vdev);
		return err;
	}
	nr_virtio_net++;
	const u8 *m = dev->mac;
	printk("virtio-net: %s on %s: MAC %02x:%02x:%02x:%02x:%02x:%02x, %u+%u descriptors, "
	       "%u receive buffers\n",
	       dev->name, vdev->name, m[0], m[1], m[2], m[3], m[4], m[5], vn->rx->num, vn->tx->num,
	       posted);

	u32 addr = SLIRP_GUEST_ADDR, mask = SLIRP_NETMASK, gateway = SLIRP_GATEWAY;
	if (nr_virtio_net > 1) {
		const char *v = cmdline_get(dev->name);
		if (!v)
			return 0;
		gateway = 0;
		if (inet_parse_prefix(v, &addr, &mask)) {
			pr_warn("virtio-net: bad %s=%s (want a.b.c.d/len); no IPv4 address\n",
				dev->name, v);
			return 0;
		}
	}
	err = inet_add_device(dev, addr, mask, gateway);
	if (err)
		pr_warn("virtio-net: %s: no IPv4 address: %s\n", dev->name, errno_name(err));
	return 0;
}
VIRTIO_DRIVER(net, VIRTIO_ID_NET, virtio_net_probe);
