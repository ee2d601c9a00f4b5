/*
 * make bench BENCH=udp_stream: the 2012 test behind the hashed backoff delays
 * ("x86,smp: auto tune spinlock backoff delay factor", Eric Dumazet: an HTB root
 * qdisc and 24 concurrent "netperf -t UDP_STREAM -- -m 128"), on sink0. Senders
 * send 128-byte UDP payloads in prebuilt Ethernet + IPv4 + UDP frames through
 * dev_queue_xmit(), whose root qdisc is a tbf fast enough never to hold a packet
 * back, so its root lock is the bottleneck; sink0 spends UDP_BENCH_SINK_COST_NS
 * per packet under its own driver lock, the second contended lock with another
 * hold time. Rows: k senders on k CPUs (k = 1, 2, 4, ... online), then three
 * senders per online CPU; each in four lock modes, back to back:
 *
 *   plain   ticket spinning, no backoff (spinlock=plain)
 *   backoff proportional backoff, a delay per CPU per hashed lock address (the default)
 *   pv      backoff plus paravirtual waits (spinlock_pv=on; both arches implement them)
 *   single  backoff with one delay per CPU for every lock (spinlock_delay=single)
 *
 *   bench: udp_stream arch=riscv64 online=4 cpus=4 senders=12 mode=single mbit_per_sec=...
 * pkts_per_sec=... drops=...
 *
 * mbit_per_sec counts UDP payload bits the sink took, as netperf's receiver does;
 * drops are packets the full qdisc refused. A phase is senders=<n>/mode=<mode>, so
 * `make profile BENCH=udp_stream MODE=sharing` reports cache-line transfers per
 * packet for each row. The lock modes, the qdisc and the sink cost in force before
 * the benchmark are put back after it.
 */
#include <grace/atomic.h>
#include <grace/bench.h>
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/kthread.h>
#include <grace/netdevice.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/smp.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include <grace/time.h>
#include <kernel/locking/spinlock_internal.h>
#include <net/core/sink.h>

#define UDP_BENCH_PAYLOAD 128 /* netperf -m 128, the 2012 test's message size */
#define UDP_BENCH_FRAME                                                                            \
	(ETH_HLEN + sizeof(struct iphdr) + sizeof(struct udphdr) + UDP_BENCH_PAYLOAD)
/*
 * A few hundred ns under the sink's lock: a NIC driver's transmit (descriptor
 * writes, a doorbell) costs about that, shorter than the qdisc's enqueue and
 * dequeue together under TCG, so the two locks' hold times differ.
 */
#define UDP_BENCH_SINK_COST_NS 200
/* Far above what a sender here reaches (TBF_RATE_MAX): the bucket never empties. */
#define UDP_BENCH_TBF_SPEC "tbf rate=17179869184 burst=1048576 limit=1000"
#define UDP_BENCH_THREADS_PER_CPU 3   /* the last row: more senders than CPUs */
#define UDP_BENCH_CLOCK_EVERY 16      /* read the clock every this many packets */
#define UDP_BENCH_WARMUP_PACKETS 4096 /* past what a tbf limit of 1000 and the caches hold */
#define UDP_BENCH_MAX_SENDERS (UDP_BENCH_THREADS_PER_CPU * MAX_CPUS)

enum udp_bench_mode { MODE_PLAIN, MODE_BACKOFF, MODE_PV, MODE_SINGLE, NR_MODES };
static const char *const mode_names[NR_MODES] = {"plain", "backoff", "pv", "single"};

static struct udp_bench {
	u8 frame[UDP_BENCH_FRAME]; /* the template every packet copies */
	atomic_t arrived;	   /* senders at the start line */
	unsigned nr_senders;
	u64 deadline; /* set by the first sender past the start */
	atomic_t errors;
	struct task *tasks[UDP_BENCH_MAX_SENDERS];
	unsigned cpu_ids[MAX_CPUS]; /* the row's CPUs */
} ub;

/*
 * The IPv4 header checksum (RFC 1071), computed here rather than with net/ipv4's
 * csum_partial() so that the benchmark needs nothing but the core.
 */
