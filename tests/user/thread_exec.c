/*
 * execve from a thread that is not the main one, while three others sleep:
 * the others are gone when the new program starts (tgkill finds none of their
 * tids), the program that runs is the process (its pid the same as before,
 * and its only thread's tid that pid), and nothing of the old threads is left
 * behind (the runner compares the kernel's thread, memory and slab counts
 * before and after); the exec carries 1 MiB of arguments, which arrive whole.
 * Run on Grace only: the exec's target is this program in
 * Grace's /bin, which the host does not have.
 *
 * alone: exec_from_a_thread_leaves_one_thread_and_nothing_behind
 * run: /bin/thread_exec
 * prints: thread_exec: from a thread of 5: others gone: yes, is the process: yes, 1 MiB args: yes
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SLEEPERS 3
/* After the ids: BIG_ARGS strings of BIG_LEN bytes with their NUL, 1 MiB in all. */
#define BIG_ARGS 8
#define BIG_LEN (128 * 1024)
#define FIXED_ARGS (3 + SLEEPERS)

static char pid_arg[16], tid_args[SLEEPERS][16];
static atomic_int asleep;

static char big_args[BIG_ARGS][BIG_LEN];

/* The i-th big argument's j-th byte. */
static char big_byte(int i, int j)
{
	return j == BIG_LEN - 1 ? 0 : 'a' + (i * 7 + j) % 26;
}

static pid_t gettid_raw(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static void *sleeper(void *arg)
{
	snprintf(tid_args[(long)arg], sizeof(tid_args[0]), "%d", gettid_raw());
	atomic_fetch_add(&asleep, 1);
	for (;;)
		pause();
	return NULL;
}

static void *exec_self(void *arg)
{
	(void)arg;
	while (atomic_load(&asleep) < SLEEPERS)
		usleep(1000);
	usleep(20000); /* the sleepers asleep in the kernel */
	/* The new program is told the pid and the sleepers' tids. */
	char *argv[FIXED_ARGS + BIG_ARGS + 1] = {"/bin/thread_exec", "after", pid_arg};
	for (int i = 0; i < SLEEPERS; i++)
		argv[3 + i] = tid_args[i];
	for (int i = 0; i < BIG_ARGS; i++) {
		for (int j = 0; j < BIG_LEN; j++)
			big_args[i][j] = big_byte(i, j);
		argv[FIXED_ARGS + i] = big_args[i];
	}
	char *envp[] = {NULL};
	execve(argv[0], argv, envp);
	printf("thread_exec: execve: %s\n", strerrorname_np(errno));
	exit(1);
}

int main(int argc, char **argv)
{
	if (argc == FIXED_ARGS + BIG_ARGS && !strcmp(argv[1], "after")) {
		int gone = 1;
		for (int i = 0; i < SLEEPERS; i++)
			if (syscall(SYS_tgkill, getpid(), atoi(argv[3 + i]), 0) == 0 ||
			    errno != ESRCH)
				gone = 0;
		int same = getpid() == atoi(argv[2]) && gettid_raw() == getpid();
		int intact = 1;
		for (int i = 0; i < BIG_ARGS; i++)
			for (int j = 0; j < BIG_LEN; j++)
				if (argv[FIXED_ARGS + i][j] != big_byte(i, j))
					intact = 0;
		printf(
		    "thread_exec: from a thread of 5: others gone: %s, is the process: %s, 1 MiB "
		    "args: %s\n",
		    gone ? "yes" : "no", same ? "yes" : "no", intact ? "yes" : "no");
		return gone && same && intact ? 0 : 1;
	}
	snprintf(pid_arg, sizeof(pid_arg), "%d", getpid());
	pthread_t th;
	for (long i = 0; i < SLEEPERS; i++)
		pthread_create(&th, NULL, sleeper, (void *)i);
	pthread_create(&th, NULL, exec_self, NULL);
	for (;;)
		pause();
}
