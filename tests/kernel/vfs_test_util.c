/*
 * The helpers of the VFS selftests (see vfs_test_util.h): listings, trees, the
 * caches' counts and vfs_test_run(). One copy for the three suites, so the static
 * buffers below exist once; they are used only by the thread running a test.
 */
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/kthread.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/rcupdate.h>
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/string.h>
#include <grace/test.h>

#include "vfs_test_util.h"

#define VFS_LINE_SHOWN 120 /* bytes of a differing line quoted in a failure */
/*
 * Rounds of rcu_barrier() that vfs_settle() allows: a file's callback may drop the
 * last reference to a dentry, whose callback drops its inode, one grace period each.
 */
#define VFS_SETTLE_ROUNDS 8

/* FNV-1a, 32 bits: enough to tell contents apart in a listing. */
#define VFS_HASH_SEED 2166136261u
#define VFS_HASH_PRIME 16777619u

static u32 vfs_hash(u32 h, const void *data, size_t n)
{
	const u8 *p = data;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * VFS_HASH_PRIME;
	return h;
}

/*
 * "dir/rel" formatted into one of VFS_AT_SLOTS static buffers, used in turn: for the
 * paths of one call or a few, in the thread running the test.
 */
const char *vfs_at(const char *dir, const char *fmt, ...)
{
	static char slots[VFS_AT_SLOTS][VFS_AT_LEN];
	static unsigned next;
	char *p = slots[next++ % VFS_AT_SLOTS];
	int n = scnprintf(p, VFS_AT_LEN, "%s/", dir);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p + n, VFS_AT_LEN - (size_t)n, fmt, ap);
	va_end(ap);
	return p;
}

/* ---- text: listings and expected listings ---- */

void vfs_text_init(struct vfs_text *t, char *buf, size_t size)
{
	*t = (struct vfs_text){.buf = buf, .size = size};
	buf[0] = '\0';
}

static void vfs_text_add(struct vfs_text *t, const char *fmt, ...) __printf(2, 3);
static void vfs_text_add(struct vfs_text *t, const char *fmt, ...)
{
	if (t->overflow)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= t->size - t->len) {
		t->overflow = true;
		t->buf[t->len] = '\0';
		return;
	}
	t->len += (size_t)n;
}

void vfs_line_dir(struct vfs_text *t, const char *path, unsigned entries, unsigned nlink)
{
	vfs_text_add(t, "%s d %u %u 0\n", path, entries, nlink);
}

void vfs_line_file(struct vfs_text *t, const char *path, const void *data, size_t n, unsigned nlink)
{
	vfs_text_add(t, "%s f %zu %u %08x\n", path, n, nlink, vfs_hash(VFS_HASH_SEED, data, n));
}

void vfs_line_symlink(struct vfs_text *t, const char *path, const char *target)
{
	size_t n = strlen(target);
	vfs_text_add(t, "%s l %zu 1 %08x\n", path, n, vfs_hash(VFS_HASH_SEED, target, n));
}

/* Lines compare up to their '\n'. */
static int vfs_line_cmp(const char *a, const char *b)
{
	while (*a == *b && *a != '\n' && *a)
		a++, b++;
	return (int)(u8)*a - (int)(u8)*b;
}

/* Sort the lines of t into the canonical order (Shell sort: listings hold ~1000 lines). */
void vfs_text_sort(struct vfs_text *t)
{
	static u32 line[VFS_LISTING_ENTRIES];
	static char sorted[VFS_LISTING_MAX];
	unsigned n = 0;

	if (t->overflow)
		return;
	for (size_t at = 0; at < t->len; n++) {
		if (n == VFS_LISTING_ENTRIES || t->len > sizeof(sorted)) {
			t->overflow = true;
			return;
		}
		line[n] = (u32)at;
		const char *nl = strchr(t->buf + at, '\n');
		at = nl ? (size_t)(nl - t->buf) + 1 : t->len;
	}
	for (unsigned gap = n / 2; gap > 0; gap /= 2)
		for (unsigned i = gap; i < n; i++) {
			u32 v = line[i];
			unsigned j = i;
			for (; j >= gap && vfs_line_cmp(t->buf + line[j - gap], t->buf + v) > 0;
			     j -= gap)
				line[j] = line[j - gap];
			line[j] = v;
		}
	size_t out = 0;
	for (unsigned i = 0; i < n; i++) {
		const char *s = t->buf + line[i];
		const char *nl = strchr(s, '\n');
		size_t len = nl ? (size_t)(nl - s) + 1 : strlen(s);
		memcpy(sorted + out, s, len);
		out += len;
	}
	memcpy(t->buf, sorted, out);
	t->buf[out] = '\0';
}

