/*
 * The workloads, each the shape of a seed experiment or of will-it-scale's
 * test of the same name, counted in the operation its author counted:
 *
 *   null_syscall            getppid (glibc caches nothing for it): one round trip
 *   open_close dir=...      close(open(path)): dir=separate, each worker's file in a
 *                           directory of its own (will-it-scale's open2); dir=shared,
 *                           all in one directory (open1)
 *   creat_unlink dir=...    open(O_CREAT | O_TRUNC), close, unlink: one file's life
 *   stat file=...           stat of a four-component path, each worker's own file
 *                           or one file all stat
 *   memscale pages=...      threads of one address space, each mapping 16 MiB at an
 *                           address of its own, writing every 4 KiB and unmapping
 *                           (thp_memscale): one op is 2 MiB (pages=huge) or, after
 *                           madvise(MADV_NOHUGEPAGE), 4 KiB (pages=4k) made present
 *   page_fault1             processes mapping 128 MiB, writing every 4 KiB and
 *                           unmapping: one op is one 4 KiB page written first
 *   pipe_pingpong           pairs of processes on two CPUs (both on one with one CPU)
 *                           bouncing a byte: one op is a round trip
 *   udp_send                64-byte datagrams to a local port nobody reads (the
 *                           kernel drops them once its queue is full): one sendto
 *
 * Files live under /cmp, made by the parent before the workers start.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compare.h"

#define MIB (1UL << 20)
#define GIB (1UL << 30)
#define MEMSCALE_BYTES (16 * MIB)
#define PAGE_FAULT1_BYTES (128 * MIB)
#define UDP_PAYLOAD 64

/* A directory or file that may already be there from an earlier workload. */
static int make(const char *path, bool dir)
{
	if (dir)
		return mkdir(path, 0755) && errno != EEXIST ? -1 : 0;
	int fd = open(path, O_CREAT | O_WRONLY, 0644);
	return fd < 0 ? -1 : close(fd);
}

static int make_all(const char *const *paths, unsigned n, bool dir)
{
	for (unsigned i = 0; i < n; i++)
		if (make(paths[i], dir))
			return -1;
	return 0;
}

/* A worker's own path, from a printf pattern taking its index. */
static int worker_path(struct worker *w, const char *pattern)
{
	char *path;
	if (asprintf(&path, pattern, w->index) < 0)
		return worker_fail(w, "asprintf");
	w->state = path;
	return 0;
}

static void free_state(struct worker *w)
{
	free(w->state);
	w->state = NULL;
}

static uint64_t null_op(struct worker *w, uint64_t n)
{
	(void)w;
	for (uint64_t i = 0; i < n; i++)
		syscall(SYS_getppid);
	return n;
}

/* Each worker's directory (separate) or the one all share, and a file in it. */
static int files_prepare(const char *top, const char *file, unsigned workers)
{
	const char *tops[] = {"/cmp", top};
	char path[64];
	if (make_all(tops, 2, true))
		return -1;
	for (unsigned i = 0; i < workers; i++) {
		snprintf(path, sizeof(path), "%s/%u", top, i);
		if (make(path, true))
			return -1;
		if (!file)
			continue;
		snprintf(path, sizeof(path), "%s/%u/%s", top, i, file);
		if (make(path, false))
			return -1;
	}
	snprintf(path, sizeof(path), "%s/same", top);
	if (make(path, true))
		return -1;
	for (unsigned i = 0; file && i < workers; i++) {
		snprintf(path, sizeof(path), "%s/same/%s%u", top, file, i);
		if (make(path, false))
			return -1;
	}
	return 0;
}

static int open_close_prepare(unsigned cpus)
{
	return files_prepare("/cmp/oc", "f", cpus);
}

static int open_separate_setup(struct worker *w)
{
	return worker_path(w, "/cmp/oc/%u/f");
}

static int open_shared_setup(struct worker *w)
{
	return worker_path(w, "/cmp/oc/same/f%u");
}

static uint64_t open_close_op(struct worker *w, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		int fd = open(w->state, O_RDONLY);
		if (fd < 0) {
			worker_fail(w, "open");
			return i;
		}
		close(fd);
	}
	return n;
}

static int creat_unlink_prepare(unsigned cpus)
{
	return files_prepare("/cmp/cu", NULL, cpus);
}

