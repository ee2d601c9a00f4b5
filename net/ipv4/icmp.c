/*
 * ICMP: echo requests answered (RFC 792), and icmp_ping(), which sends one and
 * sleeps until its reply comes.
 *
 * A ping in flight is a struct icmp_pending on the caller's stack, listed on
 * icmp_pending_list under icmp_pending_lock. The receive path finds it by
 * (id, sequence) and marks it done and wakes it with the lock held; the caller
 * unlinks it under the same lock before returning, so the receive path never
 * touches an entry whose frame is gone. Lock order: icmp_pending_lock, then the
 * entry's wait queue lock (inside wake_up()).
 */
#include <grace/arch.h>
#include <grace/atomic.h>
#include <grace/errno.h>
#include <grace/inet.h>
#include <grace/list.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include <grace/wait.h>

#include "ip.h"

/* Bytes of data in a request: ping(8)'s default, making 64-byte ICMP messages. */
#define ICMP_PING_DATA 56

struct icmp_pending {
	struct list_head node; /* on icmp_pending_list, under icmp_pending_lock */
	u16 id, seq;
	bool done; /* set under icmp_pending_lock; the waiter reads it with READ_ONCE */
	u64 reply_ns;
	struct wait_queue_head wq;
};

static LIST_HEAD(icmp_pending_list);
static DEFINE_SPINLOCK(icmp_pending_lock);
static atomic_t icmp_next_id; /* each ping its own id, as each ping(8) process has */

/* An echo reply: complete the ping waiting for it, if any. */
static void icmp_echo_reply(const struct icmphdr *ich)
{
	struct icmp_pending *p;
	u64 now = arch_clock_ns();

	spin_lock(&icmp_pending_lock);
	list_for_each_entry(p, &icmp_pending_list, node) {
		if (p->id == ntohs(ich->id) && p->seq == ntohs(ich->sequence) && !p->done) {
			p->reply_ns = now;
			WRITE_ONCE(p->done, true);
			wake_up(&p->wq);
			break;
		}
	}
	spin_unlock(&icmp_pending_lock);
}

/* An echo request: the same message back, type 0, to where it came from. */
static void icmp_echo(const struct sk_buff *skb, const struct iphdr *iph)
{
	u32 len = skb_len(skb);
	struct sk_buff *reply = skb_alloc();
	struct icmphdr *ich;

	if (!reply)
		return;
	ich = skb_put(reply, len);
	if (!ich) { /* cannot be: it came in one buffer of the same size */
		kfree_skb(reply);
		return;
	}
	memcpy(ich, skb->data, len);
	ich->type = ICMP_ECHOREPLY;
	ich->code = 0;
	ich->checksum = 0;
	ich->checksum = csum_fold(csum_partial(ich, len, 0));
	/*
	 * From the address the request was sent to (RFC 1122 3.2.2.6), not the route's: a
	 * request to one device's address that came in on another would otherwise be answered
	 * from an address the asker never wrote to.
	 */
	struct net_device *dev;
	u32 gateway, saddr;
	if (ip_route_dev(iph->saddr, iph->tos, &dev, &gateway, &saddr)) {
		kfree_skb(reply);
		return;
	}
	inet_stat_inc(INET_TX_ICMP_REPLIES);
	ip_output_dev(reply, dev, gateway, iph->daddr, iph->saddr, IPPROTO_ICMP, iph->tos);
}

void icmp_rcv(struct sk_buff *skb)
{
	const struct iphdr *iph = skb_network_header(skb);
	const struct icmphdr *ich = (const struct icmphdr *)skb->data;

	if (skb_len(skb) < sizeof(*ich))
		return inet_drop(skb, DROP_ICMP_SHORT);
	if (csum_fold(csum_partial(ich, skb_len(skb), 0)))
		return inet_drop(skb, DROP_ICMP_CSUM);
	/*
	 * To a broadcast (the limited one or a subnet's: what the receive path let in
	 * that is neither an address of ours nor 127/8): an echo request would draw an
	 * answer from every host of the subnet (the smurf attack; RFC 1122 3.2.2.6 lets
	 * it be ignored, Linux's icmp_echo_ignore_broadcasts is 1 by default), and of
	 * the rest Linux takes only address mask requests and replies.
	 */
	if (!inet_addr_is_local(iph->daddr) && ((const u8 *)&iph->daddr)[0] != 127 &&
	    ich->type != ICMP_ADDRESS && ich->type != ICMP_ADDRESSREPLY)
		return inet_drop(skb, DROP_ICMP_BROADCAST);
	inet_stat_inc(INET_RX_ICMP);
	if (ich->type == ICMP_ECHO && ich->code == 0)
		icmp_echo(skb, iph);
	else if (ich->type == ICMP_ECHOREPLY)
		icmp_echo_reply(ich);
	/* Anything else (unreachables, time exceeded) has nobody here to tell. */
	kfree_skb(skb);
}

s64 icmp_ping(u32 daddr, u16 seq, u64 timeout_ns)
{
	struct icmp_pending p = {.seq = seq};
	struct sk_buff *skb = skb_alloc();
	struct icmphdr *ich;
	u64 sent_ns;
	bool done;
	int err;

	if (!skb)
		return -ENOMEM;
	ich = skb_put(skb, sizeof(*ich) + ICMP_PING_DATA);
	if (!ich) {
		kfree_skb(skb);
		return -ENOBUFS;
	}
	p.id = (u16)atomic_inc_return(&icmp_next_id);
	wait_queue_init(&p.wq);
	ich->type = ICMP_ECHO;
	ich->code = 0;
	ich->id = htons(p.id);
	ich->sequence = htons(seq);
	for (unsigned i = 0; i < ICMP_PING_DATA; i++)
		((u8 *)(ich + 1))[i] = (u8)i;
	ich->checksum = 0;
	ich->checksum = csum_fold(csum_partial(ich, sizeof(*ich) + ICMP_PING_DATA, 0));

	/* Listed before it is sent: over loopback the reply can come before ip_output returns. */
	spin_lock(&icmp_pending_lock);
	list_add_tail(&p.node, &icmp_pending_list);
	spin_unlock(&icmp_pending_lock);

	sent_ns = arch_clock_ns();
	err = ip_output(skb, daddr, IPPROTO_ICMP, 0);
	done = !err && wait_event_timeout(p.wq, READ_ONCE(p.done), timeout_ns);

	spin_lock(&icmp_pending_lock);
	list_del_init(&p.node);
	done = p.done; /* a reply at the deadline, after the wait gave up, still counts */
	spin_unlock(&icmp_pending_lock);
	if (err)
		return err;
	return done ? (s64)(p.reply_ns - sent_ns) : -ETIMEDOUT;
}
