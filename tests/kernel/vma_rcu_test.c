/*
 * VMA lookups under RCU (mm/vma_lock.c): a VMA that unmap took out stays intact for a
 * lookup still inside its read-side section, and faults racing munmap of their
 * own VMA on other CPUs either map before the unmap (which then takes the page
 * away) or fail with -EFAULT, leaving nothing mapped, counted or allocated, also
 * when the unmap's edges cut 2 MiB pages the faults are installing.
 */
#include <grace/rcupdate.h>
#include "as_test.h"

#define RACE_ROUNDS 24	    /* map, fault from every CPU, unmap */
#define RACE_FAULTERS 8	    /* CPUs faulting at once; caps the 2 MiB blocks racing */
#define RACE_SMALL_PAGES 16 /* the 4 KiB region's size */
#define REUSE_MAPS 8	    /* VMAs mapped to take the freed one's memory, were it free */

/*
 * With vma_free=rcu a lookup holds no lock, so only the grace period keeps a VMA
 * it found alive: take one as a lookup does, let unmap retire it and new maps
 * allocate VMAs (which would reuse its memory were it freed at once), and read
 * it again before leaving the section. All on this CPU, whose read-side section
 * keeps the grace period from ending: map and unmap wait for nothing here (no
 * CPU has the mm loaded, so no shootdown).
 */
TEST(vma_rcu, retired_vma_intact_until_grace_period)
{
	struct mm *mm = mm_create_modes(PTLOCK_SPLIT, VMA_LOOKUP_RCU);
	ASSERT_TRUE(mm != NULL);
	uintptr_t a = as_slot(0);
	unsigned bad = 0;

	/* The reusing maps too: they take from the cache the freed VMA went back to. */
	enum vma_free_mode was = vma_get_free_mode();
	vma_set_free_mode(VMA_FREE_RCU);
	int err = vma_map(mm, a, PAGE_SIZE, PROT_READ, 0);
	if (err)
		vma_set_free_mode(was);
	ASSERT_EQ(err, 0);
	rcu_read_lock();
	struct vma *v = rcu_dereference(mm->vmat)->slot[0];
	EXPECT_EQ(vma_unmap(mm, a, PAGE_SIZE), 0);
	for (unsigned i = 0; i < REUSE_MAPS; i++)
		bad += vma_map(mm, a + (uintptr_t)(i + 1) * 4 * PAGE_SIZE, PAGE_SIZE, PROT_WRITE,
			       0) != 0;
	uintptr_t start = READ_ONCE(v->start), end = READ_ONCE(v->end);
	unsigned prot = READ_ONCE(v->prot);
	rcu_read_unlock();
	vma_set_free_mode(was);
	EXPECT_EQ(bad, 0);
	EXPECT_EQ(start, a);
	EXPECT_EQ(end, a + PAGE_SIZE);
	EXPECT_EQ(prot, PROT_READ);
	mm_destroy(mm);
}

struct munmap_race {
	struct mm *mm;
	uintptr_t base;
	size_t len;
	unsigned flags;	   /* VMA_NOHUGE or 0 */
	bool cut;	   /* first unmap a middle piece whose edges cut 2 MiB pages */
	unsigned faulters; /* CPUs 1..faulters fault; CPU 0 maps and unmaps */
	struct smp_sync start;
	unsigned round;	       /* bumped by CPU 0 after each map */
	atomic_t round_faults; /* faults that mapped in this round */
	atomic_t errors, leftovers, mapped, failed;
	bool done;
};

static void munmap_race_fault(struct munmap_race *t, unsigned cpu)
{
	unsigned pages = t->len / PAGE_SIZE, seen = 0;
	for (unsigned i = 0; !READ_ONCE(t->done); i++) {
		uintptr_t va = t->base + (uintptr_t)((cpu * 7 + i * 13) % pages) * PAGE_SIZE;
		int ret = mm_fault(t->mm, va, FAULT_WRITE);
		if (ret == 0) {
			atomic_inc(&t->mapped);
			atomic_inc(&t->round_faults);
		} else if (ret == -EFAULT) {
			/* The VMA is gone: one such fault per round is enough, wait for the next.
			 */
			atomic_inc(&t->failed);
			while (READ_ONCE(t->round) == seen && !READ_ONCE(t->done))
				cpu_relax();
			seen = READ_ONCE(t->round);
		} else {
			atomic_inc(&t->errors);
		}
	}
}

