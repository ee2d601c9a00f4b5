/*
 * Packet buffers. An sk_buff owns one buffer of SKB_BUF_SIZE bytes: head is its
 * start, end its end, and the packet is [data, tail). A sender reserves headroom
 * first (skb_reserve), puts its payload (skb_put), then each layer below pushes
 * its header in front (skb_push); a receiver pulls each header off in turn
 * (skb_pull). Every helper checks its bounds and returns NULL (changing
 * nothing) rather than run past the buffer.
 *
 * Buffers come from two slab caches (the sk_buff, its 2048-byte data: two to a page),
 * paired for life, with a per-CPU cache of free pairs in front,
 * so a CPU that allocates and frees its own packets touches no shared line.
 * There are no clones: a buffer has one owner, who frees it with kfree_skb()
 * (or hands it on: to dev_queue_xmit(), netif_rx(), a socket's queue).
 */
#ifndef GRACE_SKBUFF_H
#define GRACE_SKBUFF_H

#include <grace/spinlock.h>
#include <grace/types.h>

#define SKB_BUF_SIZE 2048 /* one Ethernet frame (1514) with room for headers in front */
#define SKB_HEADROOM 64	  /* what skb_alloc() reserves for the headers to come */

struct net_device;

struct sk_buff {
	struct sk_buff *next;	/* on a queue */
	struct net_device *dev; /* received on, or to send on */
	unsigned char *head, *data, *tail, *end;
	u16 protocol;	      /* ETH_P_* of the payload after the Ethernet header, host order */
	u16 network_header;   /* offsets from head: the IPv4/ARP header, */
	u16 transport_header; /* and the UDP/ICMP header */
	u16 cpu;	      /* the CPU whose per-CPU cache it came from */
	u64 tstamp;	      /* set by whoever cares (the tests' sequence numbers, the sink) */
};

/* A buffer with SKB_HEADROOM reserved and no data; NULL on ENOMEM. */
struct sk_buff *skb_alloc(void);
void kfree_skb(struct sk_buff *skb);

static inline u32 skb_len(const struct sk_buff *skb)
{
	return skb->tail - skb->data;
}
static inline u32 skb_headroom(const struct sk_buff *skb)
{
	return skb->data - skb->head;
}
static inline u32 skb_tailroom(const struct sk_buff *skb)
{
	return skb->end - skb->tail;
}
/* Move data and tail down by len (an empty buffer only): room for headers. */
bool skb_reserve(struct sk_buff *skb, u32 len);
/* Extend the packet's end by len: where to write those bytes, or NULL if no room. */
void *skb_put(struct sk_buff *skb, u32 len);
/* Extend the packet's start by len (a header in front): the new start, or NULL. */
void *skb_push(struct sk_buff *skb, u32 len);
/* Drop len bytes from the front (a header read): the new start, or NULL if shorter. */
void *skb_pull(struct sk_buff *skb, u32 len);
/* Cut the packet to len bytes (a frame's padding): false if it is shorter. */
bool skb_trim(struct sk_buff *skb, u32 len);
static inline void *skb_network_header(const struct sk_buff *skb)
{
	return skb->head + skb->network_header;
}
static inline void *skb_transport_header(const struct sk_buff *skb)
{
	return skb->head + skb->transport_header;
}
static inline void skb_set_network_header(struct sk_buff *skb)
{
	skb->network_header = skb->data - skb->head;
}
static inline void skb_set_transport_header(struct sk_buff *skb)
{
	skb->transport_header = skb->data - skb->head;
}

/* A FIFO of sk_buffs. The __ forms need the caller's lock; the others take lock. */
struct sk_buff_head {
	struct sk_buff *first, *last;
	u32 qlen;
	spinlock_t lock;
};
void skb_queue_init(struct sk_buff_head *q);
void __skb_queue_tail(struct sk_buff_head *q, struct sk_buff *skb);
struct sk_buff *__skb_dequeue(struct sk_buff_head *q);
void skb_queue_tail(struct sk_buff_head *q, struct sk_buff *skb);
struct sk_buff *skb_dequeue(struct sk_buff_head *q);
/* Free everything queued. */
void skb_queue_purge(struct sk_buff_head *q);
static inline u32 skb_queue_len(const struct sk_buff_head *q)
{
	return q->qlen;
}
static inline bool skb_queue_empty(const struct sk_buff_head *q)
{
	return !q->first;
}
/* Put skb first (a packet taken off and handed back). Caller's lock. */
void __skb_queue_head(struct sk_buff_head *q, struct sk_buff *skb);
/* Move all of from onto the end of to, in order, leaving from empty. Both callers' locks. */
void __skb_queue_splice_tail_init(struct sk_buff_head *from, struct sk_buff_head *to);

/* Buffers allocated and not freed, summed over the CPUs (exact when quiescent). */
long skb_outstanding(void);

#endif
