/*
 * Selftests for virtio-net (drivers/net/virtio_net.c) under QEMU's user networking
 * (slirp: we are 10.0.2.15, the gateway 10.0.2.2 is the host's loopback).
 *
 * The exchanges with the host need the test runner: it listens on 127.0.0.1:Q and
 * passes net_host_port=Q; it answers each datagram there with the same bytes, and it
 * sends datagrams to the echo service through QEMU's forwarded port once the line
 * VIRTIO_NET_ECHO_READY appears (tests/run, NET_ECHO_READY, checks the replies). Without
 * the runner, eth0 or UDP (net/ipv4 not linked in), those tests skip.
 */
#include <grace/arch.h>
#include <grace/cmdline.h>
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/netdevice.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/string.h>
#include <grace/test.h>
#include <grace/time.h>
#include <grace/virtio.h>
#include <grace/virtio_net.h>

#define SLIRP_GATEWAY IPV4(10, 0, 2, 2)
/* What tests/run's listener looks for (HOST_PAYLOAD in tests/harness/nethost.py). */
#define HOST_PAYLOAD "grace virtio-net to the host"
/* tests/run waits for this line before it sends to the echo port (tests/harness/nethost.py). */
#define VIRTIO_NET_ECHO_READY "# virtio_net: echo service ready for the host"
#define HOST_REPLY_TIMEOUT_NS (5 * NSEC_PER_SEC)
/* The host resends every half second; this covers a slow TCG boot's scheduling too. */
#define ECHO_WAIT_MS 20000
#define PING_TIMEOUT_NS (2 * NSEC_PER_SEC)

/*
 * UDP and ICMP come from net/ipv4, which a kernel may be built without: weak references
 * are 0 then, and the tests that need them skip.
 */
extern struct udp_sock *udp_socket(void) __attribute__((weak));
extern int udp_bind(struct udp_sock *s, u16 port) __attribute__((weak));
extern long udp_sendto(struct udp_sock *s, const void *buf, size_t len, u32 daddr, u16 dport)
    __attribute__((weak));
extern long udp_recvfrom(struct udp_sock *s, void *buf, size_t len, u32 *saddr, u16 *sport,
			 u64 timeout_ns) __attribute__((weak));
extern void udp_close(struct udp_sock *s) __attribute__((weak));
extern s64 icmp_ping(u32 daddr, u16 seq, u64 timeout_ns) __attribute__((weak));

static bool have_udp(void)
{
	return udp_socket && udp_bind && udp_sendto && udp_recvfrom && udp_close;
}

/* eth0, or NULL with the test skipped. */
static struct net_device *eth0_or_skip(void)
{
	struct net_device *dev = dev_get_by_name("eth0");
	if (!dev)
		test_skip(virtio_nr_devices() ? "no eth0 among the virtio devices"
					      : "no virtio-net device on this machine");
	return dev;
}

/* The host port the runner listens on, or 0 with the test skipped. */
static u16 host_port_or_skip(void)
{
	const char *v = cmdline_get("net_host_port");
	u64 port;
	if (!v || parse_u64(v, &port) || port == 0 || port > 0xffff) {
		test_skip("no net_host_port= (the host runner's UDP listener)");
		return 0;
	}
	return (u16)port;
}

TEST(virtio_net, eth0_has_a_plausible_mac)
{
	struct net_device *dev = eth0_or_skip();
	if (!dev)
		return;
	static const u8 zero[ETH_ALEN];
	EXPECT_NE(memcmp(dev->mac, zero, ETH_ALEN), 0);
	EXPECT_EQ(dev->mac[0] & 1, 0); /* unicast: the group bit is clear */
	EXPECT_EQ(dev->mtu, ETH_DATA_LEN);
	EXPECT_TRUE(dev->flags & IFF_UP);
	EXPECT_FALSE(dev->flags & IFF_LOOPBACK);
}

TEST(virtio_net, gateway_answers_arp_and_ping)
{
	struct net_device *dev = eth0_or_skip();
	if (!dev)
		return;
	if (!icmp_ping) {
		test_skip("no ICMP (net/ipv4 not linked in)");
		return;
	}
	u64 rx = netdev_stat(dev, NETDEV_RX_PACKETS), tx = netdev_stat(dev, NETDEV_TX_PACKETS);
	/* The first ping waits for ARP to resolve the gateway; slirp answers both. */
	s64 rtt = icmp_ping(SLIRP_GATEWAY, 1, PING_TIMEOUT_NS);
	EXPECT_GE(rtt, 0);
	EXPECT_GE(netdev_stat(dev, NETDEV_RX_PACKETS), rx + 1);
	EXPECT_GE(netdev_stat(dev, NETDEV_TX_PACKETS), tx + 1);
}

TEST(virtio_net, udp_round_trip_through_the_host)
{
	struct net_device *dev = eth0_or_skip();
	if (!dev)
		return;
	if (!have_udp()) {
		test_skip("no UDP (net/ipv4 not linked in)");
		return;
	}
	u16 port = host_port_or_skip();
	if (!port)
		return;
	struct udp_sock *s = udp_socket();
	ASSERT_TRUE(s != NULL);
	EXPECT_EQ(udp_bind(s, 0), 0);
	EXPECT_EQ(udp_sendto(s, HOST_PAYLOAD, sizeof(HOST_PAYLOAD) - 1, SLIRP_GATEWAY, port),
		  (long)sizeof(HOST_PAYLOAD) - 1);
	char buf[64] = {0};
	u32 from = 0;
	u16 sport = 0;
	long n = udp_recvfrom(s, buf, sizeof(buf) - 1, &from, &sport, HOST_REPLY_TIMEOUT_NS);
	EXPECT_EQ(n, (long)sizeof(HOST_PAYLOAD) - 1);
	EXPECT_EQ(memcmp(buf, HOST_PAYLOAD, sizeof(HOST_PAYLOAD) - 1), 0);
	EXPECT_EQ(from, SLIRP_GATEWAY);
	EXPECT_EQ(sport, port);
	udp_close(s);
}

