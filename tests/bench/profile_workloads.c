/*
 * Known workloads for checking the QEMU profiling plugin (tests/run --plugin-tests
 * runs this under the plugin and checks what it reports; alone it just runs):
 *
 *   calls     one CPU calls profile_known_function() PROFILE_CALLS times: the
 *             function must top the profile with exactly PROFILE_CALLS times the
 *             instructions of its (straight-line) body;
 *   pingpong  two CPUs pass a flag on one cache line back and forth: a fixed
 *             number of transfers per round trip (4 under the plugin's rule);
 *   percpu    every CPU increments its own padded counter: about 0 transfers;
 *   calls_paused  like calls, 2 * PROFILE_CALLS calls with bench_pause() and
 *             bench_resume() around every other one: again exactly PROFILE_CALLS
 *             times the body;
 *   paused    CPU a writes two lines; CPU b writes both, one of them first while
 *             paused and then again after resuming: one transfer on
 *             profile_counted_line (b's write) and none on profile_paused_line
 *             (b's uncounted write made the line b's, so its counted one moves
 *             nothing).
 */
#include <grace/bench.h>
#include <grace/percpu.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/time.h>
#include <asm/cpu.h>

#define PROFILE_CALLS 2000
#define PROFILE_KNOWN_LOOPS 64 /* makes the function the hottest code of the phase */
#define PROFILE_ROUND_TRIPS 500
#define PROFILE_PERCPU_INCS 20000 /* amortizes handing the work to each CPU's run thread */

static volatile u64 profile_sink;

/*
 * Straight-line code (the loop is unrolled whole, no branch but the return), so
 * every call executes each of its instructions once: tests/run counts them in the
 * disassembly and expects exactly PROFILE_CALLS times that many. Aligned so that
 * the body (about 320 bytes) never spans two pages: QEMU 7.2 ends a translation
 * block at an instruction that straddles a page and translates it again, and the
 * plugin then counts that instruction twice per call.
 */
u64 __noinline __aligned(512) profile_known_function(u64 x)
{
#pragma GCC unroll 64
	for (int i = 0; i < PROFILE_KNOWN_LOOPS; i++)
		x = x * 3 + (u64)i;
	profile_sink = x;
	return x;
}

static struct {
	u32 flag __cacheline_aligned; /* the ping-pong line: even = CPU a's turn, odd = b's */
	unsigned a, b;
	struct smp_sync start;
} pp;

static void pingpong_worker(void *arg)
{
	unsigned me = smp_processor_id();
	if (me != pp.a && me != pp.b)
		return;
	u32 parity = me == pp.a ? 0 : 1;
	smp_sync_wait(&pp.start, 2);
	/* Marked from inside, so the window holds the hand-overs and not the fan-out. */
	if (me == pp.a)
		bench_phase_begin("pingpong", 2);
	for (u32 i = 0; i < PROFILE_ROUND_TRIPS; i++) {
		u32 want = 2 * i + parity;
		/* Pairs with the other CPU's smp_store_release() below: its turn is over. */
		while (smp_load_acquire(&pp.flag) != want)
			cpu_relax();
		smp_store_release(&pp.flag, want + 1);
	}
	if (me == pp.a)
		bench_phase_end(PROFILE_ROUND_TRIPS);
}

struct padded_counter {
	u64 n;
} __cacheline_aligned;

static struct padded_counter percpu_counters[MAX_CPUS];
static struct smp_sync percpu_start;

static void percpu_worker(void *arg)
{
	struct padded_counter *c = &percpu_counters[smp_processor_id()];
	smp_sync_wait(&percpu_start, num_online_cpus());
	for (int i = 0; i < PROFILE_PERCPU_INCS; i++)
		WRITE_ONCE(c->n, c->n + 1);
}

/* Run bound to one CPU (smp_run_on(1)): pauses are per CPU, so no migration in the window. */
static void calls_paused_worker(void *arg)
{
	u64 x = 1;
	bench_phase_begin("calls_paused", 1);
	for (int i = 0; i < 2 * PROFILE_CALLS; i++) {
		if (i & 1)
			bench_pause();
		x = profile_known_function(x);
		if (i & 1)
			bench_resume();
	}
	bench_phase_end(PROFILE_CALLS);
}

struct profile_line {
	u64 v;
} __cacheline_aligned;

/* Two data symbols of their own, so the plugin's data table names each. */
static struct profile_line profile_counted_line, profile_paused_line;
static struct smp_sync paused_start, paused_wrote, paused_done;
static atomic_t paused_ticket;

static void paused_worker(void *arg)
{
	bool a = atomic_inc_return(&paused_ticket) == 1; /* the first to come is CPU a */
	smp_sync_wait(&paused_start, 2);
	if (a) {
		bench_phase_begin("paused", 2);
		/* The window's first accesses to these lines: no transfer. */
		WRITE_ONCE(profile_counted_line.v, 1);
		WRITE_ONCE(profile_paused_line.v, 1);
	}
	smp_sync_wait(&paused_wrote, 2);
	if (!a) {
		bench_pause();
		WRITE_ONCE(profile_paused_line.v, 2); /* a transfer, not counted */
		bench_resume();
		WRITE_ONCE(profile_paused_line.v, 3);  /* b's own line now: none */
		WRITE_ONCE(profile_counted_line.v, 2); /* a's line: one */
	}
	smp_sync_wait(&paused_done, 2);
	if (a)
		bench_phase_end(1);
}

BENCH(profile_selftest)
{
	u64 x = 1;
	bench_phase_begin("calls", 1);
	for (int i = 0; i < PROFILE_CALLS; i++)
		x = profile_known_function(x);
	bench_phase_end(PROFILE_CALLS);
	bench_report("profile_selftest", 1, "phase=calls calls=%u", PROFILE_CALLS);

	if (num_online_cpus() >= 2) {
		struct cpumask pair;
		smp_pick_cpus(2, &pair);
		pp.a = smp_processor_id();
		cpumask_clear_cpu(&pair, pp.a);
		pp.b = cpumask_next(&pair, 0);
		smp_run_on(2, pingpong_worker, NULL);
		bench_report("profile_selftest", 2, "phase=pingpong round_trips=%u",
			     PROFILE_ROUND_TRIPS);
	}

	smp_run_on(1, calls_paused_worker, NULL);
	bench_report("profile_selftest", 1, "phase=calls_paused calls=%u paused=%u", PROFILE_CALLS,
		     PROFILE_CALLS);

	if (num_online_cpus() >= 2) {
		smp_run_on(2, paused_worker, NULL);
		bench_report("profile_selftest", 2, "phase=paused");
	}

	unsigned n = num_online_cpus();
	bench_phase_begin("percpu", n);
	smp_run_all(percpu_worker, NULL);
	bench_phase_end((u64)n * PROFILE_PERCPU_INCS);
	bench_report("profile_selftest", n, "phase=percpu increments=%llu",
		     (u64)n * PROFILE_PERCPU_INCS);
}
