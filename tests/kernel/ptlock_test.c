/*
 * Page-table lock selftests, by ordering, never by time. One CPU, the holder, takes
 * a PMD or PTE table's lock with pt_lock() and keeps it until it can see what every
 * other CPU's fault did: queued behind it (drew a ticket on that very lock) or
 * returned. It sets `releasing` just before it lets go, and each faulter reads the
 * flag after its fault returned. A fault that must wait for the lock and finds the
 * flag clear got through while the lock was held; a fault that must not wait and
 * finds it set, or shows up queued on the lock, waited. With split locks a fault in
 * another table never queues behind the held lock; with the mm-wide lock every one
 * does. Then faults racing on one empty entry from every CPU, let go at once by a
 * start barrier or funnelled through a held lock (so that every one of them rechecks
 * the entry under it): exactly one table or page goes in, and the page-table pages
 * allocated minus those freed are the ones the tables hold. Installing a PMD table
 * waits for the mm-wide lock under PTLOCK_MM and takes no lock with split locks; a
 * walk through an existing PMD table takes none in either mode.
 *
 * The default mode follows ptlock= on the command line; these tests pick each mode
 * explicitly. Faults run through mm_fault(), which needs no CPU to run the mm.
 */
#include <grace/cmdline.h>
#include <grace/string.h>
#include "../../mm/address_space_internal.h"
#include "as_test.h"

/*
 * CPUs that fault while one holds a lock they need: each hands the lock on to the
 * next, and at 64 vCPUs on 2 host cores the next ticket's vCPU is usually not
 * running: a hand-off there costs a host time slice (about 100 ms measured), so the
 * queue is kept to a fixed length whatever the CPU count.
 */
#define PTLOCK_FAULTERS 8
/* Of them, those that take a 2 MiB page: each allocates and clears 2 MiB first. */
#define PTLOCK_HUGE_FAULTERS 4

struct ptlock_hold {
	struct mm *mm;
	pte_t *table;	   /* whose lock the holder takes; NULL: a free race */
	unsigned holder;   /* the CPU running the test */
	unsigned faulters; /* CPUs with an address in va[] */
	bool must_wait;	   /* the faults need the held lock */
	bool walk_only;	   /* faulters only walk to their PMD table, making it (pt_pmd_table) */
	uintptr_t va[MAX_CPUS]; /* each faulting CPU's address; 0: it does not fault */
	struct smp_sync start;	/* free race: the faulters start together */
	u32 locked;		/* the holder has the lock */
	u32 releasing;		/* set by the holder just before it lets go */
	atomic_t done;		/* faults returned */
	atomic_t errors;	/* faults that failed */
	/* Faults that had to wait yet returned while the lock was held, and the reverse. */
	atomic_t returned_before_release, returned_after_release;
	u32 queued_at_release; /* tickets drawn behind the holder's when it let go */
};

/*
 * CPUs queued on a ticket lock that the caller holds: every ticket drawn after the
 * holder's. Only the holder moves owner's ticket, so it is stable here; next only grows.
 */
static u32 ticket_waiters(spinlock_t *ptl)
{
	return spin_tickets_out(ptl) - 1;
}

static void ptlock_hold_worker(void *arg)
{
	struct ptlock_hold *t = arg;
	unsigned cpu = smp_processor_id();

	if (t->table && cpu == t->holder) {
		spinlock_t *ptl = pt_lock(t->mm, t->table);
		smp_store_release(&t->locked, 1);
		/*
		 * Must wait: until every faulter queued here (or, broken, got through).
		 * Must not: until every fault returned, or one queued here after all.
		 */
		for (;;) {
			u32 waiters = ticket_waiters(ptl);
			u32 done = atomic_read_acquire(&t->done);
			if (t->must_wait ? waiters + done >= t->faulters
					 : waiters != 0 || done == t->faulters)
				break;
			cpu_relax();
		}
		t->queued_at_release = ticket_waiters(ptl);
		smp_store_release(&t->releasing, 1);
		spin_unlock(ptl);
		return;
	}
	uintptr_t va = t->va[cpu];
	if (!va)
		return;
	if (t->table) {
		while (!smp_load_acquire(&t->locked))
			cpu_relax();
	} else {
		smp_sync_wait(&t->start, t->faulters);
	}
	int err = 0;
	int ret = t->walk_only ? (pt_pmd_table(t->mm, va, &err) ? 0 : err)
			       : mm_fault(t->mm, va, FAULT_WRITE);
	/* Pairs with the holder's release: a fault that took the lock after it sees the flag. */
	bool released = smp_load_acquire(&t->releasing);
	if (ret)
		atomic_inc(&t->errors);
	if (t->table && t->must_wait && !released)
		atomic_inc(&t->returned_before_release);
	if (t->table && !t->must_wait && released)
		atomic_inc(&t->returned_after_release);
	atomic_fetch_add_release(&t->done, 1);
}