static int creat_separate_setup(struct worker *w)
{
	return worker_path(w, "/cmp/cu/%u/c");
}

static int creat_shared_setup(struct worker *w)
{
	return worker_path(w, "/cmp/cu/same/c%u");
}

static uint64_t creat_unlink_op(struct worker *w, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		int fd = open(w->state, O_CREAT | O_TRUNC | O_WRONLY, 0644);
		if (fd < 0) {
			worker_fail(w, "open O_CREAT");
			return i;
		}
		close(fd);
		if (unlink(w->state)) {
			worker_fail(w, "unlink");
			return i;
		}
	}
	return n;
}

static int stat_prepare(unsigned cpus)
{
	const char *dirs[] = {"/cmp", "/cmp/a", "/cmp/a/b"};
	char path[64];
	if (make_all(dirs, 3, true) || make("/cmp/a/b/shared", false))
		return -1;
	for (unsigned i = 0; i < cpus; i++) {
		snprintf(path, sizeof(path), "/cmp/a/b/f%u", i);
		if (make(path, false))
			return -1;
	}
	return 0;
}

static int stat_own_setup(struct worker *w)
{
	return worker_path(w, "/cmp/a/b/f%u");
}

static int stat_shared_setup(struct worker *w)
{
	return worker_path(w, "/cmp/a/b/shared");
}

static uint64_t stat_op(struct worker *w, uint64_t n)
{
	struct stat st;
	for (uint64_t i = 0; i < n; i++)
		if (stat(w->state, &st)) {
			worker_fail(w, "stat");
			return i;
		}
	return n;
}

/* Map bytes at base (or anywhere), write every 4 KiB, unmap; 0 or -1 with w->error set. */
static int touch_region(struct worker *w, char *base, unsigned long bytes, bool nohuge)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | (base ? MAP_FIXED_NOREPLACE : 0);
	char *p = mmap(base, bytes, PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED || (base && p != base))
		return worker_fail(w, "mmap");
	if (nohuge && madvise(p, bytes, MADV_NOHUGEPAGE))
		return worker_fail(w, "madvise");
	for (unsigned long off = 0; off < bytes; off += 4096)
		p[off] = 1;
	return munmap(p, bytes) ? worker_fail(w, "munmap") : 0;
}

/* Thread i's region sits at (i + 1) GiB, under page tables no other thread's touches. */
static uint64_t memscale_op(struct worker *w, uint64_t n, bool nohuge)
{
	char *base = (char *)((w->index + 1) * GIB);
	for (uint64_t i = 0; i < n; i++)
		if (touch_region(w, base, MEMSCALE_BYTES, nohuge))
			return i * MEMSCALE_BYTES / (nohuge ? 4096 : 2 * MIB);
	return n * MEMSCALE_BYTES / (nohuge ? 4096 : 2 * MIB);
}

static uint64_t memscale_huge_op(struct worker *w, uint64_t n)
{
	return memscale_op(w, n, false);
}

static uint64_t memscale_4k_op(struct worker *w, uint64_t n)
{
	return memscale_op(w, n, true);
}

static uint64_t page_fault1_op(struct worker *w, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (touch_region(w, NULL, PAGE_FAULT1_BYTES, false))
			return i * (PAGE_FAULT1_BYTES / 4096);
	return n * (PAGE_FAULT1_BYTES / 4096);
}

/* Pair p: pipes[p][0] carries ping -> pong, pipes[p][1] pong -> ping. */
static int pipes[MAX_WORKERS / 2][2][2];
static unsigned nr_pipes;

static unsigned pingpong_workers(unsigned cpus)
{
	return cpus < 2 ? 2 : cpus / 2 * 2;
}

static int pingpong_prepare(unsigned cpus)
{
	for (unsigned p = 0; p < nr_pipes; p++)
		for (int d = 0; d < 2; d++) {
			close(pipes[p][d][0]);
			close(pipes[p][d][1]);
		}
	nr_pipes = 0;
	for (unsigned p = 0; p < pingpong_workers(cpus) / 2; p++, nr_pipes++)
		if (pipe(pipes[p][0]) || pipe(pipes[p][1]))
			return -1;
	return 0;
}

static int pingpong_setup(struct worker *w)
{
	w->counts = w->index % 2 == 0;
	return 0;
}

