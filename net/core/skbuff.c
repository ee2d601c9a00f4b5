/*
 * Packet buffers (include/grace/skbuff.h). An sk_buff and its buffer are two slab
 * objects: the 2048-byte buffers pack exactly two to a 4 KiB slab page, while one
 * object of struct plus buffer (2048 + 64 bytes) would take a page on its own and
 * leave nearly half of it unused. The pairing costs nothing on the fast path: a
 * freed sk_buff keeps its buffer, and the per-CPU cache in front of the slab holds
 * such pairs, so skb_alloc() on a warm CPU is one pop with interrupts off.
 *
 * The per-CPU cache is only ever touched by its own CPU with interrupts off
 * (netif_rx() and the drivers free and allocate from interrupts too), so it needs
 * no lock; the slab's own per-CPU arrays take what overflows it.
 */
#include <grace/netdevice.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/skbuff.h>
#include <grace/slab.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <asm/irq.h>

/*
 * Free sk_buffs (with their buffers) each CPU keeps. A burst of a queue's worth
 * would need more, but the slab's per-CPU arrays stand behind this cache; 32 is
 * enough for a sender that allocates, sends and has the packet freed by the
 * driver a few packets later, and bounds what an idle CPU holds at 32 * 2 KiB.
 */
#define SKB_PCPU_CACHE_MAX 32

struct skb_pcpu {
	struct sk_buff *free; /* up to SKB_PCPU_CACHE_MAX, linked by next; interrupts off */
	unsigned nr_free;
	long outstanding; /* allocations minus frees made on this CPU: may go negative */
};
static DEFINE_PER_CPU_ALIGNED(struct skb_pcpu, skb_pcpu);

static struct kmem_cache *skb_head_cache; /* struct sk_buff */
static struct kmem_cache *skb_data_cache; /* SKB_BUF_SIZE buffers */

void skb_init(void)
{
	skb_head_cache = kmem_cache_create("skbuff_head", sizeof(struct sk_buff), 0,
					   SLAB_HWCACHE_ALIGN | SLAB_FAILSLAB, NULL);
	skb_data_cache = kmem_cache_create("skbuff_data", SKB_BUF_SIZE, 0,
					   SLAB_HWCACHE_ALIGN | SLAB_FAILSLAB, NULL);
	if (!skb_head_cache || !skb_data_cache)
		panic("skb: cannot create the sk_buff caches");
}

static struct sk_buff *skb_alloc_slow(void)
{
	struct sk_buff *skb = kmem_cache_alloc(skb_head_cache);
	if (!skb)
		return NULL;
	skb->head = kmem_cache_alloc(skb_data_cache);
	if (!skb->head) {
		kmem_cache_free(skb_head_cache, skb);
		return NULL;
	}
	skb->end = skb->head + SKB_BUF_SIZE;
	return skb;
}

struct sk_buff *skb_alloc(void)
{
	unsigned long flags = arch_irq_save();
	struct skb_pcpu *pc = this_cpu_ptr(&skb_pcpu);
	struct sk_buff *skb = pc->free;
	if (skb) {
		pc->free = skb->next;
		pc->nr_free--;
	}
	arch_irq_restore(flags);

	if (!skb && !(skb = skb_alloc_slow()))
		return NULL;

	flags = arch_irq_save();
	this_cpu(skb_pcpu).outstanding++;
	skb->cpu = smp_processor_id();
	arch_irq_restore(flags);

	skb->next = NULL;
	skb->dev = NULL;
	skb->data = skb->tail = skb->head + SKB_HEADROOM;
	skb->protocol = 0;
	skb->network_header = skb->transport_header = SKB_HEADROOM;
	skb->tstamp = 0;
	return skb;
}

