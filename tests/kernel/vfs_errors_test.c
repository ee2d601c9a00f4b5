/*
 * VFS selftests of bad input (suite vfs_errors): each call given a bad path, name,
 * descriptor, offset or state returns the errno Linux returns for it, and leaves
 * the tree exactly as it was: every test lists its directory before the bad calls
 * and after them (vfs_snapshot, vfs_expect_unchanged), names, types, link counts
 * and contents. Out of memory is injected with failslab. Each test runs in its own
 * thread and directory (vfs_test_run()), which also checks that the failed calls
 * left no reference behind in the caches' counts.
 */
#include <grace/errno.h>
#include <grace/failslab.h>
#include <grace/fs.h>
#include <grace/printk.h>
#include <grace/slab.h>
#include <grace/string.h>
#include <grace/test.h>

#include "vfs_test_util.h"

#define FAILSLAB_ALWAYS 1000000 /* ppm: every allocation fails */

static void tree(const char *dir, const char *const *spec, unsigned n)
{
	EXPECT_EQ(vfs_make_tree(dir, spec, n), 0);
}

/* ---- paths ---- */

static void empty_path(const char *dir)
{
	struct stat st;
	char buf[8];
	static const char *const spec[] = {"f=x", "d/"};
	tree(dir, spec, ARRAY_SIZE(spec));
	const char *f = vfs_at(dir, "f"), *g = vfs_at(dir, "g");
	ASSERT_TRUE(vfs_snapshot(dir));
	EXPECT_EQ(vfs_stat("", &st), -ENOENT);
	EXPECT_EQ(vfs_lstat("", &st), -ENOENT);
	EXPECT_EQ(vfs_open("", O_RDONLY, 0), -ENOENT);
	EXPECT_EQ(vfs_open("", O_WRONLY | O_CREAT, 0644), -ENOENT);
	EXPECT_EQ(vfs_mkdir("", 0755), -ENOENT);
	EXPECT_EQ(vfs_rmdir(""), -ENOENT);
	EXPECT_EQ(vfs_unlink(""), -ENOENT);
	EXPECT_EQ(vfs_rename("", g, 0), -ENOENT);
	EXPECT_EQ(vfs_rename(f, "", 0), -ENOENT);
	EXPECT_EQ(vfs_link("", g), -ENOENT);
	EXPECT_EQ(vfs_link(f, ""), -ENOENT);
	EXPECT_EQ(vfs_symlink("x", ""), -ENOENT);
	EXPECT_EQ(vfs_symlink("", g), -ENOENT);
	EXPECT_EQ(vfs_readlink("", buf, sizeof(buf)), -ENOENT);
	EXPECT_EQ(vfs_chdir(""), -ENOENT);
	EXPECT_EQ(vfs_truncate("", 0), -ENOENT);
	vfs_expect_unchanged(dir, "after calls on the empty path");
}

TEST(vfs_errors, the_empty_path_is_enoent_for_every_call)
{
	vfs_test_run("vfs_errors", __func__, empty_path);
}

/*
 * A path of exactly len bytes (NUL not counted) naming dir/leaf: dir, "/", then as
 * many "./" as it takes (one "/" more where the count is odd).
 */
static const char *long_path(const char *dir, const char *leaf, size_t len)
{
	static char p[PATH_MAX + 64];
	size_t at = (size_t)scnprintf(p, sizeof(p), "%s/", dir), tail = strlen(leaf);
	if (at + tail > len || len >= sizeof(p))
		return NULL;
	if ((len - at - tail) % 2)
		p[at++] = '/';
	while (at + tail < len) {
		p[at++] = '.';
		p[at++] = '/';
	}
	memcpy(p + at, leaf, tail + 1);
	return p;
}

static void path_max(const char *dir)
{
	struct stat st;
	ASSERT_TRUE(vfs_snapshot(dir));
	/* PATH_MAX bytes with the NUL is the longest path: it is looked up... */
	const char *p = long_path(dir, "x", PATH_MAX - 1);
	ASSERT_TRUE(p != NULL);
	EXPECT_EQ(strlen(p), PATH_MAX - 1);
	EXPECT_EQ(vfs_stat(p, &st), -ENOENT);
	/* ... one byte more is refused before anything is looked up or made. */
	static const size_t too_long[] = {PATH_MAX, PATH_MAX + 1, PATH_MAX + 50};
	for (unsigned i = 0; i < ARRAY_SIZE(too_long); i++) {
		p = long_path(dir, "x", too_long[i]);
		ASSERT_TRUE(p != NULL);
		EXPECT_EQ(vfs_stat(p, &st), -ENAMETOOLONG);
		EXPECT_EQ(vfs_open(p, O_WRONLY | O_CREAT, 0644), -ENAMETOOLONG);
		EXPECT_EQ(vfs_mkdir(p, 0755), -ENAMETOOLONG);
		EXPECT_EQ(vfs_symlink("t", p), -ENAMETOOLONG);
		EXPECT_EQ(vfs_unlink(p), -ENAMETOOLONG);
		EXPECT_EQ(vfs_chdir(p), -ENAMETOOLONG);
	}
	vfs_expect_unchanged(dir, "after paths of PATH_MAX bytes or more");
	/* The longest path creates like any other. */
	p = long_path(dir, "x", PATH_MAX - 1);
	EXPECT_EQ(vfs_mkdir(p, 0755), 0);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "x"), &st), 0);
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	EXPECT_EQ(vfs_rmdir(vfs_at(dir, "x")), 0);
	/* A path that resolves to "/" from PATH_MAX - 1 bytes of "/./././...". */
	p = long_path("", ".", PATH_MAX - 1);
	ASSERT_TRUE(p != NULL);
	EXPECT_EQ(vfs_stat(p, &st), 0);
	EXPECT_TRUE(S_ISDIR(st.st_mode));
}

