/*
 * The timed phase: start one worker per CPU (processes, or threads of one
 * process), bind each, let each set up, release them together with the same
 * warm-up and phase ends on CLOCK_MONOTONIC, and sum what each did.
 *
 * A worker calls its workload's op in batches and reads the clock between
 * batches, never inside one: without a vDSO (Grace has none) clock_gettime is
 * a system call, so the warm-up grows the batch until one takes about
 * BATCH_NS, and the phase's clock reads are then a few hundred a second.
 * Results come back through a pipe, one record per worker in one write, which
 * a pipe keeps whole (under PIPE_BUF).
 *
 * On Grace the parent also marks the phase for the QEMU profiler through
 * /dev/bench_mark ("begin <phase> <cpus>" when the warm-up ends, "end <ops>"
 * once every worker has reported), so make compare can give instructions and
 * cache-line transfers per operation; on Linux there is no such file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "compare.h"

#define BATCH_NS 1000000ULL	/* a batch of ops between clock reads */
#define BATCH_MAX (1ULL << 24)

struct release {
	uint64_t warmup_end_ns; /* counting starts */
	uint64_t phase_end_ns;	/* counting stops at the first batch to end past it */
};

struct result {
	uint64_t ops;
	uint64_t ns;
	int counts; /* its ops are the workload's (not a helper's, like a ping-pong echoer) */
	char error[sizeof(((struct worker *)0)->error)];
};

struct phase {
	const struct workload *wl;
	struct worker w[MAX_WORKERS];
	unsigned nr;
	int ready[2]; /* workers -> parent: one byte each, set up and bound */
	int go[2];    /* parent -> workers: one struct release each */
	int done[2];  /* workers -> parent: one struct result each */
};

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

int worker_fail(struct worker *w, const char *what)
{
	snprintf(w->error, sizeof(w->error), "%s: %s", what, strerrordesc_np(errno));
	return -1;
}