/* One line of s (from its start, at most VFS_LINE_SHOWN bytes, no '\n') into out. */
static void vfs_line_copy(char *out, const char *s)
{
	size_t i = 0;
	while (s[i] && s[i] != '\n' && i < VFS_LINE_SHOWN)
		out[i] = s[i], i++;
	out[i] = '\0';
}

/* Two listings are equal; if not, a failure quoting the first line that differs. */
bool vfs_expect_same_listing(const char *what, const char *got, const char *want)
{
	if (!strcmp(got, want))
		return true;
	const char *gl = got, *wl = want;
	unsigned line = 1;
	for (size_t i = 0; got[i] && got[i] == want[i]; i++)
		if (got[i] == '\n') {
			line++;
			gl = got + i + 1;
			wl = want + i + 1;
		}
	char g[VFS_LINE_SHOWN + 1], w[VFS_LINE_SHOWN + 1];
	vfs_line_copy(g, gl);
	vfs_line_copy(w, wl);
	return test_fail(__FILE__, __LINE__, "%s: listings differ at line %u: got '%s', want '%s'",
			 what, line, g, w);
}

/* ---- files and trees ---- */

/* Create or replace path holding the n bytes at data: 0 or -errno. */
int vfs_write_file(const char *path, const void *data, size_t n)
{
	int fd = vfs_open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return fd;
	long w = n ? vfs_write(fd, data, n) : 0;
	int c = vfs_close(fd);
	if (w < 0)
		return (int)w;
	if ((size_t)w != n)
		return -EIO;
	return c;
}

/* Up to size bytes of path into buf: how many, or -errno. */
long vfs_read_file(const char *path, void *buf, size_t size)
{
	int fd = vfs_open(path, O_RDONLY, 0);
	if (fd < 0)
		return fd;
	size_t got = 0;
	long r = 0;
	while (got < size && (r = vfs_read(fd, (char *)buf + got, size - got)) > 0)
		got += (size_t)r;
	vfs_close(fd);
	return r < 0 ? r : (long)got;
}

/* Does path hold exactly the string text? */
bool vfs_file_is(const char *path, const char *text)
{
	char buf[256];
	size_t n = strlen(text);
	long got = vfs_read_file(path, buf, sizeof(buf));
	return n < sizeof(buf) && got == (long)n && !memcmp(buf, text, n);
}

/*
 * Make the entries of spec under root, in order: "name/" a directory, "name->target"
 * a symlink, "name=text" a file holding text, "name" an empty file. 0 or the first
 * -errno.
 */
int vfs_make_tree(const char *root, const char *const *spec, unsigned n)
{
	char path[VFS_AT_LEN], target[VFS_AT_LEN];
	for (unsigned i = 0; i < n; i++) {
		const char *s = spec[i], *arrow = NULL, *eq = strchr(s, '=');
		size_t len = strlen(s);
		for (const char *p = s; p[0] && p[1]; p++)
			if (p[0] == '-' && p[1] == '>') {
				arrow = p;
				break;
			}
		const char *name_end = arrow ? arrow : eq ? eq : s + len;
		int plen = snprintf(path, sizeof(path), "%s/", root);
		size_t nlen = (size_t)(name_end - s);
		if ((size_t)plen + nlen >= sizeof(path))
			return -ENAMETOOLONG;
		memcpy(path + plen, s, nlen);
		path[plen + nlen] = '\0';
		int err;
		if (!arrow && !eq && len && s[len - 1] == '/') {
			err = vfs_mkdir(path, 0755);
		} else if (arrow) {
			strlcpy(target, arrow + 2, sizeof(target));
			err = vfs_symlink(target, path);
		} else {
			const char *text = eq ? eq + 1 : "";
			err = vfs_write_file(path, text, strlen(text));
		}
		if (err)
			return err;
	}
	return 0;
}

