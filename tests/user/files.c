/*
 * The file system calls as a program makes them, in a scratch directory of
 * its own under /tmp (made first: Grace's root has none): create, write, read
 * and seek, holes, a file bigger than any one copy the kernel makes, O_TRUNC
 * and O_APPEND, directories listed with getdents64 (sorted here, since the
 * order of entries is each file system's own), rename in each of its cases,
 * unlink and rmdir, symbolic and hard links, and the errno of every refusal.
 * It prints only what Linux fixes for any file system: sizes, names, modes,
 * types, link counts, contents and errno names, never a descriptor number or
 * an inode number. It removes everything it made.
 *
 * userdiff: file_calls_give_the_results_and_errors_of_linux
 * run: /bin/files
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Bigger than a page and than the 64 KiB one copy of Grace's handles. */
#define BIG_SIZE 100000
/* The entries of a directory listed a few at a time. */
#define MANY_FILES 40

static char big[BIG_SIZE], back[BIG_SIZE];

/* "ok" for a call that succeeded (its value may be a descriptor), else the errno's name. */
static void ok(const char *what, long ret)
{
	printf("%s: %s\n", what, ret < 0 ? strerrorname_np(errno) : "ok");
}

/* The value of a call that returns a count or an offset, else the errno's name. */
static void value(const char *what, long ret)
{
	if (ret < 0)
		printf("%s: %s\n", what, strerrorname_np(errno));
	else
		printf("%s: %ld\n", what, ret);
}

static const char *type_name(mode_t mode)
{
	if (S_ISREG(mode))
		return "file";
	if (S_ISDIR(mode))
		return "dir";
	if (S_ISLNK(mode))
		return "symlink";
	return S_ISCHR(mode) ? "chardev" : "other";
}

static void show_stat(const char *what, int ret, const struct stat *st)
{
	if (ret < 0) {
		printf("%s: %s\n", what, strerrorname_np(errno));
		return;
	}
	printf("%s: %s mode=%04o nlink=%lu", what, type_name(st->st_mode), st->st_mode & 07777,
	       (unsigned long)st->st_nlink);
	/* A directory's size is the file system's own (tmpfs and ramfs differ). */
	if (!S_ISDIR(st->st_mode))
		printf(" size=%lld", (long long)st->st_size);
	printf("\n");
}

static void stat_path(const char *path)
{
	struct stat st;
	char what[128];
	snprintf(what, sizeof(what), "stat %s", path);
	show_stat(what, stat(path, &st), &st);
}

static void lstat_path(const char *path)
{
	struct stat st;
	char what[128];
	snprintf(what, sizeof(what), "lstat %s", path);
	show_stat(what, lstat(path, &st), &st);
}

static void cat(const char *path)
{
	char buf[256];
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		printf("cat %s: %s\n", path, strerrorname_np(errno));
		return;
	}
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n < 0 ? 0 : n] = 0;
	printf("cat %s: %zd bytes: %s", path, n, buf);
	if (n <= 0 || buf[n - 1] != '\n')
		printf("\n");
}