TEST(vfs_errors, a_path_of_path_max_bytes_is_enametoolong_and_one_less_is_looked_up)
{
	vfs_test_run("vfs_errors", __func__, path_max);
}

static void name_max(const char *dir)
{
	static char n255[NAME_MAX + 1], n256[NAME_MAX + 2];
	struct stat st;
	memset(n255, 'n', NAME_MAX);
	memset(n256, 'n', NAME_MAX + 1);
	static const char *const spec[] = {"f=x", "d/"};
	tree(dir, spec, ARRAY_SIZE(spec));
	const char *f = vfs_at(dir, "f");
	ASSERT_TRUE(vfs_snapshot(dir));
	const char *p = vfs_at(dir, "%s", n256);
	EXPECT_EQ(vfs_stat(p, &st), -ENAMETOOLONG);
	EXPECT_EQ(vfs_open(p, O_WRONLY | O_CREAT, 0644), -ENAMETOOLONG);
	EXPECT_EQ(vfs_mkdir(p, 0755), -ENAMETOOLONG);
	EXPECT_EQ(vfs_symlink("t", p), -ENAMETOOLONG);
	EXPECT_EQ(vfs_link(f, p), -ENAMETOOLONG);
	EXPECT_EQ(vfs_rename(f, p, 0), -ENAMETOOLONG);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "%s/x", n256), &st), -ENAMETOOLONG);
	EXPECT_EQ(vfs_mkdir(vfs_at(dir, "d/%s/x", n256), 0755), -ENAMETOOLONG);
	vfs_expect_unchanged(dir, "after names of NAME_MAX + 1 bytes");
	/* NAME_MAX bytes is a name like any other. */
	p = vfs_at(dir, "d/%s", n255);
	EXPECT_EQ(vfs_write_file(p, "long", 4), 0);
	EXPECT_TRUE(vfs_file_is(p, "long"));
	static char want[VFS_LISTING_MAX];
	struct vfs_text t;
	vfs_text_init(&t, want, sizeof(want));
	vfs_line_file(&t, "f", "x", 1, 1);
	vfs_line_dir(&t, "d", 1, 2);
	vfs_line_file(&t, vfs_at("d", "%s", n255), "long", 4, 1);
	vfs_expect_listing("a name of NAME_MAX bytes", dir, &t);
	EXPECT_EQ(vfs_rename(p, vfs_at(dir, "%s", n255), 0), 0);
	EXPECT_EQ(vfs_unlink(vfs_at(dir, "%s", n255)), 0);
}

TEST(vfs_errors, a_component_of_256_bytes_is_enametoolong_and_255_is_a_name)
{
	vfs_test_run("vfs_errors", __func__, name_max);
}

static void missing_parent(const char *dir)
{
	struct stat st;
	static const char *const spec[] = {"f=x", "d/"};
	tree(dir, spec, ARRAY_SIZE(spec));
	const char *f = vfs_at(dir, "f"), *p = vfs_at(dir, "d/missing/x");
	ASSERT_TRUE(vfs_snapshot(dir));
	EXPECT_EQ(vfs_stat(p, &st), -ENOENT);
	EXPECT_EQ(vfs_open(p, O_WRONLY | O_CREAT, 0644), -ENOENT);
	EXPECT_EQ(vfs_mkdir(p, 0755), -ENOENT);
	EXPECT_EQ(vfs_symlink("t", p), -ENOENT);
	EXPECT_EQ(vfs_link(f, p), -ENOENT);
	EXPECT_EQ(vfs_rename(f, p, 0), -ENOENT);
	EXPECT_EQ(vfs_rename(p, f, 0), -ENOENT);
	EXPECT_EQ(vfs_unlink(vfs_at(dir, "missing")), -ENOENT);
	EXPECT_EQ(vfs_rmdir(vfs_at(dir, "missing")), -ENOENT);
	EXPECT_EQ(vfs_truncate(vfs_at(dir, "missing"), 0), -ENOENT);
	EXPECT_EQ(vfs_chdir(vfs_at(dir, "missing")), -ENOENT);
	vfs_expect_unchanged(dir, "after calls through a missing directory");
}

TEST(vfs_errors, a_missing_parent_is_enoent_and_creates_nothing)
{
	vfs_test_run("vfs_errors", __func__, missing_parent);
}