static struct ptlock_hold ph;

/* A fresh run in mode; the holder is this CPU. */
static struct mm *ptlock_hold_init(enum ptlock_mode mode, bool must_wait)
{
	ph = (struct ptlock_hold){.must_wait = must_wait};
	preempt_disable();
	ph.holder = smp_processor_id();
	preempt_enable();
	ph.mm = mm_create_ptlock(mode);
	return ph.mm;
}

/*
 * The k-th online CPU (other than the holder, unless holder_too) faults at
 * base + k * stride; at most n of them.
 */
static void ptlock_assign(uintptr_t base, uintptr_t stride, unsigned n, bool holder_too)
{
	unsigned cpu, k = 0;
	for_each_online_cpu(cpu) {
		if ((cpu == ph.holder && !holder_too) || k == n)
			continue;
		ph.va[cpu] = base + k * stride;
		k++;
	}
	ph.faulters = k;
}

/* Every faulter's address is mapped now, the holder saw what it had to, nobody failed. */
static void ptlock_hold_check(void)
{
	unsigned cpu, unmapped = 0;

	EXPECT_EQ(atomic_read(&ph.errors), 0);
	EXPECT_EQ(atomic_read(&ph.done), ph.faulters);
	for_each_online_cpu(cpu)
		if (ph.va[cpu] && !ph.walk_only && !as_pa(ph.mm, ph.va[cpu], NULL))
			unmapped++;
	EXPECT_EQ(unmapped, 0);
	if (!ph.table)
		return;
	if (ph.must_wait) {
		/* Every fault queued behind the held lock and returned only after the release. */
		EXPECT_EQ(ph.queued_at_release, ph.faulters);
		EXPECT_EQ(atomic_read(&ph.returned_before_release), 0);
	} else {
		/* Every fault returned while the lock was held, and none ever queued on it. */
		EXPECT_EQ(ph.queued_at_release, 0);
		EXPECT_EQ(atomic_read(&ph.returned_after_release), 0);
	}
}

/*
 * The k-th 1 GiB region the PMD- and PUD-level cases fault in: each is mapped by a
 * PMD table of its own, which as_slot() stops promising past 254 CPUs. Sv39's
 * user half holds PTLOCK_GIB_SLOTS of them above its first GiB, so those cases
 * fault with at most that many CPUs (two per region in the PUD race).
 */
#define PTLOCK_GIB_SLOTS ((unsigned)(USER_VA_END / GiB) - 1)

static uintptr_t ptlock_gib(unsigned k)
{
	return (uintptr_t)(k + 1) * GiB;
}

static bool ptlock_needs_two_cpus(void)
{
	if (num_online_cpus() >= 2)
		return true;
	test_skip("needs 2 CPUs");
	return false;
}

/*
 * The holder holds the PMD table of slot 0. Each faulter takes one 2 MiB of it
 * (same_table) or of its own slot (another PMD table): with huge, a few faulters
 * each install a 2 MiB page (under the PMD table's lock, in fault_huge); without,
 * each faulter installs a PTE table (under it, in fault_pte_table) and a 4 KiB page.
 */
