/*
 * Per-CPU page lists: each CPU keeps, for each node, a short list of free order-0
 * pages and a shorter one of free 2 MiB (HUGE_ORDER) blocks, so that most
 * alloc/free pairs touch only memory of their own CPU. An empty list is refilled
 * with `batch` blocks in one zone-lock hold (buddy_alloc_bulk); a list that grows
 * past its high mark gives back in one hold (order 0: `batch` pages; huge: down to
 * `batch` blocks, the oldest). Batch and high mark are sized per node at boot
 * (pcp_size_lists) from the node's managed memory and the CPU count, so that all
 * CPUs' lists together hold a bounded share of the node; on a machine too small
 * for that share they fall back to the smallest lists (order 0: PCP_BATCH_MIN;
 * huge: PCP_HUGE_HIGH, one block freed here). A drain gives a list back a batch
 * per zone-lock hold, so no hold is longer than a refill's.
 *
 * The order-0 high mark tunes itself (`pcp_high=auto`, the default; Linux 6.7's
 * "mm: tune PCP high automatically", Huang Ying, 2023, from the same observation).
 * A CPU that faults in more than its list holds and unmaps it again refills from
 * the zone and spills back to it every round, with every other CPU doing the same
 * under the same zone lock. So each refill earns the list one batch of room: a
 * free that would spill while the list has earned room raises its high mark by a
 * batch instead, up to the node's auto ceiling, and the next round finds its pages
 * on its own list. A spill forfeits what is left earned: the round it was for is
 * over. The mark comes down only with a drain, when an allocation would otherwise
 * fail or the mode changes, which puts it back to the boot's (Linux also lowers it
 * a little every second; a periodic timer on every CPU is what Grace avoids).
 * `pcp_high=fixed` keeps every list at the boot's mark, as before.
 *
 * The huge list has a second mode, `pcp_huge=single` on the command line or
 * pcp_set_huge_batching(false) at run time: never refilled, it keeps at most
 * PCP_HUGE_HIGH block freed on this CPU, so that a benchmark compares both designs
 * in one boot. The mode is read under pcp->lock, and turning batching off takes
 * every CPU's lock after the store, so no list refilled in the old mode survives.
 *
 * Each list set has its own lock. Its CPU takes it with interrupts off on every
 * operation; nobody else does, except a drain (pcp_drain_all, the allocator before
 * it reports out of memory, a mode switch), so it is all but never contended, and a
 * drain needs no IPI. A refill, a spill or a drain takes the zone's lock inside it
 * (lock order: docs/locking.md).
 *
 * Pages on these lists are free but not in the zone's nr_free; pcp_pages() adds
 * them for reporting, and a drain makes the zone's count exact again. Each list set
 * also counts its refills, spills and hits (pcp_stats_sum): written only by its CPU
 * under its lock, summed racily on read, so counting writes nothing shared.
 */
#include <grace/boot_info.h>
#include <grace/cmdline.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/string.h>
#include "page_alloc_internal.h"

/*
 * Sizing (pcp_size_lists). Order 0: high = the node's pages / (PCP_SHARE_DIV *
 * CPUs), within [4 * PCP_BATCH_MIN, PCP_HIGH_MAX], so all CPUs' lists together
 * hold at most 1/8 of the node at their high marks; a refill is a quarter of the
 * high mark (Linux's ratio, mm/page_alloc.c zone_batchsize/zone_highsize), kept in
 * [PCP_BATCH_MIN, PCP_BATCH_MAX]. 63 is Linux's largest default batch (2^n - 1,
 * so batches of neighbouring CPUs do not alias in cache), and bounds how long a
 * refill holds the zone lock with interrupts off. A high mark well above the batch
 * lets a CPU that frees what it faulted (an unmap) keep it for its next faults:
 * at 512 MiB, about 2000 pages (8 MiB) each at 8 CPUs and 250 at 64, batch 63;
 * at 96 MiB with 64 CPUs, 47 and 11. Below 4 pages a refill amortises nothing.
 */
