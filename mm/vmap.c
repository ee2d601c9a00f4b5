/*
 * Kernel stacks with guard pages (grace/vmap.h).
 *
 * The vmap area is cut into fixed slots of one guard page plus KERNEL_STACK_SIZE;
 * a bitmap says which slots are in use, and the lowest free one is taken.
 * The guard page of a slot is never mapped, so the page below every stack
 * faults. Stack pages are separate 4 KiB pages from the buddy (no need for
 * contiguous memory) mapped read-write and non-executable; page tables for the
 * area come from the buddy too and are kept when stacks go (a slot is reused
 * with the same tables).
 *
 * Freeing is lazy about other CPUs' TLBs, as Linux's vunmap is: the pages go
 * back at once (nothing runs on a freed stack, so a stale translation on
 * another CPU is never used), but the slot's addresses are reused only after
 * every CPU has flushed its TLB. Freed slots wait in a small purge list; when
 * it is full (or no slot is free), one IPI round flushes every CPU and the
 * whole list becomes free. That is one IPI per CPU for VMAP_PURGE_BATCH frees
 * instead of one per free, which at 64 vCPUs on 2 host cores is the difference
 * between a millisecond and most of a second per free.
 *
 * vmap_lock protects the bitmap, the purge list and the area's page tables.
 */
#include <grace/arch.h>
#include <grace/compiler.h>
#include <grace/errno.h>
#include <grace/kmap.h>
#include <grace/page_alloc.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <grace/spinlock.h>
#include <grace/vmap.h>
#include <asm/irq.h>

#define STACK_PAGES (KERNEL_STACK_SIZE / PAGE_SIZE)
#define SLOT_SIZE (STACK_GUARD_SIZE + KERNEL_STACK_SIZE)
#define NR_SLOTS (VMAP_SIZE / SLOT_SIZE)

BUILD_BUG_ON(KERNEL_STACK_SIZE % PAGE_SIZE || STACK_GUARD_SIZE % PAGE_SIZE);

/* Freed slots waiting for a TLB flush on every CPU before reuse. */
#define VMAP_PURGE_BATCH 32

static DEFINE_SPINLOCK(vmap_lock);
static unsigned purge_slots[VMAP_PURGE_BATCH]; /* vmap_lock */
static unsigned nr_purge;		       /* vmap_lock */
static u64 slot_used[(NR_SLOTS + 63) / 64];    /* vmap_lock */
static u64 slot_pending[(NR_SLOTS + 63) / 64]; /* vmap_lock: freed, waiting for a purge */
static unsigned slot_first_free;	       /* vmap_lock: no free slot below this one */

static uintptr_t slot_stack(unsigned slot)
{
	return VMAP_BASE + (uintptr_t)slot * SLOT_SIZE + STACK_GUARD_SIZE;
}

static int slot_get_once(void)
{
	spin_lock(&vmap_lock);
	/* Lowest free slot first: stacks stay packed, so few page tables serve them. */
	for (unsigned s = slot_first_free; s < NR_SLOTS; s++) {
		if (!(slot_used[s / 64] & (1ULL << (s % 64)))) {
			slot_used[s / 64] |= 1ULL << (s % 64);
			slot_first_free = s + 1;
			spin_unlock(&vmap_lock);
			return (int)s;
		}
	}
	spin_unlock(&vmap_lock);
	return -ENOMEM;
}

/* Called with vmap_lock held. */
static void slot_put_locked(unsigned slot)
{
	lockdep_assert_held(&vmap_lock);
	slot_used[slot / 64] &= ~(1ULL << (slot % 64));
	slot_pending[slot / 64] &= ~(1ULL << (slot % 64));
	if (slot < slot_first_free)
		slot_first_free = slot;
}

static void flush_all_ipi(void *arg)
{
	arch_flush_tlb_all();
}

/*
 * Flush every CPU's TLB, then free the slots that were waiting for it. Needs
 * interrupts on (it waits for IPIs); false, doing nothing, when they are off.
 */
static bool vmap_purge(void)
{
	unsigned slots[VMAP_PURGE_BATCH], n;

	if (num_online_cpus() > 1 && arch_irqs_disabled())
		return false;
	/* Take the list first: slots freed after this wait for the next purge. */
	spin_lock(&vmap_lock);
	n = nr_purge;
	for (unsigned i = 0; i < n; i++)
		slots[i] = purge_slots[i];
	nr_purge = 0;
	spin_unlock(&vmap_lock);
	if (!n)
		return true;

	arch_flush_tlb_all();
	if (num_online_cpus() > 1)
		smp_call_others(flush_all_ipi, NULL, true);

	spin_lock(&vmap_lock);
	for (unsigned i = 0; i < n; i++)
		slot_put_locked(slots[i]);
	spin_unlock(&vmap_lock);
	return true;
}

