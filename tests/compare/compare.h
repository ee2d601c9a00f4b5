/*
 * The workloads that make compare runs on Grace and on Linux: one static
 * program, the same file for both kernels, that runs each workload with one
 * worker bound to each CPU for a fixed time and prints Grace's bench: lines.
 *
 * A workload is a loop body (op) and an optional per-worker setup; the harness
 * (harness.c) starts the workers, lets them warm up, times them and sums what
 * they did. Workers are processes unless the workload needs one address space
 * (threads), and report through a pipe, so nothing depends on memory shared
 * between processes.
 */
#ifndef COMPARE_H
#define COMPARE_H

#include <stdbool.h>
#include <stdint.h>

#define MAX_WORKERS 256

struct worker {
	unsigned index;	 /* 0 .. workers - 1 */
	unsigned cpu;	 /* the CPU it is bound to */
	unsigned cpus;	 /* CPUs taking part */
	void *state;	 /* the setup's, for op */
	bool counts;	 /* its ops are the workload's; false for a helper (an echoer) */
	bool done;	 /* op ended the workload early (the other side hung up) */
	char error[120]; /* why it stopped, or empty */
};

struct workload {
	const char *name;
	const char *variant; /* "key=value" printed after the name, or NULL */
	bool threads;	     /* workers share one address space */
	/* Workers for cpus CPUs (NULL: one per CPU). */
	unsigned (*workers)(unsigned cpus);
	/* Before the warm-up, in the worker; nonzero and w->error set on failure. */
	int (*setup)(struct worker *w);
	/* n operations; how many it did (fewer only with w->error set). */
	uint64_t (*op)(struct worker *w, uint64_t n);
	/* After timing, in the worker. */
	void (*teardown)(struct worker *w);
	/* Before any worker starts, in the parent (files, sockets); nonzero on failure. */
	int (*prepare)(unsigned cpus);
};

extern const struct workload workloads[];
extern const unsigned nr_workloads;

/* How long each phase runs, and the warm-up before it. */
struct timing {
	uint64_t warmup_ns;
	uint64_t phase_ns;
};

/*
 * Run one workload on cpus CPUs and print its bench: line, or a
 * "bench: error" line; 0 or -1.
 */
int run_workload(const struct workload *wl, unsigned cpus, const struct timing *t,
		 const char *kernel);

/* Print a failure of a system call into w->error; returns -1. */
int worker_fail(struct worker *w, const char *what);

#endif