/*
 * vfs_remove_tree()'s walk: full holds the path of the entry (len bytes), names
 * the pool where each level keeps its directory's names from *used on.
 */
#define VFS_REMOVE_POOL (32 * 1024)
static int vfs_remove_at(char *full, size_t len, char *names, size_t *used)
{
	static char dents[1024];
	struct stat st;
	int err = vfs_lstat(full, &st);
	if (err)
		return err;
	if (!S_ISDIR(st.st_mode))
		return vfs_unlink(full);
	/* Take the names a pool-full at a time, then remove them; again until none is left. */
	for (;;) {
		size_t start = *used, count = 0;
		int fd = vfs_open(full, O_RDONLY | O_DIRECTORY, 0);
		if (fd < 0)
			return fd;
		long n = 0;
		bool full_pool = false;
		while (!full_pool && (n = vfs_getdents(fd, dents, sizeof(dents))) > 0) {
			for (long off = 0; off < n;) {
				struct dirent64 *d = (struct dirent64 *)(dents + off);
				size_t nl = strlen(d->d_name) + 1;
				if (!d->d_reclen)
					break;
				off += d->d_reclen;
				if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
					continue;
				if (*used + nl > VFS_REMOVE_POOL) {
					full_pool = true;
					break;
				}
				memcpy(names + *used, d->d_name, nl);
				*used += nl;
				count++;
			}
		}
		vfs_close(fd);
		if (n < 0 && !full_pool) {
			*used = start;
			return (int)n;
		}
		for (size_t at = start, k = 0; k < count; k++) {
			size_t nl = strlen(names + at);
			if (len + 1 + nl >= PATH_MAX) {
				*used = start;
				return -ENAMETOOLONG;
			}
			full[len] = '/';
			memcpy(full + len + 1, names + at, nl + 1);
			err = vfs_remove_at(full, len + 1 + nl, names, used);
			full[len] = '\0';
			at += nl + 1;
			if (err) {
				*used = start;
				return err;
			}
		}
		*used = start;
		if (!count)
			break;
	}
	return vfs_rmdir(full);
}

/* Remove path and everything under it, not following symlinks: 0 or the first -errno. */
static int vfs_remove_tree(const char *path)
{
	static char full[PATH_MAX], names[VFS_REMOVE_POOL];
	size_t used = 0;
	if (strlcpy(full, path, sizeof(full)) >= sizeof(full))
		return -ENAMETOOLONG;
	return vfs_remove_at(full, strlen(full), names, &used);
}

/* ---- listings ---- */

static bool vfs_listing_bad(const char *path, const char *what)
{
	return test_fail(__FILE__, __LINE__, "listing: %s: %s", path, what);
}

/*
 * The canonical listing of everything under dir (dir itself not included) into buf:
 * its length, or -errno (-ERANGE if it does not fit). Checks on the way that
 * getdents and lstat agree on each entry's type and inode, and that read and
 * readlink give st_size bytes: a disagreement is a failure and -EIO.
 */
