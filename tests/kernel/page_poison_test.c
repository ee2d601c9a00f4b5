/*
 * Page poisoning selftests (DEBUG=1; skipped otherwise): a freed block of order
 * 0, 3 or 9 reads the poison, and a pointer loaded from it faults; a write to a
 * free page, 4 KiB or 2 MiB, is reported when the allocator next hands the page
 * out, naming the page, the word, its allocator and its freer, and the block is
 * still handed out zeroed; a page table an unmap frees (through the TLB gather,
 * after the shootdown) and a VMA table freed after a grace period are poisoned
 * like any page, and a write to the freed page table is reported too.
 *
 * A block freed on this CPU with interrupts off is the next one of its order the
 * CPU's list hands out, as long as the free made the list no longer than before
 * the allocation that took it: each test allocates, frees and allocates again in
 * one interrupts-off section, so it gets its own page back and nothing else on
 * this CPU can take or write the page meanwhile.
 */
#include <grace/ksyms.h>
#include <grace/page.h>
#include <grace/page_poison.h>
#include <grace/preempt.h>
#include <grace/string.h>
#include <grace/tlb.h>
#include <asm/irq.h>
#include "as_test.h"

#define RW (PROT_READ | PROT_WRITE)
#define POISON_TEST_VALUE 0x5741534845524521ULL /* what the buggy writes leave */

static void *__noinline poison_test_alloc(unsigned order)
{
	void *p = alloc_pages(order);
	barrier(); /* not a tail call: the record must name this function */
	return p;
}

static void __noinline poison_test_free(void *p, unsigned order)
{
	free_pages(p, order);
	barrier();
}

static void *__noinline poison_test_realloc(unsigned order)
{
	void *p = alloc_pages(order);
	barrier();
	return p;
}

/* Index of the first of n words at p that is not `want`, or -1. */
static long first_word_not(const u64 *p, size_t n, u64 want)
{
	for (size_t i = 0; i < n; i++)
		if (READ_ONCE(p[i]) != want)
			return (long)i;
	return -1;
}

static bool caller_is(uintptr_t addr, const char *fn_a, const char *fn_b)
{
	uintptr_t off;
	const char *fn = addr ? ksym_lookup(addr, &off, NULL) : NULL;
	if (fn && (!strcmp(fn, fn_a) || (fn_b && !strcmp(fn, fn_b))))
		return true;
	return test_fail(__FILE__, __LINE__, "caller %lx is %s, expected %s%s%s",
			 (unsigned long)addr, fn ? fn : "unknown", fn_a, fn_b ? " or " : "",
			 fn_b ? fn_b : "");
}

/* The latest report is of the word at page + offset, in a block of order. */
static bool report_names(const void *page, unsigned order, size_t offset)
{
	struct page_poison_report r;
	if (!EXPECT_TRUE(page_poison_last(&r)))
		return false;
	bool ok = EXPECT_TRUE(r.page == page);
	ok &= EXPECT_EQ(r.pfn, virt_to_phys(page) >> PAGE_SHIFT);
	ok &= EXPECT_EQ(r.order, order);
	ok &= EXPECT_EQ(r.offset, offset);
	ok &= EXPECT_TRUE(r.value == POISON_TEST_VALUE);
	return ok;
}

TEST(page_poison, freed_blocks_read_poison)
{
	if (!page_poison_enabled()) {
		test_skip("needs DEBUG=1");
		return;
	}
	static const unsigned orders[] = {0, 3, HUGE_ORDER};
	for (unsigned i = 0; i < ARRAY_SIZE(orders); i++) {
		unsigned order = orders[i];
		size_t words = (PAGE_SIZE << order) / sizeof(u64);
		unsigned long flags = arch_irq_save();
		u64 *p = poison_test_alloc(order);
		long bad = -2;
		u64 word = 0;
		if (p) {
			poison_test_free(p, order);
			bad = first_word_not(p, words, PAGE_POISON);
			word = READ_ONCE(p[words / 2]);
		}
		arch_irq_restore(flags);
		if (!p) {
			test_skip("no free block of the order");
			return;
		}
		if (bad >= 0)
			test_fail(__FILE__, __LINE__,
				  "order %u: word %ld of the freed block is %llx", order, bad,
				  (unsigned long long)READ_ONCE(p[bad]));
		/* A pointer read from the freed block points nowhere: following it faults. */
		u64 v;
		EXPECT_EQ(probe_read_u64((const void *)(uintptr_t)word, &v), -EFAULT);
	}
}

