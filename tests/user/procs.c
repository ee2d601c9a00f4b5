/*
 * Processes and pipes as a program sees them: fork's two returns and the ids
 * each side sees, wait4's statuses for a child that exits, one killed by
 * SIGSEGV and one by SIGPIPE (a write to a pipe no one reads), WNOHANG and
 * ECHILD; bytes through a pipe in order, end of file once the last writer
 * closes, a child's stdout moved onto a pipe with dup2, pipe2's O_CLOEXEC and
 * fcntl's view of the ends; and execve's refusals of what is not a program
 * (made under /tmp, which the host must not mount noexec: Linux would answer
 * EACCES where it answers ENOEXEC); /proc/self/exe, read and run; on x86_64,
 * vfork's child running on its parent's memory while the parent waits, and
 * posix_spawn's report of a program that is not there, which comes back
 * through that shared memory; a forked child keeping its parent's CPU set.
 * Pids are printed only as how they relate (the child's parent is us).
 *
 * userdiff: processes_and_pipes_behave_as_on_linux
 * run: /bin/procs
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static void ok(const char *what, long ret)
{
	printf("%s: %s\n", what, ret < 0 ? strerrorname_np(errno) : "ok");
}

/* A wait status as words: how the child ended. */
static void show_status(const char *who, int status)
{
	if (WIFEXITED(status))
		printf("%s exited with status %d\n", who, WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		printf("%s was killed by signal %d (%s)\n", who, WTERMSIG(status),
		       sigabbrev_np(WTERMSIG(status)));
	else
		printf("%s ended otherwise: %#x\n", who, status);
}

/* Fork a child that runs fn and exits with its value; wait for it and print how it ended. */
static void child_ends(const char *who, int (*fn)(void))
{
	pid_t pid = fork();
	if (pid < 0) {
		printf("fork: %s\n", strerrorname_np(errno));
		return;
	}
	if (pid == 0)
		_exit(fn());
	int status;
	pid_t got = waitpid(pid, &status, 0);
	if (got != pid) {
		printf("waitpid for %s: %s\n", who,
		       got < 0 ? strerrorname_np(errno) : "another pid");
		return;
	}
	show_status(who, status);
}

static pid_t parent_pid;

static int exits_3(void)
{
	return 3;
}

static int checks_its_ids(void)
{
	return (getppid() == parent_pid) | (getpid() != parent_pid) << 1;
}

static int faults(void)
{
	*(volatile int *)0 = 1;
	return 0;
}

static int writes_to_a_closed_pipe(void)
{
	int p[2];
	if (pipe(p) < 0)
		return 100;
	close(p[0]);
	write(p[1], "x", 1);
	return 101; /* SIGPIPE should have ended us */
}

static void procs_fork_wait(void)
{
	parent_pid = getpid();
	child_ends("a child returning 3", exits_3);
	/* Bit 0: its parent is us; bit 1: its pid is not ours. */
	child_ends("a child checking its ids", checks_its_ids);
	child_ends("a child writing through NULL", faults);
	child_ends("a child writing to a pipe with no reader", writes_to_a_closed_pipe);

	pid_t kids[3];
	for (int i = 0; i < 3; i++) {
		kids[i] = fork();
		if (kids[i] == 0)
			_exit(10 + i);
	}
	int sum = 0, found = 0;
	for (int i = 0; i < 3; i++) {
		int status;
		pid_t pid = wait(&status);
		for (int k = 0; k < 3; k++)
			found += pid == kids[k];
		sum += WIFEXITED(status) ? WEXITSTATUS(status) : 1000;
	}
	printf("three children reaped by wait: statuses sum to %d, each pid one of ours: %s\n", sum,
	       found == 3 ? "yes" : "no");
	int status;
	ok("wait with no children left", wait(&status));
	ok("waitpid for a pid not our child", waitpid(1, &status, 0));
}

static void procs_pipes(void)
{
	int p[2];
	char buf[64];

	ok("pipe", pipe(p));
	printf("fcntl F_GETFL: read end O_RDONLY: %s, write end O_WRONLY: %s\n",
	       (fcntl(p[0], F_GETFL) & O_ACCMODE) == O_RDONLY ? "yes" : "no",
	       (fcntl(p[1], F_GETFL) & O_ACCMODE) == O_WRONLY ? "yes" : "no");
	printf("fcntl F_GETFD without O_CLOEXEC: %d\n", fcntl(p[0], F_GETFD));
	printf("write to the pipe: %zd\n", write(p[1], "hello through a pipe\n", 21));
	ssize_t n = read(p[0], buf, sizeof(buf));
	printf("read from the pipe: %zd: %.*s", n, (int)(n > 0 ? n : 0), buf);
	printf("read from the write end: %s\n",
	       read(p[1], buf, 1) < 0 ? strerrorname_np(errno) : "succeeded");
	printf("write to the read end: %s\n",
	       write(p[0], "x", 1) < 0 ? strerrorname_np(errno) : "succeeded");
	printf("lseek on a pipe: %s\n",
	       lseek(p[0], 0, SEEK_SET) < 0 ? strerrorname_np(errno) : "succeeded");

	/* A child blocks reading until the parent writes; WNOHANG sees it still running. */
	pid_t pid = fork();
	if (pid == 0) {
		close(p[1]);
		ssize_t got = read(p[0], buf, sizeof(buf));
		_exit(got == 5 && !memcmp(buf, "ping\n", 5) ? 0 : 1);
	}
	int status;
	printf("waitpid WNOHANG while the child reads: %d\n", waitpid(pid, &status, WNOHANG));
	write(p[1], "ping\n", 5);
	waitpid(pid, &status, 0);
	show_status("the reading child", status);

	/* End of file only once every write end is closed: ours, and the child's copy. */
	pid = fork();
	if (pid == 0) {
		close(p[0]);
		write(p[1], "from the child\n", 15);
		_exit(0);
	}
	close(p[1]);
	size_t total = 0;
	while ((n = read(p[0], buf, sizeof(buf))) > 0)
		total += n;
	printf("read until end of file: %zu bytes, then %zd\n", total, n);
	waitpid(pid, &status, 0);
	close(p[0]);

	/* A child's stdout moved onto a pipe: what it prints comes back here. */
	ok("pipe2 O_CLOEXEC", pipe2(p, O_CLOEXEC));
	printf("fcntl F_GETFD with O_CLOEXEC: %d\n", fcntl(p[0], F_GETFD));
	ok("fcntl F_SETFD 0", fcntl(p[0], F_SETFD, 0));
	printf("fcntl F_GETFD after: %d\n", fcntl(p[0], F_GETFD));
	int high = fcntl(p[0], F_DUPFD, 10);
	printf("fcntl F_DUPFD 10 gives a descriptor of 10 or more: %s\n",
	       high >= 10 ? "yes" : "no");
	close(high);
	pid = fork();
	if (pid == 0) {
		if (dup2(p[1], 1) != 1)
			_exit(1);
		printf("printed by the child onto the pipe\n");
		fflush(stdout);
		_exit(0);
	}
	close(p[1]);
	n = read(p[0], buf, sizeof(buf));
	printf("the child's stdout, read from the pipe: %.*s", (int)(n > 0 ? n : 0), buf);
	waitpid(pid, &status, 0);
	show_status("the child with its stdout on the pipe", status);
	close(p[0]);
	ok("dup2 onto itself", dup2(1, 1));
	ok("dup2 of a closed descriptor", dup2(p[0], 20));
	ok("fcntl of a closed descriptor", fcntl(p[0], F_GETFD));
}

static void procs_execve(void)
{
	char *argv[] = {"x", NULL}, *envp[] = {NULL};

	if (mkdir("/tmp", 01777) < 0 && errno != EEXIST)
		printf("mkdir /tmp: %s\n", strerrorname_np(errno));
	char dir[] = "/tmp/procs.XXXXXX";
	if (!mkdtemp(dir)) {
		printf("mkdtemp: %s\n", strerrorname_np(errno));
		return;
	}
	char text[64], plain[64];
	snprintf(text, sizeof(text), "%s/text", dir);
	snprintf(plain, sizeof(plain), "%s/plain", dir);
	int fd = open(text, O_CREAT | O_WRONLY, 0755);
	write(fd, "not a program\n", 14);
	close(fd);
	close(open(plain, O_CREAT | O_WRONLY, 0644));

	ok("execve of a missing file", execve("/nonexistent", argv, envp));
	ok("execve of a directory", execve(dir, argv, envp));
	ok("execve of a text file with x bits", execve(text, argv, envp));
	ok("execve of a file without x bits", execve(plain, argv, envp));
	snprintf(plain + strlen(plain), sizeof(plain) - strlen(plain), "/x");
	ok("execve of a path through a file", execve(plain, argv, envp));
	plain[strlen(plain) - 2] = 0;
	unlink(text);
	unlink(plain);
	rmdir(dir);
}

/*
 * Only where the oracle is a Linux kernel: qemu-user, riscv64's oracle, runs
 * vfork as fork (its child gets a copy of the memory), so there the child's
 * store and posix_spawn's error would not come back on "Linux".
 */
#ifdef __x86_64__
static void procs_vfork(void)
{
	static volatile int seen_by_parent;
	fflush(stdout);
	pid_t pid = vfork();
	if (pid == 0) {
		seen_by_parent = 42; /* the parent's memory: it is asleep until _exit */
		_exit(5);
	}
	int status;
	waitpid(pid, &status, 0);
	printf("vfork: the child's store reached the parent: %s\n",
	       seen_by_parent == 42 ? "yes" : "no");
	show_status("vfork: the child", status);

	char *argv[] = {"missing", NULL};
	int err = posix_spawn(&pid, "/no/such/program", NULL, NULL, argv, NULL);
	printf("posix_spawn of a missing program: %s\n", err ? strerrorname_np(err) : "ok");
	if (!err)
		waitpid(pid, &status, 0);
}
#endif

/* Where the copy of this program that unlinks itself is made (x86_64). */
#define COPY "/tmp/procs.copy"

/* /proc/self/exe names this program: readlink finds it, and execve runs it again (x86_64). */
static void procs_self_exe(void)
{
	char target[4096];
	ssize_t n = readlink("/proc/self/exe", target, sizeof(target) - 1);
	if (n < 0) {
		printf("readlink /proc/self/exe: %s\n", strerrorname_np(errno));
		return;
	}
	target[n] = 0;
	const char *base = strrchr(target, '/');
	printf("readlink /proc/self/exe: absolute %s, names procs: %s\n",
	       target[0] == '/' ? "yes" : "no", base && !strcmp(base, "/procs") ? "yes" : "no");
#ifdef __x86_64__ /* qemu-user hands an execve to the host, which cannot run a riscv64 ELF */
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		char *argv[] = {"again", "--self-exe", NULL}, *envp[] = {NULL};
		execve("/proc/self/exe", argv, envp);
		printf("execve /proc/self/exe: %s\n", strerrorname_np(errno));
		_exit(1);
	}
	int status;
	waitpid(pid, &status, 0);
	show_status("the program run again through /proc/self/exe", status);

	/*
	 * A copy of this program runs and unlinks itself: /proc/self/exe still leads
	 * to it (the file, not a name), and reads as its path with " (deleted)".
	 */
	int in = open("/proc/self/exe", O_RDONLY),
	    out = open(COPY, O_CREAT | O_TRUNC | O_WRONLY, 0755);
	char buf[4096];
	for (ssize_t got; in >= 0 && out >= 0 && (got = read(in, buf, sizeof(buf))) > 0;)
		if (write(out, buf, got) != got)
			break;
	close(in);
	close(out);
	fflush(stdout);
	if ((pid = fork()) == 0) {
		char *argv[] = {"copy", "--unlinked-exe", NULL}, *envp[] = {NULL};
		execve(COPY, argv, envp);
		printf("execve of the copy: %s\n", strerrorname_np(errno));
		_exit(1);
	}
	waitpid(pid, &status, 0);
	show_status("the copy that unlinked itself", status);
	unlink(COPY);
#endif
}

