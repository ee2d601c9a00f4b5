/*
 * thp_memscale from user mode: the workload of the 2013 split-PMD-lock thread
 * (Alex Thorlton's thp_memscale) as a program, threads of one address space
 * each faulting a region of its own. "memscale THREADS MIB CYCLES PAGES":
 * THREADS threads, thread i bound to the i-th CPU the program may run on, each
 * CYCLES times maps MIB MiB at (i + 1) GiB (so every thread's region sits
 * under a PMD table of its own), writes the first byte of every 4 KiB of it,
 * and unmaps it; PAGES is "huge" (2 MiB pages where they fit) or "4k"
 * (madvise(MADV_NOHUGEPAGE) first). The threads start together at a barrier.
 * Exits 0, or 1 with a line saying what failed. The memscale benchmark
 * (tests/bench/memscale_user_bench.c) runs it, linked into the test image.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define MAX_THREADS 256
#define GIB (1UL << 30)

static unsigned long region_bytes, cycles;
static int nohuge;
static pthread_barrier_t start;
static int cpus[MAX_THREADS];
static int errors[MAX_THREADS]; /* each thread's errno where it failed */

static void *worker(void *arg)
{
	long i = (long)arg;
	const char *failed = NULL;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpus[i], &set);
	int err = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (err) {
		errors[i] = err;
		return "sched_setaffinity";
	}
	char *base = (char *)((i + 1) * GIB);
	pthread_barrier_wait(&start);
	for (unsigned long c = 0; c < cycles; c++) {
		char *p = mmap(base, region_bytes, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != base)
			failed = "mmap";
		else if (nohuge && madvise(p, region_bytes, MADV_NOHUGEPAGE))
			failed = "madvise";
		for (unsigned long off = 0; !failed && off < region_bytes; off += 4096)
			p[off] = 1;
		if (!failed && munmap(p, region_bytes))
			failed = "munmap";
		if (failed) {
			errors[i] = errno;
			return (void *)failed;
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		printf("usage: memscale THREADS MIB CYCLES huge|4k\n");
		return 2;
	}
	int threads = atoi(argv[1]);
	region_bytes = strtoul(argv[2], NULL, 0) << 20;
	cycles = strtoul(argv[3], NULL, 0);
	nohuge = !strcmp(argv[4], "4k");
	cpu_set_t allowed;
	if (sched_getaffinity(0, sizeof(allowed), &allowed) || threads < 1 ||
	    threads > CPU_COUNT(&allowed) || threads > MAX_THREADS || !region_bytes) {
		printf("memscale: %d threads on %d CPUs, %lu bytes: no\n", threads,
		       CPU_COUNT(&allowed), region_bytes);
		return 2;
	}
	for (int cpu = 0, i = 0; i < threads; cpu++)
		if (CPU_ISSET(cpu, &allowed))
			cpus[i++] = cpu;
	pthread_barrier_init(&start, NULL, threads);
	pthread_t th[MAX_THREADS];
	for (long i = 0; i < threads; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)i)) {
			printf("memscale: pthread_create failed\n");
			return 1;
		}
	int failed = 0;
	for (int i = 0; i < threads; i++) {
		void *what;
		pthread_join(th[i], &what);
		if (what) {
			printf("memscale: thread %d: %s: %s\n", i, (char *)what,
			       strerror(errors[i]));
			failed = 1;
		}
	}
	return failed;
}
