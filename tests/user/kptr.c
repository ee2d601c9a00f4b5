/*
 * Kernel addresses as system-call pointers: run by the selftest
 * syscall_kptr.kernel_addresses_are_refused_and_nothing_is_written
 * (tests/kernel/syscall_kptr_test.c), which builds its command line from the
 * system-call registry and checks the kernel memory afterwards:
 *
 *     kptr KADDR[,KADDR...] NR:MASK:NAME ...
 *
 * KADDR: mapped kernel addresses (the selftest's buffer, through the kernel
 * image and through the direct map). For each call NR (named NAME) and each
 * argument whose bit is set in MASK (the call's user pointers, from its
 * definition), the call is made with that argument set to an unmapped user
 * address and then to each kernel address, every other argument a valid one,
 * each time in a new child process so that no call sees another's effects. A
 * kernel address must give EFAULT, or what the unmapped address gave where
 * the call fails before it looks at the pointer: a call that succeeds with a
 * kernel pointer, or fails otherwise than with an unmapped one, read or wrote
 * kernel memory. Each such case is one `# kptr:` line, and a last one counts
 * what was tried; the exit status is the number of cases (at most 100).
 *
 * The valid arguments come from the table below, by call name: test input,
 * chosen so that each call reaches its copies (a file with data to read, a
 * zombie child for wait4, a zero timeout for every wait), never expected
 * results. A call without an entry gets a zeroed buffer for each pointer and 0
 * for the rest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_KADDRS 4

/* Argument values that stand for something made in the child before the call. */
enum {
	BUF = -1001, /* a zeroed 4 KiB buffer */
	FD,	     /* a 16-byte regular file, read-write */
	DIR_FD,	     /* the scratch directory, open */
	SOCK,	     /* a UDP socket */
	PATH,	     /* "." (the scratch directory) */
	LINK,	     /* "l", a symlink to the file */
	LEN,	     /* an int holding 16 */
	IOV,	     /* one iovec of 16 bytes */
	RLIM,	     /* RLIMIT_NOFILE as it is, so that setting it changes nothing */
	AFFINITY,    /* the caller's CPU set as it is */
};

struct call {
	const char *name;
	long args[6];
};

#define AT AT_FDCWD
/* clang-format off */
static const struct call calls[] = {
	{"read", {FD, BUF, 16}},
	{"write", {FD, BUF, 16}},
	{"readv", {FD, IOV, 1}},
	{"writev", {FD, IOV, 1}},
	{"pread64", {FD, BUF, 16, 0}},
	{"pwrite64", {FD, BUF, 16, 0}},
	{"openat", {AT, PATH, O_RDONLY, 0}},
	{"open", {PATH, O_RDONLY, 0}},
	{"fstat", {FD, BUF}},
	{"newfstatat", {AT, PATH, BUF, 0}},
	{"stat", {PATH, BUF}},
	{"lstat", {PATH, BUF}},
	{"statx", {AT, PATH, 0, 0x7ff, BUF}},
	{"getdents64", {DIR_FD, BUF, 4096}},
	{"pipe2", {BUF, 0}},
	{"pipe", {BUF}},
	{"getcwd", {BUF, 4096}},
	{"chdir", {PATH}},
	{"mkdirat", {AT, PATH, 0755}},
	{"mkdir", {PATH, 0755}},
	{"unlinkat", {AT, PATH, 0}},
	{"unlink", {PATH}},
	{"rmdir", {PATH}},
	{"renameat2", {AT, PATH, AT, PATH, 0}},
	{"renameat", {AT, PATH, AT, PATH}},
	{"rename", {PATH, PATH}},
	{"linkat", {AT, PATH, AT, PATH, 0}},
	{"link", {PATH, PATH}},
	{"symlinkat", {PATH, AT, PATH}},
	{"symlink", {PATH, PATH}},
	{"readlinkat", {AT, LINK, BUF, 64}},
	{"readlink", {LINK, BUF, 64}},
	{"faccessat", {AT, PATH, 0}},
	{"access", {PATH, 0}},
	{"fchmodat", {AT, PATH, 0755}},
	{"chmod", {PATH, 0755}},
	{"utimensat", {AT, PATH, BUF, 0}},
	{"futex", {BUF, 0 /* FUTEX_WAIT */, 0, BUF, BUF, 0}},
	{"poll", {BUF, 1, 0}},
	{"ppoll", {BUF, 1, BUF, BUF, 8}},
	{"set_tid_address", {BUF}},
	{"getrandom", {BUF, 16, 0}},
	{"getrlimit", {RLIMIT_NOFILE, BUF}},
	{"setrlimit", {RLIMIT_NOFILE, RLIM}},
	{"prlimit64", {0, RLIMIT_NOFILE, RLIM, BUF}},
	{"sched_getaffinity", {0, 128, BUF}},
	{"sched_setaffinity", {0, 128, AFFINITY}},
	{"rt_sigaction", {SIGUSR1, BUF, BUF, 8}},
	{"rt_sigprocmask", {SIG_BLOCK, BUF, BUF, 8}},
	{"rt_sigpending", {BUF, 8}},
	{"wait4", {-1, BUF, 0, BUF}}, /* with a child that has exited, to collect */
	{"bind", {SOCK, BUF, 16}},
	{"connect", {SOCK, BUF, 16}},
	{"sendto", {SOCK, BUF, 4, MSG_DONTWAIT, BUF, 16}},
	{"recvfrom", {SOCK, BUF, 16, MSG_DONTWAIT, BUF, LEN}},
	{"getsockname", {SOCK, BUF, LEN}},
	{"getpeername", {SOCK, BUF, LEN}},
	{"accept", {SOCK, BUF, LEN}},
	{"accept4", {SOCK, BUF, LEN, 0}},
	{"clock_gettime", {CLOCK_MONOTONIC, BUF}},
	{"clock_nanosleep", {CLOCK_MONOTONIC, 0, BUF, BUF}},
};
/* clang-format on */