static void file_as_dir(const char *dir)
{
	struct stat st;
	static const char *const spec[] = {"f=x", "g=y"};
	tree(dir, spec, ARRAY_SIZE(spec));
	const char *f = vfs_at(dir, "f"), *p = vfs_at(dir, "f/x"), *g = vfs_at(dir, "g");
	ASSERT_TRUE(vfs_snapshot(dir));
	EXPECT_EQ(vfs_stat(p, &st), -ENOTDIR);
	EXPECT_EQ(vfs_open(p, O_RDONLY, 0), -ENOTDIR);
	EXPECT_EQ(vfs_open(p, O_WRONLY | O_CREAT, 0644), -ENOTDIR);
	EXPECT_EQ(vfs_mkdir(p, 0755), -ENOTDIR);
	EXPECT_EQ(vfs_unlink(p), -ENOTDIR);
	EXPECT_EQ(vfs_symlink("t", p), -ENOTDIR);
	EXPECT_EQ(vfs_link(g, p), -ENOTDIR);
	EXPECT_EQ(vfs_rename(g, p, 0), -ENOTDIR);
	EXPECT_EQ(vfs_rename(p, g, 0), -ENOTDIR);
	EXPECT_EQ(vfs_chdir(f), -ENOTDIR);
	EXPECT_EQ(vfs_open(f, O_RDONLY | O_DIRECTORY, 0), -ENOTDIR);
	vfs_expect_unchanged(dir, "after a file used as a directory");
}

TEST(vfs_errors, a_file_used_as_a_directory_is_enotdir)
{
	vfs_test_run("vfs_errors", __func__, file_as_dir);
}

/* ---- names that exist, directories that are not empty ---- */

static void eexist(const char *dir)
{
	static const char *const spec[] = {"f=x", "d/", "l->f", "dl->nowhere"};
	static const char *const names[] = {"f", "d", "l", "dl"};
	tree(dir, spec, ARRAY_SIZE(spec));
	const char *f = vfs_at(dir, "f");
	ASSERT_TRUE(vfs_snapshot(dir));
	/* O_EXCL does not follow a last symlink, even a dangling one. */
	for (unsigned i = 0; i < ARRAY_SIZE(names); i++) {
		const char *p = vfs_at(dir, "%s", names[i]);
		EXPECT_EQ(vfs_mkdir(p, 0755), -EEXIST);
		EXPECT_EQ(vfs_open(p, O_WRONLY | O_CREAT | O_EXCL, 0644), -EEXIST);
		EXPECT_EQ(vfs_link(f, p), -EEXIST);
		EXPECT_EQ(vfs_symlink("t", p), -EEXIST);
	}
	EXPECT_EQ(vfs_mkdir(vfs_at(dir, "."), 0755), -EEXIST);
	EXPECT_EQ(vfs_mkdir(vfs_at(dir, "d/.."), 0755), -EEXIST);
	EXPECT_EQ(vfs_mkdir("/", 0755), -EEXIST);
	vfs_expect_unchanged(dir, "after creates onto existing names");
}

TEST(vfs_errors, mkdir_o_excl_link_and_symlink_onto_an_existing_name_are_eexist)
{
	vfs_test_run("vfs_errors", __func__, eexist);
}

static void enotempty(const char *dir)
{
	static const char *const spec[] = {"a/", "a/f=x", "b/", "b/c/", "s/", "s/l->x", "e/"};
	tree(dir, spec, ARRAY_SIZE(spec));
	ASSERT_TRUE(vfs_snapshot(dir));
	EXPECT_EQ(vfs_rmdir(vfs_at(dir, "a")), -ENOTEMPTY);
	EXPECT_EQ(vfs_rmdir(vfs_at(dir, "b")), -ENOTEMPTY);
	EXPECT_EQ(vfs_rmdir(vfs_at(dir, "s")), -ENOTEMPTY);
	EXPECT_EQ(vfs_rmdir(dir), -ENOTEMPTY);
	/* Nor may a directory replace one that is not empty. */
	EXPECT_EQ(vfs_rename(vfs_at(dir, "e"), vfs_at(dir, "a"), 0), -ENOTEMPTY);
	vfs_expect_unchanged(dir, "after rmdir of directories that are not empty");
	/* Emptied, they go. */
	EXPECT_EQ(vfs_unlink(vfs_at(dir, "a/f")), 0);
	EXPECT_EQ(vfs_rmdir(vfs_at(dir, "a")), 0);
}

TEST(vfs_errors, rmdir_of_a_directory_that_is_not_empty_is_enotempty)
{
	vfs_test_run("vfs_errors", __func__, enotempty);
}

static void rename_subtree(const char *dir)
{
	static const char *const spec[] = {"a/", "a/b/", "a/b/c/", "f=x"};
	tree(dir, spec, ARRAY_SIZE(spec));
	ASSERT_TRUE(vfs_snapshot(dir));
	EXPECT_EQ(vfs_rename(vfs_at(dir, "a"), vfs_at(dir, "a/x"), 0), -EINVAL);
	EXPECT_EQ(vfs_rename(vfs_at(dir, "a"), vfs_at(dir, "a/b/c/x"), 0), -EINVAL);
	EXPECT_EQ(vfs_rename(vfs_at(dir, "a/b"), vfs_at(dir, "a/b/c/y"), 0), -EINVAL);
	EXPECT_EQ(vfs_rename(vfs_at(dir, "a"), vfs_at(dir, "a/b"), 0), -EINVAL);
	/* Flags other than RENAME_NOREPLACE are refused too. */
	EXPECT_EQ(vfs_rename(vfs_at(dir, "f"), vfs_at(dir, "g"), 1u << 7), -EINVAL);
	vfs_expect_unchanged(dir, "after renames of a directory into itself");
}

TEST(vfs_errors, rename_of_a_directory_into_its_own_subtree_is_einval)
{
	vfs_test_run("vfs_errors", __func__, rename_subtree);
}

