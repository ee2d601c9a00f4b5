/*
 * The console shell's network commands: ifconfig, ping, udpsend and netstat
 * (route, rtcache and arp are net/ipv4/shell_cmds.c's). Output is one fact per
 * line, key=value where a script wants to pick a number out; an error is one
 * line, `name: what: strerror`, as in fs/shell_cmds.c, and makes the command
 * return the -errno.
 */
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/netdevice.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/shell.h>
#include <grace/string.h>
#include <grace/time.h>

/* How long ping waits for each reply, and udpsend for an answer: a second, as ping -W 1. */
#define NET_SHELL_WAIT_NS NSEC_PER_SEC
/* ping's requests per run unless told, and the most it sends (a typo must not run for hours). */
#define PING_DEFAULT_COUNT 3
#define PING_MAX_COUNT 1000
/* Between requests: shorter than ping(8)'s second, so a console script does not wait long. */
#define PING_INTERVAL_MS 200

static int net_shell_err(const char *cmd, const char *what, int err)
{
	printk("%s: %s: %s\n", cmd, what, strerror(err));
	return err;
}

static void net_format_mac(const u8 *mac, char *buf, size_t size)
{
	snprintf(buf, size, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3], mac[4],
		 mac[5]);
}

/* ---- ifconfig ---- */

struct ifconfig_arg {
	const char *name; /* the one device to show, or NULL for all */
	unsigned shown;
};

static void ifconfig_dev(struct net_device *dev, void *arg)
{
	struct ifconfig_arg *a = arg;
	char mac[18], addr[INET_ADDRSTRLEN], mask[INET_ADDRSTRLEN];
	struct Qdisc *q = READ_ONCE(dev->qdisc);

	if (a->name && strcmp(a->name, dev->name))
		return;
	a->shown++;
	net_format_mac(dev->mac, mac, sizeof(mac));
	printk("%s: index=%u flags=%s%s%s mtu=%u mac=%s inet=%s mask=%s\n", dev->name, dev->ifindex,
	       dev->flags & IFF_UP ? "UP" : "DOWN", dev->flags & IFF_LOOPBACK ? ",LOOPBACK" : "",
	       dev->flags & IFF_NOARP ? ",NOARP" : "", dev->mtu, mac,
	       inet_format_addr(READ_ONCE(dev->ipv4_addr), addr),
	       inet_format_addr(READ_ONCE(dev->ipv4_mask), mask));
	printk("  rx packets=%llu bytes=%llu dropped=%llu\n", netdev_stat(dev, NETDEV_RX_PACKETS),
	       netdev_stat(dev, NETDEV_RX_BYTES), netdev_stat(dev, NETDEV_RX_DROPPED));
	printk("  tx packets=%llu bytes=%llu dropped=%llu\n", netdev_stat(dev, NETDEV_TX_PACKETS),
	       netdev_stat(dev, NETDEV_TX_BYTES), netdev_stat(dev, NETDEV_TX_DROPPED));
	if (q)
		printk("  qdisc=%s limit=%u queued=%u drops=%llu\n", q->ops->id,
		       READ_ONCE(q->limit), READ_ONCE(q->q.qlen), READ_ONCE(q->drops));
}

/* ifconfig <dev> <a.b.c.d/n>: the address, its netmask and its subnet's on-link route. */
static int ifconfig_set(const char *name, const char *prefix)
{
	struct net_device *dev = dev_get_by_name(name);
	u32 addr, mask;
	int err;

	if (!dev)
		return net_shell_err("ifconfig", name, -ENODEV);
	if (inet_parse_prefix(prefix, &addr, &mask) || !addr)
		return net_shell_err("ifconfig", prefix, -EINVAL);
	err = inet_add_device(dev, addr, mask, 0);
	if (err)
		return net_shell_err("ifconfig", name, err);
	return 0;
}

SHELL_CMD(ifconfig, "[device [a.b.c.d/n]]",
	  "the network devices: flags, addresses, counters, qdisc; or give one an address")
{
	struct ifconfig_arg a = {argc >= 2 ? argv[1] : NULL, 0};
	if (argc > 3)
		return SHELL_USAGE;
	if (argc == 3) {
		int err = ifconfig_set(argv[1], argv[2]);
		if (err)
			return err;
	}
	netdev_for_each(ifconfig_dev, &a);
	if (a.name && !a.shown)
		return net_shell_err("ifconfig", a.name, -ENODEV);
	return 0;
}

/* ---- ping ---- */