static const struct call *call_named(const char *name)
{
	static struct call plain; /* no entry: zeros, which resolve() makes buf for a pointer */
	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (!strcmp(calls[i].name, name))
			return &calls[i];
	plain = (struct call){.name = name};
	return &plain;
}

static char buf[4096], iov_buf[16];
static struct iovec iov = {iov_buf, sizeof(iov_buf)};
static int len = 16;
static struct rlimit rlim;
static unsigned long affinity[16];

/* What a stand-in argument is in this child; a pointer argument left 0 by the table is buf. */
static long resolve(long v, bool ptr)
{
	switch (v) {
	case BUF:
		return (long)buf;
	case FD:
		return open("f", O_RDWR);
	case DIR_FD:
		return open(".", O_RDONLY | O_DIRECTORY);
	case SOCK:
		return socket(AF_INET, SOCK_DGRAM, 0);
	case PATH:
		return (long)".";
	case LINK:
		return (long)"l";
	case LEN:
		return (long)&len;
	case IOV:
		return (long)&iov;
	case RLIM:
		getrlimit(RLIMIT_NOFILE, &rlim);
		return (long)&rlim;
	case AFFINITY:
		syscall(SYS_sched_getaffinity, 0, sizeof(affinity), affinity);
		return (long)affinity;
	default:
		return ptr && !v ? (long)buf : v;
	}
}

/* nr made in a new child with argument bad set to addr: its result, or -errno. */
static long call_in_child(long nr, const struct call *c, unsigned mask, int bad, long addr)
{
	int p[2];
	if (pipe(p))
		return -1000;
	pid_t pid = fork();
	if (pid == 0) {
		long a[6], r;
		if (!strcmp(c->name, "wait4")) {
			if (fork() == 0)
				_exit(0);
			struct timespec ts = {0, 20 * 1000 * 1000};
			nanosleep(&ts, NULL); /* long enough for it to be a zombie */
		}
		for (int i = 0; i < 6; i++)
			a[i] = i == bad ? addr : resolve(c->args[i], mask & (1u << i));
		r = syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
		if (r < 0)
			r = -errno;
		if (write(p[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	long r = -1000;
	close(p[1]);
	if (pid < 0 || read(p[0], &r, sizeof(r)) != sizeof(r))
		r = -1000; /* the child died before it could say */
	close(p[0]);
	waitpid(pid, NULL, 0);
	return r;
}

int main(int argc, char **argv)
{
	long kaddr[MAX_KADDRS];
	int nk = 0, failures = 0, pointers = 0;
	if (argc < 2) {
		fprintf(stderr, "usage: kptr KADDR[,KADDR...] NR:MASK:NAME ...\n");
		return 100;
	}
	for (char *s = argv[1]; *s && nk < MAX_KADDRS; s += *s == ',')
		kaddr[nk++] = (long)strtoul(s, &s, 16);

	/* The scratch directory every call works in, with a file and a link in it. */
	mkdir("/kptr", 0755);
	if (chdir("/kptr"))
		return 100;
	int fd = open("f", O_CREAT | O_RDWR | O_TRUNC, 0644);
	if (fd < 0 || write(fd, "0123456789abcdef", 16) != 16)
		return 100;
	close(fd);
	symlink("f", "l");
	/* An address no mapping covers: a page mapped and given back. */
	char *hole = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (hole == MAP_FAILED || munmap(hole, 4096))
		return 100;

	for (int i = 2; i < argc; i++) {
		long nr;
		unsigned mask;
		char name[32];
		if (sscanf(argv[i], "%ld:%x:%31s", &nr, &mask, name) != 3)
			return 100;
		const struct call *c = call_named(name);
		for (int bad = 0; bad < 6; bad++) {
			if (!(mask & (1u << bad)))
				continue;
			long unmapped = call_in_child(nr, c, mask, bad, (long)hole);
			pointers++;
			for (int k = 0; k < nk; k++) {
				long r = call_in_child(nr, c, mask, bad, kaddr[k]);
				if (r == -EFAULT || (r < 0 && r == unmapped) ||
				    (r >= 0 && unmapped >= 0))
					continue;
				printf("# kptr: %s argument %d = %#lx gave %ld, an unmapped "
				       "address %ld\n",
				       name, bad, kaddr[k], r, unmapped);
				failures++;
			}
		}
	}
	printf("# kptr: %d calls, %d pointer arguments, each given %d kernel addresses: %d not "
	       "refused\n",
	       argc - 2, pointers, nk, failures);
	return failures > 100 ? 100 : failures;
}
