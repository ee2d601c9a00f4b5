/*
 * make bench BENCH=locktorture [ARGS=torture_s=600]: the lock torture of the
 * selftests (engine and checks in tests/kernel/locktorture.c), run long: torture_s
 * seconds in all, default LT_BENCH_DEFAULT_S, split evenly over the lock types, on
 * every online CPU. One line per type, then its per-CPU (write) acquisitions, 16 CPUs
 * a line:
 *
 *   bench: locktorture arch=x86_64 online=8 cpus=8 lock=mutex ms=980 acq_per_sec=...
 *          fairness=1.01 min=... max=... writes=... reads_per_sec=0 long_holds=...
 *   bench: locktorture arch=x86_64 online=8 cpus=8 lock=mutex cpus_from=0 per_cpu_writes=...,...
 *
 * Everything but long_holds is of the counted part of the run, from the moment every
 * CPU had had the lock once (before, the first vCPUs the host runs have it to
 * themselves): ms (its length), writes and the rates; min and max are the fewest and most
 * write acquisitions of one CPU, fairness max over min.
 * A type that breaks exclusion, loses an update, tears a read or, for a FIFO lock,
 * is unfair past LT_FIFO_FAIRNESS_BOUND prints "bench: error" instead, which fails
 * the run.
 */
#include <grace/bench.h>
#include <grace/cmdline.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <grace/time.h>

#include <tests/kernel/locktorture.h>

#define LT_BENCH_DEFAULT_S 5	 /* a second per type: a quick look; long runs say torture_s= */
#define LT_BENCH_MAX_S 86400	 /* a day */
#define LT_BENCH_PER_CPU_LINE 16 /* CPUs per per-CPU line: 16 counts fit a bench: line */
/*
 * A type stops at twice its share even if a FIFO lock's CPUs are short of their
 * minimum (tests/run allows make bench 2 * torture_s more for that).
 */
#define LT_BENCH_HARD_FACTOR 2

static u64 lt_bench_seconds(void)
{
	const char *v = cmdline_get("torture_s");
	u64 s;
	if (!v)
		return LT_BENCH_DEFAULT_S;
	if (parse_u64(v, &s) || s == 0 || s > LT_BENCH_MAX_S) {
		pr_warn("bench: torture_s='%s' is not 1..%u; using %u\n", v, LT_BENCH_MAX_S,
			LT_BENCH_DEFAULT_S);
		return LT_BENCH_DEFAULT_S;
	}
	return s;
}

static void lt_bench_per_cpu(const char *name, unsigned cpus)
{
	unsigned cpu, n = 0, from = 0;
	char list[LT_BENCH_PER_CPU_LINE * 21];
	size_t len = 0;

	for_each_online_cpu(cpu) {
		if (n == 0)
			from = cpu;
		len += scnprintf(list + len, sizeof(list) - len, "%s%llu", n ? "," : "",
				 lt_cpu_counted_writes(cpu));
		if (++n == LT_BENCH_PER_CPU_LINE || cpu == num_online_cpus() - 1) {
			bench_report("locktorture", cpus, "lock=%s cpus_from=%u per_cpu_writes=%s",
				     name, from, list);
			n = 0;
			len = 0;
		}
	}
}

static void lt_bench_type(enum lt_lock_type type, u64 ns)
{
	const struct lt_params p = {.run_ns = ns, .hard_ns = LT_BENCH_HARD_FACTOR * ns};
	static struct lt_result r;
	char phase[32], why[160], fair[24];

	snprintf(phase, sizeof(phase), "lock=%s", lt_lock_name(type));
	bench_phase_begin(phase, num_online_cpus());
	lt_run(type, &p, &r);
	bench_phase_end(r.writes + r.reads);

	if (lt_verdict(&r, why, sizeof(why))) {
		bench_error("locktorture", "lock=%s %s", r.name, why);
		return;
	}
	/* Rates over the counted part: every CPU taking part (locktorture.c says why). */
	u64 counted_ns = r.counted_ns ? r.counted_ns : 1;
	lt_format_ratio(r.fair_max, r.fair_min, fair, sizeof(fair));
	bench_report("locktorture", r.cpus,
		     "lock=%s ms=%llu acq_per_sec=%llu fairness=%s min=%llu max=%llu "
		     "writes=%llu reads_per_sec=%llu long_holds=%llu%s",
		     r.name, r.counted_ns / NSEC_PER_MSEC,
		     r.counted_writes * NSEC_PER_SEC / counted_ns, fair, r.fair_min, r.fair_max,
		     r.counted_writes, r.counted_reads * NSEC_PER_SEC / counted_ns, r.long_holds,
		     r.hard_stop ? " hard_limit=1" : "");
	lt_bench_per_cpu(r.name, r.cpus);
}

BENCH(locktorture)
{
	u64 ns = lt_bench_seconds() * NSEC_PER_SEC / LT_NR_LOCK_TYPES;
	for (unsigned t = 0; t < LT_NR_LOCK_TYPES; t++)
		lt_bench_type(t, ns);
}
