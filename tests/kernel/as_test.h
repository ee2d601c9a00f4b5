/*
 * Helpers shared by the address-space selftests (vma, fault, tlb, ptlock, huge
 * suites): user-half accesses that report a fault instead of dying, the
 * per-CPU 1 GiB slots the concurrency tests map in, and lookups of what a page
 * table holds.
 */
#ifndef TESTS_AS_TEST_H
#define TESTS_AS_TEST_H

#include <grace/errno.h>
#include <grace/extable.h>
#include <grace/fault.h>
#include <grace/huge.h>
#include <grace/page_alloc.h>
#include <grace/address_space.h>
#include <grace/pagewalk.h>
#include <grace/percpu.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/test.h>
#include <grace/vma.h>

/*
 * CPU cpu's own slot: 1 GiB aligned, so that two CPUs' slots are mapped by
 * different PMD tables (one PMD table covers 1 GiB) and take different split
 * locks. Tests use slots 0..online + 1 (one past the CPUs for shared pages), which
 * fit Sv39's 256 GiB user half at 1 GiB each up to 254 CPUs. Beyond (512 harts with
 * FIRMWARE=none) the slots halve until they fit: 256 MiB at 512 CPUs, where four
 * CPUs share a PMD table; a slot still holds every test's few MiB.
 */
static inline uintptr_t as_slot_size(void)
{
	uintptr_t size = GiB;
	while ((uintptr_t)(num_online_cpus() + 2) * size > USER_VA_END)
		size /= 2;
	return size;
}

static inline uintptr_t as_slot(unsigned cpu)
{
	return (uintptr_t)(cpu + 1) * as_slot_size();
}

/*
 * Free memory for before/after comparisons: unmapped VMAs and grown VMA tables
 * are freed after a grace period, and freed VMAs stay in their slab cache, so
 * both are settled first.
 */
static inline u64 as_free_bytes(void)
{
	vma_quiesce();
	return mm_free_bytes();
}

/* Read or write a u64 of the current mm's user half: 0, or -EFAULT if the fault was not resolved.
 */
static inline int user_read_u64(uintptr_t va, u64 *val)
{
	arch_user_access_begin();
	int ret = probe_read_u64((const void *)va, val);
	arch_user_access_end();
	return ret;
}

static inline int user_write_u64(uintptr_t va, u64 val)
{
	arch_user_access_begin();
	int ret = probe_write_u64((void *)va, val);
	arch_user_access_end();
	return ret;
}

/* The physical address va maps to in mm (0 if none) and the leaf's level (-1 if none). */
static inline phys_addr_t as_pa(struct mm *mm, uintptr_t va, int *level)
{
	pte_t pte;
	int l;
	if (pt_lookup(mm, va, &pte, &l)) {
		if (level)
			*level = -1;
		return 0;
	}
	if (level)
		*level = l;
	return pte_phys(pte) + (va & (pt_level_size(l) - 1));
}

/* Both page-table lock modes, for tests that must hold in each. */
static const enum ptlock_mode as_ptlock_modes[] = {PTLOCK_SPLIT, PTLOCK_MM};

/* The designs the fault tests run under: today's, and each older half of it. */
struct as_mode {
	enum ptlock_mode ptlock;
	enum vma_lookup lookup;
};
static const struct as_mode as_modes[] = {
    {PTLOCK_SPLIT, VMA_LOOKUP_RCU},
    {PTLOCK_MM, VMA_LOOKUP_RCU},
    {PTLOCK_SPLIT, VMA_LOOKUP_LOCKED},
};

/* What mm's page tables hold equals what its per-CPU resident counters say. */
static inline void as_expect_rss_matches(struct mm *mm)
{
	struct pt_counts c;
	struct mm_rss_sum r;
	pt_count(mm, &c);
	mm_rss(mm, &r);
	EXPECT_EQ(r.pages_4k, c.pages_4k);
	EXPECT_EQ(r.pages_huge, c.pages_huge);
}

#endif
