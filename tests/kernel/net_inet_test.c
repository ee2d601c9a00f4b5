/*
 * IPv4, ICMP and UDP from the outside: the Internet checksum against known
 * vectors, addresses parsed and printed, and datagrams and pings sent over the
 * loopback device through the whole stack (socket, ip_output, route cache,
 * neighbour layer, qdisc, loopback, NET_RX, the receive path, the socket's queue).
 */
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/rcupdate.h>
#include <grace/route.h>
#include <grace/sched.h>
#include <grace/skbuff.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <grace/test.h>
#include <grace/time.h>

#include "net_test_util.h"

#define LOCALHOST IPV4(127, 0, 0, 1)
/* Long enough for a datagram to cross loopback and NET_RX under TCG with 64 CPUs. */
#define NET_TEST_WAIT_NS (2 * NSEC_PER_SEC)

/* The folded checksum's two bytes as they would go on the wire. */
static u16 csum_wire(u16 c)
{
	const u8 *b = (const u8 *)&c;
	return (u16)(b[0] << 8 | b[1]);
}

TEST(inet_csum, the_rfc1071_example_gives_0x220d)
{
	/* RFC 1071 section 3: these words sum to 0xddf2, whose complement is 0x220d. */
	static const u8 v[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7};
	EXPECT_EQ(csum_wire(csum_fold(csum_partial(v, sizeof(v), 0))), 0x220d);
	/* Split at an even offset, the sums add up to the same checksum. */
	EXPECT_EQ(csum_wire(csum_fold(csum_partial(v + 4, 4, csum_partial(v, 4, 0)))), 0x220d);
}

TEST(inet_csum, an_odd_length_pads_the_last_byte_with_zero_on_the_right)
{
	/* 0x0001 + 0xf203 + 0xf4f5 + 0xf600 = 0x2dcf9, folded 0xdcfb, complement 0x2304. */
	static const u8 v[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6};
	static const u8 w[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0x00};
	EXPECT_EQ(csum_wire(csum_fold(csum_partial(v, sizeof(v), 0))), 0x2304);
	EXPECT_EQ(csum_fold(csum_partial(v, sizeof(v), 0)),
		  csum_fold(csum_partial(w, sizeof(w), 0)));
	/* From an odd address too: the words are read a byte at a time. */
	static u8 odd[sizeof(v) + 1];
	memcpy(odd + 1, v, sizeof(v));
	EXPECT_EQ(csum_wire(csum_fold(csum_partial(odd + 1, sizeof(v), 0))), 0x2304);
}

TEST(inet_csum, an_ip_header_sums_to_zero_with_its_checksum_in)
{
	/* A header with its checksum (0xb861) cleared. */
	u8 h[20] = {0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
		    0x00, 0x00, 0xc0, 0xa8, 0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7};
	u16 c = csum_fold(csum_partial(h, sizeof(h), 0));
	EXPECT_EQ(csum_wire(c), 0xb861);
	memcpy(h + 10, &c, 2);
	EXPECT_EQ(csum_fold(csum_partial(h, sizeof(h), 0)), 0);
}

TEST(inet_csum, udp_checksum_covers_the_pseudo_header)
{
	/* 127.0.0.1:1234 to 127.0.0.1:7, "hi!": 0x7393, worked out by hand from RFC 768. */
	u8 d[11] = {0x04, 0xd2, 0x00, 0x07, 0x00, 0x0b, 0x00, 0x00, 'h', 'i', '!'};
	u16 c = udp_checksum(LOCALHOST, LOCALHOST, d, sizeof(d));
	EXPECT_EQ(csum_wire(c), 0x7393);
	memcpy(d + 6, &c, 2);
	EXPECT_EQ(udp_checksum(LOCALHOST, LOCALHOST, d, sizeof(d)), 0);
	/* Another destination address is another sum. */
	EXPECT_NE(udp_checksum(LOCALHOST, IPV4(127, 0, 0, 2), d, sizeof(d)), 0);
}

