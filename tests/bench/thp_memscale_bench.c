/*
 * make bench BENCH=thp_memscale: the shape of Alex Thorlton's (SGI) thp_memscale
 * from "split page table lock for PMD tables" (Kirill A. Shutemov, 2013). One
 * shared mm; every CPU has a region of its own, each in its own 1 GiB-aligned
 * slot (so each region sits under its own PMD table), and writes the first byte
 * of every 4 KiB of it. Regions are sized to the memory available.
 *
 * A phase runs for bench_ms (default 1000 ms here, not the common 300: a cycle of
 * the 4 KiB rows takes a few hundred ms under TCG) as cycles that all CPUs run in
 * lockstep, CPU 0 of the phase (the first to arrive, the leader) deciding at the
 * last barrier of each cycle whether the phase's time is up, so every CPU runs
 * the same number of cycles:
 *
 *   map its region (untimed)  | barrier | touch every 4 KiB (timed) | barrier |
 *   unmap its region (timed apart, with its TLB shootdown) | barrier
 *
 * The rows, one phase each, in one boot so the figures compare directly: three
 * designs, each with 2 MiB pages (one fault per 2 MiB, the thread's THP-on case)
 * and with 4 KiB pages only (one fault per 4 KiB, the will-it-scale page_fault1
 * shape). Today's: split PMD locks, VMAs found under RCU and held by their own
 * lock and freed at once into a typesafe cache, 2 MiB blocks from per-CPU lists
 * refilled in batches, PMD tables kept from one cycle to the next (pt_free=exit);
 * with 2 MiB pages, also today's with every unmap freeing the PMD table it emptied
 * (pt_free=unmap), with VMAs freed after a grace period (vma_free=rcu: every
 * unmap queues an RCU callback, so grace periods run through the phase), with
 * cond_resched() and faults no RCU quiescent state (rcu_qs_points=off: a busy CPU
 * waits for RCU's IPI), and with the scheduler scanning every run queue
 * (sched_domains=flat); with 4 KiB pages, also today's with the order-0 lists'
 * marks fixed at the boot's (pcp_high=fixed). Those switches, and pcp_huge=, are
 * the machine's for the phase. The 2013 kernel's: split PMD locks, but every
 * fault read-locking the mm's vma_lock, VMAs freed after a grace period and 2 MiB
 * blocks from the zone. The one before: the same with one mm-wide page-table
 * lock. Both free tables at unmap, as Linux does.
 *
 *   bench: thp_memscale arch=riscv64 online=8 cpus=8 ptlock=split vma=rcu
 * vma_free=typesafe pcp_huge=batch pcp_high=auto pt_free=exit qs=on sched=domains
 * pages=huge faults_per_sec=... cycles=... seconds=... unmap_us_per_cycle=...
 *
 * faults_per_sec counts the page faults handled (calls to mm_fault) over the sum
 * of the touch windows, seconds; a touch window runs from the barrier release
 * that starts the touches to the last CPU's last write. unmap_us_per_cycle is the
 * same for the unmaps (the release after the touches to the last CPU's return
 * from vma_unmap), per cycle. A phase is named by its row's fields joined with
 * '/', so the profiler reports thp_memscale/ptlock=split/vma=rcu/vma_free=typesafe/
 * pcp_huge=batch/pcp_high=auto/pt_free=exit/qs=on/sched=domains/pages=huge;
 * thp_rows=<glob>[,<glob>] on the command line runs only the rows whose
 * thp_memscale/<phase> matches (ARGS='thp_rows=*pages=4k'), and none matching
 * prints one line with rows=0.
 *
 * Under the profiler (make profile BENCH=thp_memscale) each CPU is paused
 * (bench_pause()) from the end of its touches to the start of its next ones, so
 * barriers, maps and unmaps (and their shootdown IPIs) stay out of the counts:
 * ops are the faults, and the per-op figures are those of the faults themselves.
 * Every CPU pauses before the first barrier, inside which the leader begins the
 * phase, so their way into the phase (a thread start, a sleep) is not counted.
 * Each phase first runs THP_WARMUP_CYCLES cycles it does not measure or count.
 */
#include <grace/bench.h>
#include <grace/cmdline.h>
#include <grace/errno.h>
#include <grace/fault.h>
#include <grace/huge.h>
#include <grace/address_space.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/rcupdate.h>
#include <grace/sched.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <grace/time.h>
#include <grace/vma.h>
#include <grace/wait.h>
#include <asm/cpu.h>
#include <mm/page_alloc_internal.h>

