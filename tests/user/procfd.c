/*
 * /proc/self/fd as a program uses it, in a scratch directory of its own under
 * /tmp: the listing of the open descriptors, readlink of each kind (a file, an
 * unlinked file, a pipe's end, a socket), opening a descriptor again through
 * its link (a new open file with its own offset, even for an unlinked file),
 * O_CREAT through a link, a directory's link walked through and chdir'd into,
 * the names the directory refuses, and /dev/stdout. It prints descriptors by
 * what they hold ("a", "b", "the listing") and paths relative to the scratch
 * directory, never a number that differs between runs.
 *
 * userdiff: proc_self_fd_lists_and_reopens_descriptors_as_on_linux
 * run: /bin/procfd
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

/* "ok" for a call that succeeded, else the errno's name. */
static void ok(const char *what, long ret)
{
	printf("%s: %s\n", what, ret < 0 ? strerrorname_np(errno) : "ok");
}

static const char *fd_path(int fd)
{
	static char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return path;
}

/* readlink of fd's link, the scratch directory's path shown as DIR. */
static void show_link(const char *what, int fd)
{
	char text[4096];
	ssize_t n = readlink(fd_path(fd), text, sizeof(text) - 1);
	if (n < 0) {
		printf("readlink %s: %s\n", what, strerrorname_np(errno));
		return;
	}
	text[n] = 0;
	size_t len = strlen(dir);
	if (!strncmp(text, dir, len))
		printf("readlink %s: DIR%s\n", what, text + len);
	else
		printf("readlink %s: %s\n", what, text);
}

/* The listing, each descriptor named by its role; 0, 1 and 2 by number. */
static void show_listing(int a, int b)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d) {
		printf("opendir /proc/self/fd: %s\n", strerrorname_np(errno));
		return;
	}
	int self = dirfd(d), last = -1;
	bool ascending = true, all_links = true;
	struct dirent *e;
	printf("/proc/self/fd:");
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) {
			printf(" %s", e->d_name);
			continue;
		}
		int fd = atoi(e->d_name);
		ascending &= fd > last;
		last = fd;
		all_links &= e->d_type == DT_LNK;
		if (fd == a)
			printf(" a");
		else if (fd == b)
			printf(" b");
		else if (fd == self)
			printf(" the-listing");
		else
			printf(" %s", e->d_name);
	}
	printf("\n  ascending: %s, all DT_LNK: %s\n", ascending ? "yes" : "no",
	       all_links ? "yes" : "no");
	closedir(d);
}

/* What a name refused or accepted in /proc/self/fd gives, and stat and lstat of a link. */
static void procfd_names(int a, int b)
{
	struct stat st, fst;
	ok("lstat a's link", lstat(fd_path(a), &st));
	printf("  a symlink: %s\n", S_ISLNK(st.st_mode) ? "yes" : "no");
	ok("stat a's link", stat(fd_path(a), &st));
	fstat(a, &fst);
	printf("  a file: %s, size %lld, a's inode: %s\n", S_ISREG(st.st_mode) ? "yes" : "no",
	       (long long)st.st_size, st.st_ino == fst.st_ino ? "yes" : "no");

	close(b);
	ok("open a closed descriptor's link", open(fd_path(b), O_RDONLY));
	ok("O_CREAT through a closed descriptor's link", open(fd_path(b), O_RDWR | O_CREAT, 0644));
	ok("lstat a closed descriptor's link", lstat(fd_path(b), &st));
	show_link("a closed descriptor", b);
	ok("open /proc/self/fd/01", open("/proc/self/fd/01", O_RDONLY));
	ok("open /proc/self/fd/+1", open("/proc/self/fd/+1", O_RDONLY));
	ok("open /proc/self/fd/x", open("/proc/self/fd/x", O_RDONLY));
	ok("open /proc/self/fd/99999", open("/proc/self/fd/99999", O_RDONLY));
	char slash[80];
	snprintf(slash, sizeof(slash), "%s/", fd_path(a));
	ok("open a's link with a trailing slash", open(slash, O_RDONLY));
	ok("open a's link O_NOFOLLOW", open(fd_path(a), O_RDONLY | O_NOFOLLOW));

	ok("unlink a's link", unlink(fd_path(a)));
	ok("rmdir a's link", rmdir(fd_path(a)));
	ok("mkdir at a's link", mkdir(fd_path(a), 0755));
	ok("mkdir at a closed descriptor's link", mkdir(fd_path(b), 0755));
	ok("symlink at a closed descriptor's link", symlink("x", fd_path(b)));
	char c[80];
	snprintf(c, sizeof(c), "%s/c", dir);
	close(open(c, O_CREAT | O_WRONLY, 0644));
	ok("link to a closed descriptor's link", link(c, fd_path(b)));
	ok("rename to a closed descriptor's link", rename(c, fd_path(b)));
	ok("rename a's link out", rename(fd_path(a), c));
	char c2[80];
	snprintf(c2, sizeof(c2), "%s/c2", dir);
	ok("link a's link out", link(fd_path(a), c2));
	unlink(c);
}

