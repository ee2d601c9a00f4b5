/*
 * VFS selftests through the calls alone (suite vfs_calls): getdents, chdir and
 * getcwd, dot and dot-dot, and a trailing slash.
 *
 * The suite vfs_calls (vfs_calls_*_test.c, a file per kind of call) checks what each
 * call does when given good input by what the other calls then see (contents read
 * back, stat's fields, listings, offsets, descriptor numbers); the errors for bad
 * input are the vfs_errors suite. Each test runs in a new thread in its own directory
 * (vfs_test_run()), so the first descriptor it opens is 0, as in a new process, and
 * it ends with the caches' counts where they were: a reference a call forgot to drop
 * fails the test that made it.
 */
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/printk.h>
#include <grace/string.h>
#include <grace/test.h>

#include "vfs_test_util.h"

/* ---- getdents ---- */

#define GD_FILES 40
#define GD_DIRS 10
#define GD_LINKS 10
#define GD_ENTRIES (GD_FILES + GD_DIRS + GD_LINKS)
#define GD_NAME_LEN 16

static void gd_make(const char *dir)
{
	for (unsigned i = 0; i < GD_FILES; i++)
		EXPECT_EQ(vfs_write_file(vfs_at(dir, "file%02u", i), "", 0), 0);
	for (unsigned i = 0; i < GD_DIRS; i++)
		EXPECT_EQ(vfs_mkdir(vfs_at(dir, "dir%02u", i), 0755), 0);
	for (unsigned i = 0; i < GD_LINKS; i++)
		EXPECT_EQ(vfs_symlink("file00", vfs_at(dir, "link%02u", i)), 0);
}

/* The entry index of a name gd_make() made, or -1. */
static int gd_index(const char *name, u8 *type)
{
	static const struct {
		const char *prefix;
		unsigned first, count;
		u8 type;
	} kinds[] = {
	    {"file", 0, GD_FILES, DT_REG},
	    {"dir", GD_FILES, GD_DIRS, DT_DIR},
	    {"link", GD_FILES + GD_DIRS, GD_LINKS, DT_LNK},
	};
	for (unsigned k = 0; k < ARRAY_SIZE(kinds); k++) {
		size_t pl = strlen(kinds[k].prefix);
		if (strncmp(name, kinds[k].prefix, pl) || strlen(name) != pl + 2)
			continue;
		char a = name[pl], b = name[pl + 1];
		if (a < '0' || a > '9' || b < '0' || b > '9')
			return -1;
		unsigned n = (unsigned)(a - '0') * 10 + (unsigned)(b - '0');
		if (n >= kinds[k].count)
			return -1;
		*type = kinds[k].type;
		return (int)(kinds[k].first + n);
	}
	return -1;
}

struct gd_pass {
	unsigned calls;
	unsigned seen[GD_ENTRIES];
	unsigned dots, dotdots, strangers, bad_records;
	unsigned order_n; /* the entries in the order getdents gave them */
	char order[GD_ENTRIES][GD_NAME_LEN];
	s64 off[GD_ENTRIES];
};

/* Read fd's directory to its end with a buffer of size bytes, noting each record. */
static void gd_read(const char *dir, int fd, size_t size, struct gd_pass *p)
{
	static char buf[4096];
	long n;
	*p = (struct gd_pass){0};
	while ((n = vfs_getdents(fd, buf, size)) > 0) {
		p->calls++;
		for (long at = 0; at < n;) {
			struct dirent64 *d = (struct dirent64 *)(buf + at);
			size_t len = strlen(d->d_name);
			if (d->d_reclen % 8 ||
			    d->d_reclen < offsetof(struct dirent64, d_name) + len + 1 ||
			    at + d->d_reclen > n) {
				p->bad_records++;
				break;
			}
			at += d->d_reclen;
			if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, "..")) {
				EXPECT_EQ(d->d_type, DT_DIR);
				*(d->d_name[1] ? &p->dotdots : &p->dots) += 1;
				continue;
			}
			u8 type = 0;
			int i = gd_index(d->d_name, &type);
			if (i < 0) {
				p->strangers++;
				continue;
			}
			p->seen[i]++;
			EXPECT_EQ(d->d_type, type);
			struct stat st;
			EXPECT_EQ(vfs_lstat(vfs_at(dir, "%s", d->d_name), &st), 0);
			EXPECT_EQ(d->d_ino, st.st_ino);
			if (p->order_n < GD_ENTRIES) {
				strlcpy(p->order[p->order_n], d->d_name, GD_NAME_LEN);
				p->off[p->order_n++] = d->d_off;
			}
		}
	}
	EXPECT_EQ(n, 0);
}

