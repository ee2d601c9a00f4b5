/*
 * A system-call fuzzer, run on Grace only: children make system calls with
 * random numbers (0 to FUZZ_NR_MAX, every number, whether Grace has a handler
 * or not) and random arguments: small and huge integers, flag words, valid and
 * invalid descriptors, pointers to a scratch buffer, into a read-only page, a
 * PROT_NONE page, unmapped and kernel memory and past the end of the address
 * space, paths in a directory of the child's own, strings that run into an
 * unreadable page, sizes from 0 to 2^64 - 1. The kernel must answer each one
 * and stay up; the test around it (tests/harness/userdiff.py) checks that afterwards
 * its free memory, slab objects and descriptor counts are where they were.
 *
 * What is left out is only what would end a child or block it forever, or
 * change what the rest of the boot sees (never_called, fix_args): exit and
 * execve, signals sent or handlers that jump to junk, sleeps and waits without
 * a short timeout, blocking descriptors (every pipe, socket and event
 * descriptor is made non-blocking, and stays so), locks that wait, mounts,
 * the clock, reboot, persistent IPC objects, resource limits, and changes to
 * the child's own memory: the calls that map, unmap or protect memory work in
 * a playground region with PROT_NONE pages around it, and the buffers the
 * kernel writes are the scratch buffer, guarded the same way, and structures
 * (iovecs, msghdrs, sigactions) refilled before each call, so a call can never
 * reach the fuzzer's own code, stack or state. The calls are made with the
 * syscall instruction itself, not through libc, which would keep errno in TLS.
 *
 * Beside each child's fuzzing thread, a second thread works on the same
 * address space at once (memory_thread): random mmap, munmap, mprotect and
 * madvise calls in a region of its own, reads of /dev/zero into it and writes
 * of it to /dev/null (faults in the kernel's copies), futex calls on its words,
 * so that faults, unmaps, protections and the fuzzing thread's own memory calls
 * race in one mm. It names nothing but its region and two descriptors the
 * fuzzed calls cannot reach, so the strings the fuzzing thread reads, and the
 * dentries they leave, stay the same every run.
 *
 * A child killed by SIGPIPE (a write to a pipe whose reader it closed: Linux
 * kills it so too, and Grace has no sigaction yet to ignore it) is replaced by
 * one with the next seed for the calls it had left; every thousand calls a
 * child sends one byte to the parent on a descriptor no fuzzed argument can
 * name, so the count survives it. A child killed by any other signal, or that
 * exits otherwise, fails the run. The parent removes the children's
 * directories and prints one line, the same every run.
 *
 * Its parts are in tests/user/fuzz/: the calls and how they are made (calls.h),
 * their arguments (args.h), and the memory thread (memory_thread.h).
 *
 *   fuzz [SEED [CALLS]]    (default: seed 1, 100000 calls)
 *
 * fuzz: fuzzer_leaves_the_kernel_alive_and_its_memory_where_it_was
 * run: /bin/fuzz
 * prints: fuzz: 100000 system calls with random numbers and arguments, 4 processes of 2 threads
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Linux's numbers reach 462 (mseal, 6.10); a little past Debian 12's headers' last. */
#define FUZZ_NR_MAX 460
/* Processes fuzzing at a time: one per CPU of the userdiff boot (SMP=4). */
#define FUZZ_CHILDREN 4
#define FUZZ_CALLS_DEFAULT 100000
/* Calls a child reports at a time, one byte on the report pipe. */
#define REPORT_EVERY 1000
/* The report pipe's end in each child: an fd argument equal to it is moved off it. */
#define REPORT_FD 200
/* The memory thread's /dev/zero and /dev/null, moved off like the report pipe. */
#define MEMORY_ZERO_FD 201
#define MEMORY_NULL_FD 202
/* The memory thread: its region (2 MiB aligned, so that 2 MiB pages come and go
 * too) and its calls, one for every MEMORY_CALL_EVERY of the fuzzing thread's. */
#define MEMORY_REGION (8UL << 20)
#define MEMORY_CALL_EVERY 4
/* Children killed by SIGPIPE that may be replaced before the run gives up. */
#define MAX_REPLACEMENTS 64
/* The scratch buffer is refilled with random bytes this often: it collects what
 * the kernel wrote, addresses among it (ARCH_GET_FS, get_robust_list). */
#define REFILL_EVERY 1024

