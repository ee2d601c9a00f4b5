/*
 * The early page allocator: power-of-two blocks carved from boot_info's RAM, minus
 * the reserved ranges and the kernel image. Freed blocks, and the gaps that
 * alignment leaves, go on a free list per order and are reused; blocks are never
 * split or merged. The memory issue
 * replaces this with the buddy allocator behind the same alloc_pages/free_pages.
 */
#include <grace/boot_info.h>
#include <grace/mm.h>
#include <grace/printk.h>
#include <grace/spinlock.h>
#include <grace/string.h>

#define MAX_ORDER 11		/* up to 8 MiB blocks; enough for per-CPU areas and stacks */
#define MAX_FREE_RANGES (MAX_MEM_RANGES + MAX_RESERVED + 1)

struct free_range {
	phys_addr_t cur, end;	/* [cur, end) not yet handed out */
};

struct free_block {
	struct free_block *next;
};

static struct free_range ranges[MAX_FREE_RANGES];	/* under early_lock */
static unsigned nr_ranges;
static struct free_block *free_lists[MAX_ORDER + 1];	/* under early_lock */
static u64 free_bytes;					/* under early_lock */
static DEFINE_SPINLOCK(early_lock);

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
				/* No slot for the upper part: lose it rather than hand out reserved memory. */
				pr_warn("mm: too many holes, dropping [%llx, %llx)\n",
					(unsigned long long)end, (unsigned long long)r->end);
				r->end = base;
				continue;
			}
			ranges[nr_ranges++] = (struct free_range){ end, r->end };
			r->end = base;
		} else if (base <= r->cur) {
			r->cur = end < r->end ? end : r->end;
		} else {
			r->end = base;
		}
	}
}

void mm_early_init(void)
{
	for (unsigned i = 0; i < boot_info.nr_mem && nr_ranges < MAX_FREE_RANGES; i++) {
		phys_addr_t base = ALIGN_UP(boot_info.mem[i].base, PAGE_SIZE);
		phys_addr_t end = ALIGN_DOWN(boot_info.mem[i].base + boot_info.mem[i].size, PAGE_SIZE);
		if (end > base)
			ranges[nr_ranges++] = (struct free_range){ base, end };
	}
	for (unsigned i = 0; i < boot_info.nr_reserved; i++)
		ranges_subtract(ALIGN_DOWN(boot_info.reserved[i].base, PAGE_SIZE),
				ALIGN_UP(boot_info.reserved[i].size + (boot_info.reserved[i].base & (PAGE_SIZE - 1)),
					 PAGE_SIZE));
	ranges_subtract(ALIGN_DOWN(boot_info.kernel_start, PAGE_SIZE),
			ALIGN_UP(boot_info.kernel_end, PAGE_SIZE) - ALIGN_DOWN(boot_info.kernel_start, PAGE_SIZE));
	/* Physical page 0 would look like NULL to code that stores physical addresses. */
	ranges_subtract(0, PAGE_SIZE);

	for (unsigned i = 0; i < nr_ranges; i++)
		if (ranges[i].end > ranges[i].cur)
			free_bytes += ranges[i].end - ranges[i].cur;
	if (!free_bytes)
		panic("mm: no usable memory after reservations (%u RAM ranges)", boot_info.nr_mem);
	printk("mm: %llu MiB free in %u ranges\n", (unsigned long long)(free_bytes >> 20), nr_ranges);
}

static void free_block_locked(phys_addr_t pa, unsigned order)
{
	struct free_block *b = phys_to_virt(pa);
	b->next = free_lists[order];
	free_lists[order] = b;
}

/*
 * Aligning a block up leaves a gap below it; hand the gap to the free lists as the
 * largest aligned blocks that fit, so no memory is lost and free_bytes stays exact.
 */
static void early_free_gap_locked(phys_addr_t start, phys_addr_t end)
{
	while (start < end) {
		unsigned order = 0;
		while (order < MAX_ORDER && IS_ALIGNED(start, (u64)PAGE_SIZE << (order + 1)) &&
		       start + ((u64)PAGE_SIZE << (order + 1)) <= end)
			order++;
		free_block_locked(start, order);
		start += (u64)PAGE_SIZE << order;
	}
}

static void *alloc_from_ranges_locked(unsigned order)
{
	u64 size = (u64)PAGE_SIZE << order;
	for (unsigned i = 0; i < nr_ranges; i++) {
		struct free_range *r = &ranges[i];
		phys_addr_t start = ALIGN_UP(r->cur, size);
		if (start + size > r->end || start < r->cur)
			continue;
		early_free_gap_locked(r->cur, start);
		free_bytes -= size;
		r->cur = start + size;
		return phys_to_virt(start);
	}
	return NULL;
}

void *alloc_pages(unsigned order)
{
	if (order > MAX_ORDER)
		return NULL;
	unsigned long flags = spin_lock_irqsave(&early_lock);
	void *p = free_lists[order];
	if (p) {
		free_lists[order] = free_lists[order]->next;
		free_bytes -= (u64)PAGE_SIZE << order;
	} else {
		p = alloc_from_ranges_locked(order);
	}
	spin_unlock_irqrestore(&early_lock, flags);
	if (p)
		memset(p, 0, (size_t)PAGE_SIZE << order);
	return p;
}

void free_pages(void *addr, unsigned order)
{
	if (!addr)
		return;
	BUG_ON(order > MAX_ORDER || !IS_ALIGNED((uintptr_t)addr, PAGE_SIZE << order));
	unsigned long flags = spin_lock_irqsave(&early_lock);
	free_block_locked(virt_to_phys(addr), order);
	free_bytes += (u64)PAGE_SIZE << order;
	spin_unlock_irqrestore(&early_lock, flags);
}

u64 mm_free_bytes(void)
{
	unsigned long flags = spin_lock_irqsave(&early_lock);
	u64 n = free_bytes;
	spin_unlock_irqrestore(&early_lock, flags);
	return n;
}
