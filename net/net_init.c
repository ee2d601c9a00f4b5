/*
 * net_init(): the protocols' half of bringing networking up, after
 * net_core_init() has registered the loopback and sink devices and
 * ip_rt_init() has made the route cache (inet_add_device flushes it). It installs
 * the receive path, gives both devices their addresses and routes, and starts
 * the echo service. A driver's device (eth0) joins later, through
 * inet_add_device(), when its driver has found it.
 *
 * A failure here is reported and the rest goes on: a kernel without working
 * loopback still boots to its prompt and says why ping fails.
 */
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/netdevice.h>
#include <grace/printk.h>

#include "ipv4/ip.h"

/* lo: the whole 127/8 (RFC 1122 3.2.1.3); the sink: a private /24 (RFC 1918) nothing else uses. */
#define NET_LO_ADDR IPV4(127, 0, 0, 1)
#define NET_LO_MASK IPV4(255, 0, 0, 0)
#define NET_SINK_ADDR IPV4(10, 99, 0, 1)
#define NET_SINK_MASK IPV4(255, 255, 255, 0)

static void net_init_dev(const char *name, u32 addr, u32 mask)
{
	struct net_device *dev = dev_get_by_name(name);
	int err = dev ? inet_add_device(dev, addr, mask, 0) : -ENODEV;

	if (err)
		pr_err("net: %s: %s\n", name, strerror(err));
	if (dev && (dev->flags & IFF_LOOPBACK))
		inet_loopback_dev = dev;
}

void net_init(void)
{
	int err;

	udp_init();
	WRITE_ONCE(net_rx_handler, inet_rcv);
	net_init_dev("lo", NET_LO_ADDR, NET_LO_MASK);
	net_init_dev("sink0", NET_SINK_ADDR, NET_SINK_MASK);
	err = udp_echo_start();
	if (err)
		pr_err("net: echo service: %s\n", strerror(err));
}