#define PAGE 4096UL
#define SCRATCH_PAGES 16
#define RO_PAGES 2
#define PLAY_PAGES 256
/* Bytes that sendfile, splice, copy_file_range and fallocate may move or allocate
 * in one call: /dev/zero has no end, and gigabytes of it would take the run's minute. */
#define MOVE_CAP (1L << 20)
/* The prepared vectors: iovecs and mmsghdrs a call can be given, no more. */
#define IOVS 4
#define MMSGS 2
/* Counts above IOV_MAX are refused before the vector is read; keep them. */
#define IOV_MAX_LINUX 1024

/* Calls Linux has that Debian 12's headers do not name yet. */
#define NR_FUTEX_WAIT 455 /* Linux 6.7: blocks like futex's FUTEX_WAIT */
#if defined(__x86_64__)
#define NR_URETPROBE 335 /* Linux 6.11: SIGSEGV unless called from the uretprobe trampoline */
#define NR_UPROBE 336	 /* Linux 6.16: likewise from the uprobe trampoline */
#endif

/* x86_64's arch_prctl codes (asm/prctl.h) that would move the TLS the child's libc uses. */
#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003

/* Kernel and non-canonical addresses on both arches: never user memory. */
static const unsigned long bad_addrs[] = {
    0xffff800000000000UL, 0xffffffff81000000UL, 0xffffffc000000000UL,
    0x0000800000000000UL, 0x8000000000000000UL, -PAGE,
};

/* clang-format off */
/* Sizes: none, a byte, around a page and a pipe's worth, past 2^31 and 2^32, all ones. */
static const long sizes[] = {
	0, 1, 2, 7, 8, 16, 100, 255, 256, 4095, 4096, 4097, 65536, 65537,
	1L << 20, 1L << 31, 1L << 32, 1L << 40, -1, -4096, 0x7fffffffffffffffL,
};

/* Integers: small ones, the edges of int and unsigned int, and past them. */
static const long ints[] = {
	0, 1, -1, 2, 3, 4, 7, 8, 16, 64, 255, 256, 4096,
	0x7fffffff, 0x80000000L, 0xffffffffL, 1L << 32, -4096, 1L << 63,
};
/* clang-format on */

#include "fuzz/calls.h"
#include "fuzz/args.h"

static void die(const char *what)
{
	printf("fuzz: %s: %s\n", what, strerrorname_np(errno));
	exit(1);
}

/*
 * One mapping, carved with mprotect: a PROT_NONE page, the scratch buffer, a PROT_NONE
 * page, the read-only pages (the paths; a string at their end runs into the next page),
 * a PROT_NONE page, the playground, a PROT_NONE page. A copy into the scratch buffer of
 * any size stops at its guards, and a mapping call's length cannot leave the playground.
 */
static void make_regions(const char *dir)
{
	size_t pages = 1 + SCRATCH_PAGES + 1 + RO_PAGES + 1 + PLAY_PAGES + 1;
	char *base =
	    mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		die("mmap");
	scratch = base + PAGE;
	scratch_end = scratch + SCRATCH_PAGES * PAGE;
	guard = scratch_end;
	ro = guard + PAGE;
	ro_end = ro + RO_PAGES * PAGE;
	play = ro_end + PAGE;
	play_end = play + PLAY_PAGES * PAGE;

	memset(path_long_name, 'n', sizeof(path_long_name) - 1);
	for (size_t i = 0; i + 1 < sizeof(path_too_long); i++)
		path_too_long[i] = i % 2 ? '/' : 'd';
	const char *names[] = {"f0", "f1",	  "d0",	 "d0/f",	 "l0",
			       "l1", "l2",	  "new", "d0/new",	 "",
			       ".",  "missing/x", NULL,	 path_long_name, path_too_long};
	char absolute[128];
	snprintf(absolute, sizeof(absolute), "%s/f0", dir);
	char *p = ro;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *s = names[i] ? names[i] : absolute;
		size_t n = strlen(s) + 1;
		memcpy(p, s, n);
		paths[nr_paths++] = p;
		p += n;
	}
	memset(ro_end - 16, 'a', 16);
	if (mprotect(base, PAGE, PROT_NONE) || mprotect(guard, PAGE, PROT_NONE) ||
	    mprotect(ro, RO_PAGES * PAGE, PROT_READ) || mprotect(ro_end, PAGE, PROT_NONE) ||
	    mprotect(play_end, PAGE, PROT_NONE))
		die("mprotect");
	refill_scratch();
}