static void put(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		printf("put %s: %s\n", path, strerrorname_np(errno));
	if (fd >= 0)
		close(fd);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *dtype_name(unsigned char t)
{
	return t == DT_REG ? "file" : t == DT_DIR ? "dir" : t == DT_LNK ? "symlink" : "unknown";
}

/*
 * The entries of path read with getdents64 through a buffer of bufsize bytes
 * (small ones take many calls); names[] gets "name type" strings, sorted.
 */
static int list_dir(const char *path, size_t bufsize, char *names[], int max)
{
	char buf[4096];
	int n = 0, fd = open(path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t got = getdents64(fd, buf, bufsize);
		if (got < 0) {
			n = -1;
			break;
		}
		if (got == 0)
			break;
		for (ssize_t off = 0; off < got;) {
			struct dirent64 *d = (struct dirent64 *)(buf + off);
			if (n < max &&
			    asprintf(&names[n], "%s %s", d->d_name, dtype_name(d->d_type)) > 0)
				n++;
			off += d->d_reclen;
		}
	}
	close(fd);
	if (n > 0)
		qsort(names, n, sizeof(names[0]), by_name);
	return n;
}

static void show_dir(const char *path)
{
	char *names[64];
	int n = list_dir(path, 4096, names, 64);
	if (n < 0) {
		printf("list %s: %s\n", path, strerrorname_np(errno));
		return;
	}
	printf("list %s: %d entries:", path, n);
	for (int i = 0; i < n; i++) {
		printf(" [%s]", names[i]);
		free(names[i]);
	}
	printf("\n");
}

/* Remove path and everything under it; the count of what was removed. */
static int remove_tree(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return 0;
	if (!S_ISDIR(st.st_mode))
		return unlink(path) == 0;
	char *names[64];
	int n = list_dir(path, 4096, names, 64), removed = 0;
	for (int i = 0; i < n; i++) {
		*strrchr(names[i], ' ') = 0;
		if (strcmp(names[i], ".") && strcmp(names[i], "..")) {
			char child[512];
			snprintf(child, sizeof(child), "%s/%s", path, names[i]);
			removed += remove_tree(child);
		}
		free(names[i]);
	}
	return removed + (rmdir(path) == 0);
}

static void files_read_write(void)
{
	struct stat st;
	char buf[256];

	int fd = open("a", O_CREAT | O_EXCL | O_RDWR, 0666);
	ok("open a O_CREAT|O_EXCL", fd);
	value("write 12 bytes", write(fd, "hello, file\n", 12));
	show_stat("fstat a", fstat(fd, &st), &st);
	ok("open a O_CREAT|O_EXCL again", open("a", O_CREAT | O_EXCL | O_WRONLY, 0666));
	value("lseek SEEK_CUR", lseek(fd, 0, SEEK_CUR));
	value("lseek 0 SEEK_SET", lseek(fd, 0, SEEK_SET));
	ssize_t n = read(fd, buf, sizeof(buf));
	value("read", n);
	printf("read back: %.*s", (int)(n > 0 ? n : 0), buf);
	value("read at the end", read(fd, buf, sizeof(buf)));

	/* A write past the end leaves a hole that reads as zeros. */
	value("lseek past the end", lseek(fd, 3 * 4096 + 5, SEEK_SET));
	value("write after the hole", write(fd, "end", 3));
	show_stat("fstat a", fstat(fd, &st), &st);
	static char hole[3 * 4096];
	n = pread(fd, hole, sizeof(hole), 12);
	int zeros = 0;
	for (ssize_t i = 0; i < n; i++)
		zeros += hole[i] == 0;
	printf("pread of the hole: %zd bytes, %d zeros\n", n, zeros);
	value("lseek -1 SEEK_SET", lseek(fd, -1, SEEK_SET));
	value("lseek whence 42", lseek(fd, 0, 42));
	value("lseek -3 SEEK_END", lseek(fd, -3, SEEK_END));
	value("read 10 at 3 before the end", read(fd, buf, 10));
	ok("close", close(fd));
	ok("close again", close(fd));

	/* One call moves more than a page and more than one bounce of Grace's. */
	for (int i = 0; i < BIG_SIZE; i++)
		big[i] = (char)(i * 7 % 251);
	fd = open("big", O_CREAT | O_TRUNC | O_RDWR, 0600);
	ok("open big", fd);
	value("write 100000 bytes", write(fd, big, BIG_SIZE));
	show_stat("fstat big", fstat(fd, &st), &st);
	n = pread(fd, back, BIG_SIZE, 0);
	value("pread 100000 bytes", n);
	printf("pread matches: %s\n", n == BIG_SIZE && !memcmp(big, back, BIG_SIZE) ? "yes" : "no");
	memset(back, 0, sizeof(back));
	value("lseek 0", lseek(fd, 0, SEEK_SET));
	n = read(fd, back, BIG_SIZE);
	value("read 100000 bytes", n);
	printf("read matches: %s\n", n == BIG_SIZE && !memcmp(big, back, BIG_SIZE) ? "yes" : "no");
	value("pread 100 at 99950", pread(fd, back, 100, 99950));
	value("pread at 200000", pread(fd, back, 100, 200000));
	close(fd);

	fd = open("big", O_WRONLY | O_TRUNC);
	ok("open big O_TRUNC", fd);
	show_stat("fstat big", fstat(fd, &st), &st);
	value("read from O_WRONLY", read(fd, buf, 1));
	close(fd);
	fd = open("a", O_WRONLY | O_APPEND);
	ok("open a O_APPEND", fd);
	value("lseek 0", lseek(fd, 0, SEEK_SET));
	value("append 5 bytes", write(fd, "more\n", 5));
	value("lseek SEEK_CUR after append", lseek(fd, 0, SEEK_CUR));
	close(fd);
	fd = open("a", O_RDONLY);
	value("write to O_RDONLY", write(fd, "x", 1));
	close(fd);
	stat_path("a");
}

static void files_directories(void)
{
	struct stat st;
	char buf[64];

	ok("mkdir d 0750", mkdir("d", 0750));
	ok("mkdir d again", mkdir("d", 0755));
	ok("mkdir d/e/f", mkdir("d/e/f", 0755));
	ok("mkdir a/x", mkdir("a/x", 0755));
	stat_path("d");
	ok("mkdir d/sub", mkdir("d/sub", 0777));
	stat_path("d");
	stat_path("d/sub");
	put("d/zeta", "zeta\n", 0644);
	put("d/alpha", "alpha\n", 0640);
	put("d/mid", "middle\n", 0604);
	ok("symlink alpha d/link", symlink("alpha", "d/link"));
	show_dir("d");

	ok("open d O_WRONLY", open("d", O_WRONLY));
	ok("open d O_RDWR", open("d", O_RDWR));
	int dfd = open("d", O_RDONLY);
	ok("open d O_RDONLY", dfd);
	value("read a directory", read(dfd, buf, sizeof(buf)));
	value("getdents64 with 10 bytes", getdents64(dfd, buf, 10));
	close(dfd);
	ok("open a O_DIRECTORY", open("a", O_RDONLY | O_DIRECTORY));
	int fd = open("a", O_RDONLY);
	value("getdents64 of a file", getdents64(fd, buf, sizeof(buf)));
	close(fd);
	ok("open \"\"", open("", O_RDONLY));
	ok("open missing", open("missing", O_RDONLY));
	ok("open a/", open("a/", O_RDONLY));
	ok("open a/x", open("a/x", O_RDONLY));
	show_stat("fstatat d AT_SYMLINK_NOFOLLOW", fstatat(AT_FDCWD, "d", &st, AT_SYMLINK_NOFOLLOW),
		  &st);

	/* Enough entries for a small buffer to take many calls, each going on from the last. */
	ok("mkdir many", mkdir("many", 0755));
	for (int i = 0; i < MANY_FILES; i++) {
		char name[32];
		snprintf(name, sizeof(name), "many/f%02d", i);
		put(name, "", 0644);
	}
	char *names[64];
	int n = list_dir("many", 200, names, 64);
	int in_order = n == MANY_FILES + 2;
	for (int i = 0; i < n; i++) {
		char want[32];
		if (i == 0)
			strcpy(want, ". dir");
		else if (i == 1)
			strcpy(want, ".. dir");
		else
			snprintf(want, sizeof(want), "f%02d file", i - 2);
		in_order &= !strcmp(names[i], want);
		free(names[i]);
	}
	printf("list many with 200-byte reads: %d entries, each name once: %s\n", n,
	       in_order ? "yes" : "no");
}

static void files_rename(void)
{
	ok("rename d/alpha d/beta", rename("d/alpha", "d/beta"));
	stat_path("d/alpha");
	stat_path("d/beta");
	ok("rename d/mid over d/zeta", rename("d/mid", "d/zeta"));
	cat("d/zeta");
	stat_path("d/mid");
	ok("rename d into d/sub", rename("d", "d/sub/x"));
	ok("rename a file over a directory", rename("d/beta", "d/sub"));
	ok("rename a directory over a file", rename("d/sub", "d/beta"));
	ok("rename over a directory not empty", rename("many", "d"));
	ok("mkdir empty", mkdir("empty", 0755));
	ok("rename many over empty", rename("many", "empty"));
	stat_path("many");
	printf("empty now holds %d files\n", remove_tree("empty") - 1);
	ok("rename missing", rename("missing", "x"));
	ok("renameat2 RENAME_NOREPLACE onto a file",
	   renameat2(AT_FDCWD, "a", AT_FDCWD, "d/beta", RENAME_NOREPLACE));
	ok("renameat2 RENAME_NOREPLACE to a new name",
	   renameat2(AT_FDCWD, "d/beta", AT_FDCWD, "d/gamma", RENAME_NOREPLACE));
	ok("rename a a", rename("a", "a"));
	/* Two names of one inode: rename does nothing and both stay. */
	ok("link a hard", link("a", "hard"));
	ok("rename a hard", rename("a", "hard"));
	stat_path("a");
	stat_path("hard");
	ok("unlink hard", unlink("hard"));
	show_dir("d");
}

static void files_unlink(void)
{
	struct stat st;
	char buf[64];

	ok("unlink d", unlink("d"));
	ok("rmdir d", rmdir("d"));
	ok("rmdir a", rmdir("a"));
	ok("unlink missing", unlink("missing"));
	ok("rmdir .", rmdir("."));
	ok("rmdir d/sub", rmdir("d/sub"));
	stat_path("d");

	/* An open file outlives its last name. */
	int fd = open("gone", O_CREAT | O_RDWR, 0644);
	value("write to gone", write(fd, "still here\n", 11));
	ok("unlink gone", unlink("gone"));
	stat_path("gone");
	show_stat("fstat gone", fstat(fd, &st), &st);
	ssize_t n = pread(fd, buf, sizeof(buf), 0);
	printf("pread of gone: %zd bytes: %.*s", n, (int)(n > 0 ? n : 0), buf);
	close(fd);
}

static void files_links(void)
{
	char buf[64];

	ok("symlink a ln", symlink("a", "ln"));
	ssize_t n = readlink("ln", buf, sizeof(buf));
	value("readlink ln", n);
	printf("ln -> %.*s\n", (int)(n > 0 ? n : 0), buf);
	lstat_path("ln");
	stat_path("ln");
	value("readlink a", readlink("a", buf, sizeof(buf)));
	value("readlink missing", readlink("missing", buf, sizeof(buf)));
	ok("symlink x a", symlink("x", "a"));
	ok("symlink d/gamma long", symlink("d/gamma", "long"));
	n = readlink("long", buf, 3);
	value("readlink long into 3 bytes", n);
	printf("long -> %.*s\n", (int)(n > 0 ? n : 0), buf);
	ok("symlink \"\" empty-target", symlink("", "empty-target"));

	/* O_CREAT through a dangling link makes its target; O_EXCL refuses the link. */
	ok("symlink nowhere dangling", symlink("nowhere", "dangling"));
	stat_path("dangling");
	lstat_path("dangling");
	ok("open dangling O_CREAT|O_EXCL", open("dangling", O_CREAT | O_EXCL | O_WRONLY, 0644));
	int fd = open("dangling", O_CREAT | O_WRONLY, 0644);
	ok("open dangling O_CREAT", fd);
	close(fd);
	stat_path("nowhere");
	ok("open ln O_NOFOLLOW", open("ln", O_RDONLY | O_NOFOLLOW));

	ok("symlink l2 l1", symlink("l2", "l1"));
	ok("symlink l1 l2", symlink("l1", "l2"));
	stat_path("l1");
	ok("open l1", open("l1", O_RDONLY));
	lstat_path("l1");

	ok("symlink d dl", symlink("d", "dl"));
	stat_path("dl/gamma");
	lstat_path("dl");
	lstat_path("dl/");
	cat("dl/zeta");

	ok("link a a2", link("a", "a2"));
	stat_path("a");
	stat_path("a2");
	ok("link d d2", link("d", "d2"));
	ok("link missing x", link("missing", "x"));
	ok("link a ln", link("a", "ln"));
	ok("link ln ln2", link("ln", "ln2"));
	lstat_path("ln2");
	lstat_path("ln");
}

int main(void)
{
	/* A terminal's stdout is line-buffered and a pipe's is not: make both the same. */
	setvbuf(stdout, NULL, _IOLBF, 0);
	umask(022);
	if (mkdir("/tmp", 01777) < 0 && errno != EEXIST)
		printf("mkdir /tmp: %s\n", strerrorname_np(errno));
	char dir[] = "/tmp/files.XXXXXX";
	if (!mkdtemp(dir)) {
		printf("mkdtemp: %s\n", strerrorname_np(errno));
		return 1;
	}
	ok("chdir to the scratch directory", chdir(dir));
	char cwd[256];
	printf("getcwd is the scratch directory: %s\n",
	       getcwd(cwd, sizeof(cwd)) && !strcmp(cwd, dir) ? "yes" : "no");
	value("getcwd into 4 bytes", getcwd(cwd, 4) ? 0 : -1);

	files_read_write();
	files_directories();
	files_rename();
	files_unlink();
	files_links();

	ok("chdir /", chdir("/"));
	int removed = remove_tree(dir);
	struct stat st;
	printf("removed %d names, the scratch directory gone: %s\n", removed,
	       lstat(dir, &st) < 0 && errno == ENOENT ? "yes" : "no");
	return 0;
}