SHELL_CMD(ping, "<ip> [count]", "ICMP echo requests, one reply awaited for a second each")
{
	u64 count = PING_DEFAULT_COUNT, received = 0, seq;
	u32 daddr;
	int err;

	if (argc < 2 || argc > 3)
		return SHELL_USAGE;
	if (inet_parse_addr(argv[1], &daddr))
		return net_shell_err("ping", argv[1], -EINVAL);
	if (argc == 3 && (parse_u64(argv[2], &count) || !count || count > PING_MAX_COUNT))
		return net_shell_err("ping", argv[2], -EINVAL);
	/* ^C stops it between requests; the count says how many went. */
	for (seq = 1; seq <= count && !shell_interrupted(); seq++) {
		s64 rtt = icmp_ping(daddr, (u16)seq, NET_SHELL_WAIT_NS);
		if (rtt == -ETIMEDOUT) {
			printk("no reply from %s: icmp_seq=%llu\n", argv[1], seq);
		} else if (rtt < 0) {
			return net_shell_err("ping", argv[1], (int)rtt);
		} else {
			received++;
			printk("reply from %s: icmp_seq=%llu time=%llu us\n", argv[1], seq,
			       (u64)rtt / NSEC_PER_USEC);
		}
		if (seq < count)
			msleep(PING_INTERVAL_MS);
	}
	printk("%llu sent, %llu received\n", seq - 1, received);
	err = received || seq == 1 ? 0 : -ETIMEDOUT;
	return err ? net_shell_err("ping", argv[1], err) : 0;
}

/* ---- udpsend ---- */

/* The words from argv[first] on, joined by single spaces, into buf: their length. */
static size_t net_join_words(char *buf, size_t size, int argc, char **argv, int first)
{
	size_t len = 0;
	for (int i = first; i < argc; i++)
		len += scnprintf(buf + len, size - len, "%s%s", i > first ? " " : "", argv[i]);
	return len;
}

static char udpsend_buf[256]; /* the text, then any answer; only the shell thread uses it */

SHELL_CMD(udpsend, "<ip> <port> <text>", "send text in one UDP datagram; print any answer")
{
	u64 port;
	u32 daddr, saddr;
	u16 sport;
	struct udp_sock *s;
	char from[INET_ADDRSTRLEN];
	long n;

	if (argc < 4)
		return SHELL_USAGE;
	if (inet_parse_addr(argv[1], &daddr))
		return net_shell_err("udpsend", argv[1], -EINVAL);
	if (parse_u64(argv[2], &port) || !port || port > 65535)
		return net_shell_err("udpsend", argv[2], -EINVAL);
	s = udp_socket();
	if (!s)
		return net_shell_err("udpsend", "socket", -ENOMEM);
	n = net_join_words(udpsend_buf, sizeof(udpsend_buf), argc, argv, 3);
	n = udp_sendto(s, udpsend_buf, (size_t)n, daddr, (u16)port);
	if (n < 0) {
		udp_close(s);
		return net_shell_err("udpsend", argv[1], (int)n);
	}
	printk("sent %ld bytes to %s:%llu from port %u\n", n, argv[1], port, udp_port(s));
	n = udp_recvfrom(s, udpsend_buf, sizeof(udpsend_buf) - 1, &saddr, &sport,
			 NET_SHELL_WAIT_NS);
	if (n >= 0) {
		udpsend_buf[n] = '\0';
		printk("reply from %s:%u: %s\n", inet_format_addr(saddr, from), sport, udpsend_buf);
	}
	udp_close(s);
	return 0;
}

/* ---- netstat ---- */

static void netstat_udp(u16 port, u32 rcvq, u64 drops, void *arg)
{
	printk("udp port=%u rcvq=%u drops=%llu\n", port, rcvq, drops);
}

SHELL_CMD(netstat, "", "the receive path's counters, its drops by reason, the UDP sockets")
{
	char line[256];
	size_t len = 0;

	if (argc != 1)
		return SHELL_USAGE;
	for (unsigned s = 0; s < NR_INET_STATS; s++)
		len += scnprintf(line + len, sizeof(line) - len, "%s%s=%llu", s ? " " : "ip ",
				 inet_stat_name(s), inet_stat(s));
	printk("%s\n", line);
	for (unsigned r = 0; r < NR_INET_DROPS; r++)
		if (inet_drops(r))
			printk("drop %s=%llu\n", inet_drop_name(r), inet_drops(r));
	udp_for_each(netstat_udp, NULL);
	return 0;
}