static void gd_expect_complete(const struct gd_pass *p)
{
	EXPECT_EQ(p->bad_records, 0);
	EXPECT_EQ(p->strangers, 0);
	/* "." and "..", if a directory lists them, once each. */
	EXPECT_LE(p->dots, 1);
	EXPECT_LE(p->dotdots, 1);
	unsigned wrong = 0;
	for (unsigned i = 0; i < GD_ENTRIES; i++)
		wrong += p->seen[i] != 1;
	EXPECT_EQ(wrong, 0);
	EXPECT_EQ(p->order_n, GD_ENTRIES);
}

static void getdents_once(const char *dir)
{
	static struct gd_pass p;
	gd_make(dir);
	int fd = vfs_open(dir, O_RDONLY | O_DIRECTORY, 0);
	ASSERT_GE(fd, 0);
	gd_read(dir, fd, 4096, &p);
	gd_expect_complete(&p);
	/* At the end it stays at the end; from offset 0 it lists everything again. */
	static char buf[256];
	EXPECT_EQ(vfs_getdents(fd, buf, sizeof(buf)), 0);
	EXPECT_EQ(vfs_lseek(fd, 0, SEEK_SET), 0);
	gd_read(dir, fd, 4096, &p);
	gd_expect_complete(&p);
	EXPECT_EQ(vfs_close(fd), 0);
	/* A removed entry is no longer listed, the others still once. */
	EXPECT_EQ(vfs_unlink(vfs_at(dir, "file07")), 0);
	fd = vfs_open(dir, O_RDONLY | O_DIRECTORY, 0);
	ASSERT_GE(fd, 0);
	gd_read(dir, fd, 4096, &p);
	EXPECT_EQ(p.seen[7], 0);
	p.seen[7] = 1;
	p.order_n++;
	gd_expect_complete(&p);
	EXPECT_EQ(vfs_close(fd), 0);
}

TEST(vfs_calls, getdents_lists_every_entry_exactly_once_with_its_type_and_inode)
{
	vfs_test_run("vfs_calls", __func__, getdents_once);
}

/* Room for one of gd_make()'s records (32 bytes each) and a "." (24), never two of its own. */
#define GD_SMALL_BUF 56

static void getdents_small(const char *dir)
{
	static struct gd_pass p, rest;
	static char buf[8];
	gd_make(dir);
	int fd = vfs_open(dir, O_RDONLY | O_DIRECTORY, 0);
	ASSERT_GE(fd, 0);
	/* No room for a single record. */
	EXPECT_EQ(vfs_getdents(fd, buf, sizeof(buf)), -EINVAL);
	gd_read(dir, fd, GD_SMALL_BUF, &p);
	gd_expect_complete(&p);
	EXPECT_GE(p.calls, GD_ENTRIES / 2);
	/* Back to the position after the tenth record: the rest follows, in the same order. */
	const unsigned k = 10;
	ASSERT_EQ(p.order_n, GD_ENTRIES);
	EXPECT_EQ(vfs_lseek(fd, p.off[k], SEEK_SET), p.off[k]);
	gd_read(dir, fd, GD_SMALL_BUF, &rest);
	ASSERT_EQ(rest.order_n, GD_ENTRIES - k - 1);
	for (unsigned i = 0; i < rest.order_n; i++)
		EXPECT_EQ(strcmp(rest.order[i], p.order[k + 1 + i]), 0);
	EXPECT_EQ(vfs_close(fd), 0);
}

TEST(vfs_calls, getdents_with_a_small_buffer_takes_several_calls_and_resumes_at_d_off)
{
	vfs_test_run("vfs_calls", __func__, getdents_small);
}

/* ---- paths ---- */

static bool cwd_is(const char *want)
{
	char cwd[VFS_AT_LEN];
	long n = vfs_getcwd(cwd, sizeof(cwd));
	if (!EXPECT_EQ(n, strlen(want)))
		return false;
	return EXPECT_EQ(strcmp(cwd, want), 0);
}

static void chdir_getcwd(const char *dir)
{
	char cwd[VFS_AT_LEN];
	struct stat st;
	cwd_is("/");
	ASSERT_EQ(vfs_chdir(dir), 0);
	cwd_is(dir);
	/* Relative paths start at the current directory. */
	EXPECT_EQ(vfs_mkdir("sub", 0755), 0);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "sub"), &st), 0);
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_EQ(vfs_write_file("sub/f", "rel", 3), 0);
	EXPECT_TRUE(vfs_file_is(vfs_at(dir, "sub/f"), "rel"));
	EXPECT_EQ(vfs_chdir("sub"), 0);
	cwd_is(vfs_at(dir, "sub"));
	EXPECT_TRUE(vfs_file_is("f", "rel"));
	EXPECT_TRUE(vfs_file_is("./f", "rel"));
	EXPECT_TRUE(vfs_file_is("../sub/./f", "rel"));
	EXPECT_EQ(vfs_chdir(".."), 0);
	cwd_is(dir);
	EXPECT_EQ(vfs_chdir("./sub/../sub/"), 0);
	cwd_is(vfs_at(dir, "sub"));
	/* The current directory is the directory, not its name: it follows a rename. */
	EXPECT_EQ(vfs_rename(vfs_at(dir, "sub"), vfs_at(dir, "moved"), 0), 0);
	cwd_is(vfs_at(dir, "moved"));
	EXPECT_TRUE(vfs_file_is("f", "rel"));
	/* getcwd needs room for the NUL. */
	size_t len = strlen(vfs_at(dir, "moved"));
	EXPECT_EQ(vfs_getcwd(cwd, len), -ERANGE);
	EXPECT_EQ(vfs_getcwd(cwd, len + 1), len);
	/* A failed chdir leaves the current directory alone. */
	EXPECT_EQ(vfs_chdir("f"), -ENOTDIR);
	EXPECT_EQ(vfs_chdir("missing"), -ENOENT);
	cwd_is(vfs_at(dir, "moved"));
	EXPECT_EQ(vfs_chdir("/"), 0);
	cwd_is("/");
	EXPECT_EQ(vfs_stat("f", &st), -ENOENT);
}