TEST(page_poison, write_to_free_page_reported_when_handed_out)
{
	test_expect_message("mm: ");
	if (!page_poison_enabled()) {
		test_skip("needs DEBUG=1");
		return;
	}
	const unsigned word = 37;
	u64 before = page_poison_count();
	unsigned long flags = arch_irq_save();
	u64 *p = poison_test_alloc(0), *q = NULL;
	if (p) {
		poison_test_free(p, 0);
		WRITE_ONCE(p[word], POISON_TEST_VALUE); /* the use after free */
		q = poison_test_realloc(0);
		if (q != p)
			WRITE_ONCE(p[word],
				   PAGE_POISON); /* not ours: leave the free page as it was */
	}
	arch_irq_restore(flags);
	ASSERT_TRUE(p != NULL);
	ASSERT_TRUE(q == p);
	EXPECT_EQ(page_poison_count(), before + 1);
	if (report_names(p, 0, word * sizeof(u64))) {
		struct page_poison_report r;
		page_poison_last(&r);
		caller_is(r.caller, "poison_test_realloc", NULL);
		caller_is(r.alloc_caller, "poison_test_alloc", NULL);
		caller_is(r.free_caller, "poison_test_free", NULL);
	}
	/* Handed out all the same, and zeroed after the check as alloc_pages() promises. */
	EXPECT_EQ(first_word_not(q, PAGE_SIZE / sizeof(u64), 0), -1);
	free_pages(q, 0);
}

TEST(page_poison, write_to_free_huge_page_reported_when_handed_out)
{
	test_expect_message("mm: ");
	if (!page_poison_enabled()) {
		test_skip("needs DEBUG=1");
		return;
	}
	const unsigned page = 300, word = 8;
	u64 before = page_poison_count();
	unsigned long flags = arch_irq_save();
	u8 *p = poison_test_alloc(HUGE_ORDER), *q = NULL;
	u64 *w = p ? (u64 *)(p + page * PAGE_SIZE) + word : NULL;
	if (p) {
		poison_test_free(p, HUGE_ORDER);
		WRITE_ONCE(*w, POISON_TEST_VALUE);
		/* The fault path's allocation, from the block's node: the same per-CPU list. */
		q = huge_alloc(page_node(virt_to_page(p)));
		if (q != p)
			WRITE_ONCE(*w, PAGE_POISON);
	}
	arch_irq_restore(flags);
	if (!p) {
		test_skip("no free 2 MiB block");
		return;
	}
	ASSERT_TRUE(q == p);
	EXPECT_EQ(page_poison_count(), before + 1);
	if (report_names(p + page * PAGE_SIZE, HUGE_ORDER, word * sizeof(u64))) {
		struct page_poison_report r;
		page_poison_last(&r);
		caller_is(r.caller, "huge_alloc", NULL);
		caller_is(r.alloc_caller, "poison_test_alloc", NULL);
		caller_is(r.free_caller, "poison_test_free", NULL);
	}
	/* huge_alloc() clears the block itself (ALLOC_NOZERO), after the check. */
	EXPECT_EQ(first_word_not((u64 *)q, HUGE_SIZE / sizeof(u64), 0), -1);
	huge_free(q);
}

/* The PTE table that maps va in mm (which has one: pt_pmd_table() would make the PMD table). */
static pte_t *pte_table_of(struct mm *mm, uintptr_t va)
{
	int err;
	pte_t *pmd = pt_pmd_table(mm, va, &err);
	if (!pmd)
		return NULL;
	pte_t e = pt_entry_read(&pmd[pt_index(va, PT_LEVEL_PMD)]);
	return pte_present(e) && !pte_is_leaf(e) ? pt_table_of(e) : NULL;
}

/*
 * A new mm with one 4 KiB page faulted in at a, then unmapped: the unmap frees the
 * page and the tables above it through the TLB gather (pt_free=unmap: with exit, the
 * PMD table would stay). Returns the freed PTE table, or NULL (a failure recorded).
 * Call with preemption disabled: the table goes to this CPU's list, emptied first so
 * that no free spills it to the zone.
 */
static pte_t *unmap_one_table(struct mm *mm, uintptr_t a)
{
	mm_set_pt_free(mm, PT_FREE_UNMAP);
	if (!EXPECT_EQ(vma_map(mm, a, PAGE_SIZE, RW, 0), 0) ||
	    !EXPECT_EQ(mm_fault(mm, a, FAULT_WRITE), 0))
		return NULL;
	pte_t *table = pte_table_of(mm, a);
	if (!EXPECT_TRUE(table != NULL))
		return NULL;
	pcp_drain_local();
	if (!EXPECT_EQ(vma_unmap(mm, a, PAGE_SIZE), 0))
		return NULL;
	/* Every table below the root went with the only VMA (counting allocates nothing). */
	struct pt_counts c;
	pt_count(mm, &c);
	EXPECT_EQ(c.tables, 0);
	return table;
}