static long vfs_listing(const char *dir, char *buf, size_t size)
{
	static char rel[VFS_LISTING_MAX];	 /* entries' relative paths, NUL-separated */
	static u32 rel_at[VFS_LISTING_ENTRIES];	 /* where each starts in rel */
	static u32 entries[VFS_LISTING_ENTRIES]; /* a directory's: what getdents gave */
	static u8 dtype[VFS_LISTING_ENTRIES];	 /* getdents' d_type */
	static u64 dino[VFS_LISTING_ENTRIES];	 /* getdents' d_ino */
	static char full[PATH_MAX], dents[1024], data[1024], target[PATH_MAX];
	struct vfs_text t;
	size_t rel_used = 1;
	unsigned n = 1;
	bool bad = false;

	vfs_text_init(&t, buf, size);
	rel[0] = '\0'; /* entry 0 is dir itself */
	rel_at[0] = 0;
	dtype[0] = DT_DIR;
	for (unsigned i = 0; i < n; i++) {
		if (dtype[i] != DT_DIR)
			continue;
		entries[i] = 0;
		snprintf(full, sizeof(full), "%s%s%s", dir, rel[rel_at[i]] ? "/" : "",
			 rel + rel_at[i]);
		int fd = vfs_open(full, O_RDONLY | O_DIRECTORY, 0);
		if (fd < 0)
			return fd;
		long got;
		while ((got = vfs_getdents(fd, dents, sizeof(dents))) > 0) {
			for (long off = 0; off < got;) {
				struct dirent64 *d = (struct dirent64 *)(dents + off);
				if (d->d_reclen == 0 || d->d_reclen % 8 ||
				    off + d->d_reclen > got) {
					vfs_close(fd);
					vfs_listing_bad(full, "bad getdents record length");
					return -EIO;
				}
				off += d->d_reclen;
				if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
					continue;
				int len =
				    snprintf(rel + rel_used, sizeof(rel) - rel_used, "%s%s%s",
					     rel + rel_at[i], rel[rel_at[i]] ? "/" : "", d->d_name);
				if (n == VFS_LISTING_ENTRIES || len < 0 ||
				    (size_t)len >= sizeof(rel) - rel_used) {
					vfs_close(fd);
					return -ERANGE;
				}
				rel_at[n] = (u32)rel_used;
				dtype[n] = d->d_type;
				dino[n] = d->d_ino;
				rel_used += (size_t)len + 1;
				entries[i]++;
				n++;
			}
		}
		vfs_close(fd);
		if (got < 0)
			return got;
	}
	for (unsigned i = 1; i < n; i++) {
		const char *r = rel + rel_at[i];
		struct stat st;
		snprintf(full, sizeof(full), "%s/%s", dir, r);
		int err = vfs_lstat(full, &st);
		if (err)
			return err;
		unsigned want = S_ISDIR(st.st_mode)   ? DT_DIR
				: S_ISREG(st.st_mode) ? DT_REG
				: S_ISLNK(st.st_mode) ? DT_LNK
						      : 0;
		if (!want || want != dtype[i])
			bad = vfs_listing_bad(full, "getdents' d_type is not lstat's type");
		if (st.st_ino != dino[i])
			bad = vfs_listing_bad(full, "getdents' d_ino is not lstat's st_ino");
		if (want == DT_DIR) {
			vfs_line_dir(&t, r, entries[i], st.st_nlink);
		} else if (want == DT_LNK) {
			long len = vfs_readlink(full, target, sizeof(target) - 1);
			if (len < 0)
				return len;
			target[len] = '\0';
			if (len != st.st_size)
				bad = vfs_listing_bad(full, "readlink's length is not st_size");
			vfs_text_add(&t, "%s l %lld %u %08x\n", r, (long long)st.st_size,
				     st.st_nlink, vfs_hash(VFS_HASH_SEED, target, (size_t)len));
		} else if (want == DT_REG) {
			int fd = vfs_open(full, O_RDONLY, 0);
			if (fd < 0)
				return fd;
			u32 h = VFS_HASH_SEED;
			s64 total = 0;
			long got;
			while ((got = vfs_read(fd, data, sizeof(data))) > 0) {
				h = vfs_hash(h, data, (size_t)got);
				total += got;
			}
			vfs_close(fd);
			if (got < 0)
				return got;
			if (total != st.st_size)
				bad = vfs_listing_bad(full, "read gave other than st_size bytes");
			vfs_text_add(&t, "%s f %lld %u %08x\n", r, (long long)st.st_size,
				     st.st_nlink, h);
		}
	}
	vfs_text_sort(&t);
	if (t.overflow)
		return -ERANGE;
	return bad ? -EIO : (long)t.len;
}

