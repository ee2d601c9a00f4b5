/*
 * Threads as glibc's pthreads use them: create and join with return values,
 * a mutex and a condition variable handing work between threads, a storm of
 * 64 threads on one counter under a mutex and on one with atomics, the ids a
 * thread sees (its own tid, the process's pid), a signal sent to one thread
 * with tgkill and the per-thread signal mask, a thread's exit leaving the
 * others running, exit from a thread ending the whole process, a fault in one
 * thread killing every thread, a failed exec in a thread leaving the others,
 * fork from a threaded process (the child has only the thread that forked),
 * memory one thread maps seen by another, and a new thread keeping its
 * creator's CPU set.
 * Thread ids are printed only as how they relate.
 *
 * userdiff: pthreads_behave_as_on_linux
 * run: /bin/threads
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define STORM_THREADS 64
#define STORM_ROUNDS 2000

static void check(const char *what, int err)
{
	if (err) {
		printf("%s: %s\n", what, strerrorname_np(err));
		exit(1);
	}
}

static pid_t gettid_raw(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void show_status(const char *who, int status)
{
	if (WIFEXITED(status))
		printf("%s exited with status %d\n", who, WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		printf("%s was killed by signal %d (%s)\n", who, WTERMSIG(status),
		       sigabbrev_np(WTERMSIG(status)));
}

/* ---- create, join, return values, ids ---- */

struct ids {
	pid_t pid, tid;
};

static void *report_ids(void *arg)
{
	struct ids *ids = arg;
	ids->pid = getpid();
	ids->tid = gettid_raw();
	return (void *)(long)(ids->tid != ids->pid ? 42 : 0);
}

static void ids_and_join(void)
{
	struct ids ids[4];
	pthread_t th[4];
	for (int i = 0; i < 4; i++)
		check("pthread_create", pthread_create(&th[i], NULL, report_ids, &ids[i]));
	int distinct = 1;
	for (int i = 0; i < 4; i++) {
		void *ret;
		check("pthread_join", pthread_join(th[i], &ret));
		printf("thread %d returned %ld, same pid %s, own tid %s\n", i, (long)ret,
		       ids[i].pid == getpid() ? "yes" : "no",
		       ids[i].tid != getpid() ? "yes" : "no");
		for (int j = 0; j < i; j++)
			if (ids[j].tid == ids[i].tid)
				distinct = 0;
	}
	printf("main thread's tid is the pid: %s; thread ids distinct: %s\n",
	       gettid_raw() == getpid() ? "yes" : "no", distinct ? "yes" : "no");
}

/* ---- a mutex and a condition variable: a queue of work ---- */

#define QUEUE_ITEMS 1000
static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t q_nonempty = PTHREAD_COND_INITIALIZER, q_nonfull = PTHREAD_COND_INITIALIZER;
static int q_items[8], q_head, q_len;
static long q_sum[3];

static void *consumer(void *arg)
{
	long *sum = arg;
	for (;;) {
		pthread_mutex_lock(&q_lock);
		while (!q_len)
			pthread_cond_wait(&q_nonempty, &q_lock);
		int v = q_items[q_head];
		q_head = (q_head + 1) % 8;
		q_len--;
		pthread_cond_signal(&q_nonfull);
		pthread_mutex_unlock(&q_lock);
		if (v < 0)
			return NULL;
		*sum += v;
	}
}

static void queue_through_condvars(void)
{
	pthread_t th[3];
	for (int i = 0; i < 3; i++)
		check("pthread_create", pthread_create(&th[i], NULL, consumer, &q_sum[i]));
	for (int v = 1; v <= QUEUE_ITEMS + 3; v++) {
		pthread_mutex_lock(&q_lock);
		while (q_len == 8)
			pthread_cond_wait(&q_nonfull, &q_lock);
		q_items[(q_head + q_len) % 8] = v <= QUEUE_ITEMS ? v : -1; /* then one stop each */
		q_len++;
		pthread_cond_signal(&q_nonempty);
		pthread_mutex_unlock(&q_lock);
	}
	for (int i = 0; i < 3; i++)
		check("pthread_join", pthread_join(th[i], NULL));
	printf("condvar queue: %d items summed to %ld (expected %d)\n", QUEUE_ITEMS,
	       q_sum[0] + q_sum[1] + q_sum[2], QUEUE_ITEMS * (QUEUE_ITEMS + 1) / 2);
}