static void rename_kinds(const char *dir)
{
	static const char *const spec[] = {"f=x", "d/", "e/", "e/in=y"};
	tree(dir, spec, ARRAY_SIZE(spec));
	ASSERT_TRUE(vfs_snapshot(dir));
	EXPECT_EQ(vfs_rename(vfs_at(dir, "f"), vfs_at(dir, "d"), 0), -EISDIR);
	EXPECT_EQ(vfs_rename(vfs_at(dir, "d"), vfs_at(dir, "f"), 0), -ENOTDIR);
	EXPECT_EQ(vfs_rename(vfs_at(dir, "e"), vfs_at(dir, "f"), 0), -ENOTDIR);
	vfs_expect_unchanged(dir, "after renames between a file and a directory");
}

TEST(vfs_errors, rename_of_a_file_onto_a_directory_is_eisdir_and_back_enotdir)
{
	vfs_test_run("vfs_errors", __func__, rename_kinds);
}

static void link_dir(const char *dir)
{
	static const char *const spec[] = {"d/"};
	tree(dir, spec, ARRAY_SIZE(spec));
	ASSERT_TRUE(vfs_snapshot(dir));
	EXPECT_EQ(vfs_link(vfs_at(dir, "d"), vfs_at(dir, "d2")), -EPERM);
	vfs_expect_unchanged(dir, "after link of a directory");
}

TEST(vfs_errors, link_to_a_directory_is_eperm)
{
	vfs_test_run("vfs_errors", __func__, link_dir);
}

/* link(DIR, NEW) reports NEW's error before the directory's EPERM, as Linux does. */
static void link_dir_new_name_first(const char *dir)
{
	static const char *const spec[] = {"d/", "f=x"};
	tree(dir, spec, ARRAY_SIZE(spec));
	EXPECT_EQ(vfs_symlink("loop", vfs_at(dir, "loop")), 0);
	ASSERT_TRUE(vfs_snapshot(dir));
	const char *d = vfs_at(dir, "d");
	EXPECT_EQ(vfs_link(d, vfs_at(dir, "f")), -EEXIST);
	EXPECT_EQ(vfs_link(d, vfs_at(dir, "none/x")), -ENOENT);
	EXPECT_EQ(vfs_link(d, vfs_at(dir, "f/x")), -ENOTDIR);
	EXPECT_EQ(vfs_link(d, vfs_at(dir, "loop/x")), -ELOOP);
	EXPECT_EQ(vfs_link(d, vfs_at(dir, "new")), -EPERM);
	vfs_expect_unchanged(dir, "after links of a directory onto bad names");
}

TEST(vfs_errors, link_of_a_directory_reports_the_new_names_error_first)
{
	vfs_test_run("vfs_errors", __func__, link_dir_new_name_first);
}

/* ---- descriptors ---- */

static void read_only_fd(const char *dir)
{
	static const char *const spec[] = {"f=data"};
	tree(dir, spec, ARRAY_SIZE(spec));
	ASSERT_TRUE(vfs_snapshot(dir));
	int fd = vfs_open(vfs_at(dir, "f"), O_RDONLY, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(vfs_write(fd, "XXXX", 4), -EBADF);
	EXPECT_EQ(vfs_pwrite(fd, "XXXX", 4, 0), -EBADF);
	EXPECT_EQ(vfs_lseek(fd, 0, SEEK_CUR), 0);
	EXPECT_EQ(vfs_close(fd), 0);
	vfs_expect_unchanged(dir, "after writes on a read-only descriptor");
}

TEST(vfs_errors, write_on_an_o_rdonly_fd_is_ebadf_and_writes_nothing)
{
	vfs_test_run("vfs_errors", __func__, read_only_fd);
}

#define BAD_FD_UNOPENED (FD_MAX - 1) /* inside the table's range, never opened here */
#define BAD_FD_HUGE 5000	     /* past FD_MAX */

static void bad_fds(const char *dir)
{
	static char buf[256];
	struct stat st;
	static const char *const spec[] = {"f=data"};
	tree(dir, spec, ARRAY_SIZE(spec));
	ASSERT_TRUE(vfs_snapshot(dir));
	int good = vfs_open(vfs_at(dir, "f"), O_RDWR, 0);
	ASSERT_GE(good, 0);
	int closed = vfs_open(vfs_at(dir, "f"), O_RDONLY, 0);
	ASSERT_GE(closed, 0);
	EXPECT_EQ(vfs_close(closed), 0);
	const int bad[] = {-1, BAD_FD_UNOPENED, BAD_FD_HUGE, closed};
	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		int fd = bad[i];
		EXPECT_EQ(vfs_close(fd), -EBADF);
		EXPECT_EQ(vfs_read(fd, buf, 4), -EBADF);
		EXPECT_EQ(vfs_write(fd, "x", 1), -EBADF);
		EXPECT_EQ(vfs_pread(fd, buf, 4, 0), -EBADF);
		EXPECT_EQ(vfs_pwrite(fd, "x", 1, 0), -EBADF);
		EXPECT_EQ(vfs_lseek(fd, 0, SEEK_SET), -EBADF);
		EXPECT_EQ(vfs_fstat(fd, &st), -EBADF);
		EXPECT_EQ(vfs_getdents(fd, buf, sizeof(buf)), -EBADF);
		EXPECT_EQ(vfs_ftruncate(fd, 0), -EBADF);
		EXPECT_EQ(vfs_dup(fd), -EBADF);
		EXPECT_EQ(vfs_dup2(fd, good), -EBADF);
	}
	EXPECT_EQ(vfs_dup2(good, -1), -EBADF);
	EXPECT_EQ(vfs_dup2(good, FD_MAX), -EBADF);
	EXPECT_EQ(vfs_dup2(good, BAD_FD_HUGE), -EBADF);
	/* The good descriptor came through all that, still open on its file. */
	EXPECT_EQ(vfs_pread(good, buf, 4, 0), 4);
	EXPECT_EQ(memcmp(buf, "data", 4), 0);
	EXPECT_EQ(vfs_close(good), 0);
	vfs_expect_unchanged(dir, "after calls on bad descriptors");
}