static void pmd_table_run(enum ptlock_mode mode, bool same_table, bool must_wait, bool huge)
{
	u64 before = as_free_bytes();
	int err = 0;
	unsigned cpu;

	ASSERT_TRUE(ptlock_hold_init(mode, must_wait) != NULL);
	ph.table = pt_pmd_table(ph.mm, ptlock_gib(0), &err);
	ASSERT_TRUE(ph.table != NULL);
	unsigned n = huge ? PTLOCK_HUGE_FAULTERS : must_wait ? PTLOCK_FAULTERS : MAX_CPUS;
	if (same_table)
		ptlock_assign(ptlock_gib(0), HUGE_SIZE, n, false);
	else
		ptlock_assign(ptlock_gib(1), GiB, MIN(n, PTLOCK_GIB_SLOTS - 1), false);
	for_each_online_cpu(cpu)
		if (ph.va[cpu])
			ASSERT_EQ(vma_map(ph.mm, ph.va[cpu], HUGE_SIZE, PROT_READ | PROT_WRITE,
					  huge ? 0 : VMA_NOHUGE),
				  0);
	smp_run_all(ptlock_hold_worker, &ph);
	ptlock_hold_check();
	mm_destroy(ph.mm);
	EXPECT_EQ(as_free_bytes(), before);
}

static void pmd_table_case(enum ptlock_mode mode, bool same_table, bool must_wait)
{
	pmd_table_run(mode, same_table, must_wait, true);
	pmd_table_run(mode, same_table, must_wait, false);
}

/*
 * The holder holds the PTE table of slot 0's first 2 MiB. Each faulter takes an
 * empty 4 KiB entry of it (same_table) or of a PTE table of its own in the next
 * 2 MiBs of the same PMD table; every table exists (a page of each is faulted in
 * first), so the faults take only PTE-table locks, in fault_small.
 */
static void pte_table_case(enum ptlock_mode mode, bool same_table, bool must_wait)
{
	u64 before = as_free_bytes();
	uintptr_t base = as_slot(0);
	int level;

	ASSERT_TRUE(ptlock_hold_init(mode, must_wait) != NULL);
	unsigned n = must_wait ? PTLOCK_FAULTERS : MAX_CPUS;
	if (same_table)
		ptlock_assign(base + PAGE_SIZE, PAGE_SIZE, n, false);
	else
		ptlock_assign(base + HUGE_SIZE + PAGE_SIZE, HUGE_SIZE, n, false);
	size_t len = (size_t)(ph.faulters + 1) * HUGE_SIZE;
	ASSERT_EQ(vma_map(ph.mm, base, len, PROT_READ | PROT_WRITE, VMA_NOHUGE), 0);
	for (size_t off = 0; off < (same_table ? HUGE_SIZE : len); off += HUGE_SIZE)
		ASSERT_EQ(mm_fault(ph.mm, base + off, FAULT_WRITE), 0);
	as_pa(ph.mm, base, &level);
	ASSERT_EQ(level, PT_LEVEL_PTE);
	int err = 0;
	pte_t *pmd_table = pt_pmd_table(ph.mm, base, &err);
	ASSERT_TRUE(pmd_table != NULL);
	ph.table = pt_table_of(pt_entry_read(&pmd_table[pt_index(base, PT_LEVEL_PMD)]));
	smp_run_all(ptlock_hold_worker, &ph);
	ptlock_hold_check();
	mm_destroy(ph.mm);
	EXPECT_EQ(as_free_bytes(), before);
}

TEST(ptlock, fault_in_a_locked_pmd_table_waits_for_its_release)
{
	if (!ptlock_needs_two_cpus())
		return;
	for (unsigned m = 0; m < ARRAY_SIZE(as_ptlock_modes); m++)
		pmd_table_case(as_ptlock_modes[m], true, true);
}

TEST(ptlock, fault_in_another_pmd_table_completes_while_one_is_locked)
{
	if (!ptlock_needs_two_cpus())
		return;
	pmd_table_case(PTLOCK_SPLIT, false, false);
}

TEST(ptlock, fault_in_a_locked_pte_table_waits_for_its_release)
{
	if (!ptlock_needs_two_cpus())
		return;
	for (unsigned m = 0; m < ARRAY_SIZE(as_ptlock_modes); m++)
		pte_table_case(as_ptlock_modes[m], true, true);
}

TEST(ptlock, fault_in_another_pte_table_completes_while_one_is_locked)
{
	if (!ptlock_needs_two_cpus())
		return;
	pte_table_case(PTLOCK_SPLIT, false, false);
}

/* ptlock=mm: one lock for every table, so a fault anywhere queues behind any holder. */
TEST(ptlock, mm_wide_lock_holds_faults_in_every_table)
{
	if (!ptlock_needs_two_cpus())
		return;
	pmd_table_case(PTLOCK_MM, false, true);
	pte_table_case(PTLOCK_MM, false, true);
}