/*
 * The share of free memory the regions take, in eighths. Half: the 4 KiB phase
 * also needs a PTE table per 2 MiB, other CPUs' per-CPU page lists hold some
 * pages, and 2 MiB blocks must still be free on every node for the huge phase.
 */
#define THP_MEM_EIGHTHS 4
/*
 * Bounds on the memory one cycle touches over all CPUs, so that a cycle stays a
 * fraction of a phase under TCG (and under the profiler, where a phase may get
 * only one): a 4 KiB fault costs some tens of microseconds of emulation, a 2 MiB
 * one mostly the clearing of 2 MiB.
 */
#define THP_MAX_TOTAL_HUGE (192 * MiB)
#define THP_MAX_TOTAL_4K (32 * MiB)
#define THP_PHASE_MS_DEFAULT 1000
/*
 * Cycles each phase runs before it is measured: the first touch of guest RAM
 * makes the host allocate it, the first 2 MiB allocations split the buddy's
 * larger blocks, and the per-CPU page lists start empty; after a cycle each CPU
 * has on its lists what its unmap freed, as in a steady state.
 */
#define THP_WARMUP_CYCLES 1
#define THP_NAME_MAX 160 /* "thp_memscale/" and a row's name */

/*
 * One phase each. The mm is made by thp_mm_create() from the row, and a row's
 * name (thp_row_name()) is its phase name, so a field added here goes into those
 * two functions (and a machine-wide switch also into the restore at the end).
 */
static const struct thp_row {
	enum ptlock_mode ptlock;
	enum vma_lookup lookup;
	enum vma_free_mode vma_free; /* how unmap frees VMAs (vma_free=) */
	bool pcp_batch;		     /* per-CPU 2 MiB lists refilled in batches (pcp_huge=batch) */
	bool pcp_auto;		     /* order-0 lists' marks tuned by refills (pcp_high=auto) */
	enum pt_free_mode pt_free;   /* PMD tables an unmap empties kept (exit) or freed (unmap) */
	bool qs_points;		     /* RCU quiescent points on (rcu_qs_points=on) */
	bool domains;		     /* scheduler domains (sched_domains=domains); false: flat */
	bool huge;		     /* 2 MiB pages where they fit; false: 4 KiB only */
} thp_rows[] = {
    /*
     * Today's design; it again with each unmap freeing the PMD table it emptied, so
     * that each cycle's first fault installs one in the root table (as Linux's
     * free_pgtables() does), with VMAs freed after a grace period (so every unmap
     * queues an RCU callback), with no RCU quiescent points, and with flat
     * scheduler scans; the 2013 kernel's (split PMD locks, VMAs under the mm's lock,
     * 2 MiB blocks from the zone); the one before it (one mm-wide page-table lock).
     * With 4 KiB pages, today's also with the order-0 lists' marks fixed at the
     * boot's (pcp_high=fixed), as the older designs have them.
     */
    /* clang-format off */
    {PTLOCK_SPLIT, VMA_LOOKUP_RCU,    VMA_FREE_TYPESAFE, true,  true,  PT_FREE_EXIT,  true,  true,  true},
    {PTLOCK_SPLIT, VMA_LOOKUP_RCU,    VMA_FREE_TYPESAFE, true,  true,  PT_FREE_UNMAP, true,  true,  true},
    {PTLOCK_SPLIT, VMA_LOOKUP_RCU,    VMA_FREE_RCU,      true,  true,  PT_FREE_EXIT,  true,  true,  true},
    {PTLOCK_SPLIT, VMA_LOOKUP_RCU,    VMA_FREE_TYPESAFE, true,  true,  PT_FREE_EXIT,  false, true,  true},
    {PTLOCK_SPLIT, VMA_LOOKUP_RCU,    VMA_FREE_TYPESAFE, true,  true,  PT_FREE_EXIT,  true,  false, true},
    {PTLOCK_SPLIT, VMA_LOOKUP_LOCKED, VMA_FREE_RCU,      false, false, PT_FREE_UNMAP, true,  true,  true},
    {PTLOCK_MM,    VMA_LOOKUP_LOCKED, VMA_FREE_RCU,      false, false, PT_FREE_UNMAP, true,  true,  true},
    {PTLOCK_SPLIT, VMA_LOOKUP_RCU,    VMA_FREE_TYPESAFE, true,  true,  PT_FREE_EXIT,  true,  true,  false},
    {PTLOCK_SPLIT, VMA_LOOKUP_RCU,    VMA_FREE_TYPESAFE, true,  false, PT_FREE_EXIT,  true,  true,  false},
    {PTLOCK_SPLIT, VMA_LOOKUP_LOCKED, VMA_FREE_RCU,      false, false, PT_FREE_UNMAP, true,  true,  false},
    {PTLOCK_MM,    VMA_LOOKUP_LOCKED, VMA_FREE_RCU,      false, false, PT_FREE_UNMAP, true,  true,  false},
    /* clang-format on */
};