TEST(inet_addr, dotted_quads_parse_and_print_and_junk_is_einval)
{
	char buf[INET_ADDRSTRLEN];
	u32 a = 0;

	EXPECT_EQ(inet_parse_addr("10.99.0.1", &a), 0);
	EXPECT_EQ(a, IPV4(10, 99, 0, 1));
	EXPECT_EQ(strcmp(inet_format_addr(a, buf), "10.99.0.1"), 0);
	EXPECT_EQ(inet_parse_addr("255.255.255.255", &a), 0);
	EXPECT_EQ(a, 0xffffffffu);
	static const char *const bad[] = {"999.1.1.1", "1.2.3",	   "1.2.3.4.5",
					  "1..2.3",    "a.b.c.d",  "1.2.3.4 ",
					  "",	       "1.2.3.-4", "12345.1.1.1"};
	for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (!EXPECT_EQ(inet_parse_addr(bad[i], &a), -EINVAL))
			test_fail(__FILE__, __LINE__, "'%s' parsed", bad[i]);
}

TEST(udp, a_datagram_over_loopback_arrives_with_its_bytes_and_sender)
{
	struct udp_sock *rx = udp_socket(), *tx = udp_socket();
	char buf[64];
	u32 saddr = 0;
	u16 sport = 0;

	ASSERT_TRUE(rx && tx);
	ASSERT_EQ(udp_bind(rx, 0), 0);
	ASSERT_EQ(udp_bind(tx, 0), 0);
	EXPECT_GE(udp_port(rx), 49152);
	EXPECT_NE(udp_port(rx), udp_port(tx));
	EXPECT_EQ(udp_sendto(tx, "over loopback", 13, LOCALHOST, udp_port(rx)), 13);
	long n = udp_recvfrom(rx, buf, sizeof(buf), &saddr, &sport, NET_TEST_WAIT_NS);
	EXPECT_EQ(n, 13);
	EXPECT_EQ(memcmp(buf, "over loopback", 13), 0);
	EXPECT_EQ(saddr, LOCALHOST);
	EXPECT_EQ(sport, udp_port(tx));
	/* Nothing more, and a short buffer gets the datagram's first bytes. */
	EXPECT_EQ(udp_recvfrom(rx, buf, sizeof(buf), NULL, NULL, 0), -EAGAIN);
	EXPECT_EQ(udp_sendto(tx, "0123456789", 10, LOCALHOST, udp_port(rx)), 10);
	EXPECT_EQ(udp_recvfrom(rx, buf, 4, NULL, NULL, NET_TEST_WAIT_NS), 4);
	EXPECT_EQ(memcmp(buf, "0123", 4), 0);
	udp_close(rx);
	udp_close(tx);
}

TEST(udp, bind_refuses_a_port_in_use_and_frees_it_on_close)
{
	struct udp_sock *a = udp_socket(), *b = udp_socket();

	ASSERT_TRUE(a && b);
	EXPECT_EQ(udp_bind(b, UDP_ECHO_PORT), -EADDRINUSE);
	ASSERT_EQ(udp_bind(a, 0), 0);
	u16 port = udp_port(a);
	EXPECT_EQ(udp_bind(b, port), -EADDRINUSE);
	EXPECT_EQ(udp_bind(a, port + 1), -EINVAL); /* already bound */
	udp_close(a);
	EXPECT_EQ(udp_bind(b, port), 0);
	EXPECT_EQ(udp_port(b), port);
	udp_close(b);
}

TEST(udp, a_full_receive_queue_drops_and_counts_the_rest)
{
	struct udp_sock *rx = udp_socket(), *tx = udp_socket();
	u64 full0 = inet_drops(DROP_UDP_QUEUE_FULL);
	char buf[16];
	unsigned got = 0;

	ASSERT_TRUE(rx && tx);
	ASSERT_EQ(udp_bind(rx, 0), 0);
	for (unsigned i = 0; i < UDP_RCVQ_MAX + 5; i++)
		EXPECT_EQ(udp_sendto(tx, &i, sizeof(i), LOCALHOST, udp_port(rx)), (long)sizeof(i));
	/* Loopback hands them to NET_RX: wait until all have been through it. */
	for (unsigned ms = 0; inet_drops(DROP_UDP_QUEUE_FULL) - full0 < 5 && ms < 2000; ms += 10)
		msleep(10);
	EXPECT_EQ(inet_drops(DROP_UDP_QUEUE_FULL) - full0, 5);
	EXPECT_EQ(udp_rcvq_len(rx), UDP_RCVQ_MAX);
	/* The first UDP_RCVQ_MAX, in order. */
	for (unsigned i = 0; udp_recvfrom(rx, buf, sizeof(buf), NULL, NULL, 0) == sizeof(i); i++) {
		unsigned v;
		memcpy(&v, buf, sizeof(v));
		if (!EXPECT_EQ(v, i))
			break;
		got++;
	}
	EXPECT_EQ(got, UDP_RCVQ_MAX);
	udp_close(rx);
	udp_close(tx);
}