/* ---- the PUD table's lock: installing a PMD table ---- */

/* The PUD table (its entries point to PMD tables) above va; every level above it exists. */
static pte_t *ptlock_pud_table(struct mm *mm, uintptr_t va)
{
	pte_t *table = mm->root;
	for (int level = PT_TOP_LEVEL; level > PT_LEVEL_PUD; level--)
		table = pt_table_of(pt_entry_read(&table[pt_index(va, level)]));
	return table;
}

/*
 * The holder holds the lock a PUD entry would change under: the PUD table's own
 * ptl with split locks (one PUD table maps 512 GiB on x86, the whole user half on
 * Sv39), mm->page_table_lock with the mm-wide one. Each other CPU walks to the PMD
 * table of a 1 GiB slot of its own (pt_pmd_table, the first step of a fault):
 * with fresh_pmd that table does not exist yet and the walk installs it, which
 * under the mm-wide lock must wait for the holder and with split locks takes no
 * lock at all (cmpxchg); else the table exists and no walk takes any lock.
 */
static void pud_table_case(enum ptlock_mode mode, bool fresh_pmd)
{
	u64 before = as_free_bytes();
	bool must_wait = fresh_pmd && mode == PTLOCK_MM;
	int err = 0;
	unsigned cpu, missing = 0;

	ASSERT_TRUE(ptlock_hold_init(mode, must_wait) != NULL);
	ph.walk_only = true;
	/* Slot 0's PMD table makes the levels above the PUD (x86's PDPT) exist. */
	ASSERT_TRUE(pt_pmd_table(ph.mm, ptlock_gib(0), &err) != NULL);
	ph.table = ptlock_pud_table(ph.mm, ptlock_gib(0));
	ptlock_assign(ptlock_gib(1), GiB, must_wait ? PTLOCK_FAULTERS : PTLOCK_GIB_SLOTS - 1,
		      false);
	for_each_online_cpu(cpu) {
		if (!ph.va[cpu])
			continue;
		ASSERT_TRUE(ptlock_pud_table(ph.mm, ph.va[cpu]) == ph.table);
		if (!fresh_pmd)
			ASSERT_TRUE(pt_pmd_table(ph.mm, ph.va[cpu], &err) != NULL);
	}
	smp_run_all(ptlock_hold_worker, &ph);
	ptlock_hold_check();
	/* Every walker's PMD table is there, exactly once. */
	for_each_online_cpu(cpu)
		if (ph.va[cpu] &&
		    !pte_present(pt_entry_read(&ph.table[pt_index(ph.va[cpu], PT_LEVEL_PUD)])))
			missing++;
	EXPECT_EQ(missing, 0);
	mm_destroy(ph.mm);
	EXPECT_EQ(as_free_bytes(), before);
}

TEST(ptlock, pmd_table_install_under_the_mm_wide_lock_waits_for_it)
{
	if (!ptlock_needs_two_cpus())
		return;
	pud_table_case(PTLOCK_MM, true);
}

TEST(ptlock, pmd_table_installs_with_split_locks_take_no_lock)
{
	if (!ptlock_needs_two_cpus())
		return;
	pud_table_case(PTLOCK_SPLIT, true);
}

TEST(ptlock, walk_through_an_existing_pmd_table_takes_no_lock)
{
	if (!ptlock_needs_two_cpus())
		return;
	for (unsigned m = 0; m < ARRAY_SIZE(as_ptlock_modes); m++)
		pud_table_case(as_ptlock_modes[m], false);
}

/*
 * Rounds of every CPU faulting at once from a start barrier, two CPUs per fresh
 * 1 GiB slot (a different 2 MiB each): under the one PUD table, pairs race to
 * install the same PMD table and the pairs to install different ones. Per lock
 * mode, at least this many faults in all, at least two rounds.
 */
#define PUD_RACE_FAULTS 64

