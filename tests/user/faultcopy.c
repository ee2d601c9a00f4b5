/*
 * System calls whose user buffers are not mapped yet: `faultcopy` writes a
 * megabyte from fresh anonymous memory to a file and reads it back into fresh
 * memory, forty times, so that the kernel's copy takes a page fault on nearly
 * every page it touches, from inside the system call, and the timer interrupts
 * some of those faults while they wait or allocate. That is three traps deep
 * on the thread's kernel stack (the system call, the fault, the interrupt),
 * all legitimate: a kernel that counted the system call's own trap as nesting
 * took the third for a broken stack and panicked. The bytes must come back as
 * they went out.
 *
 * A thread alone on its CPU gets no tick on a tickless kernel, so a child spins
 * on the same CPU throughout: the scheduler's tick then cuts their slices, and
 * some of its interrupts land inside the copies' faults.
 *
 * userdiff: user_copies_fault_in_pages_as_interrupts_arrive
 * run: /bin/faultcopy
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHUNK (1 << 20)
#define ROUNDS 40
#define PAGE 4096

/* A megabyte nobody has touched: every page of it faults on first use. */
static unsigned char *fresh(void)
{
	void *p = mmap(NULL, CHUNK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

/*
 * This process and a child spinning beside it, both on the first CPU this
 * process may use; the child's pid, or -1.
 */
static pid_t spin_beside(void)
{
	cpu_set_t set;
	int cpu = 0;
	if (sched_getaffinity(0, sizeof(set), &set) < 0) {
		perror("sched_getaffinity");
		return -1;
	}
	while (!CPU_ISSET(cpu, &set))
		cpu++;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0) {
		perror("sched_setaffinity");
		return -1;
	}
	pid_t parent = getpid();
	pid_t pid = fork(); /* the child keeps the affinity */
	if (pid == 0) {
		while (getppid() == parent) /* until killed, or orphaned by an early return */
			;
		_exit(0);
	}
	if (pid < 0)
		perror("fork");
	return pid;
}

int main(void)
{
	pid_t spinner = spin_beside();
	if (spinner < 0)
		return 1;
	/* A file of its own under /tmp, made first: Grace's root has none. */
	char path[] = "/tmp/faultcopy.XXXXXX";
	if (mkdir("/tmp", 01777) < 0 && errno != EEXIST) {
		perror("mkdir /tmp");
		return 1;
	}
	int fd = mkstemp(path);
	if (fd < 0) {
		perror("mkstemp");
		return 1;
	}
	for (int r = 0; r < ROUNDS; r++) {
		/* Odd rounds write a page-by-page pattern, so only half the source faults. */
		unsigned char *out = fresh(), *in = fresh();
		if (!out || !in) {
			perror("mmap");
			return 1;
		}
		if (r % 2)
			for (size_t i = 0; i < CHUNK; i += 2 * PAGE)
				out[i] = (unsigned char)(i / PAGE + r);
		ssize_t n = pwrite(fd, out, CHUNK, 0);
		ssize_t m = n == CHUNK ? pread(fd, in, CHUNK, 0) : -1;
		if (n != CHUNK || m != CHUNK) {
			printf("round %d: pwrite %zd, pread %zd of %d bytes\n", r, n, m, CHUNK);
			return 1;
		}
		if (memcmp(in, out, CHUNK) != 0) {
			printf("round %d: the bytes read back differ\n", r);
			return 1;
		}
		munmap(out, CHUNK);
		munmap(in, CHUNK);
	}
	close(fd);
	unlink(path);
	kill(spinner, SIGKILL);
	waitpid(spinner, NULL, 0);
	printf("%d rounds of %d KiB out of and into unmapped pages: ok\n", ROUNDS, CHUNK >> 10);
	return 0;
}