TEST(udp, the_echo_service_sends_the_payload_back)
{
	static const char msg[] = "echo, echo";
	struct udp_sock *s = udp_socket();
	u64 echoes = udp_echo_count();
	char buf[64];
	u32 saddr = 0;
	u16 sport = 0;

	ASSERT_TRUE(s);
	EXPECT_EQ(udp_sendto(s, msg, sizeof(msg), LOCALHOST, UDP_ECHO_PORT), (long)sizeof(msg));
	EXPECT_EQ(udp_recvfrom(s, buf, sizeof(buf), &saddr, &sport, NET_TEST_WAIT_NS),
		  (long)sizeof(msg));
	EXPECT_EQ(memcmp(buf, msg, sizeof(msg)), 0);
	EXPECT_EQ(saddr, LOCALHOST);
	EXPECT_EQ(sport, UDP_ECHO_PORT);
	/*
	 * The service counts a datagram once its send returned, and over loopback
	 * the reply can reach us before that: wait for the count (the host's echo
	 * checks may add to it too).
	 */
	u64 deadline = arch_clock_ns() + NET_TEST_WAIT_NS;
	while (udp_echo_count() < echoes + 1 && arch_clock_ns() < deadline)
		yield();
	EXPECT_GE(udp_echo_count(), echoes + 1);
	udp_close(s);
}

TEST(udp, a_datagram_past_the_mtu_is_emsgsize_and_counted)
{
	static char big[SKB_BUF_SIZE];
	struct udp_sock *s = udp_socket();
	struct net_device *lo, *sink;
	u64 over = inet_drops(DROP_TX_OVERSIZE);

	ASSERT_TRUE(s);
	if (!net_test_devices(&lo, &sink)) {
		udp_close(s);
		return;
	}
	/* One byte past what the sink's MTU carries in one packet, then past any buffer. */
	EXPECT_EQ(udp_sendto(s, big, sink->mtu - 28 + 1, IPV4(10, 99, 0, 2), 9), -EMSGSIZE);
	EXPECT_EQ(udp_sendto(s, big, sizeof(big), LOCALHOST, 9), -EMSGSIZE);
	EXPECT_EQ(inet_drops(DROP_TX_OVERSIZE), over + 2);
	/* And what fits goes. */
	EXPECT_EQ(udp_sendto(s, big, sink->mtu - 28, IPV4(10, 99, 0, 2), 9),
		  (long)(sink->mtu - 28));
	udp_close(s);
}

TEST(icmp, ping_127_0_0_1_gets_its_reply)
{
	u64 replies = inet_stat(INET_TX_ICMP_REPLIES);
	for (u16 seq = 1; seq <= 3; seq++) {
		s64 rtt = icmp_ping(LOCALHOST, seq, NET_TEST_WAIT_NS);
		EXPECT_GT(rtt, 0);
	}
	EXPECT_EQ(inet_stat(INET_TX_ICMP_REPLIES), replies + 3);
	/* Another address of 127/8 is loopback too, and so is the sink's own address. */
	EXPECT_GT(icmp_ping(IPV4(127, 1, 2, 3), 4, NET_TEST_WAIT_NS), 0);
	EXPECT_GT(icmp_ping(IPV4(10, 99, 0, 1), 5, NET_TEST_WAIT_NS), 0);
}