/* The copy's side: unlink itself, then reach itself through /proc/self/exe. */
static int procs_unlinked_exe(void)
{
	ok("unlink the running program", unlink(COPY));
	char target[4096], magic[4] = {0};
	ssize_t n = readlink("/proc/self/exe", target, sizeof(target) - 1);
	target[n > 0 ? n : 0] = 0;
	printf("readlink /proc/self/exe of the unlinked copy: %s\n", target);
	int fd = open("/proc/self/exe", O_RDONLY);
	ok("open /proc/self/exe of the unlinked copy", fd);
	printf("it reads as an ELF file: %s\n",
	       fd >= 0 && read(fd, magic, 4) == 4 && !memcmp(magic, "\177ELF", 4) ? "yes" : "no");
	return 7;
}

/* A parent bound to one CPU forks: the child is bound to the same one. */
static void procs_affinity(void)
{
	cpu_set_t all, one;
	if (sched_getaffinity(0, sizeof(all), &all) < 0) {
		ok("sched_getaffinity", -1);
		return;
	}
	int cpu = 0;
	while (!CPU_ISSET(cpu, &all))
		cpu++;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	ok("sched_setaffinity to one CPU", sched_setaffinity(0, sizeof(one), &one));
	pid_t pid = fork();
	if (pid == 0) {
		cpu_set_t mine;
		if (sched_getaffinity(0, sizeof(mine), &mine) < 0)
			_exit(1);
		printf("the child may run on %d CPUs, its parent's: %s\n", CPU_COUNT(&mine),
		       CPU_EQUAL(&mine, &one) ? "yes" : "no");
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	show_status("the child of a bound parent", status);
	ok("sched_setaffinity back", sched_setaffinity(0, sizeof(all), &all));
}

int main(int argc, char **argv)
{
	/* A terminal's stdout is line-buffered and a pipe's is not: make both the same. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 2 && !strcmp(argv[1], "--self-exe")) {
		printf("run again as %s\n", argv[0]);
		return 6;
	}
	if (argc == 2 && !strcmp(argv[1], "--unlinked-exe"))
		return procs_unlinked_exe();
	procs_fork_wait();
	procs_pipes();
	procs_execve();
	procs_self_exe();
	procs_affinity();
#ifdef __x86_64__
	procs_vfork();
#endif
	return 0;
}
