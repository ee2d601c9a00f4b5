/*
 * execve's argument area and its failures, from a process with a second
 * thread that keeps counting: sysconf(_SC_ARG_MAX); -E2BIG for more than the
 * area holds (the strings alone, and strings that fit only if their pointers
 * were not counted), for one string over MAX_ARG_STRLEN; -EFAULT for an
 * unreadable string; -ENOENT, -EACCES and -ENOEXEC for a missing file, one
 * without x bits and ones that are not programs. After each, the counting
 * thread is still there (tgkill finds it) and still counts: a failed exec
 * left it alone. On x86_64, where the host can run the program again (qemu-user
 * hands an execve to the host, which cannot run a riscv64 ELF), forked children
 * exec it with arguments of exactly _SC_ARG_MAX bytes with their pointers (it
 * runs) and with no argv at all (it runs with argc 1 and an empty argv[0]), the
 * threaded process execs with one byte more (-E2BIG), then with about 1 MiB of
 * arguments, and the program run again prints its argc and a checksum of its
 * arguments. Before that, a forked child with a thread of its own execs a copy
 * of this program whose first segment's p_filesz is over its p_memsz: Linux
 * finds that only past its point of no return, and kills the child with SIGSEGV.
 *
 * userdiff: exec_takes_linux_argument_area_and_a_failed_exec_leaves_the_threads
 * run: /bin/exec_args
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_ARG_STRLEN (32 * 4096) /* Linux's, with the NUL: 32 pages */
#define SELF "/proc/self/exe"
#define CHILD "child" /* argv[1] of the program run again */

static atomic_long ticks;
static atomic_int counter_tid;

static void *counter(void *arg)
{
	(void)arg;
	atomic_store(&counter_tid, (int)syscall(SYS_gettid));
	for (;;) {
		atomic_fetch_add(&ticks, 1);
		sched_yield();
	}
	return NULL;
}

/* Is the counting thread still there, and still counting? */
static const char *counter_alive(void)
{
	if (syscall(SYS_tgkill, getpid(), atomic_load(&counter_tid), 0) != 0)
		return "gone";
	long before = atomic_load(&ticks);
	for (int i = 0; i < 2000 && atomic_load(&ticks) == before; i++)
		usleep(1000);
	return atomic_load(&ticks) != before ? "counting" : "stopped";
}

static void try_exec(const char *what, const char *path, char **argv, char **envp)
{
	int r = execve(path, argv, envp);
	printf("execve %s: %s; the other thread: %s\n", what, r < 0 ? strerrorname_np(errno) : "?",
	       counter_alive());
}

/* n strings of len bytes each with its NUL (the first argv[0]), pattern by position; NULL after. */
static char **make_args(size_t n, size_t len)
{
	char **v = malloc((n + 1) * sizeof(*v));
	for (size_t i = 0; i < n; i++) {
		v[i] = malloc(len);
		for (size_t j = 0; j + 1 < len; j++)
			v[i][j] = 'a' + (i * 7 + j) % 26;
		v[i][len - 1] = 0;
	}
	v[n] = NULL;
	return v;
}

static void free_args(char **v)
{
	for (size_t i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

/* The program run again: what it was given. */
static int child(int argc, char **argv, char **envp)
{
	unsigned h = 2166136261u; /* FNV-1a over every argument with its NUL */
	size_t bytes = 0, envc = 0;
	for (int i = 0; i < argc; i++) {
		size_t len = strlen(argv[i]) + 1;
		for (size_t j = 0; j < len; j++)
			h = (h ^ (unsigned char)argv[i][j]) * 16777619u;
		bytes += len;
	}
	while (envp[envc])
		envc++;
	printf("run again: argc %d, %zu bytes of arguments, checksum %08x, envc %zu\n", argc, bytes,
	       h, envc);
	return 0;
}

/* A file of mode mode holding len bytes of data, under dir. */
static void make_file(const char *path, const char *data, size_t len, mode_t mode)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
	if (fd < 0 || write(fd, data, len) != (ssize_t)len)
		printf("making %s: %s\n", path, strerrorname_np(errno));
	close(fd);
}

static void bad_images(void)
{
	char *argv[] = {"x", NULL}, *envp[] = {NULL};
	if (mkdir("/tmp", 01777) < 0 && errno != EEXIST)
		printf("mkdir /tmp: %s\n", strerrorname_np(errno));
	char dir[] = "/tmp/exec_args.XXXXXX";
	if (!mkdtemp(dir)) {
		printf("mkdtemp: %s\n", strerrorname_np(errno));
		return;
	}
	char text[64], plain[64], elf[64];
	snprintf(text, sizeof(text), "%s/text", dir);
	snprintf(plain, sizeof(plain), "%s/plain", dir);
	snprintf(elf, sizeof(elf), "%s/elf", dir);
	make_file(text, "not a program\n", 14, 0755);
	make_file(plain, "", 0, 0644);
	/* An ELF header cut short: the magic and the class, nothing after. */
	make_file(elf, "\177ELF\002\001\001", 7, 0755);

	try_exec("of a missing file", "/no/such/program", argv, envp);
	try_exec("of a file without x bits", plain, argv, envp);
	try_exec("of a text file with x bits", text, argv, envp);
	try_exec("of a cut-short ELF header", elf, argv, envp);
	unlink(text);
	unlink(plain);
	unlink(elf);
	rmdir(dir);
}

#ifdef __x86_64__
/* A copy of this program in path, its first PT_LOAD's p_memsz one byte short of its p_filesz. */
static int make_bad_segment(const char *path)
{
	static char image[4 << 20];
	int fd = open(SELF, O_RDONLY);
	ssize_t len = read(fd, image, sizeof(image));
	close(fd);
	Elf64_Ehdr *eh = (Elf64_Ehdr *)image;
	for (int i = 0; len > 0 && i < eh->e_phnum; i++) {
		Elf64_Phdr *ph = (Elf64_Phdr *)(image + eh->e_phoff + i * sizeof(*ph));
		if (ph->p_type == PT_LOAD && ph->p_filesz) {
			ph->p_memsz = ph->p_filesz - 1;
			make_file(path, image, len, 0755);
			return 0;
		}
	}
	printf("no PT_LOAD with file bytes in %s\n", SELF);
	return -1;
}

/* A handler that would run in the old image if the exec's SIGSEGV were not fatal. */
static void segv_handler(int sig)
{
	(void)sig;
	printf("SIGSEGV handler ran in the old image\n");
	_exit(3);
}

/*
 * A forked child with a second thread and a SIGSEGV handler execs a program
 * Linux fails past its point of no return: killed by SIGSEGV, the handler never run.
 */
static void exec_past_no_return(void)
{
	char path[] = "/tmp/exec_args.bad";
	if (make_bad_segment(path))
		return;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		pthread_t th;
		pthread_create(&th, NULL, counter, NULL);
		signal(SIGSEGV, segv_handler);
		char *argv[] = {"bad", NULL}, *envp[] = {NULL};
		execve(path, argv, envp);
		printf("execve of p_filesz over p_memsz: %s\n", strerrorname_np(errno));
		_exit(1);
	}
	int status;
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status))
		printf("execve of p_filesz over p_memsz from a thread: killed by %s\n",
		       sigabbrev_np(WTERMSIG(status)));
	else
		printf("execve of p_filesz over p_memsz from a thread: exited with status %d\n",
		       WEXITSTATUS(status));
	unlink(path);
}