static int slot_get(void)
{
	int slot = slot_get_once();
	if (slot < 0 && vmap_purge())
		slot = slot_get_once();
	return slot;
}

/* Queue a freed slot for reuse after the next TLB purge. */
static void slot_put(unsigned slot)
{
	for (;;) {
		spin_lock(&vmap_lock);
		if (nr_purge < VMAP_PURGE_BATCH) {
			purge_slots[nr_purge++] = slot;
			spin_unlock(&vmap_lock);
			return;
		}
		spin_unlock(&vmap_lock);
		if (!vmap_purge()) {
			/* Cannot flush with interrupts off: keep the slot out of use for good. */
			pr_warn("vmap: stack slot %u leaked: freed with interrupts off\n", slot);
			return;
		}
	}
}

static pte_t *vmap_alloc_table(void)
{
	return alloc_pages(0);
}

/* Unmap the first n pages of the stack at va into pages[]; flush this CPU's TLB. */
static void stack_unmap(uintptr_t va, unsigned n, phys_addr_t *pages)
{
	spin_lock(&vmap_lock);
	for (unsigned i = 0; i < n; i++)
		pages[i] = pte_phys(kmap_unmap_page(arch_kernel_root(), va + i * PAGE_SIZE));
	spin_unlock(&vmap_lock);
	for (unsigned i = 0; i < n; i++)
		arch_flush_tlb_page(va + i * PAGE_SIZE);
}

static void stack_free_pages(const phys_addr_t *pages, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (pages[i])
			free_pages(phys_to_virt(pages[i]), 0);
}

void *stack_alloc_node(int node)
{
	int slot = slot_get();
	if (slot < 0) {
		pr_err("vmap: no free stack slot\n");
		return NULL;
	}
	uintptr_t va = slot_stack((unsigned)slot);
	for (unsigned i = 0; i < STACK_PAGES; i++) {
		void *page = alloc_pages_node(node, 0);
		int err = -ENOMEM;
		if (page) {
			spin_lock(&vmap_lock);
			err = kmap_range(arch_kernel_root(), va + i * PAGE_SIZE, virt_to_phys(page),
					 PAGE_SIZE, PROT_READ | PROT_WRITE, false, false,
					 vmap_alloc_table);
			spin_unlock(&vmap_lock);
		}
		if (err) {
			if (page)
				free_pages(page, 0);
			/* Only this CPU has seen the new pages: a local flush is enough. */
			phys_addr_t pages[STACK_PAGES];
			stack_unmap(va, i, pages);
			stack_free_pages(pages, i);
			spin_lock(&vmap_lock);
			slot_put_locked((unsigned)slot);
			spin_unlock(&vmap_lock);
			return NULL;
		}
		/* Sv39 may cache that the page was invalid; x86 never does, but it is cheap. */
		arch_flush_tlb_page(va + i * PAGE_SIZE);
	}
	return (void *)va;
}

void *stack_alloc(void)
{
	return stack_alloc_node(NUMA_NO_NODE);
}

void stack_free(void *stack)
{
	if (!stack)
		return;
	uintptr_t va = (uintptr_t)stack;
	if (va < VMAP_BASE || (va - VMAP_BASE) % SLOT_SIZE != STACK_GUARD_SIZE ||
	    (va - VMAP_BASE) / SLOT_SIZE >= NR_SLOTS) {
		pr_err("vmap: stack_free(%p): not a stack from stack_alloc\n", stack);
		return;
	}
	unsigned slot = (unsigned)((va - VMAP_BASE) / SLOT_SIZE);
	spin_lock(&vmap_lock);
	u64 bit = 1ULL << (slot % 64);
	bool live = (slot_used[slot / 64] & bit) && !(slot_pending[slot / 64] & bit);
	/*
	 * Only a live stack becomes pending: a second free of a slot already purged
	 * and free must leave it clean, or its next owner's free would be refused.
	 */
	if (live)
		slot_pending[slot / 64] |= bit;
	spin_unlock(&vmap_lock);
	if (!live) {
		pr_err("vmap: stack_free(%p): not allocated (double free?)\n", stack);
		return;
	}
	phys_addr_t pages[STACK_PAGES];
	stack_unmap(va, STACK_PAGES, pages);
	/* Other CPUs may hold translations: the slot waits for a purge, the pages need not. */
	stack_free_pages(pages, STACK_PAGES);
	slot_put(slot);
}

bool vmap_is_guard(uintptr_t va)
{
	if (va < VMAP_BASE || va >= VMAP_BASE + NR_SLOTS * SLOT_SIZE)
		return false;
	return (va - VMAP_BASE) % SLOT_SIZE < STACK_GUARD_SIZE;
}