/*
 * What one CPU writes during a phase; cache-line aligned, so no CPU's write moves
 * another's. Each CPU takes its own counts when the measured cycles begin: the
 * leader summing everyone's then would hold a copy of every CPU's counter lines,
 * and each CPU's next fault would pay to take its own line back.
 */
struct thp_cpu {
	u64 touch_end; /* when its last write of this cycle was done */
	u64 unmap_end; /* when its vma_unmap of this cycle returned */
	int err;       /* the first vma_map or vma_unmap error, 0 without */
	unsigned cpu;
	struct fault_stats faults0; /* its counts when the measured cycles began */
	struct huge_stats huge0;
} __cacheline_aligned;

static struct thp_bench {
	struct mm *mm;
	size_t region; /* bytes per CPU, a multiple of HUGE_SIZE */
	unsigned vma_flags, cpus;
	const char *phase; /* for bench_phase_begin */
	u64 phase_ns;
	atomic_t ticket; /* rank 0 is the leader */

	/* The barrier: the leader waits for arrived == cpus - 1, then bumps released. */
	atomic_t arrived __cacheline_aligned;
	u32 released __cacheline_aligned;
	struct wait_queue_head leader_wq, release_wq; /* who sleeps for each */

	/* Written by the leader only, between a barrier's arrival and its release. */
	u64 start, touch_start, unmap_start, touch_ns, unmap_ns;
	unsigned cycles;
	bool stop;

	struct thp_cpu cpu[MAX_CPUS]; /* by rank */
} tb;

static uintptr_t thp_slot(unsigned cpu)
{
	return (uintptr_t)(cpu + 1) * GiB;
}

static void thp_row_name(const struct thp_row *row, char *buf, size_t size)
{
	snprintf(buf, size,
		 "ptlock=%s/vma=%s/vma_free=%s/pcp_huge=%s/pcp_high=%s/pt_free=%s/qs=%s/sched=%s/"
		 "pages=%s",
		 ptlock_mode_name(row->ptlock), vma_lookup_name(row->lookup),
		 vma_free_mode_name(row->vma_free), row->pcp_batch ? "batch" : "single",
		 row->pcp_auto ? "auto" : "fixed", pt_free_mode_name(row->pt_free),
		 row->qs_points ? "on" : "off", row->domains ? "domains" : "flat",
		 row->huge ? "huge" : "4k");
}

/* The row's address space, and the row's per-CPU list design for the whole allocator. */
static struct mm *thp_mm_create(const struct thp_row *row)
{
	pcp_set_huge_batching(row->pcp_batch);
	if (pcp_high_auto() != row->pcp_auto)
		pcp_set_high_auto(row->pcp_auto);
	vma_set_free_mode(row->vma_free); /* the machine's, for the phase's maps */
	struct mm *mm = mm_create_modes(row->ptlock, row->lookup);
	if (mm)
		mm_set_pt_free(mm, row->pt_free);
	return mm;
}

/*
 * The barrier, in two halves so the leader can act while everyone waits. Every
 * CPU calls thp_arrive(); the others return from it only once the leader, which
 * returns as soon as all have arrived, calls thp_release(). *passed counts the
 * barriers this CPU has been through. Waiters sleep rather than spin: with more
 * vCPUs than host cores, a vCPU spinning at the barrier would take the host time
 * the CPUs still touching need, and the touch window would measure that instead.
 */
static void thp_arrive(bool leader, u32 *passed)
{
	u32 next = ++*passed;
	if (leader) {
		/* Pairs with the others' fully ordered increment: their work is before this. */
		wait_event(tb.leader_wq, (unsigned)atomic_read_acquire(&tb.arrived) == tb.cpus - 1);
		atomic_set(&tb.arrived, 0); /* nobody arrives again before the release */
		return;
	}
	if ((unsigned)atomic_inc_return(&tb.arrived) == tb.cpus - 1)
		wake_up(&tb.leader_wq);
	/* Pairs with thp_release(): the leader's decisions are visible after this. */
	wait_event(tb.release_wq, smp_load_acquire(&tb.released) == next);
}

static void thp_release(u32 passed)
{
	smp_store_release(&tb.released, passed);
	wake_up_all(&tb.release_wq);
}

