/*
 * The futex system call itself: a wait on a word that no longer holds the
 * value, a wait that times out (relative, and absolute with a bitset), a wake
 * with nobody waiting, the errors for a bad or misaligned address and an
 * unknown operation, a wake that reaches a waiter, bitsets that do and do not
 * match, requeue from one word to another, and a ping-pong of many rounds
 * between two threads and a lock that 16 threads contend for, in both of which
 * a lost wake would show as a wait that times out (each wait has a generous
 * timeout, and the count of those is printed).
 *
 * userdiff: futex_calls_behave_as_on_linux
 * run: /bin/futex
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define PING_PONG_ROUNDS 20000

static long futex(atomic_uint *uaddr, int op, unsigned val, const struct timespec *ts,
		  atomic_uint *uaddr2, unsigned val3)
{
	return syscall(SYS_futex, uaddr, op, val, ts, uaddr2, val3);
}

static void show(const char *what, long ret)
{
	if (ret < 0)
		printf("%s: %s\n", what, strerrorname_np(errno));
	else
		printf("%s: %ld\n", what, ret);
}

static atomic_uint word, word2;
static atomic_int waiting;

static void *waiter(void *arg)
{
	long bitset = (long)arg;
	atomic_fetch_add(&waiting, 1);
	long r = bitset ? futex(&word, FUTEX_WAIT_BITSET_PRIVATE, 0, NULL, NULL, (unsigned)bitset)
			: futex(&word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
	return (void *)r;
}

/* Start n waiters on word (value 0) and give them time to sleep. */
static void start_waiters(pthread_t *th, int n, long bitset)
{
	atomic_store(&word, 0);
	atomic_store(&waiting, 0);
	for (int i = 0; i < n; i++)
		pthread_create(&th[i], NULL, waiter, (void *)bitset);
	while (atomic_load(&waiting) < n)
		usleep(1000);
	usleep(100000); /* from "about to wait" to asleep in the kernel */
}

static void join_all(pthread_t *th, int n)
{
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
}

/* ---- the ping-pong: turn is 0 (main's move) or 1 (the partner's) ---- */

static atomic_uint turn;
static atomic_int timeouts;

/* Wait until turn is want, sleeping on it; a timeout there means a lost wake. */
static void wait_turn(unsigned want)
{
	struct timespec ts = {.tv_sec = 5};
	unsigned now;
	while ((now = atomic_load(&turn)) != want)
		if (futex(&turn, FUTEX_WAIT_PRIVATE, now, &ts, NULL, 0) < 0 && errno == ETIMEDOUT)
			atomic_fetch_add(&timeouts, 1);
}