/* The child's directory: files, a directory, symbolic links good, dangling and to a directory. */
static void make_dir(const char *dir)
{
	static char data[10000];
	memset(data, 'z', sizeof(data));
	if (mkdir(dir, 0755) < 0 || chdir(dir) < 0)
		die(dir);
	int fd = open("f0", O_CREAT | O_RDWR, 0644);
	if (fd < 0 || write(fd, data, sizeof(data)) != sizeof(data))
		die("f0");
	fds[nr_fds++] = fd;
	if ((fd = open("f1", O_CREAT | O_WRONLY, 0644)) < 0)
		die("f1");
	fds[nr_fds++] = fd;
	if (mkdir("d0", 0755) < 0 || close(open("d0/f", O_CREAT | O_WRONLY, 0644)) < 0)
		die("d0");
	if ((fd = open("d0", O_RDONLY | O_DIRECTORY)) < 0)
		die("d0");
	fds[nr_fds++] = fd;
	if (symlink("f0", "l0") || symlink("nowhere", "l1") || symlink("d0", "l2"))
		die("symlink");
	if ((fd = open("/dev/zero", O_RDWR)) < 0)
		die("/dev/zero");
	fds[nr_fds++] = fd;
	int pipefd[2];
	if (pipe2(pipefd, O_NONBLOCK) < 0)
		die("pipe2");
	fds[nr_fds++] = pipefd[0];
	fds[nr_fds++] = pipefd[1];
	fds[nr_fds++] = 0; /* /dev/null, below */
}

/* ---- the memory thread ---- */

#include "fuzz/memory_thread.h"

/* A child's life: set up, make `calls` calls, report each thousand, exit. Never returns. */
static void child(uint64_t seed, long calls, int report_fd)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/tmp/fuzz-%llu", (unsigned long long)seed);
	rng = seed * 0x9e3779b97f4a7c15ULL | 1;
	if (dup2(report_fd, REPORT_FD) < 0)
		die("dup2");
	/* Nothing else of the parent's: a blocking pipe end would block a read for good. */
	for (int fd = 3; fd < REPORT_FD; fd++)
		close(fd);
	/* When there are signals, a write to a pipe no one reads returns EPIPE instead. */
	signal(SIGPIPE, SIG_IGN);
	make_dir(dir);
	make_regions(dir);
	/* Last, so that a failure above is printed: no fuzzed call may reach the console. */
	int null = open("/dev/null", O_RDWR);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 || dup2(null, 2) < 0)
		die("/dev/null");
	close(null);
	first_brk = (unsigned long)sbrk(0);
	/* The memory thread's region and descriptors, out of the fuzzed calls' reach. */
	char *region = mmap(NULL, MEMORY_REGION * 2, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		die("mmap");
	static struct memory_thread memory;
	memory = (struct memory_thread){
	    .rng = seed * 0x2545f4914f6cdd1dULL | 1,
	    .calls = calls / MEMORY_CALL_EVERY,
	    .region = (char *)(((unsigned long)region + MEMORY_REGION - 1) & ~(MEMORY_REGION - 1))};
	if (dup2(open("/dev/zero", O_RDONLY), MEMORY_ZERO_FD) < 0 ||
	    dup2(open("/dev/null", O_WRONLY), MEMORY_NULL_FD) < 0)
		die("/dev/zero");
	pthread_t memory_tid;
	if (pthread_create(&memory_tid, NULL, memory_thread, &memory))
		die("pthread_create");
	for (size_t i = 0; i < sizeof(never) / sizeof(never[0]); i++)
		if (never[i] >= 0 && never[i] <= FUZZ_NR_MAX)
			never_called[never[i]] = true;
	for (size_t i = 0; i < sizeof(varying) / sizeof(varying[0]); i++)
		if (varying[i] >= 0 && varying[i] <= FUZZ_NR_MAX)
			varies[varying[i]] = true;

	long done = 0;
	while (done < calls) {
		long nr = rnd() % (FUZZ_NR_MAX + 1);
		if (never_called[nr])
			continue;
		long a[6];
		for (int i = 0; i < 6; i++)
			a[i] = pick_arg();
		fix_args(&nr, a);
		raw_syscall(nr, a);
		undo_varying(nr, a);
		if (++done % REPORT_EVERY == 0) {
			long one[6] = {REPORT_FD, (long)"", 1};
			raw_syscall(SYS_write, one);
		}
		if (done % REFILL_EVERY == 0)
			refill_scratch();
	}
	pthread_join(memory_tid, NULL);
	long status[6] = {0};
	raw_syscall(SYS_exit_group, status);
	__builtin_unreachable();
}