/* The listing vfs_expect_listing() takes, compared and then no longer needed. */
static char vfs_listing_buf[VFS_LISTING_MAX];

bool vfs_expect_listing(const char *what, const char *dir, struct vfs_text *t)
{
	vfs_text_sort(t);
	if (!EXPECT_FALSE(t->overflow))
		return false;
	long n = vfs_listing(dir, vfs_listing_buf, sizeof(vfs_listing_buf));
	if (!EXPECT_GE(n, 0))
		return false;
	return vfs_expect_same_listing(what, vfs_listing_buf, t->buf);
}

/*
 * The listing of dir into one static buffer, for vfs_expect_unchanged(): "the calls
 * between the two left this tree as it was". One snapshot at a time.
 */
static char vfs_snapshot_buf[VFS_LISTING_MAX];

bool vfs_snapshot(const char *dir)
{
	long n = vfs_listing(dir, vfs_snapshot_buf, sizeof(vfs_snapshot_buf));
	return n >= 0 ? true : test_fail(__FILE__, __LINE__, "listing %s: %ld", dir, n);
}

bool vfs_expect_unchanged(const char *dir, const char *what)
{
	static char now[VFS_LISTING_MAX];
	long n = vfs_listing(dir, now, sizeof(now));
	if (n < 0)
		return test_fail(__FILE__, __LINE__, "%s: listing %s: %ld", what, dir, n);
	return vfs_expect_same_listing(what, now, vfs_snapshot_buf);
}

/* ---- the caches' counts ---- */

/*
 * Let the caches come to rest: with shrink, every unused dentry (negative ones
 * included) is reclaimed, so that the counts depend only on the tree and the
 * references held; then grace periods until two snapshots agree. A pass that
 * frees nothing while unused dentries remain is allowed once more: a reclaim may
 * spare a recently used dentry on its first pass, as Linux's does.
 */
void vfs_settle(bool shrink)
{
	struct vfs_counts a, b;
	unsigned idle = 0;
	vfs_counts(&a);
	for (unsigned round = 0; round < VFS_SETTLE_ROUNDS; round++) {
		unsigned long freed = shrink ? dcache_shrink(~0UL) : 0;
		rcu_barrier();
		vfs_counts(&b);
		idle = freed ? 0 : idle + 1;
		bool rest = !shrink || !b.dentries_unused || idle > 1;
		if (!freed && rest && round > 0 && !memcmp(&a, &b, sizeof(a)))
			break;
		a = b;
	}
}

bool vfs_count_is(const char *when, const char *field, long got, long want)
{
	if (got == want)
		return true;
	return test_fail(__FILE__, __LINE__, "%s: vfs_counts %s %ld, expected %ld", when, field,
			 got, want);
}

/* Every field of got is want's. */
bool vfs_counts_expect(const struct vfs_counts *got, const struct vfs_counts *want,
		       const char *when)
{
	bool ok = vfs_count_is(when, "dentries", got->dentries, want->dentries);
	ok &= vfs_count_is(when, "dentries_unused", got->dentries_unused, want->dentries_unused);
	ok &= vfs_count_is(when, "dentries_negative", got->dentries_negative,
			   want->dentries_negative);
	ok &= vfs_count_is(when, "inodes", got->inodes, want->inodes);
	ok &= vfs_count_is(when, "inodes_unused", got->inodes_unused, want->inodes_unused);
	ok &= vfs_count_is(when, "files", got->files, want->files);
	return ok;
}

/* ---- slab caches' allocated objects ---- */

/*
 * The caches a VFS call allocates from: the VFS's own and kmalloc's. Others are
 * left out: the network's (route entries, neighbours, buffers) come and go on its
 * timers' schedule, whatever a test of the VFS does meanwhile.
 */