#define PCP_SHARE_DIV 8
#define PCP_BATCH_MIN 4
/*
 * The auto mark's ceiling: the node's pages / (PCP_AUTO_SHARE_DIV * CPUs), within
 * [the boot's mark, PCP_HIGH_MAX]: all CPUs' lists at their ceilings hold at most
 * half the node, which a drain gives back before an allocation fails. At 512 MiB
 * with 64 CPUs, 1024 pages: a CPU cycling 2 MiB of 4 KiB faults keeps them all.
 */
#define PCP_AUTO_SHARE_DIV 2
/*
 * Huge: share = the node's 2 MiB blocks / (PCP_HUGE_SHARE_DIV * CPUs); batch =
 * share clamped to [1, PCP_HUGE_BATCH_MAX], high = 2 * batch, so a refill leaves
 * room for as many frees as allocations before the next zone-lock hold, and at
 * their high marks all CPUs' lists hold at most half the node's blocks. That is a
 * large share, chosen on purpose: 2 MiB blocks are few (256 in 512 MiB), a
 * refill of one or two blocks costs each fault the zone lock and the buddy lists
 * (~5 cache-line transfers under the single design), and a block parked on
 * another CPU is never lost: a node that looks empty drains every CPU's lists
 * before an allocation fails (alloc_from_nodes). At 512 MiB that is batch 7 at 8
 * CPUs and 8 at 2 or 4; a node with fewer than PCP_HUGE_SHARE_DIV blocks per CPU
 * (96 MiB with 12 CPUs or more) gets the single design's numbers, batch 1 and
 * high PCP_HUGE_HIGH: no more than one block per CPU can be parked, as before.
 */
#define PCP_HUGE_SHARE_DIV 4
/*
 * Measured with `tests/run --bench thp_memscale --profile sharing`, riscv64, 4 CPUs,
 * 512 MiB (huge batch 3, order 0 63/252): cache-line transfers on the zones per 2
 * MiB fault 4.8 (pcp_huge=single) -> 1.5; per 4 KiB fault 0.29 (the old fixed
 * 16/64) -> 0.10.
 */

struct pcp_list {
	struct page *head; /* linked through next */
	unsigned count;
};

struct pcp {
	spinlock_t lock;	     /* protects both lists and the counts below */
	struct pcp_list small, huge; /* order 0, HUGE_ORDER */
	unsigned small_grown;	     /* pcp_high=auto: the order-0 mark is the boot's + this */
	unsigned small_earned;	     /* refills not yet paid back by a batch of growth */
	struct pcp_stats stats;	     /* this list set's; written by its CPU only */
} __cacheline_aligned;

/*
 * One list set per present CPU and node, pcp_of(cpu, node), allocated by
 * pcp_size_lists() once the buddy has memory; nothing allocates through the lists
 * before that.
 */
static struct pcp *pcps;

static struct pcp *pcp_of(unsigned cpu, int node)
{
	return &pcps[cpu * nr_nodes + (unsigned)node];
}
/* Per node, set once by pcp_size_lists() before a second CPU runs. */
static struct pcp_limits small_limits[MAX_NODES], huge_limits[MAX_NODES];
static unsigned small_high_max[MAX_NODES]; /* the auto mark's ceiling */
/* The order-0 mark's mode; read under a pcp->lock, written by pcp_set_high_auto(). */
static bool high_auto = true;
/* The huge lists' mode; read under a pcp->lock, written by pcp_set_huge_batching(). */
static bool huge_batching = true;

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