TEST(vfs_calls, chdir_and_getcwd_resolve_relative_paths)
{
	vfs_test_run("vfs_calls", __func__, chdir_getcwd);
}

static void dot_dotdot(const char *dir)
{
	static const char *const tree[] = {"a/", "a/b/"};
	ASSERT_EQ(vfs_make_tree(dir, tree, ARRAY_SIZE(tree)), 0);
	u64 root = vfs_ino_of("/"), a = vfs_ino_of(vfs_at(dir, "a")),
	    b = vfs_ino_of(vfs_at(dir, "a/b"));
	ASSERT_NE(root, 0);
	EXPECT_EQ(vfs_ino_of("/.."), root);
	EXPECT_EQ(vfs_ino_of("/../../."), root);
	EXPECT_EQ(vfs_ino_of("/."), root);
	EXPECT_EQ(vfs_ino_of(vfs_at(dir, "a/b/..")), a);
	EXPECT_EQ(vfs_ino_of(vfs_at(dir, "a/./b/.")), b);
	EXPECT_EQ(vfs_ino_of(vfs_at(dir, "a/b/../../a/b")), b);
	EXPECT_EQ(vfs_ino_of(vfs_at(dir, "a/b/../..")), vfs_ino_of(dir));
	EXPECT_EQ(vfs_chdir("/"), 0);
	EXPECT_EQ(vfs_chdir(".."), 0);
	cwd_is("/");
	EXPECT_EQ(vfs_chdir(vfs_at(dir, "a/b")), 0);
	EXPECT_EQ(vfs_chdir("../.."), 0);
	cwd_is(dir);
	EXPECT_EQ(vfs_ino_of("."), vfs_ino_of(dir));
	EXPECT_EQ(vfs_ino_of("a/.."), vfs_ino_of(dir));
	EXPECT_EQ(vfs_chdir("/"), 0);
}

TEST(vfs_calls, dot_is_the_directory_dotdot_its_parent_and_dotdot_of_root_is_root)
{
	vfs_test_run("vfs_calls", __func__, dot_dotdot);
}

static void trailing_slash(const char *dir)
{
	struct stat st;
	static const char *const tree[] = {"sub/", "f=x", "ld->sub"};
	ASSERT_EQ(vfs_make_tree(dir, tree, ARRAY_SIZE(tree)), 0);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "sub/"), &st), 0);
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_EQ(vfs_stat(vfs_at(dir, "sub//"), &st), 0);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "/sub"), &st), 0); /* "dir//sub" */
	/* A trailing slash makes even lstat follow a link to a directory. */
	EXPECT_EQ(vfs_lstat(vfs_at(dir, "ld/"), &st), 0);
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_EQ(vfs_stat(vfs_at(dir, "f/"), &st), -ENOTDIR);
	EXPECT_EQ(vfs_lstat(vfs_at(dir, "f/"), &st), -ENOTDIR);
	EXPECT_EQ(vfs_open(vfs_at(dir, "f/"), O_RDONLY, 0), -ENOTDIR);
	EXPECT_EQ(vfs_unlink(vfs_at(dir, "f/")), -ENOTDIR);
	EXPECT_EQ(vfs_open(vfs_at(dir, "g/"), O_WRONLY | O_CREAT, 0644), -EISDIR);
	EXPECT_EQ(vfs_mkdir(vfs_at(dir, "new/"), 0755), 0);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "new"), &st), 0);
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_EQ(vfs_rmdir(vfs_at(dir, "new/")), 0);
	struct vfs_text t;
	vfs_text_init(&t, vfs_expected, sizeof(vfs_expected));
	vfs_line_dir(&t, "sub", 0, 2);
	vfs_line_file(&t, "f", "x", 1, 1);
	vfs_line_symlink(&t, "ld", "sub");
	vfs_expect_listing(dir, dir, &t);
}

TEST(vfs_calls, a_trailing_slash_is_allowed_on_directories_and_enotdir_on_files)
{
	vfs_test_run("vfs_calls", __func__, trailing_slash);
}