/* The latest of the CPUs' touch_end (or unmap_end), by the leader at a barrier. */
static u64 thp_last(bool unmap)
{
	u64 last = 0;
	for (unsigned r = 0; r < tb.cpus; r++)
		last = MAX(last, unmap ? tb.cpu[r].unmap_end : tb.cpu[r].touch_end);
	return last;
}

static void thp_note_error(struct thp_cpu *me, int err)
{
	if (err && !me->err)
		me->err = err;
}

/* The leader, at the barrier before the touches of the first measured cycle. */
static void thp_begin(void)
{
	bench_phase_begin(tb.phase, tb.cpus);
	tb.start = arch_clock_ns();
}

static void thp_worker(void *arg)
{
	unsigned rank = (unsigned)atomic_inc_return(&tb.ticket) - 1;
	bool leader = rank == 0;
	struct thp_cpu *me = &tb.cpu[rank];
	uintptr_t base = thp_slot(smp_processor_id()), end = base + tb.region;
	u32 passed = 0;

	bench_pause(); /* the profiler counts the touches only */
	me->cpu = smp_processor_id();
	mm_switch(tb.mm);
	for (unsigned cycle = 0;; cycle++) {
		bool measured = cycle >= THP_WARMUP_CYCLES;
		int err = vma_map(tb.mm, base, tb.region, PROT_READ | PROT_WRITE, tb.vma_flags);
		thp_note_error(me, err);
		if (cycle == THP_WARMUP_CYCLES) {
			fault_stats_cpu(me->cpu, &me->faults0);
			huge_stats_cpu(me->cpu, &me->huge0);
		}

		thp_arrive(leader, &passed);
		if (leader) {
			if (cycle == THP_WARMUP_CYCLES)
				thp_begin();
			tb.touch_start = arch_clock_ns();
			thp_release(passed);
		}
		if (measured)
			bench_resume();
		if (!err) {
			arch_user_access_begin();
			for (uintptr_t va = base; va < end; va += PAGE_SIZE)
				*(volatile u8 *)va = 1;
			arch_user_access_end();
		}
		bench_pause();
		me->touch_end = arch_clock_ns();

		thp_arrive(leader, &passed);
		if (leader) {
			if (measured)
				tb.touch_ns += thp_last(false) - tb.touch_start;
			tb.unmap_start = arch_clock_ns();
			thp_release(passed);
		}
		thp_note_error(me, vma_unmap(tb.mm, base, tb.region));
		me->unmap_end = arch_clock_ns();

		thp_arrive(leader, &passed);
		if (leader) {
			u64 last = thp_last(true);
			bool failed = false;
			for (unsigned r = 0; r < tb.cpus; r++)
				failed |= tb.cpu[r].err != 0;
			if (measured) {
				tb.unmap_ns += last - tb.unmap_start;
				tb.cycles++;
			}
			tb.stop = failed || (measured && last - tb.start >= tb.phase_ns);
			thp_release(passed);
		}
		if (READ_ONCE(tb.stop))
			break;
	}
	mm_switch(NULL);
}

/*
 * Every CPU gets a whole number of 2 MiB within the row's bound; if memory is too
 * short for that, fewer CPUs run (*cpus).
 */
static size_t thp_region(const struct thp_row *row, unsigned *cpus)
{
	u64 budget = mm_free_bytes() / 8 * THP_MEM_EIGHTHS;
	size_t region = ALIGN_DOWN(budget / *cpus, HUGE_SIZE);
	if (region == 0) {
		*cpus = MAX(budget / HUGE_SIZE, 1);
		region = HUGE_SIZE;
	}
	size_t bound = row->huge ? THP_MAX_TOTAL_HUGE : THP_MAX_TOTAL_4K;
	return MIN(region, MAX(ALIGN_DOWN(bound / *cpus, HUGE_SIZE), HUGE_SIZE));
}

