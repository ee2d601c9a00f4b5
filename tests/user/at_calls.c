/*
 * The *at() calls walk from the directory a descriptor has open, and
 * descriptors get their close-on-exec flag as they appear:
 *
 * - a tree deeper than PATH_MAX, made, used and removed one descriptor at a
 *   time with mkdirat, openat, fstatat and unlinkat (its absolute name is
 *   ENAMETOOLONG);
 * - a directory renamed into another and its old parent removed while a
 *   descriptor has it open: names still resolve in it and its ".." is the new
 *   parent;
 * - the descriptor rules: a relative name at a bad or non-directory descriptor,
 *   an absolute one at any, "" with and without AT_EMPTY_PATH, linkat with and
 *   without AT_SYMLINK_FOLLOW;
 * - O_CLOEXEC, pipe2, dup3 and F_DUPFD_CLOEXEC in one thread while another forks
 *   over and over: no child ever holds one of those descriptors without the flag.
 *
 * userdiff: at_calls_walk_from_their_descriptor_as_on_linux
 * run: /bin/at_calls
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define LEVELS 30
#define NAME_LEN 200
#define ROOT "/tmp/at_calls"

static void say(const char *what, long ret)
{
	if (ret < 0)
		printf("%s: %s\n", what, strerrorname_np(errno));
	else
		printf("%s: ok\n", what);
}

static void level_name(char *name, int level)
{
	memset(name, 'a' + level % 26, NAME_LEN);
	name[NAME_LEN] = '\0';
}

static void deep_tree(void)
{
	int fds[LEVELS + 1];
	char name[NAME_LEN + 1];
	fds[0] = open(ROOT, O_RDONLY | O_DIRECTORY);
	int made = 0;
	for (; made < LEVELS; made++) {
		level_name(name, made);
		if (mkdirat(fds[made], name, 0755) < 0 ||
		    (fds[made + 1] = openat(fds[made], name, O_RDONLY | O_DIRECTORY)) < 0)
			break;
	}
	printf("deep: %d levels of %d-byte names made\n", made, NAME_LEN);
	int f = openat(fds[made], "bottom", O_CREAT | O_WRONLY, 0644);
	printf("deep: write at the bottom: %zd\n", write(f, "deep", 4));
	close(f);
	struct stat st;
	level_name(name, made - 1);
	char rel[NAME_LEN + 16];
	snprintf(rel, sizeof(rel), "../%s/bottom", name);
	say("deep: fstatat through ..", fstatat(fds[made], rel, &st, 0));
	printf("deep: size %lld\n", (long long)st.st_size);

	/* The same file by its absolute name: longer than PATH_MAX. */
	size_t len = strlen(ROOT) + (size_t)made * (NAME_LEN + 1) + 8;
	char *abs = malloc(len);
	strcpy(abs, ROOT);
	for (int i = 0; i < made; i++) {
		level_name(name, i);
		strcat(abs, "/");
		strcat(abs, name);
	}
	strcat(abs, "/bottom");
	say("deep: stat of the absolute name", stat(abs, &st));
	free(abs);

	say("deep: unlinkat bottom", unlinkat(fds[made], "bottom", 0));
	int removed = 0;
	while (made > 0) {
		close(fds[made--]);
		level_name(name, made);
		removed += unlinkat(fds[made], name, AT_REMOVEDIR) == 0;
	}
	printf("deep: %d levels removed\n", removed);
	close(fds[0]);
}

static void moved_dir(void)
{
	struct stat st, parent;
	mkdir(ROOT "/old", 0755);
	mkdir(ROOT "/old/d", 0755);
	mkdir(ROOT "/new", 0755);
	int fd = open(ROOT "/old/d", O_RDONLY | O_DIRECTORY);
	say("moved: rename old/d to new/d", rename(ROOT "/old/d", ROOT "/new/d"));
	say("moved: rmdir old", rmdir(ROOT "/old"));
	int f = openat(fd, "f", O_CREAT | O_WRONLY, 0644);
	say("moved: openat O_CREAT in it", f);
	close(f);
	say("moved: stat new/d/f", stat(ROOT "/new/d/f", &st));
	stat(ROOT "/new", &parent);
	fstatat(fd, "..", &st, 0);
	printf("moved: its .. is new: %s\n", st.st_ino == parent.st_ino ? "yes" : "no");
	say("moved: mkdirat", mkdirat(fd, "sub", 0755));
	say("moved: renameat within it", renameat(fd, "sub", fd, "sub2"));
	say("moved: unlinkat", unlinkat(fd, "f", 0));
	say("moved: rmdir at", unlinkat(fd, "sub2", AT_REMOVEDIR));
	close(fd);
	rmdir(ROOT "/new/d");
	rmdir(ROOT "/new");
}

