/*
 * Benchmarks. BENCH(name) registers one in the .benches section; bench=<glob> on
 * the command line (make bench BENCH=name) runs the matching ones and powers off.
 * Each result is one line:
 *
 *   bench: <name> arch=<arch> online=<n> cpus=<k> <key>=<value> ...
 *
 * A benchmark brackets each measured phase with bench_phase_begin/end, which the
 * QEMU profiling plugin watches to count instructions and cache-line transfers
 * inside the phase only, and may leave a CPU's untimed work inside the phase out
 * with bench_pause/resume (see the channel's comment in kernel/bench.c).
 */
#ifndef GRACE_BENCH_H
#define GRACE_BENCH_H

#include <grace/compiler.h>
#include <grace/types.h>

struct bench_case {
	const char *name;
	void (*fn)(void);
};

#define BENCH(name)                                                                                \
	static void bench_##name(void);                                                            \
	static const struct bench_case __bench_##name __section(".benches")                        \
	    __used __aligned(8) = {#name, bench_##name};                                           \
	static void bench_##name(void)

/* Comma-separated globs; prints "benchmarks: done" at the end. 0, or 1 when none matched. */
int bench_run(const char *globs);

/* How long each timed phase runs: bench_ms=<n> on the command line, default 300 ms. */
u64 bench_phase_ns(void);
/* The same for a benchmark with a default of its own: bench_ms=<n>, or default_ns without it. */
u64 bench_phase_ns_default(u64 default_ns);

/* Print one result line: the common prefix, then fmt. */
void bench_report(const char *name, unsigned cpus, const char *fmt, ...) __printf(3, 4);

/*
 * The benchmark could not measure what it should (an allocation failed, an
 * operation returned an error): "bench: error <name> arch=... <why>". The runner
 * fails the run on such a line; a benchmark prints it instead of a result.
 */
void bench_error(const char *name, const char *fmt, ...) __printf(2, 3);

/*
 * The CPU counts a benchmark steps through: 1, 2, 4, ... and then every CPU
 * online, a power of two or not; the count after k, or 0 after online:
 *   for (unsigned k = 1; k; k = bench_cpus_next(k, online))
 */
static inline unsigned bench_cpus_next(unsigned k, unsigned online)
{
	if (k >= online)
		return 0;
	return k * 2 > online ? online : k * 2;
}

void bench_phase_begin(const char *phase, unsigned cpus);
void bench_phase_end(u64 ops);

/*
 * Inside a phase, stop and restart the profiler's counting on this CPU only: its
 * instructions and memory accesses between bench_pause() and bench_resume() are
 * not counted (the plugin still tracks which CPU holds each line, so a transfer
 * after the resume is counted right). For a CPU's untimed work between measured
 * loops: barriers, setup, teardown. A CPU paused before bench_phase_begin()
 * stays paused in the phase (so it can be left out from its start);
 * bench_phase_end() reports whichever CPUs are paused, then unpauses them all. Nesting is not
 * counted: a second pause is a no-op, one resume undoes any number. Without the plugin each costs a
 * few stores.
 */
void bench_pause(void);
void bench_resume(void);

#endif