/* Push every block of a list from buddy_alloc_bulk (through next). */
static void list_push_all(struct pcp_list *l, struct page *got, unsigned order)
{
	while (got) {
		struct page *next = got->next;
		list_push(l, got, order);
		got = next;
	}
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

/* Keep the keep most recently pushed pages of l; detach the older rest for buddy_free_bulk. */
static struct page *list_take_oldest(struct pcp_list *l, unsigned keep)
{
	if (l->count <= keep)
		return NULL;
	struct page **link = &l->head;
	for (unsigned i = 0; i < keep; i++)
		link = &(*link)->next;
	struct page *out = *link;
	*link = NULL;
	for (struct page *page = out; page; page = page->next)
		page->flags &= ~PG_PCP;
	l->count = keep;
	return out;
}

void pcp_init(void)
{
	/* Until pcp_size_lists() knows the nodes' sizes: the smallest lists. */
	for (unsigned n = 0; n < MAX_NODES; n++) {
		small_limits[n] = (struct pcp_limits){PCP_BATCH_MIN, 4 * PCP_BATCH_MIN};
		small_high_max[n] = 4 * PCP_BATCH_MIN;
		huge_limits[n] = (struct pcp_limits){1, PCP_HUGE_HIGH};
	}
}

static unsigned clamp_unsigned(u64 v, unsigned lo, unsigned hi)
{
	return v < lo ? lo : v > hi ? hi : (unsigned)v;
}

static void size_node(unsigned node, unsigned cpus)
{
	u64 pages = zones[node].managed;
	unsigned high =
	    clamp_unsigned(pages / (PCP_SHARE_DIV * cpus), 4 * PCP_BATCH_MIN, PCP_HIGH_MAX);
	unsigned batch = clamp_unsigned(high / 4, PCP_BATCH_MIN, PCP_BATCH_MAX);
	small_limits[node] = (struct pcp_limits){batch, high};
	small_high_max[node] =
	    clamp_unsigned(pages / (PCP_AUTO_SHARE_DIV * cpus), high, PCP_HIGH_MAX);

	u64 share = (pages >> HUGE_ORDER) / (PCP_HUGE_SHARE_DIV * cpus);
	if (share == 0)
		huge_limits[node] = (struct pcp_limits){1, PCP_HUGE_HIGH};
	else {
		batch = clamp_unsigned(share, 1, PCP_HUGE_BATCH_MAX);
		huge_limits[node] = (struct pcp_limits){batch, 2 * batch};
	}
}

/* The list sets, from the buddy directly; their size follows the CPUs present, not MAX_CPUS. */
static void pcp_alloc_sets(unsigned cpus)
{
	size_t size = (size_t)cpus * nr_nodes * sizeof(struct pcp);
	pcps = alloc_pages_flags(0, pages_order(size), ALLOC_NOPCP);
	if (!pcps)
		panic("mm: no memory for %u CPUs' page lists (%zu bytes)", cpus, size);
	memset(pcps, 0, size);
	/* One place, so one lock class for them all (docs/locking.md). */
	for (unsigned cpu = 0; cpu < cpus; cpu++)
		for (unsigned n = 0; n < nr_nodes; n++)
			spin_lock_init(&pcp_of(cpu, (int)n)->lock);
}

void pcp_size_lists(void)
{
	unsigned cpus = boot_info.nr_cpus ? boot_info.nr_cpus : 1;
	pcp_alloc_sets(cpus);
	for (unsigned n = 0; n < nr_nodes; n++)
		size_node(n, cpus);

	static const char *const modes[] = {"batch", "single"};
	static const char *const highs[] = {"auto", "fixed"};
	if (cmdline_get_choice("pcp_huge", modes, ARRAY_SIZE(modes), 0) == 1)
		huge_batching = false;
	if (cmdline_get_choice("pcp_high", highs, ARRAY_SIZE(highs), 0) == 1)
		high_auto = false;
	printk("mm: per-CPU lists, node 0: order 0 batch %u high %u (%s, up to %u); 2 MiB %s "
	       "(batched: batch %u high %u)\n",
	       small_limits[0].batch, small_limits[0].high, high_auto ? "auto" : "fixed",
	       small_high_max[0], huge_batching ? "batched" : "single, at most 1 kept",
	       huge_limits[0].batch, huge_limits[0].high);
}

struct pcp_limits pcp_limits(int node, unsigned order)
{
	if (order == 0)
		return small_limits[node];
	if (!READ_ONCE(huge_batching))
		return (struct pcp_limits){0, PCP_HUGE_HIGH};
	return huge_limits[node];
}

/* Refill an empty list with a batch in one zone-lock hold; pcp->lock held. */
static void pcp_refill_locked(struct pcp *pcp, int node, unsigned order, unsigned batch)
{
	lockdep_assert_held(&pcp->lock);
	struct page *got = NULL;
	unsigned n = buddy_alloc_bulk(&zones[node], order, batch, &got);
	if (!n)
		return;
	list_push_all(pcp_list(pcp, order), got, order);
	if (order == 0) {
		pcp->stats.small_refills++;
		if (READ_ONCE(high_auto))
			pcp->small_earned++;
	} else
		pcp->stats.huge_refills++;
}

struct page *pcp_alloc(int node, unsigned order)
{
	unsigned long flags = arch_irq_save();
	struct pcp *pcp = pcp_of(smp_processor_id(), node);
	struct pcp_list *l = pcp_list(pcp, order);
	struct page *page = NULL;

	spin_lock(&pcp->lock);
	/* Under the lock: a mode switch's drain of this list comes before or after us. */
	struct pcp_limits lim = pcp_limits(node, order);
	if (l->head) {
		if (order == HUGE_ORDER)
			pcp->stats.huge_hits++;
	} else if (lim.batch) {
		pcp_refill_locked(pcp, node, order, lim.batch);
	}
	if (l->head)
		page = list_pop(l);
	spin_unlock(&pcp->lock);
	arch_irq_restore(flags);
	return page;
}

/*
 * An order-0 list past its mark: grow the mark by a batch if a refill earned it
 * and the ceiling allows, else give a batch back; pcp->lock held.
 */
static struct page *pcp_spill_small_locked(struct pcp *pcp, int node, struct pcp_limits lim)
{
	if (pcp->small.count <= lim.high + pcp->small_grown)
		return NULL;
	if (pcp->small_earned && lim.high + pcp->small_grown + lim.batch <= small_high_max[node]) {
		pcp->small_earned--;
		pcp->small_grown += lim.batch;
		pcp->stats.small_grows++;
		return NULL;
	}
	pcp->small_earned = 0;
	pcp->stats.small_spills++;
	return list_take(&pcp->small, lim.batch);
}

/* What a list past its high mark gives back; pcp->lock held. */
static struct page *pcp_spill_locked(struct pcp *pcp, int node, unsigned order,
				     struct pcp_limits lim)
{
	lockdep_assert_held(&pcp->lock);
	if (order == 0)
		return pcp_spill_small_locked(pcp, node, lim);
	struct pcp_list *l = &pcp->huge;
	if (l->count <= lim.high)
		return NULL;
	pcp->stats.huge_spills++;
	/* Single: the newest blocks go back and the one kept stays, as it always did. */
	if (!lim.batch)
		return list_take(l, l->count - lim.high);
	return list_take_oldest(l, lim.batch);
}

bool pcp_free(struct page *page, unsigned order)
{
	if (order != 0 && order != HUGE_ORDER)
		return false;
	int node = page->node;
	unsigned long flags = arch_irq_save();
	struct pcp *pcp = pcp_of(smp_processor_id(), node);
	struct pcp_list *l = pcp_list(pcp, order);

	spin_lock(&pcp->lock);
	list_push(l, page, order);
	struct page *spill = pcp_spill_locked(pcp, node, order, pcp_limits(node, order));
	/* Still under pcp->lock: the order pcp -> zone keeps a drain from racing us. */
	buddy_free_bulk(&zones[node], spill, order);
	spin_unlock(&pcp->lock);
	arch_irq_restore(flags);
	return true;
}

/* Give all of one CPU's lists for node back (huge_only: its huge list); returns the pages. */
static u64 pcp_drain_one(unsigned cpu, int node, bool huge_only)
{
	struct pcp *pcp = pcp_of(cpu, node);
	unsigned long flags = spin_lock_irqsave(&pcp->lock);
	u64 pages = (u64)pcp->huge.count << HUGE_ORDER;
	if (!huge_only) {
		/* A batch per zone-lock hold: a full list is up to PCP_HIGH_MAX pages. */
		unsigned chunk = MAX(small_limits[node].batch, 1u);
		pages += pcp->small.count;
		while (pcp->small.count)
			buddy_free_bulk(&zones[node], list_take(&pcp->small, chunk), 0);
		pcp->small_grown = 0; /* memory is short, or the mode changed: the boot's mark */
		pcp->small_earned = 0;
	}
	buddy_free_bulk(&zones[node], list_take(&pcp->huge, pcp->huge.count), HUGE_ORDER);
	spin_unlock_irqrestore(&pcp->lock, flags);
	return pages;
}

u64 pcp_drain_nodes(const int *nodes, unsigned n)
{
	u64 pages = 0;
	if (!pcps) /* the allocation of the lists themselves */
		return 0;
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++)
		for (unsigned i = 0; i < n; i++) {
			struct pcp *pcp = pcp_of(cpu, nodes[i]);
			/* A racy peek: lists that look empty are not worth their lock. */
			if (READ_ONCE(pcp->small.count) || READ_ONCE(pcp->huge.count))
				pages += pcp_drain_one(cpu, nodes[i], false);
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
		pcp_drain_one(cpu, (int)node, false);
	arch_irq_restore(flags);
}

void pcp_set_huge_batching(bool on)
{
	WRITE_ONCE(huge_batching, on);
	if (on)
		return;
	/*
	 * Every lock, even of lists that look empty: one may be held by a refill that
	 * read the old mode. A CPU that takes its lock after our release of it sees the
	 * new mode (the lock orders our store before its load), and one that took it
	 * before has finished its refill by the time we drain.
	 */
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++)
		for (unsigned node = 0; node < nr_nodes; node++)
			pcp_drain_one(cpu, (int)node, true);
}