/* One row: its warm-up cycle, then a phase of at least phase_ns. */
static void thp_phase(const struct thp_row *row, u64 phase_ns)
{
	unsigned cpus = num_online_cpus();
	char phase[THP_NAME_MAX];

	rcu_barrier(); /* the VMAs an earlier vma_free=rcu row left to free, outside this row */
	thp_row_name(row, phase, sizeof(phase));
	size_t region = thp_region(row, &cpus);
	memset(&tb, 0, sizeof(tb));
	wait_queue_init(&tb.leader_wq);
	wait_queue_init(&tb.release_wq);
	tb.region = region;
	tb.vma_flags = row->huge ? 0 : VMA_NOHUGE;
	tb.cpus = cpus;
	tb.phase = phase;
	tb.phase_ns = phase_ns;
	tb.mm = thp_mm_create(row);
	if (!tb.mm) {
		bench_error("thp_memscale", "phase %s: no memory for an mm", phase);
		return;
	}
	bool qs_points = rcu_qs_points(), domains = sched_domains_enabled();
	rcu_set_qs_points(row->qs_points);
	sched_set_domains(row->domains);
	smp_run_on(cpus, thp_worker, NULL);
	rcu_set_qs_points(qs_points);
	sched_set_domains(domains);
	/* The measured cycles' counts: each CPU's now, less what it took when they began. */
	struct fault_stats d = {0};
	u64 remote = 0;
	for (unsigned r = 0; r < cpus; r++) {
		struct fault_stats f;
		struct huge_stats h;
		fault_stats_cpu(tb.cpu[r].cpu, &f);
		huge_stats_cpu(tb.cpu[r].cpu, &h);
		d.faults += f.faults - tb.cpu[r].faults0.faults;
		d.mapped_huge += f.mapped_huge - tb.cpu[r].faults0.mapped_huge;
		d.mapped_4k += f.mapped_4k - tb.cpu[r].faults0.mapped_4k;
		d.lost_race += f.lost_race - tb.cpu[r].faults0.lost_race;
		d.huge_fallback += f.huge_fallback - tb.cpu[r].faults0.huge_fallback;
		remote += h.remote - tb.cpu[r].huge0.remote;
	}
	u64 faults = d.faults;
	bench_phase_end(faults);
	mm_destroy(tb.mm);

	unsigned failed = 0;
	int first = 0;
	for (unsigned r = 0; r < cpus; r++)
		if (tb.cpu[r].err) {
			first = first ? first : tb.cpu[r].err;
			failed++;
		}
	if (failed) {
		bench_error("thp_memscale", "phase %s: vma_map or vma_unmap failed on %u CPUs (%s)",
			    phase, failed, errno_name(first));
		return;
	}
	u64 ns = MAX(tb.touch_ns, 1);
	char fields[THP_NAME_MAX];
	thp_row_name(row, fields, sizeof(fields));
	for (char *p = fields; *p; p++)
		if (*p == '/')
			*p = ' ';
	bench_report("thp_memscale", cpus,
		     "%s faults_per_sec=%llu cycles=%u seconds=%llu.%06llu unmap_us_per_cycle=%llu",
		     fields, faults * NSEC_PER_SEC / ns, tb.cycles, ns / NSEC_PER_SEC,
		     ns % NSEC_PER_SEC / 1000, tb.unmap_ns / tb.cycles / 1000);
	printk("thp_memscale: %s: %llu MiB per CPU, %u cycles, %llu faults (%llu x 2 MiB, %llu x "
	       "4 KiB, %llu lost races, %llu huge fallbacks, %llu remote huge)\n",
	       phase, (u64)(region >> 20), tb.cycles, faults, d.mapped_huge, d.mapped_4k,
	       d.lost_race, d.huge_fallback, remote);
}

/* Is thp_memscale/<row's name> one of the rows thp_rows= asks for (all, without it)? */
static bool thp_row_selected(const char *globs, const struct thp_row *row)
{
	char name[THP_NAME_MAX + 16];
	if (!globs || !*globs)
		return true;
	int n = snprintf(name, sizeof(name), "thp_memscale/");
	thp_row_name(row, name + n, sizeof(name) - n);
	return glob_list_match(globs, name);
}

BENCH(thp_memscale)
{
	const char *globs = cmdline_get("thp_rows");
	u64 phase_ns = bench_phase_ns_default(THP_PHASE_MS_DEFAULT * NSEC_PER_MSEC);
	/* The rows change these; given back after. */
	bool batching = pcp_huge_batching(), pcp_auto = pcp_high_auto();
	enum vma_free_mode vma_free = vma_get_free_mode();
	unsigned ran = 0;

	for (unsigned i = 0; i < ARRAY_SIZE(thp_rows); i++) {
		if (!thp_row_selected(globs, &thp_rows[i]))
			continue;
		thp_phase(&thp_rows[i], phase_ns);
		ran++;
	}
	pcp_set_huge_batching(batching);
	if (pcp_high_auto() != pcp_auto)
		pcp_set_high_auto(pcp_auto);
	vma_set_free_mode(vma_free);
	if (!ran)
		bench_report("thp_memscale", 0, "rows=0 thp_rows=%s", globs);
}