TEST(vfs_errors, bad_descriptors_are_ebadf_for_every_call_that_takes_one)
{
	vfs_test_run("vfs_errors", __func__, bad_fds);
}

static void emfile(const char *dir)
{
	struct stat st;
	static const char *const spec[] = {"f=x"};
	tree(dir, spec, ARRAY_SIZE(spec));
	ASSERT_TRUE(vfs_snapshot(dir));
	const char *f = vfs_at(dir, "f"), *g = vfs_at(dir, "g");
	int opened = 0;
	while (opened < FD_MAX && vfs_open(f, O_RDONLY, 0) >= 0)
		opened++;
	EXPECT_EQ(opened, FD_MAX);
	/* Full: no descriptor, and no file made for one. */
	EXPECT_EQ(vfs_open(g, O_WRONLY | O_CREAT, 0644), -EMFILE);
	EXPECT_EQ(vfs_open(g, O_WRONLY | O_CREAT | O_EXCL, 0644), -EMFILE);
	EXPECT_EQ(vfs_dup(0), -EMFILE);
	for (int fd = 0; fd < opened; fd++)
		EXPECT_EQ(vfs_close(fd), 0);
	EXPECT_EQ(vfs_stat(g, &st), -ENOENT);
	vfs_expect_unchanged(dir, "after opens on a full descriptor table");
}

TEST(vfs_errors, a_full_descriptor_table_is_emfile_and_creates_nothing)
{
	vfs_test_run("vfs_errors", __func__, emfile);
}

/* ---- symlinks ---- */

static void symlink_loop(const char *dir)
{
	struct stat st;
	static const char *const spec[] = {"a->b", "b->a", "c->c", "d/"};
	tree(dir, spec, ARRAY_SIZE(spec));
	ASSERT_TRUE(vfs_snapshot(dir));
	static const char *const loops[] = {"a", "b", "c"};
	for (unsigned i = 0; i < ARRAY_SIZE(loops); i++) {
		const char *p = vfs_at(dir, "%s", loops[i]);
		EXPECT_EQ(vfs_stat(p, &st), -ELOOP);
		EXPECT_EQ(vfs_open(p, O_RDONLY, 0), -ELOOP);
		EXPECT_EQ(vfs_open(p, O_WRONLY | O_CREAT, 0644), -ELOOP);
		EXPECT_EQ(vfs_chdir(p), -ELOOP);
		EXPECT_EQ(vfs_truncate(p, 0), -ELOOP);
		EXPECT_EQ(vfs_stat(vfs_at(dir, "%s/x", loops[i]), &st), -ELOOP);
		EXPECT_EQ(vfs_mkdir(vfs_at(dir, "%s/x", loops[i]), 0755), -ELOOP);
		/* The link itself is there to see. */
		EXPECT_EQ(vfs_lstat(p, &st), 0);
		EXPECT_TRUE(S_ISLNK(st.st_mode));
	}
	vfs_expect_unchanged(dir, "after lookups through a symlink loop");
}

TEST(vfs_errors, a_symlink_loop_is_eloop)
{
	vfs_test_run("vfs_errors", __func__, symlink_loop);
}

/*
 * l01 -> f, lNN -> l(NN-1): following lNN follows NN links. m01 -> d, mNN ->
 * m(NN-1) the same for a directory in the middle of a path.
 */
static void symlink_chain(const char *dir)
{
	struct stat st, f;
	char target[8];
	static const char *const spec[] = {"f=end", "d/", "d/x=mid"};
	tree(dir, spec, ARRAY_SIZE(spec));
	EXPECT_EQ(vfs_symlink("f", vfs_at(dir, "l01")), 0);
	EXPECT_EQ(vfs_symlink("d", vfs_at(dir, "m01")), 0);
	for (unsigned k = 2; k <= SYMLOOP_MAX + 1; k++) {
		snprintf(target, sizeof(target), "l%02u", k - 1);
		EXPECT_EQ(vfs_symlink(target, vfs_at(dir, "l%02u", k)), 0);
		snprintf(target, sizeof(target), "m%02u", k - 1);
		EXPECT_EQ(vfs_symlink(target, vfs_at(dir, "m%02u", k)), 0);
	}
	ASSERT_EQ(vfs_stat(vfs_at(dir, "f"), &f), 0);
	ASSERT_TRUE(vfs_snapshot(dir));
	const char *l40 = vfs_at(dir, "l%02u", SYMLOOP_MAX);
	const char *l41 = vfs_at(dir, "l%02u", SYMLOOP_MAX + 1);
	EXPECT_EQ(vfs_stat(l40, &st), 0);
	EXPECT_EQ(st.st_ino, f.st_ino);
	EXPECT_TRUE(vfs_file_is(l40, "end"));
	EXPECT_EQ(vfs_stat(l41, &st), -ELOOP);
	EXPECT_EQ(vfs_open(l41, O_RDONLY, 0), -ELOOP);
	EXPECT_EQ(vfs_open(l41, O_WRONLY | O_TRUNC, 0), -ELOOP);
	EXPECT_TRUE(vfs_file_is(vfs_at(dir, "m%02u/x", SYMLOOP_MAX), "mid"));
	EXPECT_EQ(vfs_stat(vfs_at(dir, "m%02u/x", SYMLOOP_MAX + 1), &st), -ELOOP);
	EXPECT_EQ(vfs_mkdir(vfs_at(dir, "m%02u/y", SYMLOOP_MAX + 1), 0755), -ELOOP);
	vfs_expect_unchanged(dir, "after lookups through chains of symlinks");
}