static uint64_t pingpong_op(struct worker *w, uint64_t n)
{
	int (*fd)[2] = pipes[w->index / 2];
	char c = 'p';
	if (w->index % 2) { /* the echoer: until the pinger says it is done */
		while (read(fd[0][0], &c, 1) == 1 && c != 'q')
			if (write(fd[1][1], &c, 1) != 1)
				break;
		w->done = true;
		return 0;
	}
	for (uint64_t i = 0; i < n; i++)
		if (write(fd[0][1], &c, 1) != 1 || read(fd[1][0], &c, 1) != 1) {
			worker_fail(w, "pipe");
			return i;
		}
	return n;
}

static void pingpong_teardown(struct worker *w)
{
	char q = 'q';
	if (w->index % 2 == 0 && write(pipes[w->index / 2][0][1], &q, 1) != 1)
		worker_fail(w, "write q");
}

static int udp_receiver = -1;
static struct sockaddr_in udp_to;

static int udp_prepare(unsigned cpus)
{
	(void)cpus;
	socklen_t len = sizeof(udp_to);
	if (udp_receiver >= 0)
		return 0;
	udp_to = (struct sockaddr_in){.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	udp_receiver = socket(AF_INET, SOCK_DGRAM, 0);
	if (udp_receiver < 0 || bind(udp_receiver, (struct sockaddr *)&udp_to, sizeof(udp_to)) ||
	    getsockname(udp_receiver, (struct sockaddr *)&udp_to, &len))
		return -1;
	return 0;
}

static int udp_setup(struct worker *w)
{
	int *fd = malloc(sizeof(*fd));
	if (!fd)
		return worker_fail(w, "malloc");
	*fd = socket(AF_INET, SOCK_DGRAM, 0);
	w->state = fd;
	return *fd < 0 ? worker_fail(w, "socket") : 0;
}

static uint64_t udp_op(struct worker *w, uint64_t n)
{
	char payload[UDP_PAYLOAD] = {0};
	int fd = *(int *)w->state;
	for (uint64_t i = 0; i < n; i++)
		if (sendto(fd, payload, sizeof(payload), 0, (struct sockaddr *)&udp_to,
			   sizeof(udp_to)) != sizeof(payload)) {
			worker_fail(w, "sendto");
			return i;
		}
	return n;
}

static void udp_teardown(struct worker *w)
{
	if (w->state)
		close(*(int *)w->state);
	free_state(w);
}

const struct workload workloads[] = {
    {.name = "null_syscall", .op = null_op},
    {.name = "open_close", .variant = "dir=separate", .prepare = open_close_prepare,
     .setup = open_separate_setup, .op = open_close_op, .teardown = free_state},
    {.name = "open_close", .variant = "dir=shared", .prepare = open_close_prepare,
     .setup = open_shared_setup, .op = open_close_op, .teardown = free_state},
    {.name = "creat_unlink", .variant = "dir=separate", .prepare = creat_unlink_prepare,
     .setup = creat_separate_setup, .op = creat_unlink_op, .teardown = free_state},
    {.name = "creat_unlink", .variant = "dir=shared", .prepare = creat_unlink_prepare,
     .setup = creat_shared_setup, .op = creat_unlink_op, .teardown = free_state},
    {.name = "stat", .variant = "file=own", .prepare = stat_prepare, .setup = stat_own_setup,
     .op = stat_op, .teardown = free_state},
    {.name = "stat", .variant = "file=shared", .prepare = stat_prepare,
     .setup = stat_shared_setup, .op = stat_op, .teardown = free_state},
    {.name = "memscale", .variant = "pages=huge", .threads = true, .op = memscale_huge_op},
    {.name = "memscale", .variant = "pages=4k", .threads = true, .op = memscale_4k_op},
    {.name = "page_fault1", .op = page_fault1_op},
    {.name = "pipe_pingpong", .workers = pingpong_workers, .prepare = pingpong_prepare,
     .setup = pingpong_setup, .op = pingpong_op, .teardown = pingpong_teardown},
    {.name = "udp_send", .prepare = udp_prepare, .setup = udp_setup, .op = udp_op,
     .teardown = udp_teardown},
};
const unsigned nr_workloads = sizeof(workloads) / sizeof(workloads[0]);