static u16 udp_bench_ip_checksum(const struct iphdr *ip)
{
	const u8 *b = (const u8 *)ip;
	u32 sum = 0;
	for (unsigned i = 0; i < sizeof(*ip); i += 2)
		sum += (u32)b[i] << 8 | b[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return htons((u16)~sum);
}

static void udp_bench_build_frame(const struct net_device *dev)
{
	struct ethhdr *eth = (struct ethhdr *)ub.frame;
	struct iphdr *ip = (struct iphdr *)(eth + 1);
	struct udphdr *udp = (struct udphdr *)(ip + 1);
	u8 *payload = (u8 *)(udp + 1);

	static const u8 dest[ETH_ALEN] = {0x02, 0, 0, 0, 0, 0x02};
	memcpy(eth->h_dest, dest, ETH_ALEN);
	memcpy(eth->h_source, dev->mac, ETH_ALEN);
	eth->h_proto = htons(ETH_P_IP);
	*ip = (struct iphdr){
	    .ihl_version = 0x45,
	    .tot_len = htons(sizeof(*ip) + sizeof(*udp) + UDP_BENCH_PAYLOAD),
	    .ttl = 64,
	    .protocol = IPPROTO_UDP,
	    .saddr = dev->ipv4_addr,
	    .daddr = IPV4(10, 99, 0, 2),
	};
	ip->check = udp_bench_ip_checksum(ip);
	*udp = (struct udphdr){
	    .source = htons(40000),
	    .dest = htons(9), /* discard */
	    .len = htons(sizeof(*udp) + UDP_BENCH_PAYLOAD),
	    .check = 0, /* none: allowed for UDP over IPv4 */
	};
	for (unsigned i = 0; i < UDP_BENCH_PAYLOAD; i++)
		payload[i] = (u8)i;
}

/* Each packet: allocate, copy the frame, send. False if the benchmark must stop. */
static bool udp_bench_send_one(struct net_device *dev)
{
	struct sk_buff *skb = skb_alloc();
	if (!skb)
		return false;
	void *p = skb_put(skb, UDP_BENCH_FRAME);
	if (!p) {
		kfree_skb(skb);
		return false;
	}
	memcpy(p, ub.frame, UDP_BENCH_FRAME);
	skb->protocol = ETH_P_IP;
	skb->dev = dev;
	int rc = dev_queue_xmit(skb);
	return rc == 0 || rc == -ENOBUFS; /* a full queue is a drop, counted by the qdisc */
}

static int udp_bench_sender(void *arg)
{
	struct net_device *dev = arg;

	/*
	 * Start together; yield, not spin, while waiting: with three senders per CPU
	 * the ones still to arrive need this CPU.
	 */
	atomic_inc(&ub.arrived);
	while ((unsigned)atomic_read_acquire(&ub.arrived) < ub.nr_senders)
		yield();
	u64 unset = 0;
	try_cmpxchg(&ub.deadline, &unset, arch_clock_ns() + bench_phase_ns());
	for (u64 n = 1;; n++) {
		if (!udp_bench_send_one(dev)) {
			atomic_inc(&ub.errors);
			break;
		}
		if (n % UDP_BENCH_CLOCK_EVERY == 0 && arch_clock_ns() >= READ_ONCE(ub.deadline))
			break;
	}
	return 0;
}

static void udp_bench_set_mode(enum udp_bench_mode mode)
{
	spinlock_backoff = mode != MODE_PLAIN;
	spin_delay_set_single(mode == MODE_SINGLE);
	spin_pv_set(mode == MODE_PV);
	spin_delay_reset();
}

/* One row: senders threads on the first cpus CPUs, round robin. False on an error line. */
static bool udp_bench_row(struct net_device *dev, unsigned cpus, unsigned senders,
			  enum udp_bench_mode mode)
{
	unsigned nr = 0, cpu;
	char phase[40];

	for_each_online_cpu(cpu)
		if (nr < cpus)
			ub.cpu_ids[nr++] = cpu;
	udp_bench_set_mode(mode);
	atomic_set(&ub.arrived, 0);
	atomic_set(&ub.errors, 0);
	ub.nr_senders = senders;
	ub.deadline = 0;
	u64 drops = dev->qdisc->drops, pkts = netdev_stat(dev, NETDEV_TX_PACKETS);

	snprintf(phase, sizeof(phase), "senders=%u/mode=%s", senders, mode_names[mode]);
	/* Made before the phase, started inside it: thread creation is not what it measures. */
	for (unsigned i = 0; i < senders; i++) {
		ub.tasks[i] = kthread_create_on_cpu(udp_bench_sender, dev, ub.cpu_ids[i % nr],
						    "udp_stream/%u", i);
		if (!ub.tasks[i]) {
			/* Run the ones made, so they can be joined; the row reports an error. */
			ub.nr_senders = i;
			senders = i;
			atomic_inc(&ub.errors);
			break;
		}
	}
	bench_phase_begin(phase, cpus);
	for (unsigned i = 0; i < senders; i++)
		wake_up_process(ub.tasks[i]);
	for (unsigned i = 0; i < senders; i++)
		kthread_join(ub.tasks[i]);
	u64 end = arch_clock_ns();
	u64 elapsed = ub.deadline ? end - (ub.deadline - bench_phase_ns()) : 1;
	/* Wait for the last runner to empty the queue: its packets were sent in the phase. */
	for (;;) {
		spin_lock(&dev->qdisc->lock);
		bool idle = !dev->qdisc->q.qlen && !dev->qdisc->running;
		spin_unlock(&dev->qdisc->lock);
		if (idle)
			break;
		yield();
	}
	pkts = netdev_stat(dev, NETDEV_TX_PACKETS) - pkts;
	drops = dev->qdisc->drops - drops;
	bench_phase_end(pkts);

	if (atomic_read(&ub.errors)) {
		bench_error("udp_stream", "senders=%u mode=%s: %d senders failed (ENOMEM)", senders,
			    mode_names[mode], atomic_read(&ub.errors));
		return false;
	}
	u64 pps = pkts * NSEC_PER_SEC / (elapsed ? elapsed : 1);
	/* Thousandths of a Mbit/s: payload bits * 1e9 ns/s / 1e6 bits/Mbit * 1000. */
	u64 milli_mbit = pkts * UDP_BENCH_PAYLOAD * 8 * 1000000 / (elapsed ? elapsed : 1);
	bench_report("udp_stream", cpus,
		     "senders=%u mode=%s mbit_per_sec=%llu.%03llu pkts_per_sec=%llu drops=%llu",
		     senders, mode_names[mode], milli_mbit / 1000, milli_mbit % 1000, pps, drops);
	return true;
}

BENCH(udp_stream)
{
	struct net_device *dev = sink_dev();
	bool saved_backoff = spinlock_backoff, saved_pv = spinlock_pv;
	bool saved_single = spinlock_delay_single;
	u64 saved_cost = sink_cost_ns();
	unsigned online = num_online_cpus();

	if (!dev) {
		bench_error("udp_stream", "no sink0");
		return;
	}
	udp_bench_build_frame(dev);
	int err = qdisc_set_root(dev, UDP_BENCH_TBF_SPEC);
	if (!err)
		err = sink_set_cost_ns(UDP_BENCH_SINK_COST_NS);
	if (err) {
		bench_error("udp_stream", "cannot set up sink0: %d", err);
		return;
	}
	/*
	 * Unmeasured, before the first row: the first packets grow the slab caches and
	 * fill this CPU's sk_buff cache, which would otherwise be charged to row one.
	 */
	for (unsigned i = 0; i < UDP_BENCH_WARMUP_PACKETS; i++)
		if (!udp_bench_send_one(dev)) {
			bench_error("udp_stream", "warm-up: cannot send (ENOMEM)");
			return;
		}
	bool ok = true;
	for (unsigned k = 1; ok && k; k = bench_cpus_next(k, online))
		for (enum udp_bench_mode m = MODE_PLAIN; ok && m < NR_MODES; m++)
			ok = udp_bench_row(dev, k, k, m);
	for (enum udp_bench_mode m = MODE_PLAIN; ok && m < NR_MODES; m++)
		ok = udp_bench_row(dev, online, UDP_BENCH_THREADS_PER_CPU * online, m);

	spinlock_backoff = saved_backoff;
	spin_delay_set_single(saved_single);
	spin_pv_set(saved_pv);
	spin_delay_reset();
	sink_set_cost_ns(saved_cost);
	qdisc_set_root(dev, "pfifo limit=1000");
}