TEST(page_poison, page_table_freed_by_unmap_reads_poison)
{
	if (!page_poison_enabled()) {
		test_skip("needs DEBUG=1");
		return;
	}
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	preempt_disable();
	pte_t *table = unmap_one_table(mm, as_slot(0));
	long bad = -1;
	if (table) {
		unsigned long flags = arch_irq_save();
		bad = first_word_not((const u64 *)table, PAGE_SIZE / sizeof(u64), PAGE_POISON);
		arch_irq_restore(flags);
	}
	preempt_enable();
	mm_destroy(mm);
	vma_quiesce(); /* the VMAs go after a grace period: not in the middle of a later count */
	if (bad >= 0)
		test_fail(__FILE__, __LINE__, "word %ld of the freed page table is %llx", bad,
			  (unsigned long long)READ_ONCE(((u64 *)table)[bad]));
}

/* Up to this many order-0 pages come off this CPU's list before the unmap's table does. */
#define POISON_TEST_TABLE_SEARCH 8

TEST(page_poison, write_to_freed_page_table_reported_when_handed_out)
{
	test_expect_message("mm: ");
	if (!page_poison_enabled()) {
		test_skip("needs DEBUG=1");
		return;
	}
	const unsigned word = 100;
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	u64 before = page_poison_count();
	void *got[POISON_TEST_TABLE_SEARCH];
	unsigned n = 0;
	bool found = false;
	preempt_disable();
	pte_t *table = unmap_one_table(mm, as_slot(0));
	if (table) {
		unsigned long flags = arch_irq_save();
		u64 *w = (u64 *)table + word;
		WRITE_ONCE(*w, POISON_TEST_VALUE);
		/* The unmap freed the leaf and the tables last: they are at the list's head. */
		while (n < POISON_TEST_TABLE_SEARCH && !found) {
			got[n] = poison_test_realloc(0);
			if (!got[n])
				break;
			found = got[n++] == (void *)table;
		}
		if (!found)
			WRITE_ONCE(*w, PAGE_POISON);
		arch_irq_restore(flags);
	}
	preempt_enable();
	for (unsigned i = 0; i < n; i++)
		free_pages(got[i], 0);
	mm_destroy(mm);
	vma_quiesce();
	ASSERT_TRUE(table != NULL);
	ASSERT_TRUE(found);
	EXPECT_EQ(page_poison_count(), before + 1);
	if (report_names(table, 0, word * sizeof(u64))) {
		struct page_poison_report r;
		page_poison_last(&r);
		caller_is(r.caller, "poison_test_realloc", NULL);
		caller_is(r.alloc_caller, "pt_table_alloc", NULL);
		/* tlb_finish() frees what it gathered through a helper it may inline. */
		caller_is(r.free_caller, "free_list", "tlb_finish");
	}
}

#define POISON_TEST_VMAS 600 /* more than one page of VMA pointers: the table grows */

TEST(page_poison, vma_table_freed_after_grace_period_reads_poison)
{
	if (!page_poison_enabled()) {
		test_skip("needs DEBUG=1");
		return;
	}
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	uintptr_t a = as_slot(0);
	ASSERT_EQ(vma_map(mm, a, PAGE_SIZE, RW, 0), 0);
	struct vma_table *first = mm->vmat;
	ASSERT_TRUE(first != NULL);
	for (unsigned i = 1; i < POISON_TEST_VMAS; i++)
		ASSERT_EQ(vma_map(mm, a + (uintptr_t)i * 2 * PAGE_SIZE, PAGE_SIZE, RW, 0), 0);
	EXPECT_TRUE(mm->vmat != first);
	/* The grown-out table waits for a grace period (call_rcu) before it is freed. */
	vma_quiesce();
	/*
	 * Freed, it went to this CPU's list; with interrupts off nothing here takes it.
	 * A thread that ran before that may have taken it already: then it is not free,
	 * and what it holds is not the poison's to judge.
	 */
	unsigned long flags = arch_irq_save();
	bool still_free = virt_to_page(first)->flags & (PG_BUDDY | PG_PCP);
	long bad = first_word_not((const u64 *)first, PAGE_SIZE / sizeof(u64), PAGE_POISON);
	arch_irq_restore(flags);
	if (still_free && bad >= 0)
		test_fail(__FILE__, __LINE__,
			  "word %ld of the VMA table freed after a grace period "
			  "is %llx",
			  bad, (unsigned long long)READ_ONCE(((u64 *)first)[bad]));
	EXPECT_EQ(vma_unmap(mm, a, 2 * PAGE_SIZE * POISON_TEST_VMAS), 0);
	mm_destroy(mm);
	vma_quiesce();
}
