/*
 * Races on purpose in the network (race_test_util.h): one CPU held inside a
 * lockless window of the receive or transmit path while another makes the change
 * the window must survive.
 *
 * - udp.rcv_found: a receiver has found its socket under RCU and not yet taken the
 *   queue lock; the socket is closed and a new one made from the same cache. The
 *   grace period before the free is what keeps the found memory a socket: the
 *   datagram goes to the socket it was sent to (purged with it), never into the
 *   new one, which cannot be the old memory while the receiver holds it.
 */
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/rcupdate.h>
#include <grace/string.h>
#include <grace/test.h>
#include <net/core/sink.h>

#include "net_test_util.h"
#include "race_test_util.h"

/* sink0's address and a peer on its subnet: a frame between them is ours, from a host's source. */
#define RACE_SINK_ADDR IPV4(10, 99, 0, 1)
#define RACE_PEER_ADDR IPV4(10, 99, 0, 2)

struct udp_close_race {
	struct net_device *dev;
	struct net_frame frame;	 /* to closed's port */
	struct udp_sock *closed; /* closed by the change */
	struct udp_sock *opened; /* made by the change, from the same cache */
	bool fed;
};

static void udp_close_racer(void *arg)
{
	struct udp_close_race *r = arg;
	/* Parks in udp_rcv() once it has found closed, before taking its queue lock. */
	r->fed = net_frame_feed(&r->frame, r->dev);
}

static void udp_close_change(void *arg)
{
	struct udp_close_race *r = arg;
	udp_close(r->closed);
	/* Had close freed it at once, closed would be what this CPU's array hands out next. */
	r->opened = udp_socket();
	if (r->opened && udp_bind(r->opened, 0)) {
		udp_close(r->opened);
		r->opened = NULL;
	}
}

TEST(net_race, a_receiver_holding_a_closed_udp_socket_never_writes_into_another)
{
	static struct udp_close_race r;
	static const char data[] = "sent to the socket being closed";
	struct net_counts a, b;
	char buf[64];

	memset(&r, 0, sizeof(r));
	r.dev = sink_dev();
	ASSERT_TRUE(r.dev != NULL && r.dev->ipv4_addr == RACE_SINK_ADDR);
	r.closed = udp_socket();
	ASSERT_TRUE(r.closed != NULL);
	ASSERT_EQ(udp_bind(r.closed, 0), 0);
	net_frame_udp(&r.frame, RACE_PEER_ADDR, 5000, RACE_SINK_ADDR, udp_port(r.closed), data,
		      sizeof(data));
	net_counts_read(&a);

	struct race race = {.point = "udp.rcv_found", .key = r.closed, .racer = udp_close_racer,
			    .change = udp_close_change, .arg = &r};
	if (!race_run(&race)) {
		udp_close(r.closed); /* not closed if the change never ran */
		rcu_barrier();
		return;
	}
	/* The closed socket's queue is purged after the grace period. */
	rcu_barrier();
	net_counts_read(&b);
	EXPECT_TRUE(r.fed);
	ASSERT_TRUE(r.opened != NULL);
	/* While the receiver held closed, its memory was not handed out again. */
	EXPECT_TRUE(r.opened != r.closed);
	/* The new socket got nothing: the datagram was never sent to it. */
	EXPECT_EQ(udp_rcvq_len(r.opened), 0);
	EXPECT_EQ(udp_recvfrom(r.opened, buf, sizeof(buf), NULL, NULL, 0), -EAGAIN);
	/* Delivered to the socket it was sent to, before that one was gone, and freed with it. */
	EXPECT_TRUE(net_counts_expect_one(&a, &b, NR_INET_DROPS, INET_RX_UDP));
	udp_close(r.opened);
	rcu_barrier();
}

