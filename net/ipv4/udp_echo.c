/*
 * The echo service (RFC 862): a kernel thread bound to UDP port 7 that sends
 * every datagram back to where it came from.
 *
 * It does not answer a datagram from port 7 itself, nor from port 0: two echo
 * services (or one, fed a datagram it appears to have sent itself) would
 * otherwise bounce one datagram between them for ever, the loop inetd's
 * check_loop() refuses for its internal services.
 */
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/kthread.h>
#include <grace/printk.h>

#include "ip.h"

/* A whole datagram: the largest that fits a packet buffer. */
static u8 udp_echo_buf[SKB_BUF_SIZE];
static u64 udp_echo_sent; /* written by the one thread; READ_ONCE elsewhere */

u64 udp_echo_count(void)
{
	return READ_ONCE(udp_echo_sent);
}

static int udp_echo_main(void *arg)
{
	struct udp_sock *s = arg;

	for (;;) {
		u32 saddr;
		u16 sport;
		long n =
		    udp_recvfrom(s, udp_echo_buf, sizeof(udp_echo_buf), &saddr, &sport, UINT64_MAX);
		if (n < 0 || sport == UDP_ECHO_PORT || sport == 0)
			continue;
		if (udp_sendto(s, udp_echo_buf, (size_t)n, saddr, sport) == n)
			WRITE_ONCE(udp_echo_sent, udp_echo_sent + 1);
	}
	return 0;
}

int udp_echo_start(void)
{
	struct udp_sock *s = udp_socket();
	struct task *t;
	int err;

	if (!s)
		return -ENOMEM;
	err = udp_bind(s, UDP_ECHO_PORT);
	if (err) {
		udp_close(s);
		return err;
	}
	t = kthread_run(udp_echo_main, s, "udp_echo");
	if (!t) {
		udp_close(s);
		return -ENOMEM;
	}
	kthread_detach(t);
	return 0;
}