TEST(vfs_errors, a_chain_of_41_symlinks_is_eloop_and_40_are_followed)
{
	vfs_test_run("vfs_errors", __func__, symlink_chain);
}

/*
 * c01 -> c02 -> ... -> c40 -> ".", and t -> c01/made: an O_CREAT through t
 * follows t and then the 40 links of the chain, 41 in one walk: ELOOP, and
 * nothing is made (Linux 6.x agrees).
 */
static void creat_through_symlink_shares_the_budget(const char *dir)
{
	char target[8];
	struct stat st;
	for (unsigned k = 1; k <= SYMLOOP_MAX; k++) {
		if (k == SYMLOOP_MAX)
			snprintf(target, sizeof(target), ".");
		else
			snprintf(target, sizeof(target), "c%02u", k + 1);
		EXPECT_EQ(vfs_symlink(target, vfs_at(dir, "c%02u", k)), 0);
	}
	EXPECT_EQ(vfs_symlink("c01/made", vfs_at(dir, "t")), 0);
	ASSERT_TRUE(vfs_snapshot(dir));
	EXPECT_EQ(vfs_open(vfs_at(dir, "t"), O_WRONLY | O_CREAT, 0644), -ELOOP);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "t"), &st), -ELOOP);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "made"), &st), -ENOENT);
	vfs_expect_unchanged(dir, "after an O_CREAT through 41 links");
	/* 40 in all is within the budget: through c02 the chain is one link shorter. */
	EXPECT_EQ(vfs_symlink("c02/made", vfs_at(dir, "u")), 0);
	int fd = vfs_open(vfs_at(dir, "u"), O_WRONLY | O_CREAT, 0644);
	EXPECT_GE(fd, 0);
	if (fd >= 0)
		EXPECT_EQ(vfs_close(fd), 0);
	EXPECT_EQ(vfs_stat(vfs_at(dir, "made"), &st), 0);
}

TEST(vfs_errors, creat_through_a_symlink_counts_links_in_the_same_budget)
{
	vfs_test_run("vfs_errors", __func__, creat_through_symlink_shares_the_budget);
}

/*
 * k01 -> "k02/./././...", k02 -> "k03/./././...", ..., k39 -> "d/./././...", each
 * text LONG_TARGET bytes: k01/x is d/x after 39 links in the middle of a path.
 * Spliced into one PATH_MAX buffer, the texts not yet walked would add up past
 * PATH_MAX at about the 36th link; kept apart, each is well within it (Linux
 * follows the chain).
 */
#define LONG_CHAIN 39
#define LONG_TARGET 114

static void long_link_texts_are_kept_apart(const char *dir)
{
	static const char *const spec[] = {"d/", "d/x=end"};
	char *target = kmalloc(LONG_TARGET + 1);
	ASSERT_TRUE(target != NULL);
	tree(dir, spec, ARRAY_SIZE(spec));
	for (unsigned k = 1; k <= LONG_CHAIN; k++) {
		if (k == LONG_CHAIN)
			snprintf(target, LONG_TARGET + 1, "d");
		else
			snprintf(target, LONG_TARGET + 1, "k%02u", k + 1);
		size_t len = strlen(target);
		for (; len + 2 <= LONG_TARGET; len += 2)
			memcpy(target + len, "/.", 2);
		if (len < LONG_TARGET)
			target[len++] = '/';
		target[len] = '\0';
		EXPECT_EQ(vfs_symlink(target, vfs_at(dir, "k%02u", k)), 0);
	}
	kfree(target);
	EXPECT_TRUE(vfs_file_is(vfs_at(dir, "k01/x"), "end"));
	int fd = vfs_open(vfs_at(dir, "k01/y"), O_WRONLY | O_CREAT, 0644);
	EXPECT_GE(fd, 0);
	if (fd >= 0)
		EXPECT_EQ(vfs_close(fd), 0);
	struct stat st;
	EXPECT_EQ(vfs_stat(vfs_at(dir, "d/y"), &st), 0);
}

TEST(vfs_errors, a_chain_of_long_symlink_texts_is_followed_past_path_max_in_all)
{
	vfs_test_run("vfs_errors", __func__, long_link_texts_are_kept_apart);
}

/* ---- out of memory ---- */