/* Fill argv (argv[0], CHILD, then k strings) to exactly total bytes with their pointers. */
static char **args_of_size(size_t total, size_t k)
{
	size_t argc = 2 + k;
	size_t fixed =
	    sizeof(SELF) + strlen("exec_args") + 1 + sizeof(CHILD) + argc * sizeof(char *);
	size_t left = total - fixed;
	char **v = make_args(argc, 1);
	free(v[0]);
	free(v[1]);
	v[0] = strdup("exec_args");
	v[1] = strdup(CHILD);
	for (size_t i = 0; i < k; i++) {
		size_t len = i + 1 < k ? left / k : left - (k - 1) * (left / k);
		free(v[2 + i]);
		v[2 + i] = malloc(len);
		memset(v[2 + i], 'A' + i % 26, len - 1);
		v[2 + i][len - 1] = 0;
	}
	return v;
}

/* A forked child (one thread) execs the program again with argv; how it ended. */
static void exec_in_child(const char *what, char **argv)
{
	char *envp[] = {NULL};
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		execve(SELF, argv, envp);
		printf("execve %s: %s\n", what, strerrorname_np(errno));
		_exit(1);
	}
	int status;
	waitpid(pid, &status, 0);
	printf("execve %s: the child exited with status %d\n", what,
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}
#endif

int main(int argc, char **argv, char **envp)
{
	if (argc == 0 || (argc == 1 && !argv[0][0])) {
		printf("run again with no argv: argc %d, argv[0] \"%s\"\n", argc,
		       argc ? argv[0] : "");
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], CHILD))
		return child(argc, argv, envp);
	setvbuf(stdout, NULL, _IOLBF, 0);
	long arg_max = sysconf(_SC_ARG_MAX);
	printf("sysconf(_SC_ARG_MAX): %ld\n", arg_max);

	pthread_t th;
	pthread_create(&th, NULL, counter, NULL);
	while (!atomic_load(&counter_tid))
		usleep(1000);

	char *envp0[] = {NULL};
	/* 17 strings of MAX_ARG_STRLEN: 2 MiB and more of strings alone. */
	char **v = make_args(17, MAX_ARG_STRLEN);
	try_exec("with 17 strings of MAX_ARG_STRLEN", SELF, v, envp0);
	free_args(v);
	/* 150,000 strings of 8 bytes: 1.2 MB of strings, 1.2 MB more of pointers. */
	v = make_args(150000, 8);
	try_exec("with 150000 strings of 8 bytes", SELF, v, envp0);
	free_args(v);
	/* One string one byte over MAX_ARG_STRLEN, in envp. */
	char *one[] = {"exec_args", NULL};
	v = make_args(1, MAX_ARG_STRLEN + 1);
	try_exec("with an environment string over MAX_ARG_STRLEN", SELF, one, v);
	free_args(v);
	char *bad[] = {"exec_args", (char *)8, NULL};
	try_exec("with an unreadable string", SELF, bad, envp0);
	bad_images();

#ifdef __x86_64__
	v = args_of_size(arg_max, 17);
	exec_in_child("with _SC_ARG_MAX bytes", v);
	free_args(v);
	char *none[] = {NULL};
	exec_in_child("with no argv", none);
	v = args_of_size(arg_max + 1, 17);
	try_exec("with _SC_ARG_MAX bytes and one more", SELF, v, envp0);
	free_args(v);
	exec_past_no_return();
	/* The threaded process itself: 8 strings of 128 KiB, the other thread then gone. */
	v = args_of_size(8 * 128 * 1024, 8);
	char *env1[] = {"ONE=1", NULL};
	execve(SELF, v, env1);
	printf("execve with 1 MiB of arguments: %s\n", strerrorname_np(errno));
	return 1;
#else
	return 0;
#endif
}
