/*
 * Copy-on-write selftests (mm/fork.c): a forked address space shares each 4 KiB
 * page read-only with one more reference until a side writes; the writer gets a
 * copy (or, as the page's last user, the page itself made writable); a shared
 * page outlives the exit of one side and is freed with the last; mprotect never
 * makes a shared page writable; and the copy's shootdown reaches every CPU still
 * reading the old page through a stale read-only translation.
 *
 * QEMU's software TLB keeps a translation until it is flushed, so a missing
 * shootdown shows up as a read of the old page after the write returned.
 */
#include <grace/time.h>
#include <grace/tlb.h>
#include <asm/cpu.h>
#include "as_test.h"

#define COW_PAGES 4
#define COW_VALUE(i) (0xc0e0000000ULL + (i))

/* Does va map to the same page in a and b, read-only in both? */
static bool cow_shared(struct mm *a, struct mm *b, uintptr_t va)
{
	pte_t pa, pb;
	int la, lb;
	if (pt_lookup(a, va, &pa, &la) || pt_lookup(b, va, &pb, &lb))
		return false;
	return pte_phys(pa) == pte_phys(pb) && !pte_allows(pa, PROT_WRITE) &&
	       !pte_allows(pb, PROT_WRITE);
}

static int cow_refcount(struct mm *mm, uintptr_t va)
{
	return atomic_read(&phys_to_page(as_pa(mm, va, NULL))->refcount);
}

static bool cow_writable(struct mm *mm, uintptr_t va)
{
	pte_t pte;
	int level;
	return !pt_lookup(mm, va, &pte, &level) && pte_allows(pte, PROT_WRITE);
}

/* A new mm with COW_PAGES pages at base, page i holding COW_VALUE(i). */
static struct mm *cow_parent(uintptr_t base)
{
	struct mm *mm = mm_create();
	if (!mm || vma_map(mm, base, COW_PAGES * PAGE_SIZE, PROT_READ | PROT_WRITE, 0))
		return NULL;
	mm_switch(mm);
	for (unsigned i = 0; i < COW_PAGES; i++)
		if (user_write_u64(base + i * PAGE_SIZE, COW_VALUE(i)))
			return NULL;
	mm_switch(NULL);
	return mm;
}

static u64 cow_read(struct mm *mm, uintptr_t va)
{
	u64 v = 0;
	mm_switch(mm);
	if (user_read_u64(va, &v))
		v = ~0ULL;
	mm_switch(NULL);
	return v;
}

static int cow_write(struct mm *mm, uintptr_t va, u64 v)
{
	mm_switch(mm);
	int ret = user_write_u64(va, v);
	mm_switch(NULL);
	return ret;
}

TEST(cow, fork_shares_each_page_until_one_side_writes_it)
{
	uintptr_t base = as_slot(0);
	u64 before = as_free_bytes();
	struct fault_stats s0, s1;
	int err;

	struct mm *a = cow_parent(base);
	ASSERT_TRUE(a != NULL);
	struct mm *b = mm_fork(a, &err);
	ASSERT_TRUE(b != NULL);
	for (unsigned i = 0; i < COW_PAGES; i++) {
		EXPECT_TRUE(cow_shared(a, b, base + i * PAGE_SIZE));
		EXPECT_EQ(cow_refcount(a, base + i * PAGE_SIZE), 2);
		EXPECT_EQ(cow_read(b, base + i * PAGE_SIZE), COW_VALUE(i));
	}

	/* The child writes page 0: it gets a copy; the parent's page and value stay. */
	fault_stats_sum(&s0);
	phys_addr_t old = as_pa(a, base, NULL);
	EXPECT_EQ(cow_write(b, base, 0xb), 0);
	EXPECT_NE(as_pa(b, base, NULL), old);
	EXPECT_EQ(as_pa(a, base, NULL), old);
	EXPECT_EQ(cow_read(b, base), 0xb);
	EXPECT_EQ(cow_read(a, base), COW_VALUE(0));
	EXPECT_TRUE(cow_shared(a, b, base + PAGE_SIZE)); /* the others stay shared */

	/* The parent is now page 0's only user: made writable where it is, no copy. */
	EXPECT_EQ(cow_refcount(a, base), 1);
	EXPECT_FALSE(cow_writable(a, base));
	EXPECT_EQ(cow_write(a, base, 0xa), 0);
	EXPECT_EQ(as_pa(a, base, NULL), old);
	EXPECT_TRUE(cow_writable(a, base));
	EXPECT_EQ(cow_read(a, base), 0xa);
	EXPECT_EQ(cow_read(b, base), 0xb);
	fault_stats_sum(&s1);
	EXPECT_EQ(s1.cow_copied - s0.cow_copied, 1);
	EXPECT_EQ(s1.cow_reused - s0.cow_reused, 1);

	mm_destroy(a);
	mm_destroy(b);
	EXPECT_EQ(as_free_bytes(), before);
}

static bool page_is_free(phys_addr_t pa)
{
	return phys_to_page(pa)->flags & (PG_BUDDY | PG_PCP);
}

TEST(cow, a_shared_page_lives_until_its_last_mapping_goes)
{
	uintptr_t base = as_slot(0);
	u64 before = as_free_bytes();
	int err;

	struct mm *a = cow_parent(base);
	ASSERT_TRUE(a != NULL);
	struct mm *b = mm_fork(a, &err);
	ASSERT_TRUE(b != NULL);
	phys_addr_t pa = as_pa(b, base, NULL);

	/* The parent exits first: the child's pages must stay, with one reference each. */
	mm_destroy(a);
	EXPECT_FALSE(page_is_free(pa));
	EXPECT_EQ(cow_refcount(b, base), 1);
	for (unsigned i = 0; i < COW_PAGES; i++)
		EXPECT_EQ(cow_read(b, base + i * PAGE_SIZE), COW_VALUE(i));
	/* And unshared now: a write keeps the page. */
	EXPECT_EQ(cow_write(b, base, 7), 0);
	EXPECT_EQ(as_pa(b, base, NULL), pa);

	mm_destroy(b);
	EXPECT_TRUE(page_is_free(pa));
	EXPECT_EQ(as_free_bytes(), before);
}

