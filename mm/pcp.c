/*
 * Per-CPU page lists: each CPU keeps, for each node, a short list of free order-0
 * pages and a shorter one of free 2 MiB (HUGE_ORDER) blocks, so that most
 * alloc/free pairs touch only memory of their own CPU. An empty order-0 list is
 * refilled with PCP_BATCH pages in one zone-lock hold; a list that grows past its
 * high mark gives PCP_BATCH pages back in one hold. The huge list is never
 * refilled in bulk (2 MiB blocks are too precious to hoard): it only keeps
 * blocks freed on this CPU, up to PCP_HUGE_HIGH.
 *
 * Each list set has its own lock. Its CPU takes it with interrupts off on every
 * operation; nobody else does, except a drain (pcp_drain_all, and the allocator
 * before it reports out of memory), so it is all but never contended, and a drain
 * needs no IPI. A refill, a spill or a drain takes the zone's lock inside it
 * (lock order: docs/locking.md).
 *
 * Pages on these lists are free but not in the zone's nr_free; pcp_pages() adds
 * them for reporting, and a drain makes the zone's count exact again.
 */
#include <grace/boot_info.h>
#include <grace/percpu.h>
#include "page_alloc_internal.h"

struct pcp_list {
	struct page *head; /* linked through next */
	unsigned count;
};

struct pcp {
	spinlock_t lock;	     /* protects both lists */
	struct pcp_list small, huge; /* order 0, HUGE_ORDER */
} __cacheline_aligned;

static struct pcp pcps[MAX_CPUS][MAX_NODES];

static struct pcp_list *pcp_list(struct pcp *pcp, unsigned order)
{
	return order == 0 ? &pcp->small : &pcp->huge;
}

static struct page *list_pop(struct pcp_list *l)
{
	struct page *page = l->head;
	l->head = page->next;
	l->count--;
	page->flags &= ~PG_PCP;
	return page;
}

static void list_push(struct pcp_list *l, struct page *page, unsigned order)
{
	page->flags |= PG_PCP;
	page->order = (u8)order;
	page->next = l->head;
	l->head = page;
	l->count++;
}

/* Detach up to n pages from l into a list for buddy_free_bulk. */
static struct page *list_take(struct pcp_list *l, unsigned n)
{
	struct page *out = NULL;
	while (n-- && l->head) {
		struct page *page = list_pop(l);
		page->next = out;
		out = page;
	}
	return out;
}

void pcp_init(void)
{
	/* One place, so one lock class for them all (docs/locking.md). */
	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++)
		for (unsigned n = 0; n < MAX_NODES; n++)
			spin_lock_init(&pcps[cpu][n].lock);
}

struct page *pcp_alloc(int node, unsigned order)
{
	unsigned long flags = arch_irq_save();
	struct pcp *pcp = &pcps[smp_processor_id()][node];
	struct pcp_list *l = pcp_list(pcp, order);
	struct page *page = NULL;

	spin_lock(&pcp->lock);
	if (!l->head && order == 0) {
		struct page *got = NULL;
		unsigned n = buddy_alloc_bulk(&zones[node], 0, PCP_BATCH, &got);
		while (n--) {
			struct page *next = got->next;
			list_push(l, got, 0);
			got = next;
		}
	}
	if (l->head)
		page = list_pop(l);
	spin_unlock(&pcp->lock);
	arch_irq_restore(flags);
	return page;
}

bool pcp_free(struct page *page, unsigned order)
{
	if (order != 0 && order != HUGE_ORDER)
		return false;
	int node = page->node;
	unsigned long flags = arch_irq_save();
	struct pcp *pcp = &pcps[smp_processor_id()][node];
	struct pcp_list *l = pcp_list(pcp, order);
	struct page *spill = NULL;

	spin_lock(&pcp->lock);
	list_push(l, page, order);
	if (order == 0 && l->count > PCP_HIGH)
		spill = list_take(l, PCP_BATCH);
	else if (order == HUGE_ORDER && l->count > PCP_HUGE_HIGH)
		spill = list_take(l, l->count - PCP_HUGE_HIGH);
	/* Still under pcp->lock: the order pcp -> zone keeps a drain from racing us. */
	buddy_free_bulk(&zones[node], spill, order);
	spin_unlock(&pcp->lock);
	arch_irq_restore(flags);
	return true;
}

/* Give all of one CPU's lists for node back; returns the pages. */
static u64 pcp_drain_one(unsigned cpu, int node)
{
	struct pcp *pcp = &pcps[cpu][node];
	unsigned long flags = spin_lock_irqsave(&pcp->lock);
	u64 pages = pcp->small.count + ((u64)pcp->huge.count << HUGE_ORDER);
	buddy_free_bulk(&zones[node], list_take(&pcp->small, pcp->small.count), 0);
	buddy_free_bulk(&zones[node], list_take(&pcp->huge, pcp->huge.count), HUGE_ORDER);
	spin_unlock_irqrestore(&pcp->lock, flags);
	return pages;
}

u64 pcp_drain_nodes(const int *nodes, unsigned n)
{
	u64 pages = 0;
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++)
		for (unsigned i = 0; i < n; i++) {
			struct pcp *pcp = &pcps[cpu][nodes[i]];
			/* A racy peek: lists that look empty are not worth their lock. */
			if (READ_ONCE(pcp->small.count) || READ_ONCE(pcp->huge.count))
				pages += pcp_drain_one(cpu, nodes[i]);
		}
	return pages;
}

void pcp_drain_all(void)
{
	int nodes[MAX_NODES];
	for (unsigned i = 0; i < nr_nodes; i++)
		nodes[i] = (int)i;
	pcp_drain_nodes(nodes, nr_nodes);
}

void pcp_drain_local(void)
{
	unsigned long flags = arch_irq_save();
	unsigned cpu = smp_processor_id();
	for (unsigned node = 0; node < nr_nodes; node++)
		pcp_drain_one(cpu, (int)node);
	arch_irq_restore(flags);
}

u64 pcp_pages(int node)
{
	u64 pages = 0;
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++) {
		pages += READ_ONCE(pcps[cpu][node].small.count);
		pages += (u64)READ_ONCE(pcps[cpu][node].huge.count) << HUGE_ORDER;
	}
	return pages;
}