/* ---- the storm: 64 threads on one counter ---- */

static pthread_mutex_t storm_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t storm_start;
static long storm_locked;
static atomic_long storm_atomic;

static void *storm(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&storm_start); /* all at once */
	for (int i = 0; i < STORM_ROUNDS; i++) {
		pthread_mutex_lock(&storm_lock);
		storm_locked++;
		pthread_mutex_unlock(&storm_lock);
		atomic_fetch_add(&storm_atomic, 1);
		if (i % 256 == 0)
			sched_yield();
	}
	return NULL;
}

static void storm_of_threads(void)
{
	pthread_t th[STORM_THREADS];
	check("pthread_barrier_init", pthread_barrier_init(&storm_start, NULL, STORM_THREADS));
	for (int i = 0; i < STORM_THREADS; i++)
		check("pthread_create", pthread_create(&th[i], NULL, storm, NULL));
	for (int i = 0; i < STORM_THREADS; i++)
		check("pthread_join", pthread_join(th[i], NULL));
	printf("storm: %d threads x %d: under the mutex %ld, atomic %ld (expected %d)\n",
	       STORM_THREADS, STORM_ROUNDS, storm_locked, (long)storm_atomic,
	       STORM_THREADS * STORM_ROUNDS);
}

/* ---- signals to one thread ---- */

static _Atomic pid_t usr1_tid;
static void on_usr1(int sig)
{
	(void)sig;
	usr1_tid = gettid_raw();
}

static atomic_int target_ready, target_done;
static _Atomic pid_t target_tid;

static void *signal_target(void *arg)
{
	(void)arg;
	target_tid = gettid_raw();
	target_ready = 1;
	while (!target_done)
		usleep(1000);
	return NULL;
}

static void signals_to_threads(void)
{
	struct sigaction sa = {.sa_handler = on_usr1};
	sigaction(SIGUSR1, &sa, NULL);
	pthread_t th;
	check("pthread_create", pthread_create(&th, NULL, signal_target, NULL));
	while (!target_ready)
		usleep(1000);
	/* tgkill reaches that thread, whose handler runs there. */
	syscall(SYS_tgkill, getpid(), target_tid, SIGUSR1);
	while (!usr1_tid)
		usleep(1000);
	printf("tgkill: handler ran in the target thread: %s\n",
	       usr1_tid == target_tid ? "yes" : "no");
	/* The main thread blocks SIGUSR1: a kill of the process is taken by the other. */
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	usr1_tid = 0;
	kill(getpid(), SIGUSR1);
	while (!usr1_tid)
		usleep(1000);
	printf("kill with the main thread blocking it: handled by the other thread: %s\n",
	       usr1_tid == target_tid ? "yes" : "no");
	pthread_sigmask(SIG_UNBLOCK, &set, NULL);
	long r = syscall(SYS_tgkill, getpid() + 1000000, target_tid, 0);
	printf("tgkill with the wrong process: %s\n", r < 0 ? strerrorname_np(errno) : "ok");
	r = syscall(SYS_tgkill, getpid(), -1, 0);
	printf("tgkill of tid -1: %s\n", r < 0 ? strerrorname_np(errno) : "ok");
	r = syscall(SYS_tgkill, getpid(), target_tid, 0);
	printf("tgkill of a live thread with signal 0: %s\n",
	       r < 0 ? strerrorname_np(errno) : "ok");
	target_done = 1;
	check("pthread_join", pthread_join(th, NULL));
}

/* ---- how threads end ---- */