/* A link opened: a new open file on the same data, with an offset of its own. */
static void procfd_reopen(int a)
{
	char buf[32] = {0};
	int again = open(fd_path(a), O_RDONLY);
	ok("open a's link", again);
	long n = read(again, buf, 5);
	printf("  read %ld: %s; offsets: a %ld, the new one %ld\n", n, buf,
	       (long)lseek(a, 0, SEEK_CUR), (long)lseek(again, 0, SEEK_CUR));
	close(again);

	int created = open(fd_path(a), O_RDWR | O_CREAT, 0600);
	ok("O_CREAT through a's link", created);
	if (created >= 0) {
		write(created, "J", 1); /* at its own offset 0 */
		pread(a, buf, 5, 0);
		printf("  a reads: %.5s\n", buf);
		close(created);
	}
	ok("O_CREAT | O_EXCL through a's link", open(fd_path(a), O_RDWR | O_CREAT | O_EXCL, 0600));
	DIR *d = opendir(dir);
	int names = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		names++;
	if (d)
		closedir(d);
	printf("names in DIR after O_CREAT: %d\n", names);
}

/* An unlinked file is still reached through its descriptor's link. */
static void procfd_unlinked(void)
{
	char path[80], buf[16] = {0};
	snprintf(path, sizeof(path), "%s/gone", dir);
	int fd = open(path, O_RDWR | O_CREAT, 0644);
	write(fd, "still here", 10);
	unlink(path);
	show_link("an unlinked file", fd);
	int again = open(fd_path(fd), O_RDONLY);
	ok("open an unlinked file's link", again);
	if (again >= 0) {
		read(again, buf, sizeof(buf) - 1);
		struct stat st;
		fstat(again, &st);
		printf("  reads: %s, links: %ld\n", buf, (long)st.st_nlink);
		close(again);
	}
	close(fd);
}

/* A directory's link, walked through and made the current directory. */
static void procfd_directory(void)
{
	int d = open(dir, O_RDONLY | O_DIRECTORY);
	char path[80], cwd[256];
	snprintf(path, sizeof(path), "%s/inside", fd_path(d));
	int fd = open(path, O_WRONLY | O_CREAT, 0644);
	ok("O_CREAT through a directory's link and a name after it", fd);
	close(fd);
	struct stat st;
	snprintf(path, sizeof(path), "%s/inside", dir);
	ok("  made in DIR", stat(path, &st));
	unlink(path);
	ok("chdir to a directory's link", chdir(fd_path(d)));
	if (getcwd(cwd, sizeof(cwd)))
		printf("  cwd is DIR: %s\n", !strcmp(cwd, dir) ? "yes" : "no");
	chdir("/");
	close(d);
}

/* Pipes and sockets have no path: readlink names them by kind and inode. */
static void procfd_pathless(void)
{
	int p[2];
	char text[64], want[64];
	struct stat st;
	pipe(p);
	fstat(p[0], &st);
	ssize_t n = readlink(fd_path(p[0]), text, sizeof(text) - 1);
	text[n > 0 ? n : 0] = 0;
	snprintf(want, sizeof(want), "pipe:[%llu]", (unsigned long long)st.st_ino);
	printf("readlink a pipe's end: pipe:[its inode]: %s\n", !strcmp(text, want) ? "yes" : text);
	close(p[0]);
	close(p[1]);

	int s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0) {
		printf("socket: %s\n", strerrorname_np(errno));
		return;
	}
	fstat(s, &st);
	n = readlink(fd_path(s), text, sizeof(text) - 1);
	text[n > 0 ? n : 0] = 0;
	snprintf(want, sizeof(want), "socket:[%llu]", (unsigned long long)st.st_ino);
	printf("readlink a socket: socket:[its inode]: %s\n", !strcmp(text, want) ? "yes" : text);
	ok("open a socket's link", open(fd_path(s), O_RDWR));
	close(s);
}

/* /dev/stdin, /dev/stdout and /dev/stderr: links to descriptors 0, 1 and 2. */
static void procfd_dev_std(void)
{
	const char *names[] = {"/dev/stdin", "/dev/stdout", "/dev/stderr"};
	for (int i = 0; i < 3; i++) {
		char text[64];
		struct stat st;
		ssize_t n = readlink(names[i], text, sizeof(text) - 1);
		text[n > 0 ? n : 0] = 0;
		lstat(names[i], &st);
		printf("%s: a symlink: %s, to %s\n", names[i], S_ISLNK(st.st_mode) ? "yes" : "no",
		       text);
	}
	fflush(stdout);
	int out = open("/dev/stdout", O_WRONLY);
	ok("open /dev/stdout", out);
	if (out >= 0) {
		const char line[] = "  written through /dev/stdout\n";
		write(out, line, sizeof(line) - 1);
		close(out);
	}
}

int main(void)
{
	/* A terminal's stdout is line-buffered and a pipe's is not: make both the same. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	mkdir("/tmp", 01777);
	strcpy(dir, "/tmp/procfd.XXXXXX");
	if (!mkdtemp(dir)) {
		printf("mkdtemp: %s\n", strerrorname_np(errno));
		return 1;
	}
	char path[80];
	snprintf(path, sizeof(path), "%s/a", dir);
	int a = open(path, O_RDWR | O_CREAT, 0644);
	write(a, "hello world", 11);
	int b = open(path, O_RDONLY);
	show_listing(a, b);
	show_link("a", a);
	char small[4];
	printf("readlink a into 4 bytes: %ld\n", (long)readlink(fd_path(a), small, sizeof(small)));
	procfd_reopen(a);
	procfd_names(a, b);
	show_listing(a, -1);
	procfd_unlinked();
	procfd_directory();
	procfd_pathless();
	procfd_dev_std();
	close(a);
	unlink(path);
	ok("rmdir DIR", rmdir(dir));
	return 0;
}
