/*
 * The receive path fuzzed: NET_FUZZ_PACKETS frames, each a good UDP datagram,
 * ICMP echo request or ARP packet mutated at random (bits flipped, the frame
 * cut short, a length field rewritten, the checksums then made right again or
 * not, so that mutations reach every layer), fed into inet_rcv() as received on
 * the sink device. Nothing may panic; afterwards every frame the receive path
 * took in must be accounted for exactly once, as a drop or a delivery, and the
 * buffers must all have come back.
 *
 * Frames the stack sends in answer (echo replies, the echo service's datagrams)
 * go to whatever source address a mutation left, which may be loopback, and
 * come back in as frames of their own: they are counted in INET_RX_FRAMES, so
 * the check is against that, and it is at least the frames fed.
 */
#include <grace/inet.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/skbuff.h>
#include <grace/test.h>
#include <grace/time.h>

#include "net_test_util.h"

/*
 * Enough that every layer sees thousands of mutants. Measured under QEMU TCG at
 * SMP=4 (tests/run, 2-core host): 340 ms on riscv64, 276 ms on x86_64, about
 * 3 us a frame, so the full count costs no test run more than a second.
 */
#define NET_FUZZ_PACKETS 100000
#define NET_FUZZ_SINK_PEER IPV4(10, 99, 0, 2)

/* xorshift64 (Marsaglia 2003): reproducible from the seed, no state but one word. */
static u64 fuzz_state;
static u32 fuzz_rand(void)
{
	fuzz_state ^= fuzz_state << 13;
	fuzz_state ^= fuzz_state >> 7;
	fuzz_state ^= fuzz_state << 17;
	return (u32)(fuzz_state >> 16);
}

static void fuzz_frame(struct net_frame *f, struct net_device *sink, u16 port)
{
	static const u8 mac[ETH_ALEN] = {0x02, 0, 0, 0, 0, 0x99};
	static const char data[] = "fuzzing the receive path";
	struct iphdr *iph = NET_FRAME_IP(f);
	struct udphdr *uh = (struct udphdr *)NET_FRAME_L4(f);
	u32 kind = fuzz_rand() % 16, r = fuzz_rand();

	if (kind < 11)
		net_frame_udp(f, NET_FUZZ_SINK_PEER, 5000, sink->ipv4_addr, port, data,
			      fuzz_rand() % sizeof(data));
	else if (kind < 14)
		net_frame_icmp_echo(f, NET_FUZZ_SINK_PEER, sink->ipv4_addr, 0xf00f, (u16)r,
				    fuzz_rand() % 64);
	else
		net_frame_arp(f, 1 + (r & 1), mac, NET_FUZZ_SINK_PEER, sink->ipv4_addr);

	/* A few bits flipped anywhere in the frame (the first 64 bytes most often). */
	for (u32 n = fuzz_rand() % 4; n; n--) {
		u32 span = fuzz_rand() & 1 ? f->len : (f->len < 64 ? f->len : 64);
		u32 bit = fuzz_rand() % (span * 8);
		f->b[bit / 8] ^= (u8)(1u << (bit % 8));
	}
	/* A length field rewritten, to near its right value or to anything. */
	switch (fuzz_rand() % 8) {
	case 0:
		iph->tot_len = htons((u16)(ntohs(iph->tot_len) + (fuzz_rand() % 9) - 4));
		break;
	case 1:
		uh->len = htons((u16)(ntohs(uh->len) + (fuzz_rand() % 9) - 4));
		break;
	case 2:
		iph->ihl_version = (u8)(0x40 | (fuzz_rand() % 16));
		break;
	case 3:
		iph->tot_len = (u16)fuzz_rand();
		break;
	}
	/* Mostly make the checksums right again, so the next layer sees the mutation. */
	if (fuzz_rand() % 4) {
		if (iph->protocol == IPPROTO_UDP)
			net_frame_fix_udp_csum(f);
		else if (iph->protocol == IPPROTO_ICMP)
			net_frame_fix_icmp_csum(f);
		net_frame_fix_ip_csum(f);
	}
	/* Cut short, or padded as a minimum-size Ethernet frame would be. */
	r = fuzz_rand() % 8;
	if (r == 0)
		f->len = fuzz_rand() % (f->len + 1);
	else if (r == 1 && f->len < 60)
		f->len = 60;
}