static int bind_to(unsigned cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* Warm up, growing the batch; then count until the phase ends. */
static void worker_loop(const struct workload *wl, struct worker *w, const struct release *r,
			struct result *res)
{
	uint64_t batch = 1, t;
	while (!w->done && !w->error[0] && (t = now_ns()) < r->warmup_end_ns) {
		wl->op(w, batch);
		if (now_ns() - t < BATCH_NS && batch < BATCH_MAX)
			batch *= 2;
	}
	if (w->done || w->error[0])
		return;
	/* At least one batch, even where the warm-up's last one ran past the phase. */
	uint64_t start = now_ns(), end;
	do {
		res->ops += wl->op(w, batch);
		end = now_ns();
	} while (!w->done && !w->error[0] && end < r->phase_end_ns);
	res->ns = end - start;
}

static void worker_run(struct phase *ph, struct worker *w)
{
	const struct workload *wl = ph->wl;
	struct result res = {0};
	struct release r;
	char byte = 1;

	w->counts = true;
	if (bind_to(w->cpu))
		worker_fail(w, "sched_setaffinity");
	else if (wl->setup)
		wl->setup(w);
	if (write(ph->ready[1], &byte, 1) != 1 && !w->error[0])
		worker_fail(w, "write to the ready pipe");
	if (read(ph->go[0], &r, sizeof(r)) != sizeof(r) && !w->error[0])
		worker_fail(w, "read from the go pipe");
	if (!w->error[0])
		worker_loop(wl, w, &r, &res);
	if (wl->teardown) /* even after a failure: an echoer waits for its pinger's goodbye */
		wl->teardown(w);
	res.counts = w->counts;
	memcpy(res.error, w->error, sizeof(res.error));
	if (write(ph->done[1], &res, sizeof(res)) != sizeof(res))
		perror("compare: write to the done pipe");
}

static void *worker_thread(void *arg)
{
	struct worker *w = arg;
	struct phase *ph = w->state;
	w->state = NULL;
	worker_run(ph, w);
	return NULL;
}

/* Start every worker; how many started (the rest are not waited for). */
static unsigned phase_start(struct phase *ph, pthread_t *threads)
{
	for (unsigned i = 0; i < ph->nr; i++) {
		struct worker *w = &ph->w[i];
		if (ph->wl->threads) {
			w->state = ph;
			errno = pthread_create(&threads[i], NULL, worker_thread, w);
			if (errno)
				return i;
			continue;
		}
		pid_t pid = fork();
		if (pid < 0)
			return i;
		if (pid == 0) {
			worker_run(ph, w);
			_exit(0);
		}
	}
	return ph->nr;
}

static void phase_reap(struct phase *ph, pthread_t *threads, unsigned started)
{
	for (unsigned i = 0; i < started; i++)
		if (ph->wl->threads)
			pthread_join(threads[i], NULL);
		else
			wait(NULL);
}

static void close_pair(int fd[2])
{
	close(fd[0]);
	close(fd[1]);
}

/* The CPUs this program may run on, in order, into cpu[]; how many. */
static unsigned allowed_cpus(unsigned *cpu)
{
	cpu_set_t set;
	unsigned n = 0;
	if (sched_getaffinity(0, sizeof(set), &set))
		return 0;
	for (unsigned c = 0; c < CPU_SETSIZE && n < MAX_WORKERS; c++)
		if (CPU_ISSET(c, &set))
			cpu[n++] = c;
	return n;
}

static void print_line(const struct workload *wl, unsigned cpus, const char *kernel,
		       const char *what)
{
	struct utsname u;
	unsigned cpu[MAX_WORKERS];
	uname(&u);
	printf("bench: %scompare arch=%s online=%u cpus=%u kernel=%s workload=%s%s%s %s\n",
	       strncmp(what, "error", 5) ? "" : "error ", u.machine, allowed_cpus(cpu), cpus,
	       kernel, wl->name, wl->variant ? " " : "", wl->variant ? wl->variant : "",
	       strncmp(what, "error", 5) ? what : what + 6);
	fflush(stdout);
}

/* Send the profiler one message, if this kernel takes them. */
static void profiler_mark(const char *fmt, ...)
{
	static int fd = -2;
	char msg[128];
	va_list ap;
	if (fd == -2)
		fd = open("/dev/bench_mark", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	va_start(ap, fmt);
	int len = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (len > 0 && (size_t)len < sizeof(msg) && write(fd, msg, (size_t)len) != len)
		perror("compare: /dev/bench_mark");
}

static void sleep_until(uint64_t ns)
{
	uint64_t now = now_ns();
	if (now >= ns)
		return;
	struct timespec ts = {(time_t)((ns - now) / 1000000000ULL), (long)((ns - now) % 1000000000ULL)};
	nanosleep(&ts, NULL);
}

/* The workers' results into one line: ops/s summed, and per CPU. */
static int phase_collect(struct phase *ph, unsigned started, unsigned cpus, const char *kernel)
{
	double total = 0, lo = 0, hi = 0;
	uint64_t ops = 0;
	unsigned counted = 0;
	char line[256] = "";
	for (unsigned i = 0; i < started; i++) {
		struct result res;
		if (read(ph->done[0], &res, sizeof(res)) != sizeof(res)) {
			snprintf(line, sizeof(line), "error a worker ended without a result");
			break;
		}
		if (res.error[0] && !line[0])
			snprintf(line, sizeof(line), "error worker: %s", res.error);
		if (!res.counts || !res.ns)
			continue;
		ops += res.ops;
		double rate = (double)res.ops * 1e9 / (double)res.ns;
		total += rate;
		lo = counted ? (rate < lo ? rate : lo) : rate;
		hi = counted ? (rate > hi ? rate : hi) : rate;
		counted++;
	}
	profiler_mark("end %llu", (unsigned long long)ops);
	if (!line[0] && !counted)
		snprintf(line, sizeof(line), "error no worker counted anything");
	if (!line[0])
		snprintf(line, sizeof(line), "ops_per_sec=%.0f per_cpu=%.0f min_worker=%.0f max_worker=%.0f",
			 total, total / cpus, lo, hi);
	print_line(ph->wl, cpus, kernel, line);
	return strncmp(line, "error", 5) ? 0 : -1;
}

int run_workload(const struct workload *wl, unsigned cpus, const struct timing *t,
		 const char *kernel)
{
	static struct phase ph;
	static pthread_t threads[MAX_WORKERS];
	unsigned cpu[MAX_WORKERS], online = allowed_cpus(cpu);
	char why[160];

	if (!cpus || cpus > online) {
		snprintf(why, sizeof(why), "error cpus=%u but %u CPUs to run on", cpus, online);
		print_line(wl, cpus, kernel, why);
		return -1;
	}
	memset(&ph, 0, sizeof(ph));
	ph.wl = wl;
	ph.nr = wl->workers ? wl->workers(cpus) : cpus;
	for (unsigned i = 0; i < ph.nr; i++)
		ph.w[i] = (struct worker){.index = i, .cpu = cpu[i % cpus], .cpus = cpus};
	if (pipe(ph.ready) || pipe(ph.go) || pipe(ph.done)) {
		snprintf(why, sizeof(why), "error pipe: %s", strerrordesc_np(errno));
		print_line(wl, cpus, kernel, why);
		return -1;
	}
	if (wl->prepare && wl->prepare(cpus)) {
		snprintf(why, sizeof(why), "error prepare: %s", strerrordesc_np(errno));
		print_line(wl, cpus, kernel, why);
		return -1;
	}
	fflush(stdout); /* nothing buffered for a forked worker to print again */
	unsigned started = phase_start(&ph, threads);
	char byte;
	for (unsigned i = 0; i < started; i++)
		if (read(ph.ready[0], &byte, 1) != 1)
			break;
	uint64_t now = now_ns();
	struct release r = {now + t->warmup_ns, now + t->warmup_ns + t->phase_ns};
	for (unsigned i = 0; i < started; i++)
		if (write(ph.go[1], &r, sizeof(r)) != sizeof(r))
			break;
	int ret = -1;
	if (started == ph.nr) {
		sleep_until(r.warmup_end_ns);
		profiler_mark("begin compare/%s%s%s/cpus=%u %u", wl->name, wl->variant ? "/" : "",
			      wl->variant ? wl->variant : "", cpus, cpus);
		ret = phase_collect(&ph, started, cpus, kernel);
	} else {
		snprintf(why, sizeof(why), "error starting worker %u: %s", started,
			 strerrordesc_np(errno));
		print_line(wl, cpus, kernel, why);
	}
	phase_reap(&ph, threads, started);
	close_pair(ph.ready);
	close_pair(ph.go);
	close_pair(ph.done);
	return ret;
}