void kfree_skb(struct sk_buff *skb)
{
	if (!skb)
		return;
	unsigned long flags = arch_irq_save();
	struct skb_pcpu *pc = this_cpu_ptr(&skb_pcpu);
	pc->outstanding--;
	if (pc->nr_free < SKB_PCPU_CACHE_MAX) {
		skb->next = pc->free;
		pc->free = skb;
		pc->nr_free++;
		skb = NULL;
	}
	arch_irq_restore(flags);
	if (skb) {
		kmem_cache_free(skb_data_cache, skb->head);
		kmem_cache_free(skb_head_cache, skb);
	}
}

long skb_outstanding(void)
{
	long sum = 0;
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++)
		sum += READ_ONCE(per_cpu(skb_pcpu, cpu).outstanding);
	return sum;
}

bool skb_reserve(struct sk_buff *skb, u32 len)
{
	if (skb->data != skb->tail || len > skb_tailroom(skb))
		return false;
	skb->data += len;
	skb->tail += len;
	return true;
}

void *skb_put(struct sk_buff *skb, u32 len)
{
	if (len > skb_tailroom(skb))
		return NULL;
	void *start = skb->tail;
	skb->tail += len;
	return start;
}

void *skb_push(struct sk_buff *skb, u32 len)
{
	if (len > skb_headroom(skb))
		return NULL;
	skb->data -= len;
	return skb->data;
}

void *skb_pull(struct sk_buff *skb, u32 len)
{
	if (len > skb_len(skb))
		return NULL;
	skb->data += len;
	return skb->data;
}

bool skb_trim(struct sk_buff *skb, u32 len)
{
	if (len > skb_len(skb))
		return false;
	skb->tail = skb->data + len;
	return true;
}

void skb_queue_init(struct sk_buff_head *q)
{
	q->first = q->last = NULL;
	q->qlen = 0;
	spin_lock_init(&q->lock);
}

void __skb_queue_tail(struct sk_buff_head *q, struct sk_buff *skb)
{
	skb->next = NULL;
	if (q->last)
		q->last->next = skb;
	else
		q->first = skb;
	q->last = skb;
	q->qlen++;
}

struct sk_buff *__skb_dequeue(struct sk_buff_head *q)
{
	struct sk_buff *skb = q->first;
	if (!skb)
		return NULL;
	q->first = skb->next;
	if (!q->first)
		q->last = NULL;
	q->qlen--;
	skb->next = NULL;
	return skb;
}

/* irqsave: a queue may be fed from an interrupt (a driver's receive) and drained in a thread. */
void __skb_queue_head(struct sk_buff_head *q, struct sk_buff *skb)
{
	skb->next = q->first;
	q->first = skb;
	if (!q->last)
		q->last = skb;
	q->qlen++;
}

void __skb_queue_splice_tail_init(struct sk_buff_head *from, struct sk_buff_head *to)
{
	if (!from->first)
		return;
	if (to->last)
		to->last->next = from->first;
	else
		to->first = from->first;
	to->last = from->last;
	to->qlen += from->qlen;
	from->first = from->last = NULL;
	from->qlen = 0;
}

void skb_queue_tail(struct sk_buff_head *q, struct sk_buff *skb)
{
	unsigned long flags = spin_lock_irqsave(&q->lock);
	__skb_queue_tail(q, skb);
	spin_unlock_irqrestore(&q->lock, flags);
}

struct sk_buff *skb_dequeue(struct sk_buff_head *q)
{
	unsigned long flags = spin_lock_irqsave(&q->lock);
	struct sk_buff *skb = __skb_dequeue(q);
	spin_unlock_irqrestore(&q->lock, flags);
	return skb;
}

void skb_queue_purge(struct sk_buff_head *q)
{
	struct sk_buff_head gone;
	struct sk_buff *skb;
	skb_queue_init(&gone);
	unsigned long flags = spin_lock_irqsave(&q->lock);
	__skb_queue_splice_tail_init(q, &gone);
	spin_unlock_irqrestore(&q->lock, flags);
	/* Freed outside the lock: kfree_skb may reach the slab's locks. */
	while ((skb = __skb_dequeue(&gone)) != NULL)
		kfree_skb(skb);
}