/* After an unmap returned, the range must hold no page and the mm count none. */
static void munmap_race_check_empty(struct munmap_race *t)
{
	struct mm_rss_sum r;
	for (uintptr_t va = t->base; va < t->base + t->len; va += PAGE_SIZE) {
		int level;
		if (as_pa(t->mm, va, &level) || level >= 0)
			atomic_inc(&t->leftovers);
	}
	mm_rss(t->mm, &r);
	if (r.pages_4k || r.pages_huge)
		atomic_inc(&t->leftovers);
}

static void munmap_race_unmapper(struct munmap_race *t)
{
	for (unsigned round = 0; round < RACE_ROUNDS; round++) {
		atomic_set(&t->round_faults, 0);
		if (vma_map(t->mm, t->base, t->len, PROT_READ | PROT_WRITE, t->flags)) {
			atomic_inc(&t->errors);
			break;
		}
		WRITE_ONCE(t->round, round + 1);
		/* Let the faulters in, then pull the VMA from under them. */
		while (atomic_read(&t->round_faults) < (int)t->faulters)
			cpu_relax();
		/*
		 * Edges inside 2 MiB pages the faulters may be installing right now: the
		 * unmap must have a table ready for every page an edge can cut.
		 */
		if (t->cut && vma_unmap(t->mm, t->base + HUGE_SIZE / 2, HUGE_SIZE)) {
			atomic_inc(&t->errors);
			break;
		}
		if (vma_unmap(t->mm, t->base, t->len)) {
			atomic_inc(&t->errors);
			break;
		}
		munmap_race_check_empty(t);
	}
	WRITE_ONCE(t->done, true);
}

static void munmap_race_worker(void *arg)
{
	struct munmap_race *t = arg;
	/* Roles by online index, not CPU id: the ids may have holes. */
	unsigned cpu = (unsigned)smp_online_index(smp_processor_id());

	if (cpu > t->faulters)
		return;
	smp_sync_wait(&t->start, t->faulters + 1);
	if (cpu == 0)
		munmap_race_unmapper(t);
	else
		munmap_race_fault(t, cpu);
}

static void munmap_race_run(const struct as_mode *mode, bool huge, bool cut)
{
	static struct munmap_race t;
	struct fault_stats s0, s1;
	u64 before = as_free_bytes();

	t = (struct munmap_race){
	    .base = as_slot(0),
	    .len = huge ? (cut ? 2 : 1) * HUGE_SIZE : RACE_SMALL_PAGES * PAGE_SIZE,
	    .flags = huge ? 0 : VMA_NOHUGE,
	    .cut = cut,
	    .faulters = MIN(num_online_cpus() - 1, RACE_FAULTERS),
	};
	t.mm = mm_create_modes(mode->ptlock, mode->lookup);
	ASSERT_TRUE(t.mm != NULL);
	fault_stats_sum(&s0);
	smp_run_all(munmap_race_worker, &t);
	fault_stats_sum(&s1);
	EXPECT_EQ(atomic_read(&t.errors), 0);
	EXPECT_EQ(atomic_read(&t.leftovers), 0);
	EXPECT_GE(atomic_read(&t.mapped), RACE_ROUNDS * (int)t.faulters);
	/* The lockless lookup did the work where the mm asks for it, and only there. */
	if (mode->lookup == VMA_LOOKUP_RCU)
		EXPECT_GT(s1.lookup_rcu - s0.lookup_rcu, 0);
	else
		EXPECT_EQ(s1.lookup_rcu - s0.lookup_rcu, 0);
	mm_destroy(t.mm);
	/* Every page a fault mapped, or allocated and lost, came back. */
	EXPECT_EQ(as_free_bytes(), before);
}

TEST(vma_rcu, faults_racing_munmap_map_or_fail)
{
	if (num_online_cpus() < 2) {
		test_skip("needs a second CPU to unmap under the faults");
		return;
	}
	for (unsigned m = 0; m < ARRAY_SIZE(as_modes); m++) {
		munmap_race_run(&as_modes[m], false, false);
		munmap_race_run(&as_modes[m], true, false);
		munmap_race_run(&as_modes[m], true, true);
	}
}