/* Remove a tree by its path, a link not followed; false (and a line said) if anything stays. */
static bool remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return errno == ENOENT;
	if (!S_ISDIR(st.st_mode)) {
		if (unlink(path) == 0)
			return true;
		printf("fuzz: unlink %s: %s\n", path, strerrorname_np(errno));
		return false;
	}
	chmod(path, 0700); /* a child may have taken the permissions away */
	DIR *d = opendir(path);
	if (!d) {
		printf("fuzz: opendir %s: %s\n", path, strerrorname_np(errno));
		return false;
	}
	bool ok = true;
	struct dirent *e;
	char sub[4096];
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if ((size_t)snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name) >= sizeof(sub)) {
			printf("fuzz: a name under %s is too long to remove\n", path);
			ok = false;
			continue;
		}
		ok &= remove_tree(sub);
	}
	closedir(d);
	if (ok && rmdir(path) < 0) {
		printf("fuzz: rmdir %s: %s\n", path, strerrorname_np(errno));
		ok = false;
	}
	return ok;
}

struct slot {
	pid_t pid;
	uint64_t seed;
	long calls; /* asked of this child */
	int report; /* the parent's end of its report pipe */
};

static bool start(struct slot *s, uint64_t seed, long calls)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/tmp/fuzz-%llu", (unsigned long long)seed);
	if (!remove_tree(dir)) /* left by a run that did not finish */
		return false;
	int p[2];
	if (pipe(p) < 0) {
		printf("fuzz: pipe: %s\n", strerrorname_np(errno));
		return false;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		printf("fuzz: fork: %s\n", strerrorname_np(errno));
		return false;
	}
	if (pid == 0) {
		close(p[0]);
		child(seed, calls, p[1]);
	}
	close(p[1]);
	*s = (struct slot){pid, seed, calls, p[0]};
	return true;
}

/* The calls a finished child reported: a byte for each thousand. */
static long reported(int fd)
{
	char buf[256];
	long n, bytes = 0;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		bytes += n;
	close(fd);
	return bytes * REPORT_EVERY;
}

int main(int argc, char **argv)
{
	uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 0) : 1;
	long total = argc > 2 ? strtol(argv[2], NULL, 0) : FUZZ_CALLS_DEFAULT;
	long per_child = total / FUZZ_CHILDREN / REPORT_EVERY * REPORT_EVERY;
	if (argc > 3 || per_child <= 0) {
		printf("usage: fuzz [SEED [CALLS]] (CALLS at least %d)\n",
		       FUZZ_CHILDREN * REPORT_EVERY);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (mkdir("/tmp", 01777) < 0 && errno != EEXIST)
		die("mkdir /tmp");

	struct slot slots[FUZZ_CHILDREN];
	uint64_t next_seed = seed;
	int running = 0, replaced = 0;
	long made = 0;
	bool ok = true;
	char dir[64];
	for (int i = 0; i < FUZZ_CHILDREN && ok; i++, running++)
		ok = start(&slots[i], next_seed++, per_child);
	while (running > 0) {
		int status;
		pid_t pid = wait(&status);
		if (pid < 0)
			die("wait");
		int i = 0;
		while (i < FUZZ_CHILDREN && slots[i].pid != pid)
			i++;
		if (i == FUZZ_CHILDREN)
			continue;
		struct slot *s = &slots[i];
		long calls = reported(s->report);
		made += calls;
		snprintf(dir, sizeof(dir), "/tmp/fuzz-%llu", (unsigned long long)s->seed);
		ok &= remove_tree(dir);
		s->pid = 0;
		running--;
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE && calls < s->calls && ok &&
		    replaced < MAX_REPLACEMENTS) {
			replaced++;
			if (start(s, next_seed++, s->calls - calls))
				running++;
			else
				ok = false;
			continue;
		}
		if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0 && calls == s->calls)) {
			printf("fuzz: the child with seed %llu made %ld of its %ld calls and ",
			       (unsigned long long)s->seed, calls, s->calls);
			if (WIFSIGNALED(status))
				printf("was killed by signal %d (%s)\n", WTERMSIG(status),
				       sigabbrev_np(WTERMSIG(status)) ?: "?");
			else
				printf("exited with status %d\n", WEXITSTATUS(status));
			ok = false;
		}
	}
	if (!ok)
		return 1;
	printf("fuzz: %ld system calls with random numbers and arguments, %d processes of 2 "
	       "threads\n",
	       made, FUZZ_CHILDREN);
	return 0;
}