static void pud_race_run(enum ptlock_mode mode)
{
	u64 before = as_free_bytes();
	struct pt_table_stats p0, p1, p2;
	struct pt_counts c;
	unsigned cpu, k = 0;

	pt_table_stats_sum(&p0);
	ASSERT_TRUE(ptlock_hold_init(mode, false) != NULL);
	for_each_online_cpu(cpu) {
		if (k == 2 * PTLOCK_GIB_SLOTS)
			break;
		ph.va[cpu] = ptlock_gib(k / 2) + (k % 2) * HUGE_SIZE;
		ASSERT_EQ(vma_map(ph.mm, ph.va[cpu], PAGE_SIZE, PROT_READ | PROT_WRITE, 0), 0);
		k++;
	}
	ph.faulters = k;
	smp_run_all(ptlock_hold_worker, &ph);
	pt_table_stats_sum(&p1);
	ptlock_hold_check();
	/* Above the PUD: x86's PDPT. Then a PMD table per slot and a PTE table per CPU. */
	unsigned slots = (k + 1) / 2;
	pt_count(ph.mm, &c);
	EXPECT_EQ(c.tables, (u64)(PT_TOP_LEVEL - PT_LEVEL_PUD) + slots + k);
	EXPECT_EQ(c.pages_4k, k);
	/* The losers gave their tables back: what is allocated is what the tables hold. */
	EXPECT_EQ((p1.allocated - p0.allocated) - (p1.freed - p0.freed), c.tables + 1);
	mm_destroy(ph.mm);
	pt_table_stats_sum(&p2);
	EXPECT_EQ(p2.allocated - p0.allocated, p2.freed - p0.freed);
	EXPECT_EQ(as_free_bytes(), before);
}

TEST(ptlock, faults_in_many_gib_slots_at_once_account_every_table)
{
	for (unsigned m = 0; m < ARRAY_SIZE(as_ptlock_modes); m++)
		for (unsigned r = 0; r < MAX(PUD_RACE_FAULTS / num_online_cpus(), 2u); r++)
			pud_race_run(as_ptlock_modes[m]);
}

/* ---- faults racing on one empty entry ---- */

/*
 * The levels above the PMD take no lock, so nothing can hold the racers at their
 * cmpxchg: a free race from a start barrier is all there is, and whether two CPUs
 * meet inside it is up to the host. Rounds give it more chances: this many faults
 * per lock mode in all, one per CPU per round, at least two rounds.
 */
#define RACE_FREE_FAULTS 64

enum race_kind {
	RACE_FREE,	/* every CPU, let go by a start barrier: every level races */
	RACE_PMD_HELD,	/* all but the holder, queued on the PMD table's lock: one PTE table */
	RACE_PTE_HELD,	/* queued on the PTE table's lock: one 4 KiB page */
	RACE_HUGE_HELD, /* queued on the PMD table's lock, each with a 2 MiB block: one leaf */
};

static void race_run(enum ptlock_mode mode, enum race_kind kind)
{
	u64 before = as_free_bytes();
	uintptr_t va = as_slot(0);
	struct pt_table_stats p0, p1, p2;
	struct fault_stats f0, f1;
	struct pt_counts c;
	int err = 0;

	pt_table_stats_sum(&p0);
	ASSERT_TRUE(ptlock_hold_init(mode, true) != NULL);
	ASSERT_EQ(vma_map(ph.mm, va, HUGE_SIZE, PROT_READ | PROT_WRITE,
			  kind == RACE_HUGE_HELD ? 0 : VMA_NOHUGE),
		  0);
	if (kind == RACE_PTE_HELD) {
		/* A neighbour makes the PTE table; the racers want the entry beside it. */
		ASSERT_EQ(mm_fault(ph.mm, va + PAGE_SIZE, FAULT_WRITE), 0);
		pte_t *pmd_table = pt_pmd_table(ph.mm, va, &err);
		ASSERT_TRUE(pmd_table != NULL);
		ph.table = pt_table_of(pt_entry_read(&pmd_table[pt_index(va, PT_LEVEL_PMD)]));
	} else if (kind != RACE_FREE) {
		ph.table = pt_pmd_table(ph.mm, va, &err);
		ASSERT_TRUE(ph.table != NULL);
	}
	unsigned racers = PTLOCK_FAULTERS;
	if (kind == RACE_FREE)
		racers = MAX_CPUS; /* only those that meet in the window queue on a lock */
	else if (kind == RACE_HUGE_HELD)
		racers = PTLOCK_HUGE_FAULTERS;
	ptlock_assign(va, 0, racers, kind == RACE_FREE);
	fault_stats_sum(&f0);
	smp_run_all(ptlock_hold_worker, &ph);
	fault_stats_sum(&f1);
	pt_table_stats_sum(&p1);
	ptlock_hold_check();

	/* One table per level below the root (no PTE table under a 2 MiB leaf), one leaf. */
	bool huge = kind == RACE_HUGE_HELD;
	u64 want_tables = huge ? PT_TOP_LEVEL - 1 : PT_TOP_LEVEL, want_huge = huge ? 1 : 0;
	u64 want_4k = huge ? 0 : 1, want_4k_mapped = want_4k + (kind == RACE_PTE_HELD);
	pt_count(ph.mm, &c);
	EXPECT_EQ(c.tables, want_tables);
	EXPECT_EQ(c.pages_huge, want_huge);
	EXPECT_EQ(c.pages_4k, want_4k_mapped);
	EXPECT_EQ(f1.mapped_4k - f0.mapped_4k, want_4k);
	EXPECT_EQ(f1.mapped_huge - f0.mapped_huge, want_huge);
	if (kind == RACE_PTE_HELD || kind == RACE_HUGE_HELD) {
		/* Every racer but the first found the entry filled under the lock. */
		EXPECT_EQ(f1.lost_race - f0.lost_race, ph.faulters - 1);
	}
	/* The losers gave their tables back: what is allocated is what the tables hold. */
	EXPECT_EQ((p1.allocated - p0.allocated) - (p1.freed - p0.freed), c.tables + 1);
	mm_destroy(ph.mm);
	pt_table_stats_sum(&p2);
	EXPECT_EQ(p2.allocated - p0.allocated, p2.freed - p0.freed);
	EXPECT_EQ(as_free_bytes(), before);
}

