/*
 * make bench BENCH=thp_memscale: the shape of Alex Thorlton's (SGI) thp_memscale
 * from "split page table lock for PMD tables" (Kirill A. Shutemov, 2013). One
 * shared mm; once every CPU is ready they all, at once, map a region of their
 * own, each in its own 1 GiB-aligned slot (so each region sits under its own PMD
 * table), and write the first byte of every 4 KiB of it. Regions are sized to the
 * memory available.
 *
 * Four phases in one boot, so the figures compare directly: split PMD locks vs
 * one mm-wide page-table lock, each with 2 MiB pages (one fault per 2 MiB, the
 * thread's THP-on case) and with 4 KiB pages only (one fault per 4 KiB, the
 * will-it-scale page_fault1 shape):
 *
 *   bench: thp_memscale arch=riscv64 online=8 cpus=8 ptlock=split pages=huge faults_per_sec=...
 * seconds=...
 *
 * faults_per_sec counts the page faults handled (calls to mm_fault), seconds is
 * from the common start to the last CPU's last write. Mapping and freeing are
 * outside the time except the per-CPU map, as in the original.
 */
#include <grace/bench.h>
#include <grace/fault.h>
#include <grace/huge.h>
#include <grace/address_space.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/time.h>
#include <grace/vma.h>

/*
 * The share of free memory the regions take, in eighths. Half: the 4 KiB phase
 * also needs a PTE table per 2 MiB, other CPUs' per-CPU page lists hold some
 * pages, and 2 MiB blocks must still be free on every node for the huge phase.
 */
#define THP_MEM_EIGHTHS 4
/*
 * Bounds on the memory one phase touches over all CPUs, so that the whole run
 * stays inside the runner's timeout under TCG (and 4x that under the profiler):
 * a 4 KiB fault costs some tens of microseconds of emulation, a 2 MiB one mostly
 * the clearing of 2 MiB.
 */
#define THP_MAX_TOTAL_HUGE (192 * MiB)
#define THP_MAX_TOTAL_4K (32 * MiB)

static struct thp_bench {
	struct mm *mm;
	size_t region; /* bytes per CPU, a multiple of HUGE_SIZE */
	unsigned vma_flags;
	struct smp_sync start;
	u64 begin[MAX_CPUS], end[MAX_CPUS]; /* each CPU writes only its own slot */
	atomic_t errors;
} tb;

static uintptr_t thp_slot(unsigned cpu)
{
	return (uintptr_t)(cpu + 1) * GiB;
}

static void thp_worker(void *arg)
{
	unsigned cpu = smp_processor_id();
	uintptr_t base = thp_slot(cpu);

	mm_switch(tb.mm);
	smp_sync_wait(&tb.start, *(unsigned *)arg);
	tb.begin[cpu] = arch_clock_ns();
	if (vma_map(tb.mm, base, tb.region, PROT_READ | PROT_WRITE, tb.vma_flags)) {
		atomic_inc(&tb.errors);
	} else {
		arch_user_access_begin();
		for (uintptr_t va = base; va < base + tb.region; va += PAGE_SIZE)
			*(volatile u8 *)va = 1;
		arch_user_access_end();
	}
	tb.end[cpu] = arch_clock_ns();
	mm_switch(NULL);
}

static void thp_phase(enum ptlock_mode mode, bool huge, bool report)
{
	unsigned cpus = num_online_cpus(), cpu;
	u64 budget = mm_free_bytes() / 8 * THP_MEM_EIGHTHS;
	struct fault_stats s0, s1;
	struct huge_stats h0, h1;
	char phase[48];

	/* Every CPU gets a whole number of 2 MiB; if memory is too short for that, fewer CPUs run.
	 */
	size_t region = ALIGN_DOWN(budget / cpus, HUGE_SIZE);
	if (region == 0) {
		cpus = MAX(budget / HUGE_SIZE, 1);
		region = HUGE_SIZE;
	}
	region =
	    MIN(region,
		MAX(ALIGN_DOWN((huge ? THP_MAX_TOTAL_HUGE : THP_MAX_TOTAL_4K) / cpus, HUGE_SIZE),
		    HUGE_SIZE));

	tb = (struct thp_bench){.region = region, .vma_flags = huge ? 0 : VMA_NOHUGE};
	tb.mm = mm_create_ptlock(mode);
	if (!tb.mm) {
		bench_error("thp_memscale", "no memory for an mm");
		return;
	}
	snprintf(phase, sizeof(phase), "ptlock=%s/pages=%s", ptlock_mode_name(mode),
		 huge ? "huge" : "4k");
	fault_stats_sum(&s0);
	huge_stats_sum(&h0);
	if (report)
		bench_phase_begin(phase, cpus);
	smp_run_on(cpus, thp_worker, &cpus);
	fault_stats_sum(&s1);
	huge_stats_sum(&h1);
	u64 faults = s1.faults - s0.faults;
	if (report)
		bench_phase_end(faults);

	u64 first = ~0ULL, last = 0;
	struct cpumask ran;
	smp_pick_cpus(cpus, &ran);
	for_each_cpu(cpu, &ran) {
		first = MIN(first, tb.begin[cpu]);
		last = MAX(last, tb.end[cpu]);
	}
	u64 ns = last > first ? last - first : 1;
	int errors = atomic_read(&tb.errors);
	if (errors)
		bench_error("thp_memscale", "phase %s: %d faults failed", phase, errors);
	if (!report || errors) {
		mm_destroy(tb.mm);
		return;
	}
	bench_report("thp_memscale", cpus,
		     "ptlock=%s pages=%s faults_per_sec=%llu seconds=%llu.%06llu",
		     ptlock_mode_name(mode), huge ? "huge" : "4k", faults * NSEC_PER_SEC / ns,
		     ns / NSEC_PER_SEC, ns % NSEC_PER_SEC / 1000);
	printk("thp_memscale: %s: %llu MiB per CPU, %llu faults (%llu x 2 MiB, %llu x 4 KiB, %llu "
	       "lost races, %llu huge fallbacks, %llu remote huge), %d errors\n",
	       phase, (u64)(region >> 20), faults, s1.mapped_huge - s0.mapped_huge,
	       s1.mapped_4k - s0.mapped_4k, s1.lost_race - s0.lost_race,
	       s1.huge_fallback - s0.huge_fallback, h1.remote - h0.remote, errors);
	mm_destroy(tb.mm);
}

BENCH(thp_memscale)
{
	static const enum ptlock_mode modes[] = {PTLOCK_SPLIT, PTLOCK_MM};

	/*
	 * Warm-up, not reported: the first touch of guest RAM makes the host allocate
	 * it, and the first 2 MiB allocations split the buddy's larger blocks. Without
	 * this the first phase measures QEMU and the allocator, not the fault path.
	 */
	thp_phase(PTLOCK_SPLIT, true, false);
	for (int huge = 1; huge >= 0; huge--)
		for (unsigned m = 0; m < ARRAY_SIZE(modes); m++)
			thp_phase(modes[m], huge, true);
}