static void descriptor_rules(void)
{
	struct stat st, a, b;
	int dir = open(ROOT, O_RDONLY | O_DIRECTORY);
	int file = open(ROOT "/file", O_CREAT | O_RDWR, 0644);
	say("rules: mkdirat at a closed descriptor", mkdirat(900, "x", 0755));
	say("rules: mkdirat at a file", mkdirat(file, "x", 0755));
	say("rules: openat at a file", openat(file, "x", O_RDONLY));
	say("rules: fstatat of / at a closed descriptor", fstatat(900, "/", &st, 0));
	say("rules: fstatat of \"\"", fstatat(dir, "", &st, 0));
	say("rules: fstatat of \"\" with AT_EMPTY_PATH", fstatat(file, "", &st, AT_EMPTY_PATH));
	say("rules: unlinkat with a bad flag", unlinkat(dir, "file", 0x4));
	say("rules: symlinkat", symlinkat("file", dir, "link"));
	say("rules: linkat following", linkat(dir, "link", dir, "hard", AT_SYMLINK_FOLLOW));
	say("rules: linkat not following", linkat(dir, "link", dir, "hard2", 0));
	stat(ROOT "/file", &a);
	lstat(ROOT "/hard", &b);
	printf("rules: following linked the file: %s\n", a.st_ino == b.st_ino ? "yes" : "no");
	lstat(ROOT "/link", &a);
	lstat(ROOT "/hard2", &b);
	printf("rules: not following linked the link: %s\n", a.st_ino == b.st_ino ? "yes" : "no");
	char buf[16] = {0};
	printf("rules: readlinkat: %zd %s\n", readlinkat(dir, "hard2", buf, sizeof(buf)), buf);
	unlinkat(dir, "hard2", 0);
	unlinkat(dir, "hard", 0);
	unlinkat(dir, "link", 0);
	close(file);
	close(dir);
	unlink(ROOT "/file");
}

/* One thread opens with the flag over and over; another forks and looks at the child's table. */
#define FORKS 100
static atomic_int stop;
static struct stat target;
static bool open_before[128]; /* descriptors the race did not make (the runner's, the base) */

static void *opener(void *arg)
{
	int base = *(int *)arg;
	for (unsigned i = 0; !atomic_load(&stop); i++) {
		int fds[2];
		switch (i % 4) {
		case 0:
			fds[0] = open(ROOT "/cloexec", O_RDONLY | O_CLOEXEC);
			close(fds[0]);
			break;
		case 1:
			fds[0] = dup3(base, 100, O_CLOEXEC);
			close(fds[0]);
			break;
		case 2:
			fds[0] = fcntl(base, F_DUPFD_CLOEXEC, 50);
			close(fds[0]);
			break;
		case 3:
			if (pipe2(fds, O_CLOEXEC) == 0) {
				close(fds[0]);
				close(fds[1]);
			}
			break;
		}
	}
	return NULL;
}

/* In the child: a descriptor the race made (the file or a pipe) without FD_CLOEXEC. */
static int leaked(void)
{
	for (int fd = 3; fd < 128; fd++) {
		struct stat st;
		if (open_before[fd] || fstat(fd, &st) < 0)
			continue;
		bool ours = (st.st_dev == target.st_dev && st.st_ino == target.st_ino) ||
			    S_ISFIFO(st.st_mode);
		if (ours && !(fcntl(fd, F_GETFD) & FD_CLOEXEC))
			return 1;
	}
	return 0;
}

static void cloexec_race(void)
{
	int base = open(ROOT "/cloexec", O_CREAT | O_RDONLY | O_CLOEXEC, 0644);
	fstat(base, &target);
	for (int fd = 0; fd < 128; fd++)
		open_before[fd] = fcntl(fd, F_GETFD) >= 0;
	pthread_t t;
	pthread_create(&t, NULL, opener, &base);
	int leaks = 0, forks = 0;
	for (int i = 0; i < FORKS; i++) {
		pid_t pid = fork();
		if (pid == 0)
			_exit(leaked());
		int status;
		if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status)) {
			forks++;
			leaks += WEXITSTATUS(status);
		}
	}
	atomic_store(&stop, 1);
	pthread_join(t, NULL);
	printf("cloexec: %d forks, %d children held a descriptor without the flag\n", forks, leaks);
	close(base);
	unlink(ROOT "/cloexec");
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	mkdir("/tmp", 01777);
	mkdir(ROOT, 0755);
	deep_tree();
	moved_dir();
	descriptor_rules();
	cloexec_race();
	say("rmdir the test directory", rmdir(ROOT));
	return 0;
}