/* Every frame inet_rcv() took in ends as one of these; DROP_TX_OVERSIZE is a send's. */
static u64 fuzz_outcomes(const struct net_counts *c)
{
	u64 sum = c->stats[INET_RX_ARP] + c->stats[INET_RX_UDP] + c->stats[INET_RX_ICMP];
	for (unsigned r = 0; r < NR_INET_DROPS; r++)
		if (r != DROP_TX_OVERSIZE && r != DROP_ARP_SHORT && r != DROP_ARP_BAD &&
		    r != DROP_ARP_UNSOLICITED && r != DROP_ARP_BAD_SHA)
			sum += c->drops[r];
	return sum;
}

static void fuzz_drain(struct udp_sock *s)
{
	char buf[64];
	while (udp_recvfrom(s, buf, sizeof(buf), NULL, NULL, 0) >= 0)
		;
}

TEST(inet_fuzz, mutated_frames_are_all_accounted_for_and_leak_no_buffer)
{
	struct net_device *lo, *sink;
	struct udp_sock *s = udp_socket();
	struct net_counts a, b;
	static struct net_frame f;
	u64 fed = 0, t0, in, out;
	bool settled = false;

	ASSERT_TRUE(s);
	if (!net_test_devices(&lo, &sink)) {
		udp_close(s);
		return;
	}
	ASSERT_EQ(udp_bind(s, 0), 0);
	fuzz_state = 0x9e3779b97f4a7c15ull; /* any nonzero seed; fixed, so a failure repeats */
	net_counts_read(&a);
	t0 = arch_clock_ns();
	for (u32 i = 0; i < NET_FUZZ_PACKETS; i++) {
		fuzz_frame(&f, sink, udp_port(s));
		if (net_frame_feed(&f, sink))
			fed++;
		if (i % 32 == 0)
			fuzz_drain(s);
	}
	/* Until the answers that loop back have come in and the counts stop moving. */
	for (unsigned ms = 0; ms < 5000 && !settled; ms += 10) {
		fuzz_drain(s);
		net_counts_read(&b);
		settled = b.skbs == a.skbs && b.stats[INET_RX_FRAMES] - a.stats[INET_RX_FRAMES] ==
						  fuzz_outcomes(&b) - fuzz_outcomes(&a);
		if (!settled)
			msleep(10);
	}
	in = b.stats[INET_RX_FRAMES] - a.stats[INET_RX_FRAMES];
	out = fuzz_outcomes(&b) - fuzz_outcomes(&a);
	printk_raw("# inet_fuzz: %llu fed, %llu frames in, %llu dropped or delivered, %llu ms\n",
		   fed, in, out, (arch_clock_ns() - t0) / NSEC_PER_MSEC);
	EXPECT_EQ(fed, NET_FUZZ_PACKETS);
	EXPECT_EQ(in, out);
	EXPECT_GE(in, fed);
	/* What came in beyond the fed frames was sent by the stack itself in answer. */
	EXPECT_LE(in - fed, b.stats[INET_TX_PACKETS] - a.stats[INET_TX_PACKETS]);
	EXPECT_EQ(b.skbs, a.skbs);
	/* The mutations reached every layer: something was dropped at each. */
	EXPECT_GT(b.drops[DROP_IP_CSUM] - a.drops[DROP_IP_CSUM], 0);
	EXPECT_GT(b.drops[DROP_IP_LEN] - a.drops[DROP_IP_LEN], 0);
	EXPECT_GT(b.drops[DROP_UDP_CSUM] - a.drops[DROP_UDP_CSUM], 0);
	EXPECT_GT(b.drops[DROP_UDP_LEN] - a.drops[DROP_UDP_LEN], 0);
	/* A header length rewritten past 5, checksummed over it: the options parser's input. */
	EXPECT_GT(b.drops[DROP_IP_OPTIONS] - a.drops[DROP_IP_OPTIONS], 0);
	EXPECT_GT(b.stats[INET_RX_UDP] - a.stats[INET_RX_UDP], 0);
	udp_close(s);
}
