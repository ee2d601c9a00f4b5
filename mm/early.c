/*
 * The boot-time feeder: which physical memory is ours, and the few allocations
 * needed before the buddy allocator can run (its own struct page array).
 *
 * It starts from boot_info's RAM and takes out the reserved ranges (firmware,
 * DTB, multiboot2 data, modules, low memory), the kernel image and physical page
 * 0; what is left is a list of free ranges, each inside one RAM range and so on
 * one NUMA node. early_alloc() bumps the start of a range. Then early_release()
 * gives every byte still free to the buddy, and this allocator is gone: memory
 * it handed out stays allocated for good (page descriptors), nothing else is lost.
 *
 * Runs on the boot CPU alone, before any other CPU or interrupt: no lock.
 */
#include <grace/boot_info.h>
#include <grace/page_alloc.h>
#include <grace/printk.h>
#include "page_alloc_internal.h"

#define MAX_FREE_RANGES (MAX_MEM_RANGES + MAX_RESERVED + 2)

struct free_range {
	phys_addr_t cur, end; /* [cur, end) not yet handed out */
	int node;
};

static struct free_range ranges[MAX_FREE_RANGES];
static unsigned nr_ranges;
static bool released;

/* Remove [base, base + size) from every range, splitting one when the hole is inside it. */
static void ranges_subtract(phys_addr_t base, u64 size)
{
	phys_addr_t end = base + size;
	for (unsigned i = 0; i < nr_ranges; i++) {
		struct free_range *r = &ranges[i];
		if (end <= r->cur || base >= r->end)
			continue;
		if (base > r->cur && end < r->end) {
			if (nr_ranges == MAX_FREE_RANGES) {
				/* No slot for the upper part: lose it, never hand out reserved. */
				pr_warn("mm: too many holes, dropping [%llx, %llx)\n",
					(unsigned long long)end, (unsigned long long)r->end);
				r->end = base;
				continue;
			}
			ranges[nr_ranges++] = (struct free_range){end, r->end, r->node};
			r->end = base;
		} else if (base <= r->cur) {
			r->cur = end < r->end ? end : r->end;
		} else {
			r->end = base;
		}
	}
}

void early_init(void)
{
	for (unsigned i = 0; i < boot_info.nr_mem && nr_ranges < MAX_FREE_RANGES; i++) {
		const struct mem_range *m = &boot_info.mem[i];
		phys_addr_t base = ALIGN_UP(m->base, PAGE_SIZE);
		phys_addr_t end = ALIGN_DOWN(m->base + m->size, PAGE_SIZE);
		int node = m->node >= 0 && (unsigned)m->node < nr_nodes ? m->node : 0;
		if (end > base)
			ranges[nr_ranges++] = (struct free_range){base, end, node};
	}
	for (unsigned i = 0; i < boot_info.nr_reserved; i++) {
		const struct mem_range *r = &boot_info.reserved[i];
		phys_addr_t base = ALIGN_DOWN(r->base, PAGE_SIZE);
		ranges_subtract(base, ALIGN_UP(r->base + r->size, PAGE_SIZE) - base);
	}
	phys_addr_t kbase = ALIGN_DOWN(boot_info.kernel_start, PAGE_SIZE);
	ranges_subtract(kbase, ALIGN_UP(boot_info.kernel_end, PAGE_SIZE) - kbase);
	/* Physical page 0 would look like NULL to code that stores physical addresses. */
	ranges_subtract(0, PAGE_SIZE);

	u64 free = 0;
	for (unsigned i = 0; i < nr_ranges; i++)
		if (ranges[i].end > ranges[i].cur)
			free += ranges[i].end - ranges[i].cur;
	if (!free)
		panic("mm: no usable memory after reservations (%u RAM ranges)", boot_info.nr_mem);
}

/* The span of RAM, for sizing the page descriptor array: [*lo, *hi) in page frames. */
void early_ram_span(u64 *lo, u64 *hi)
{
	*lo = ~0ULL;
	*hi = 0;
	for (unsigned i = 0; i < boot_info.nr_mem; i++) {
		const struct mem_range *m = &boot_info.mem[i];
		u64 first = m->base >> PAGE_SHIFT, last = (m->base + m->size) >> PAGE_SHIFT;
		if (last <= first)
			continue;
		*lo = MIN(*lo, first);
		*hi = MAX(*hi, last);
	}
	if (*hi == 0)
		*lo = 0;
}

/* size bytes (rounded up to pages), page-aligned, never freed; 0 when nothing fits. */
phys_addr_t early_alloc(u64 size)
{
	BUG_ON(released);
	size = ALIGN_UP(size, PAGE_SIZE);
	for (unsigned i = 0; i < nr_ranges; i++) {
		struct free_range *r = &ranges[i];
		if (r->end - r->cur >= size && r->end > r->cur) {
			phys_addr_t pa = r->cur;
			r->cur += size;
			return pa;
		}
	}
	return 0;
}

/* Hand what is left to the buddy; after this, early_alloc() is a bug. */
void early_release(void (*give)(phys_addr_t start, phys_addr_t end, int node))
{
	for (unsigned i = 0; i < nr_ranges; i++)
		if (ranges[i].end > ranges[i].cur)
			give(ranges[i].cur, ranges[i].end, ranges[i].node);
	nr_ranges = 0;
	released = true;
}