static void give_turn(unsigned to)
{
	atomic_store(&turn, to);
	futex(&turn, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void *partner(void *arg)
{
	(void)arg;
	for (int i = 0; i < PING_PONG_ROUNDS; i++) {
		wait_turn(1);
		give_turn(0);
	}
	return NULL;
}

/* ---- a lock of the classic three states: 0 free, 1 held, 2 held with waiters ---- */

#define LOCK_THREADS 16
#define LOCK_ROUNDS 8000
static atomic_uint lock_word;
static long lock_count;

static void lock(void)
{
	struct timespec ts = {.tv_sec = 5};
	unsigned c = 0;
	if (atomic_compare_exchange_strong(&lock_word, &c, 1))
		return;
	if (c != 2)
		c = atomic_exchange(&lock_word, 2);
	while (c != 0) {
		if (futex(&lock_word, FUTEX_WAIT_PRIVATE, 2, &ts, NULL, 0) < 0 &&
		    errno == ETIMEDOUT)
			atomic_fetch_add(&timeouts, 1);
		c = atomic_exchange(&lock_word, 2);
	}
}

static void unlock(void)
{
	if (atomic_fetch_sub(&lock_word, 1) != 1) {
		atomic_store(&lock_word, 0);
		futex(&lock_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
	}
}

static void *contender(void *arg)
{
	(void)arg;
	for (int i = 0; i < LOCK_ROUNDS; i++) {
		lock();
		lock_count++;
		unlock();
	}
	return NULL;
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	struct timespec short_wait = {.tv_nsec = 20 * 1000 * 1000};

	atomic_store(&word, 1);
	show("wait on a word that holds another value",
	     futex(&word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0));
	show("wait with a 20 ms timeout",
	     futex(&word, FUTEX_WAIT_PRIVATE, 1, &short_wait, NULL, 0));
	struct timespec now, past = {0, 0};
	clock_gettime(CLOCK_MONOTONIC, &now);
	now.tv_nsec += 20 * 1000 * 1000;
	if (now.tv_nsec >= 1000000000) {
		now.tv_sec++;
		now.tv_nsec -= 1000000000;
	}
	show("wait_bitset until 20 ms from now",
	     futex(&word, FUTEX_WAIT_BITSET_PRIVATE, 1, &now, NULL, ~0u));
	show("wait_bitset until a time past",
	     futex(&word, FUTEX_WAIT_BITSET_PRIVATE, 1, &past, NULL, ~0u));
	show("wait_bitset with bitset 0",
	     futex(&word, FUTEX_WAIT_BITSET_PRIVATE, 1, NULL, NULL, 0));
	struct timespec bad_ts = {.tv_nsec = 1000000000};
	show("wait with tv_nsec of a whole second",
	     futex(&word, FUTEX_WAIT_PRIVATE, 1, &bad_ts, NULL, 0));
	show("wake with nobody waiting", futex(&word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0));
	show("wait on a null address", futex(NULL, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0));
	show("wait on an unmapped address",
	     futex((atomic_uint *)16, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0));
	show("wait on a misaligned address",
	     futex((atomic_uint *)((char *)&word + 1), FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0));
	show("wake on a misaligned address",
	     futex((atomic_uint *)((char *)&word + 2), FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0));
	show("an unknown operation", futex(&word, 99, 0, NULL, NULL, 0));
	show("FUTEX_CLOCK_REALTIME with a plain wait",
	     futex(&word, FUTEX_WAIT | FUTEX_CLOCK_REALTIME, 1, &short_wait, NULL, 0));

	pthread_t th[4];
	start_waiters(th, 3, 0);
	show("wake 2 of 3 waiters", futex(&word, FUTEX_WAKE_PRIVATE, 2, NULL, NULL, 0));
	show("wake the rest", futex(&word, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0));
	join_all(th, 3);

	start_waiters(th, 2, 0x1);
	show("wake_bitset 0x2 of waiters with bitset 0x1",
	     futex(&word, FUTEX_WAKE_BITSET_PRIVATE, 10, NULL, NULL, 0x2));
	show("wake_bitset 0x3 of them",
	     futex(&word, FUTEX_WAKE_BITSET_PRIVATE, 10, NULL, NULL, 0x3));
	join_all(th, 2);

	start_waiters(th, 4, 0);
	show("cmp_requeue with a stale value",
	     futex(&word, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)2L, &word2, 5));
	show("cmp_requeue: wake 1, move 2",
	     futex(&word, FUTEX_CMP_REQUEUE_PRIVATE, 1, (void *)2L, &word2, 0));
	show("wake on the old word", futex(&word, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0));
	show("wake on the new word", futex(&word2, FUTEX_WAKE_PRIVATE, 10, NULL, NULL, 0));
	join_all(th, 4);

	pthread_t p;
	pthread_create(&p, NULL, partner, NULL);
	for (int i = 0; i < PING_PONG_ROUNDS; i++) {
		give_turn(1);
		wait_turn(0);
	}
	pthread_join(p, NULL);
	printf("ping-pong: %d rounds, waits that timed out: %d\n", PING_PONG_ROUNDS,
	       atomic_load(&timeouts));

	atomic_store(&timeouts, 0);
	pthread_t c[LOCK_THREADS];
	for (int i = 0; i < LOCK_THREADS; i++)
		pthread_create(&c[i], NULL, contender, NULL);
	join_all(c, LOCK_THREADS);
	printf("futex lock: %d threads x %d: count %ld, waits that timed out: %d\n", LOCK_THREADS,
	       LOCK_ROUNDS, lock_count, atomic_load(&timeouts));
	return 0;
}