TEST(ptlock, faults_racing_on_one_empty_entry_install_exactly_one)
{
	for (unsigned m = 0; m < ARRAY_SIZE(as_ptlock_modes); m++) {
		for (unsigned r = 0; r < MAX(RACE_FREE_FAULTS / num_online_cpus(), 2u); r++)
			race_run(as_ptlock_modes[m], RACE_FREE);
		if (num_online_cpus() < 2)
			continue; /* the held-lock rounds need a holder and a racer */
		race_run(as_ptlock_modes[m], RACE_PMD_HELD);
		race_run(as_ptlock_modes[m], RACE_PTE_HELD);
		race_run(as_ptlock_modes[m], RACE_HUGE_HELD);
	}
}

TEST(ptlock, default_follows_cmdline)
{
	const char *v = cmdline_get("ptlock");
	enum ptlock_mode want = v && !strcmp(v, "mm") ? PTLOCK_MM : PTLOCK_SPLIT;
	struct mm *mm = mm_create();

	ASSERT_TRUE(mm != NULL);
	EXPECT_EQ(mm_default_ptlock(), want);
	EXPECT_EQ(mm->ptlock, want);
	mm_destroy(mm);
	mm = mm_create_ptlock(want == PTLOCK_MM ? PTLOCK_SPLIT : PTLOCK_MM);
	ASSERT_TRUE(mm != NULL);
	EXPECT_NE(mm->ptlock, want);
	mm_destroy(mm);
	EXPECT_TRUE(mm_create_ptlock((enum ptlock_mode)7) == NULL);
}

/* The lock a fault takes is the PMD table's own (split) or the mm's. */
TEST(ptlock, lock_of_each_table)
{
	for (unsigned m = 0; m < ARRAY_SIZE(as_ptlock_modes); m++) {
		struct mm *mm = mm_create_ptlock(as_ptlock_modes[m]);
		int err = 0;
		ASSERT_TRUE(mm != NULL);
		pte_t *a = pt_pmd_table(mm, ptlock_gib(0), &err);
		pte_t *b = pt_pmd_table(mm, ptlock_gib(1), &err);
		ASSERT_TRUE(a && b);
		EXPECT_TRUE(a != b);
		if (mm->ptlock == PTLOCK_SPLIT) {
			EXPECT_TRUE(pt_lockptr(mm, a) == &virt_to_page(a)->ptl);
			EXPECT_TRUE(pt_lockptr(mm, a) != pt_lockptr(mm, b));
		} else {
			EXPECT_TRUE(pt_lockptr(mm, a) == &mm->page_table_lock);
			EXPECT_TRUE(pt_lockptr(mm, b) == &mm->page_table_lock);
		}
		mm_destroy(mm);
	}
}