static void out_of_memory(const char *dir)
{
	struct stat st;
	static const char *const spec[] = {"f=x", "d/"};
	tree(dir, spec, ARRAY_SIZE(spec));
	ASSERT_TRUE(vfs_snapshot(dir));
	/* Paths first: nothing but the calls may run with every allocation failing. */
	const char *f = vfs_at(dir, "f"), *nd = vfs_at(dir, "d/nd"), *nf = vfs_at(dir, "d/nf");
	const char *nl = vfs_at(dir, "d/nl"), *nh = vfs_at(dir, "d/nh");
	u32 saved = failslab_get_ppm();
	u64 injected = failslab_injected();
	failslab_set_ppm(FAILSLAB_ALWAYS);
	int mk = vfs_mkdir(nd, 0755);
	int op = vfs_open(nf, O_WRONLY | O_CREAT | O_EXCL, 0644);
	int sl = vfs_symlink("target", nl);
	int ln = vfs_link(f, nh);
	failslab_set_ppm(saved);

	EXPECT_GT(failslab_injected(), injected);
	EXPECT_EQ(mk, -ENOMEM);
	EXPECT_EQ(op, -ENOMEM);
	EXPECT_EQ(sl, -ENOMEM);
	EXPECT_EQ(ln, -ENOMEM);
	if (op >= 0)
		vfs_close(op);
	vfs_expect_unchanged(dir, "after creates that ran out of memory");
	EXPECT_EQ(vfs_stat(nd, &st), -ENOENT);
	/* Nothing half-made is in the way: with memory, the same calls succeed. */
	EXPECT_EQ(vfs_mkdir(nd, 0755), 0);
	op = vfs_open(nf, O_WRONLY | O_CREAT | O_EXCL, 0644);
	EXPECT_GE(op, 0);
	EXPECT_EQ(vfs_close(op), 0);
	EXPECT_EQ(vfs_symlink("target", nl), 0);
	EXPECT_EQ(vfs_link(f, nh), 0);
	EXPECT_EQ(vfs_stat(f, &st), 0);
	EXPECT_EQ(st.st_nlink, 2);
}

TEST(vfs_errors, out_of_memory_makes_creates_enomem_and_changes_nothing)
{
	vfs_test_run("vfs_errors", __func__, out_of_memory);
}

/* ---- calls that do not fit the object ---- */

static bool ebusy_or_einval(int err)
{
	return err == -EBUSY || err == -EINVAL
		   ? true
		   : test_fail(__FILE__, __LINE__, "expected -EBUSY or -EINVAL, got %d", err);
}

static void rmdir_root_dot(const char *dir)
{
	struct stat st;
	static const char *const spec[] = {"sub/"};
	tree(dir, spec, ARRAY_SIZE(spec));
	ASSERT_TRUE(vfs_snapshot(dir));
	/* Linux gives -EBUSY for "/" and -EINVAL for a last component ".". */
	ebusy_or_einval(vfs_rmdir("/"));
	ebusy_or_einval(vfs_rmdir(vfs_at(dir, "sub/.")));
	EXPECT_EQ(vfs_chdir(vfs_at(dir, "sub")), 0);
	ebusy_or_einval(vfs_rmdir("."));
	EXPECT_EQ(vfs_chdir("/"), 0);
	EXPECT_EQ(vfs_stat("/", &st), 0);
	EXPECT_TRUE(S_ISDIR(st.st_mode));
	vfs_expect_unchanged(dir, "after rmdir of / and of .");
}

TEST(vfs_errors, rmdir_of_root_or_of_dot_is_ebusy_or_einval)
{
	vfs_test_run("vfs_errors", __func__, rmdir_root_dot);
}

static void unlink_dir(const char *dir)
{
	static const char *const spec[] = {"d/", "e/", "e/f=x"};
	tree(dir, spec, ARRAY_SIZE(spec));
	ASSERT_TRUE(vfs_snapshot(dir));
	EXPECT_EQ(vfs_unlink(vfs_at(dir, "d")), -EISDIR);
	EXPECT_EQ(vfs_unlink(vfs_at(dir, "e")), -EISDIR);
	vfs_expect_unchanged(dir, "after unlink of directories");
}

TEST(vfs_errors, unlink_of_a_directory_is_eisdir)
{
	vfs_test_run("vfs_errors", __func__, unlink_dir);
}

static void rmdir_file(const char *dir)
{
	static const char *const spec[] = {"f=x", "d/", "ld->d"};
	tree(dir, spec, ARRAY_SIZE(spec));
	ASSERT_TRUE(vfs_snapshot(dir));
	EXPECT_EQ(vfs_rmdir(vfs_at(dir, "f")), -ENOTDIR);
	/* rmdir does not follow the link to the directory. */
	EXPECT_EQ(vfs_rmdir(vfs_at(dir, "ld")), -ENOTDIR);
	vfs_expect_unchanged(dir, "after rmdir of a file and of a symlink");
}

TEST(vfs_errors, rmdir_of_a_file_or_a_symlink_is_enotdir)
{
	vfs_test_run("vfs_errors", __func__, rmdir_file);
}

