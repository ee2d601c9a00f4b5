/*
 * Helpers shared by the VFS selftests (vfs_calls, vfs_errors, vfs_storm), which test
 * the file-system calls of <grace/fs.h> from outside, through the calls alone. The
 * definitions are in vfs_test_util.c.
 *
 * A listing is the canonical picture of a tree: one line per entry,
 * "path type size nlink hash", sorted, where a directory's size is the number of
 * entries getdents gave and its hash 0, a file's hash covers its bytes and a
 * symlink's its target. Two listings are equal exactly when the trees hold the same
 * names, types, link counts and contents, so "the tree is unchanged" is one strcmp.
 * Expected listings are written with the same vfs_line_* functions and sorted by
 * the same vfs_text_sort.
 *
 * vfs_test_run() gives each test its own directory /t-<suite>-<name>, runs the body
 * in a new thread (a fresh descriptor table and "/" as its directory, both released
 * when it exits), removes the directory, and then requires the caches' counts to be
 * what they were before: a test that passes but leaks a reference fails here.
 *
 * vfs_at, the listings, the tree helpers and vfs_test_run keep their buffers in
 * static storage, one copy for the three suites: only the thread running a test may
 * call them (the selftests run one at a time). vfs_write_file, vfs_read_file and
 * vfs_file_is keep theirs on the stack, for the CPUs of a storm too.
 */
#ifndef TESTS_VFS_TEST_UTIL_H
#define TESTS_VFS_TEST_UTIL_H

#include <grace/boot_info.h>
#include <grace/compiler.h>
#include <grace/fs.h>
#include <grace/types.h>

struct kmem_cache;

/*
 * Entries of one listing: the storms leave up to about 10 per CPU (600 at 64 CPUs,
 * 2,600 at 255); bytes: 40 per entry, lines run about 25.
 */
#define VFS_LISTING_ENTRIES (12 * MAX_CPUS + 512)
#define VFS_LISTING_MAX (40 * VFS_LISTING_ENTRIES)
#define VFS_AT_SLOTS 8 /* vfs_at() paths that may be in use at once */
#define VFS_AT_LEN 512

/*
 * "dir/rel" formatted into one of VFS_AT_SLOTS static buffers, used in turn: for the
 * paths of one call or a few, in the thread running the test.
 */
const char *vfs_at(const char *dir, const char *fmt, ...) __printf(2, 3);

/* ---- text: listings and expected listings ---- */

struct vfs_text {
	char *buf;
	size_t size, len;
	bool overflow; /* something did not fit: the text is not to be trusted */
};

/* An empty text in the size bytes at buf. */
void vfs_text_init(struct vfs_text *t, char *buf, size_t size);
/* The line of a directory holding entries entries. */
void vfs_line_dir(struct vfs_text *t, const char *path, unsigned entries, unsigned nlink);
/* The line of a file holding the n bytes at data. */
void vfs_line_file(struct vfs_text *t, const char *path, const void *data, size_t n,
		   unsigned nlink);
/* The line of a symlink to target. */
void vfs_line_symlink(struct vfs_text *t, const char *path, const char *target);
/* Sort the lines of t into the canonical order (Shell sort: listings hold ~1000 lines). */
void vfs_text_sort(struct vfs_text *t);
/* Two listings are equal; if not, a failure quoting the first line that differs. */
bool vfs_expect_same_listing(const char *what, const char *got, const char *want);

/*
 * One expected listing's buffer, for the suites whose tests build one (vfs_calls,
 * vfs_storm): only the thread running a test may use it.
 */
extern char vfs_expected[VFS_LISTING_MAX];

/* ---- files and trees ---- */

/* Create or replace path holding the n bytes at data: 0 or -errno. */
int vfs_write_file(const char *path, const void *data, size_t n);
/* Up to size bytes of path into buf: how many, or -errno. */
long vfs_read_file(const char *path, void *buf, size_t size);
/* Does path hold exactly the string text? */
bool vfs_file_is(const char *path, const char *text);
/* Are the n bytes at p all zero? */
bool vfs_all_zero(const void *p, size_t n);
/* The inode number of path, which must exist (a failure, and 0, if it does not). */
u64 vfs_ino_of(const char *path);
/*
 * Make the entries of spec under root, in order: "name/" a directory, "name->target"
 * a symlink, "name=text" a file holding text, "name" an empty file. 0 or the first
 * -errno.
 */
int vfs_make_tree(const char *root, const char *const *spec, unsigned n);

/* ---- listings ---- */

/*
 * The listing of dir (dir itself not included) is the lines of t, which this sorts:
 * a failure named what if not, or if t or the listing did not fit.
 */
bool vfs_expect_listing(const char *what, const char *dir, struct vfs_text *t);
/*
 * The listing of dir into one static buffer, for vfs_expect_unchanged(): "the calls
 * between the two left this tree as it was". One snapshot at a time.
 */
bool vfs_snapshot(const char *dir);
/* The listing of dir is the one vfs_snapshot() took; what names the failure. */
bool vfs_expect_unchanged(const char *dir, const char *what);

/* ---- the caches' counts ---- */

/*
 * Let the caches come to rest: with shrink, every unused dentry (negative ones
 * included) is reclaimed, so that the counts depend only on the tree and the
 * references held; then grace periods until two snapshots agree.
 */
void vfs_settle(bool shrink);
/* The count field is want; if not, a failure that says when. */
bool vfs_count_is(const char *when, const char *field, long got, long want);
/* Every field of got is want's. */
bool vfs_counts_expect(const struct vfs_counts *got, const struct vfs_counts *want,
		       const char *when);

/* ---- slab caches' allocated objects ---- */

#define VFS_SLAB_CACHES_MAX 64

struct vfs_slab_snapshot {
	unsigned n;
	bool overflow;
	struct {
		struct kmem_cache *cache;
		u64 allocated; /* objects - free_objects - cpu_objects */
	} e[VFS_SLAB_CACHES_MAX];
};

/* The allocated objects of every slab cache a VFS call allocates from into s. */
void vfs_slab_snapshot(struct vfs_slab_snapshot *s);
/* Each cache has as many objects allocated in after as in before (a new cache: none). */
bool vfs_slab_expect_same(const struct vfs_slab_snapshot *before,
			  const struct vfs_slab_snapshot *after);

/* ---- running a test ---- */

/*
 * Run body(dir) in a new thread, dir being /t-<suite>-<name> where func is the TEST's
 * function (test_<suite>_<name>, its __func__), made empty before and removed after.
 * A leftover of an earlier run that failed halfway is removed first. Then every
 * count of vfs_counts() must be back where it was.
 */
void vfs_test_run(const char *suite, const char *func, void (*body)(const char *dir));

#endif