TEST(cow, mprotect_never_makes_a_shared_page_writable)
{
	uintptr_t base = as_slot(0);
	u64 before = as_free_bytes();
	int err;

	struct mm *a = cow_parent(base);
	ASSERT_TRUE(a != NULL);
	struct mm *b = mm_fork(a, &err);
	ASSERT_TRUE(b != NULL);
	ASSERT_EQ(vma_protect(a, base, COW_PAGES * PAGE_SIZE, PROT_READ), 0);
	ASSERT_EQ(vma_protect(a, base, COW_PAGES * PAGE_SIZE, PROT_READ | PROT_WRITE), 0);
	EXPECT_FALSE(cow_writable(a, base));
	EXPECT_EQ(cow_write(a, base, 0xa), 0);
	EXPECT_EQ(cow_read(b, base), COW_VALUE(0)); /* the write went to a copy */
	mm_destroy(a);
	mm_destroy(b);
	EXPECT_EQ(as_free_bytes(), before);
}

TEST(cow, fork_copies_a_2mib_page_whole)
{
	uintptr_t base = as_slot(0);
	u64 before = as_free_bytes();
	int err, level;

	struct mm *a = mm_create();
	ASSERT_TRUE(a != NULL);
	ASSERT_EQ(vma_map(a, base, HUGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
	ASSERT_EQ(cow_write(a, base + PAGE_SIZE, 0x4855), 0);
	as_pa(a, base, &level);
	if (level != PT_LEVEL_PMD) {
		mm_destroy(a);
		test_skip("no 2 MiB block free");
		return;
	}
	struct mm *b = mm_fork(a, &err);
	ASSERT_TRUE(b != NULL);
	EXPECT_NE(as_pa(b, base, &level), as_pa(a, base, NULL));
	EXPECT_EQ(level, PT_LEVEL_PMD);
	EXPECT_TRUE(cow_writable(a, base));
	EXPECT_EQ(cow_read(b, base + PAGE_SIZE), 0x4855);
	EXPECT_EQ(cow_write(b, base + PAGE_SIZE, 1), 0);
	EXPECT_EQ(cow_read(a, base + PAGE_SIZE), 0x4855);
	mm_destroy(a);
	mm_destroy(b);
	EXPECT_EQ(as_free_bytes(), before);
}

/*
 * One CPU keeps reading a shared page of the parent (its TLB holds the read-only
 * translation) while the test's CPU writes it, which copies the page. Once the
 * write has returned, the reader's next read must see the new value: the copy's
 * shootdown reached it. The window stays open throughout, because QEMU's RISC-V
 * flushes its whole TLB when sstatus.SUM changes.
 */
struct cow_flush {
	struct mm *mm;
	uintptr_t va;
	unsigned writer, reader;
	u32 ready, written;
	atomic_t stale, errors;
};

#define COW_FLUSH_NEW 0x6e6577ULL
#define COW_FLUSH_WAIT_NS (5 * NSEC_PER_SEC)

static void cow_flush_worker(void *arg)
{
	struct cow_flush *t = arg;
	unsigned cpu = smp_processor_id();
	u64 v;

	if (cpu == t->writer) {
		while (!smp_load_acquire(&t->ready))
			cpu_relax();
		if (cow_write(t->mm, t->va, COW_FLUSH_NEW))
			atomic_inc(&t->errors);
		smp_store_release(&t->written, 1);
		return;
	}
	if (cpu != t->reader)
		return;
	mm_switch(t->mm);
	arch_user_access_begin();
	if (probe_read_u64((void *)t->va, &v) || v != COW_VALUE(0))
		atomic_inc(&t->errors);
	smp_store_release(&t->ready, 1);
	u64 deadline = arch_clock_ns() + COW_FLUSH_WAIT_NS;
	for (;;) {
		bool after = smp_load_acquire(&t->written);
		if (probe_read_u64((void *)t->va, &v)) {
			atomic_inc(&t->errors);
			break;
		}
		if (after) {
			if (v != COW_FLUSH_NEW)
				atomic_inc(&t->stale);
			break;
		}
		if (arch_clock_ns() > deadline) {
			atomic_inc(&t->errors);
			break;
		}
	}
	arch_user_access_end();
	mm_switch(NULL);
}

TEST(cow, the_copy_is_flushed_from_every_cpu_reading_the_old_page)
{
	static struct cow_flush t;
	uintptr_t base = as_slot(0);
	int err;

	if (num_online_cpus() < 2) {
		test_skip("needs 2 CPUs");
		return;
	}
	u64 before = as_free_bytes();
	t = (struct cow_flush){.va = base, .writer = smp_processor_id()};
	t.reader = smp_online_cpu((unsigned)(smp_online_index(t.writer) + 1) % num_online_cpus());
	t.mm = cow_parent(base);
	ASSERT_TRUE(t.mm != NULL);
	struct mm *child = mm_fork(t.mm, &err);
	ASSERT_TRUE(child != NULL);

	smp_run_all(cow_flush_worker, &t);
	EXPECT_EQ(atomic_read(&t.errors), 0);
	EXPECT_EQ(atomic_read(&t.stale), 0);
	EXPECT_EQ(cow_read(child, base), COW_VALUE(0));
	mm_destroy(t.mm);
	mm_destroy(child);
	EXPECT_EQ(as_free_bytes(), before);
}