static void open_dir_write(const char *dir)
{
	char buf[8];
	static const char *const spec[] = {"d/", "d/f=x"};
	tree(dir, spec, ARRAY_SIZE(spec));
	ASSERT_TRUE(vfs_snapshot(dir));
	const char *d = vfs_at(dir, "d");
	EXPECT_EQ(vfs_open(d, O_WRONLY, 0), -EISDIR);
	EXPECT_EQ(vfs_open(d, O_RDWR, 0), -EISDIR);
	EXPECT_EQ(vfs_open(d, O_WRONLY | O_CREAT, 0644), -EISDIR);
	EXPECT_EQ(vfs_truncate(d, 0), -EISDIR);
	int fd = vfs_open(d, O_RDONLY, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(vfs_read(fd, buf, sizeof(buf)), -EISDIR);
	EXPECT_EQ(vfs_write(fd, "x", 1), -EBADF);
	EXPECT_EQ(vfs_close(fd), 0);
	vfs_expect_unchanged(dir, "after opening a directory for writing");
}

TEST(vfs_errors, opening_a_directory_for_writing_is_eisdir)
{
	vfs_test_run("vfs_errors", __func__, open_dir_write);
}

static void lseek_bad(const char *dir)
{
	static char buf[256];
	static const char *const spec[] = {"d/", "d/a=1", "d/b=2", "f=0123456789"};
	tree(dir, spec, ARRAY_SIZE(spec));
	ASSERT_TRUE(vfs_snapshot(dir));
	int dfd = vfs_open(vfs_at(dir, "d"), O_RDONLY | O_DIRECTORY, 0);
	ASSERT_GE(dfd, 0);
	EXPECT_EQ(vfs_lseek(dfd, 0, SEEK_SET), 0);
	EXPECT_GT(vfs_getdents(dfd, buf, sizeof(buf)), 0);
	EXPECT_GE(vfs_lseek(dfd, 0, SEEK_CUR), 0);
	EXPECT_EQ(vfs_lseek(dfd, 0, SEEK_SET), 0);
	EXPECT_EQ(vfs_lseek(dfd, -1, SEEK_SET), -EINVAL);
	EXPECT_EQ(vfs_lseek(dfd, 0, SEEK_CUR), 0);
	EXPECT_EQ(vfs_close(dfd), 0);
	int fd = vfs_open(vfs_at(dir, "f"), O_RDONLY, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(vfs_lseek(fd, -1, SEEK_SET), -EINVAL);
	EXPECT_EQ(vfs_lseek(fd, 3, SEEK_SET), 3);
	EXPECT_EQ(vfs_lseek(fd, -4, SEEK_CUR), -EINVAL);
	EXPECT_EQ(vfs_lseek(fd, -11, SEEK_END), -EINVAL);
	EXPECT_EQ(vfs_lseek(fd, 0, 3), -EINVAL); /* no such whence */
	/* A refused seek moves nothing. */
	EXPECT_EQ(vfs_lseek(fd, 0, SEEK_CUR), 3);
	EXPECT_EQ(vfs_read(fd, buf, 2), 2);
	EXPECT_EQ(memcmp(buf, "34", 2), 0);
	EXPECT_EQ(vfs_close(fd), 0);
	vfs_expect_unchanged(dir, "after bad seeks");
}

TEST(vfs_errors, lseek_on_a_directory_works_and_a_negative_result_is_einval)
{
	vfs_test_run("vfs_errors", __func__, lseek_bad);
}

static void negative_sizes(const char *dir)
{
	char c;
	static const char *const spec[] = {"f=data"};
	tree(dir, spec, ARRAY_SIZE(spec));
	ASSERT_TRUE(vfs_snapshot(dir));
	const char *f = vfs_at(dir, "f");
	int fd = vfs_open(f, O_RDWR, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(vfs_truncate(f, -1), -EINVAL);
	EXPECT_EQ(vfs_ftruncate(fd, -1), -EINVAL);
	EXPECT_EQ(vfs_pread(fd, &c, 1, -1), -EINVAL);
	EXPECT_EQ(vfs_pwrite(fd, "x", 1, -1), -EINVAL);
	EXPECT_EQ(vfs_close(fd), 0);
	vfs_expect_unchanged(dir, "after negative lengths and offsets");
}

TEST(vfs_errors, negative_lengths_and_offsets_are_einval)
{
	vfs_test_run("vfs_errors", __func__, negative_sizes);
}

static void too_big(const char *dir)
{
	struct stat st;
	static const char *const spec[] = {"f=x"};
	tree(dir, spec, ARRAY_SIZE(spec));
	ASSERT_TRUE(vfs_snapshot(dir));
	const char *f = vfs_at(dir, "f");
	const s64 max = (s64)RAMFS_MAX_FILE_SIZE;
	int fd = vfs_open(f, O_RDWR, 0);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(vfs_pwrite(fd, "y", 1, max), -EFBIG);
	EXPECT_EQ(vfs_lseek(fd, max, SEEK_SET), max);
	EXPECT_EQ(vfs_write(fd, "y", 1), -EFBIG);
	EXPECT_EQ(vfs_truncate(f, max + 1), -EFBIG);
	EXPECT_EQ(vfs_ftruncate(fd, max + 1), -EFBIG);
	EXPECT_EQ(vfs_close(fd), 0);
	vfs_expect_unchanged(dir, "after writes past the largest file");
	/* Up to the largest size is allowed (a hole, so it costs nothing). */
	EXPECT_EQ(vfs_truncate(f, max), 0);
	EXPECT_EQ(vfs_stat(f, &st), 0);
	EXPECT_EQ(st.st_size, max);
	EXPECT_EQ(vfs_truncate(f, 1), 0);
	vfs_expect_unchanged(dir, "after growing to the largest file and back");
}

TEST(vfs_errors, writes_and_truncates_past_the_largest_file_are_efbig)
{
	vfs_test_run("vfs_errors", __func__, too_big);
}