bool pcp_huge_batching(void)
{
	return READ_ONCE(huge_batching);
}

void pcp_set_high_auto(bool on)
{
	WRITE_ONCE(high_auto, on);
	/* Every list from the boot's mark, in either mode (the same argument as above). */
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++)
		for (unsigned node = 0; node < nr_nodes; node++)
			pcp_drain_one(cpu, (int)node, false);
}

bool pcp_high_auto(void)
{
	return READ_ONCE(high_auto);
}

unsigned pcp_small_high_max(int node)
{
	return small_high_max[node];
}

unsigned pcp_small_count(unsigned cpu, int node)
{
	return READ_ONCE(pcp_of(cpu, node)->small.count);
}

u64 pcp_pages(int node)
{
	u64 pages = 0;
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++) {
		pages += READ_ONCE(pcp_of(cpu, node)->small.count);
		pages += (u64)READ_ONCE(pcp_of(cpu, node)->huge.count) << HUGE_ORDER;
	}
	return pages;
}

u64 pcp_huge_blocks(int node)
{
	u64 blocks = 0;
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++)
		blocks += READ_ONCE(pcp_of(cpu, node)->huge.count);
	return blocks;
}

/* Add cpu's counts, over every node, to out. */
static void pcp_stats_add(unsigned cpu, struct pcp_stats *out)
{
	for (unsigned node = 0; node < nr_nodes; node++) {
		const struct pcp_stats *s = &pcp_of(cpu, (int)node)->stats;
		out->huge_hits += READ_ONCE(s->huge_hits);
		out->huge_refills += READ_ONCE(s->huge_refills);
		out->huge_spills += READ_ONCE(s->huge_spills);
		out->small_refills += READ_ONCE(s->small_refills);
		out->small_spills += READ_ONCE(s->small_spills);
		out->small_grows += READ_ONCE(s->small_grows);
	}
}

void pcp_stats_sum(struct pcp_stats *out)
{
	*out = (struct pcp_stats){0};
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++)
		pcp_stats_add(cpu, out);
}

void pcp_stats_cpu(unsigned cpu, struct pcp_stats *out)
{
	*out = (struct pcp_stats){0};
	pcp_stats_add(cpu, out);
}
