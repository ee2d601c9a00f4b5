/*
 * The addresses of our devices: each device's own (dev->ipv4_addr, ipv4_mask)
 * and a table of them all, which the receive path searches for every packet to
 * know whether it is for us.
 *
 * The table only grows and is short (a device or two per driver), so it is an
 * array that readers scan without a lock: a writer fills an entry, then
 * publishes it by raising the count with a release that pairs with the
 * reader's acquire. A device that is given a new address rewrites its entry in
 * place with WRITE_ONCE, which a reader sees as the old address or the new one.
 *
 * A new address replaces the device's old one with its on-link route, as Linux
 * removes an address's prefix route with the address: inet_config_mutex keeps
 * two changes (a driver's probe, the shell's ifconfig) from mixing their routes.
 * Lock order: inet_config_mutex, then fib's mutex, then inet_addr_lock.
 */
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/mutex.h>
#include <grace/printk.h>
#include <grace/route.h>
#include <grace/spinlock.h>
#include <grace/string.h>

#include "ip.h"

/* Devices with an address at most: lo, the sink and a few drivers' devices. */
#define INET_MAX_ADDRS 16

struct inet_ifaddr {
	struct net_device *dev; /* set before the entry is published, never changed */
	u32 addr;		/* WRITE_ONCE under inet_addr_lock; readers READ_ONCE */
};

static struct inet_ifaddr inet_addrs[INET_MAX_ADDRS];
static unsigned inet_nr_addrs;		/* entries published: store-release under the lock */
static DEFINE_SPINLOCK(inet_addr_lock); /* serialises the writers */
static DEFINE_MUTEX(inet_config_mutex); /* serialises address changes with their routes */

struct net_device *inet_loopback_dev;

struct net_device *inet_addr_dev(u32 addr)
{
	/* Pairs with the smp_store_release() in inet_add_device(). */
	unsigned n = smp_load_acquire(&inet_nr_addrs);

	if (!addr)
		return NULL;
	for (unsigned i = 0; i < n; i++)
		if (READ_ONCE(inet_addrs[i].addr) == addr)
			return inet_addrs[i].dev;
	return NULL;
}

bool inet_addr_is_local(u32 addr)
{
	return inet_addr_dev(addr) != NULL;
}

/* The prefix length of mask (network order), or -1 if its ones are not contiguous. */
static int inet_mask_len(u32 mask)
{
	u32 m = ntohl(mask);
	int len = __builtin_popcount(m);
	return (len == 0 ? m == 0 : m == ~0u << (32 - len)) ? len : -1;
}

static int inet_set_addr(struct net_device *dev, u32 addr)
{
	int err = 0;
	unsigned i;

	spin_lock(&inet_addr_lock);
	for (i = 0; i < inet_nr_addrs && inet_addrs[i].dev != dev; i++)
		;
	if (i < inet_nr_addrs) {
		WRITE_ONCE(inet_addrs[i].addr, addr);
	} else if (i == INET_MAX_ADDRS) {
		err = -ENOSPC;
	} else {
		inet_addrs[i].dev = dev;
		inet_addrs[i].addr = addr;
		smp_store_release(&inet_nr_addrs, i + 1);
	}
	spin_unlock(&inet_addr_lock);
	return err;
}

int inet_add_device(struct net_device *dev, u32 addr, u32 mask, u32 gateway)
{
	int len = inet_mask_len(mask), err;

	if (!dev || !addr || len < 0)
		return -EINVAL;
	mutex_lock(&inet_config_mutex);
	u32 old_addr = READ_ONCE(dev->ipv4_addr), old_mask = READ_ONCE(dev->ipv4_mask);
	err = inet_set_addr(dev, addr);
	if (err)
		goto out;
	WRITE_ONCE(dev->ipv4_mask, mask);
	WRITE_ONCE(dev->ipv4_addr, addr);
	/* The old subnet's on-link route goes with the old address (unless another took it). */
	if (old_addr)
		fib_del_dev(old_addr & old_mask, (unsigned)inet_mask_len(old_mask), dev);
	err = fib_add(addr & mask, (unsigned)len, 0, dev);
	if (!err && gateway)
		err = fib_add(0, 0, gateway, dev);
	/* Cached routes were looked up without this device's routes, or with its old ones. */
	rt_cache_flush();
out:
	mutex_unlock(&inet_config_mutex);
	return err;
}

int inet_parse_prefix(const char *s, u32 *addr, u32 *mask)
{
	char buf[INET_ADDRSTRLEN];
	const char *slash = strchr(s, '/');
	unsigned len = 0, digits = 0;

	if (!slash || (size_t)(slash - s) >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, (size_t)(slash - s));
	buf[slash - s] = '\0';
	for (const char *p = slash + 1; *p; p++) {
		if (*p < '0' || *p > '9' || ++digits > 2)
			return -EINVAL;
		len = len * 10 + (unsigned)(*p - '0');
	}
	if (!digits || !len || len > 32 || inet_parse_addr(buf, addr))
		return -EINVAL;
	*mask = htonl(len == 32 ? 0xffffffffu : ~(0xffffffffu >> len));
	return 0;
}

int inet_parse_addr(const char *s, u32 *addr)
{
	u8 b[4];

	for (unsigned i = 0; i < 4; i++) {
		unsigned v = 0, digits = 0;
		while (*s >= '0' && *s <= '9' && digits < 4) {
			v = v * 10 + (unsigned)(*s++ - '0');
			digits++;
		}
		if (!digits || v > 255 || *s != (i < 3 ? '.' : '\0'))
			return -EINVAL;
		b[i] = (u8)v;
		s++;
	}
	*addr = IPV4(b[0], b[1], b[2], b[3]);
	return 0;
}

char *inet_format_addr(u32 addr, char *buf)
{
	const u8 *b = (const u8 *)&addr;
	snprintf(buf, INET_ADDRSTRLEN, "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
	return buf;
}