TEST(icmp, ping_without_an_answer_times_out_and_without_a_route_is_enetunreach)
{
	u32 gw;
	struct net_device *dev;

	/* The sink swallows the request. */
	EXPECT_EQ(icmp_ping(IPV4(10, 99, 0, 2), 1, 50 * NSEC_PER_MSEC), -ETIMEDOUT);
	/*
	 * TEST-NET-1 (RFC 5737) has no route but the default one a driver may have
	 * added (eth0's, through slirp's gateway): take it away for the check.
	 */
	bool had_default = fib_lookup(IPV4(192, 0, 2, 1), &gw, &dev) == 0;
	if (had_default) {
		ASSERT_EQ(fib_del(0, 0), 0);
		rt_cache_flush();
	}
	EXPECT_EQ(icmp_ping(IPV4(192, 0, 2, 1), 1, NET_TEST_WAIT_NS), -ENETUNREACH);
	if (had_default) {
		EXPECT_EQ(fib_add(0, 0, gw, dev), 0);
		rt_cache_flush();
	}
}

/* Sockets per CPU in the storm, and datagrams each sends itself and its neighbour. */
#define UDP_STORM_SOCKETS 64
#define UDP_STORM_SENDS 4

struct udp_storm {
	u64 received, wrong; /* summed over the CPUs with fetch_add */
	u16 port[MAX_CPUS];  /* each CPU's socket now (0: none); WRITE_ONCE by its CPU */
};

/*
 * Each CPU opens a socket, publishes its port, sends datagrams to itself and to
 * its neighbour's socket over loopback, reads some back and closes it with the
 * rest still queued or in flight. NET_RX runs on the sending CPU, so the
 * neighbour's datagrams look its socket up while the neighbour is closing it:
 * what the grace period before the free is for.
 */
static void udp_storm_worker(void *arg)
{
	struct udp_storm *st = arg;
	/* The neighbour: the next online CPU (ids may have holes), the last's the first. */
	unsigned me = smp_processor_id();
	unsigned next = smp_online_cpu((unsigned)(smp_online_index(me) + 1) % num_online_cpus());
	u64 received = 0, wrong = 0;

	for (unsigned i = 0; i < UDP_STORM_SOCKETS; i++) {
		struct udp_sock *s = udp_socket();
		u32 tag[2];
		if (!EXPECT_TRUE(s != NULL) || !EXPECT_EQ(udp_bind(s, 0), 0)) {
			udp_close(s);
			return;
		}
		WRITE_ONCE(st->port[me], udp_port(s));
		for (tag[1] = 0; tag[1] < UDP_STORM_SENDS; tag[1]++) {
			tag[0] = udp_port(s);
			udp_sendto(s, tag, sizeof(tag), LOCALHOST, (u16)tag[0]);
			tag[0] = READ_ONCE(st->port[next]);
			if (tag[0])
				udp_sendto(s, tag, sizeof(tag), LOCALHOST, (u16)tag[0]);
		}
		for (unsigned r = 0; r < i % (UDP_STORM_SENDS + 1); r++) {
			u32 got[2];
			if (udp_recvfrom(s, got, sizeof(got), NULL, NULL, 10 * NSEC_PER_MSEC) !=
			    sizeof(got))
				break;
			received++;
			wrong += got[0] != udp_port(s);
		}
		WRITE_ONCE(st->port[me], 0);
		udp_close(s);
	}
	fetch_add_relaxed(&st->received, received);
	fetch_add_relaxed(&st->wrong, wrong);
}

TEST(udp, sockets_closed_while_datagrams_arrive_lose_no_buffer)
{
	static struct udp_storm st;
	long skbs = skb_outstanding();

	memset(&st, 0, sizeof(st));
	smp_run_all(udp_storm_worker, &st);
	/* The closed sockets' queues are purged after a grace period, in RCU callbacks. */
	rcu_barrier();
	EXPECT_TRUE(net_wait_skbs(skbs, 5000));
	rcu_barrier();
	EXPECT_EQ(skb_outstanding(), skbs);
	EXPECT_GT(st.received, 0);
	EXPECT_EQ(st.wrong, 0); /* a socket only ever read datagrams sent to its port */
}