static bool vfs_slab_cache_of_vfs(struct kmem_cache *c)
{
	static const char *const names[] = {"dentry", "inode", "inode_rcu", "file", "file_rcu"};
	const char *name = kmem_cache_name(c);
	if (!strncmp(name, "kmalloc-", 8))
		return true;
	for (unsigned i = 0; i < ARRAY_SIZE(names); i++)
		if (!strcmp(name, names[i]))
			return true;
	return false;
}

static void vfs_slab_snapshot_one(struct kmem_cache *c, void *arg)
{
	struct vfs_slab_snapshot *s = arg;
	struct kmem_cache_stats st;
	if (!vfs_slab_cache_of_vfs(c))
		return;
	if (s->n == VFS_SLAB_CACHES_MAX) {
		s->overflow = true;
		return;
	}
	kmem_cache_stats(c, &st);
	s->e[s->n].cache = c;
	s->e[s->n].allocated = st.objects - st.free_objects - st.cpu_objects;
	s->n++;
}

void vfs_slab_snapshot(struct vfs_slab_snapshot *s)
{
	s->n = 0;
	s->overflow = false;
	kmem_cache_for_each(vfs_slab_snapshot_one, s);
}

/* Each cache has as many objects allocated in after as in before (a new cache: none). */
bool vfs_slab_expect_same(const struct vfs_slab_snapshot *before,
			  const struct vfs_slab_snapshot *after)
{
	bool ok = EXPECT_FALSE(before->overflow || after->overflow);
	for (unsigned i = 0; i < after->n; i++) {
		u64 was = 0;
		for (unsigned k = 0; k < before->n; k++)
			if (before->e[k].cache == after->e[i].cache)
				was = before->e[k].allocated;
		if (after->e[i].allocated != was)
			ok = test_fail(__FILE__, __LINE__,
				       "slab cache %s: %llu objects allocated, %llu before",
				       kmem_cache_name(after->e[i].cache),
				       (unsigned long long)after->e[i].allocated,
				       (unsigned long long)was);
	}
	return ok;
}

/* ---- running a test ---- */

struct vfs_test_job {
	void (*body)(const char *dir);
	const char *dir;
};

static int vfs_test_thread(void *arg)
{
	struct vfs_test_job *job = arg;
	job->body(job->dir);
	return 0;
}

/*
 * Run body(dir) in a new thread, dir being /t-<suite>-<name> where func is the TEST's
 * function (test_<suite>_<name>, its __func__), made empty before and removed after.
 * A leftover of an earlier run that failed halfway is removed first. Then every
 * count of vfs_counts() must be back where it was.
 */
void vfs_test_run(const char *suite, const char *func, void (*body)(const char *dir))
{
	static char dir[VFS_AT_LEN];
	struct vfs_counts before, after;
	struct stat st;
	size_t skip = strlen("test_") + strlen(suite) + 1;

	ASSERT_TRUE(strlen(func) > skip);
	snprintf(dir, sizeof(dir), "/t-%s-%s", suite, func + skip);
	if (vfs_lstat(dir, &st) == 0)
		EXPECT_EQ(vfs_remove_tree(dir), 0);
	vfs_settle(true);
	vfs_counts(&before);
	ASSERT_EQ(vfs_mkdir(dir, 0755), 0);

	/*
	 * Bound to this CPU for its life: smp_run_all() has its caller take part on
	 * the CPU it is on and the run/N threads on the others, so a caller that moved
	 * between two storms would hand the second to a run thread the first never
	 * warmed (its first call makes its descriptor table: an allocation the slab
	 * comparison would blame on the storm).
	 */
	struct vfs_test_job job = {body, dir};
	unsigned cpu = smp_processor_id();
	struct task *t = kthread_create_on_cpu(vfs_test_thread, &job, cpu, "vfs-test");
	if (EXPECT_TRUE(t != NULL)) {
		wake_up_process(t);
		kthread_join(t);
	}

	EXPECT_EQ(vfs_remove_tree(dir), 0);
	EXPECT_EQ(vfs_lstat(dir, &st), -ENOENT);
	vfs_settle(true);
	vfs_counts(&after);
	vfs_counts_expect(&after, &before, "after the test, its directory removed");
}
