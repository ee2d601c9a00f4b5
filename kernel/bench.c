/* The benchmark runner and the result-line and phase-mark helpers (see include/grace/bench.h). */
#include <grace/arch.h>
#include <grace/bench.h>
#include <grace/cmdline.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <grace/time.h>

#define BENCH_PHASE_MS_DEFAULT 300	/* long enough for thousands of lock hand-offs under TCG */
#define BENCH_LINE_MAX 400

extern const struct bench_case __benches_start[], __benches_end[];

/*
 * The phase being measured. bench_phase_begin/end are out-of-line functions whose
 * addresses the profiler finds in kernel.elf: it starts counting when a CPU
 * executes bench_phase_begin and stops at bench_phase_end, and reads the phase's
 * name, CPU count and operation count from this record.
 */
struct bench_phase {
	const char *name;
	u64 cpus;
	u64 ops;
};
volatile struct bench_phase bench_phase_current;

void __noinline bench_phase_begin(const char *phase, unsigned cpus)
{
	bench_phase_current.name = phase;
	bench_phase_current.cpus = cpus;
	bench_phase_current.ops = 0;
	barrier();
}

void __noinline bench_phase_end(u64 ops)
{
	bench_phase_current.ops = ops;
	barrier();
}

u64 bench_phase_ns(void)
{
	const char *v = cmdline_get("bench_ms");
	u64 ms;
	if (!v || parse_u64(v, &ms) || ms == 0 || ms > 60000) {
		if (v)
			pr_warn("bench: bench_ms='%s' is not 1..60000; using %u\n", v, BENCH_PHASE_MS_DEFAULT);
		ms = BENCH_PHASE_MS_DEFAULT;
	}
	return ms * NSEC_PER_MSEC;
}

void bench_report(const char *name, unsigned cpus, const char *fmt, ...)
{
	char rest[BENCH_LINE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rest, sizeof(rest), fmt, ap);
	va_end(ap);
	printk_raw("bench: %s arch=%s online=%u cpus=%u %s", name, arch_name, num_online_cpus(), cpus, rest);
}

int bench_run(const char *globs)
{
	unsigned ran = 0;
	for (const struct bench_case *b = __benches_start; b < __benches_end; b++) {
		if (!glob_list_match(globs, b->name) && strcmp(globs, "all"))
			continue;
		printk("bench: running %s on %u CPUs\n", b->name, num_online_cpus());
		b->fn();
		ran++;
	}
	if (!ran)
		pr_err("bench: no benchmark matches '%s'\n", globs);
	printk_raw("benchmarks: done");
	return ran ? 0 : 1;
}