static void *sleep_forever(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

static void *exit_whole_process(void *arg)
{
	(void)arg;
	usleep(20000);
	exit(7); /* exit_group from a thread, while the others sleep */
}

static int *volatile nowhere = (int *)8;

static void *fault(void *arg)
{
	(void)arg;
	usleep(20000);
	*nowhere = 1;
	return NULL;
}

static void *main_exits_first(void *arg)
{
	(void)arg;
	usleep(50000);
	printf("a thread outlived the main thread's pthread_exit\n");
	fflush(stdout);
	return NULL; /* the last thread's exit ends the process with status 0 */
}

/* A child process runs start in a thread beside sleepers; how it ends. */
static void ending(const char *what, void *(*start)(void *), int sleepers)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		pthread_t th;
		for (int i = 0; i < sleepers; i++)
			pthread_create(&th, NULL, sleep_forever, NULL);
		pthread_create(&th, NULL, start, NULL);
		if (start == main_exits_first)
			pthread_exit(NULL);
		for (;;)
			pause();
	}
	int status;
	waitpid(pid, &status, 0);
	show_status(what, status);
}

/* ---- fork in a threaded process ---- */

static void *count_threads_after_fork(void *arg)
{
	(void)arg;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		/* Only this thread came across; it is the child's main thread now. */
		printf("fork from a thread: child's tid is its pid: %s\n",
		       gettid_raw() == getpid() ? "yes" : "no");
		fflush(stdout);
		_exit(3);
	}
	int status;
	waitpid(pid, &status, 0);
	show_status("fork from a thread: the child", status);
	return NULL;
}

/* ---- an exec that fails in a thread leaves the others running ---- */

static void *exec_missing(void *arg)
{
	(void)arg;
	char *argv[] = {"missing", NULL}, *envp[] = {NULL};
	execve("/no/such/program", argv, envp);
	printf("execve of a missing program from a thread: %s\n", strerrorname_np(errno));
	return NULL;
}

/* ---- a new thread's CPU set ---- */

static cpu_set_t bound_to;

static void *report_affinity(void *arg)
{
	(void)arg;
	cpu_set_t mine;
	check("pthread_getaffinity_np",
	      pthread_getaffinity_np(pthread_self(), sizeof(mine), &mine));
	printf("a thread made by a bound thread may run on %d CPUs, its creator's: %s\n",
	       CPU_COUNT(&mine), CPU_EQUAL(&mine, &bound_to) ? "yes" : "no");
	return NULL;
}

/* The main thread bound to its first CPU makes a thread: the new one is bound there too. */
static void thread_keeps_affinity(void)
{
	cpu_set_t all;
	check("pthread_getaffinity_np", pthread_getaffinity_np(pthread_self(), sizeof(all), &all));
	int cpu = 0;
	while (!CPU_ISSET(cpu, &all))
		cpu++;
	CPU_ZERO(&bound_to);
	CPU_SET(cpu, &bound_to);
	check("pthread_setaffinity_np",
	      pthread_setaffinity_np(pthread_self(), sizeof(bound_to), &bound_to));
	pthread_t th;
	check("pthread_create", pthread_create(&th, NULL, report_affinity, NULL));
	check("pthread_join", pthread_join(th, NULL));
	check("pthread_setaffinity_np", pthread_setaffinity_np(pthread_self(), sizeof(all), &all));
}

/* ---- memory one thread maps, another uses ---- */

static char *shared_map;
static void *map_memory(void *arg)
{
	(void)arg;
	shared_map =
	    mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	strcpy(shared_map, "written by a thread");
	return NULL;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	ids_and_join();
	queue_through_condvars();
	storm_of_threads();
	signals_to_threads();

	pthread_t th;
	check("pthread_create", pthread_create(&th, NULL, map_memory, NULL));
	check("pthread_join", pthread_join(th, NULL));
	printf("the main thread reads: %s\n", shared_map);
	munmap(shared_map, 1 << 20);

	check("pthread_create", pthread_create(&th, NULL, exec_missing, NULL));
	check("pthread_join", pthread_join(th, NULL));
	printf("the main thread goes on after it\n");

	check("pthread_create", pthread_create(&th, NULL, count_threads_after_fork, NULL));
	check("pthread_join", pthread_join(th, NULL));
	thread_keeps_affinity();

	ending("exit(7) from a thread beside 3 sleepers: the process", exit_whole_process, 3);
	ending("a fault in a thread beside 3 sleepers: the process", fault, 3);
	ending("pthread_exit of the main thread: the process", main_exits_first, 0);
	return 0;
}