TEST(virtio_net, host_datagrams_reach_the_echo_service)
{
	struct net_device *dev = eth0_or_skip();
	if (!dev)
		return;
	if (!have_udp()) {
		test_skip("no UDP (net/ipv4 not linked in)");
		return;
	}
	if (!host_port_or_skip())
		return;
	u64 rx = netdev_stat(dev, NETDEV_RX_PACKETS), tx = netdev_stat(dev, NETDEV_TX_PACKETS);
	printk_raw(VIRTIO_NET_ECHO_READY "\n");
	/* A datagram from the host in, its echo out; tests/run checks the echo's bytes. */
	unsigned waited = 0;
	while ((netdev_stat(dev, NETDEV_RX_PACKETS) == rx ||
		netdev_stat(dev, NETDEV_TX_PACKETS) == tx) &&
	       waited < ECHO_WAIT_MS) {
		msleep(50);
		waited += 50;
	}
	EXPECT_GT(netdev_stat(dev, NETDEV_RX_PACKETS), rx);
	EXPECT_GT(netdev_stat(dev, NETDEV_TX_PACKETS), tx);
}

/* Frames the ring-full test offers: far more than the 64-descriptor ring holds. */
#define VIRTIO_NET_FLOOD_FRAMES 3000
#define VIRTIO_NET_FLOOD_ETHERTYPE 0x88b5 /* IEEE 802 local experimental: QEMU drops it */

/* Wait up to 5 s for the device to give back every transmit descriptor. */
static bool virtio_net_tx_drained(struct net_device *dev)
{
	for (unsigned ms = 0; ms < 5000; ms++) {
		if (!virtio_net_tx_in_flight(dev))
			return true;
		msleep(1);
	}
	return false;
}

/*
 * Full-sized frames offered while the device is not told of them: the ring fills
 * however fast the host sends, the driver stops the queue and the qdisc keeps the
 * frame. Released, the device sends the ring, completions wake the queue, and every
 * frame is either sent by the driver or dropped by the qdisc's limit, none lost in
 * between.
 */
TEST(virtio_net, a_full_ring_stops_the_queue_and_every_frame_is_sent_or_counted)
{
	struct net_device *dev = eth0_or_skip();
	if (!dev)
		return;
	struct Qdisc *q = dev->qdisc;
	/* An idle device, so that it looks at the ring again only when kicked. */
	ASSERT_TRUE(virtio_net_tx_drained(dev));
	msleep(10);
	u64 tx = netdev_stat(dev, NETDEV_TX_PACKETS), dropped = netdev_stat(dev, NETDEV_TX_DROPPED);
	spin_lock(&q->lock);
	u64 qdrops = q->drops;
	spin_unlock(&q->lock);
	ASSERT_EQ(virtio_net_hold_tx(dev, true), 0);
	unsigned offered = 0;
	for (unsigned i = 0; i < VIRTIO_NET_FLOOD_FRAMES; i++) {
		struct sk_buff *skb = skb_alloc();
		if (!skb)
			continue;
		struct ethhdr *eth = skb_put(skb, ETH_HLEN + ETH_DATA_LEN);
		ASSERT_TRUE(eth != NULL);
		memset(eth->h_dest, 0xff, ETH_ALEN);
		memcpy(eth->h_source, dev->mac, ETH_ALEN);
		eth->h_proto = htons(VIRTIO_NET_FLOOD_ETHERTYPE);
		skb->dev = dev;
		offered++;
		dev_queue_xmit(skb);
	}
	/* Nothing was sent, so nothing woke the queue: the ring's first refusal stopped it. */
	bool stopped = netif_queue_stopped(dev);
	int held = virtio_net_tx_in_flight(dev);
	ASSERT_EQ(virtio_net_hold_tx(dev, false), 0);
	EXPECT_TRUE(stopped);
	EXPECT_GT(held, 0);
	/* Wait for the qdisc to drain (completions restart it) and the queue to run again. */
	for (unsigned ms = 0; ms < 5000; ms++) {
		spin_lock(&q->lock);
		bool idle = !q->q.qlen && !q->requeued && !q->running;
		spin_unlock(&q->lock);
		if (idle && !netif_queue_stopped(dev))
			break;
		msleep(1);
	}
	spin_lock(&q->lock);
	u64 qd = q->drops - qdrops;
	spin_unlock(&q->lock);
	u64 sent = netdev_stat(dev, NETDEV_TX_PACKETS) - tx;
	printk("virtio_net flood: %u offered, %d on the held ring, %llu sent, %llu qdisc drops, "
	       "%llu tx_dropped\n",
	       offered, held, sent, qd, netdev_stat(dev, NETDEV_TX_DROPPED) - dropped);
	EXPECT_FALSE(netif_queue_stopped(dev));
	EXPECT_EQ(sent + qd, offered);
	/* Every drop is the qdisc's: the driver dropped none. */
	EXPECT_EQ(netdev_stat(dev, NETDEV_TX_DROPPED) - dropped, qd);
}
