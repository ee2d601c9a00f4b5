/*
 * How a struct file is freed (file_free=, fs/file.c) and the lockless fget() that
 * freeing at once relies on. The races are held open on purpose (race points,
 * race_test_util.h): fget() parks between reading a descriptor's slot and taking
 * its reference, while another CPU of the same process closes the descriptor.
 *
 *   fget_rechecks_the_slot_after_reuse: the file is freed and its memory opened
 *       again as another descriptor's file; fget() must see that the slot no
 *       longer holds it and return the slot's file instead.
 *   fget_takes_no_reference_on_a_freed_file: the file is freed; fget() must not
 *       raise its count from 0 (which would free it a second time).
 *   typesafe_close_frees_at_once: file_free=typesafe gives the memory back at the
 *       close, to this CPU, with no grace period in between.
 *   fget_storm_returns_only_the_slots_files: every CPU replaces its own
 *       descriptors' files and fgets the others' at once; each fget() returns a
 *       file that the slot held, with a reference.
 */
#include <grace/atomic.h>
#include <grace/fs.h>
#include <grace/kthread.h>
#include <grace/rcupdate.h>
#include <grace/sched.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <grace/test.h>

#include <fs/internal.h>

#include "race_test_util.h"
#include "vfs_test_util.h"

#define FILE_TEST_PATH 160
/* Replacements per CPU in the storm: thousands of fgets in all at 8 CPUs, seconds under TCG. */
#define FILE_STORM_ROUNDS 200

/* One race: set up by the test thread, read by the racer and the change on other CPUs. */
struct file_race {
	struct fs_context *fs; /* the test thread's table, which both sides use */
	int slot;	       /* the descriptor fget() looks up */
	int other;	       /* a second open file, dup2()ed into slot by the change */
	int reopened;	       /* the change's new descriptor, or -errno */
	char path[FILE_TEST_PATH];
	struct file *old;    /* slot's file before the change */
	struct file *got;    /* what fget() returned */
	struct file *reused; /* the change's new file */
	int change_err;
	bool reopen; /* the change opens path again after it has filled the slot */
};

/* Be a thread of the test thread's process: use its table fs; returns this thread's own. */
static struct fs_context *file_use_fs(struct fs_context *fs)
{
	struct fs_context *own = current->fs;
	current->fs = fs;
	return own;
}

static void racer_fget(void *arg)
{
	struct file_race *r = arg;
	struct fs_context *own = file_use_fs(r->fs);
	r->got = fget(r->slot);
	current->fs = own;
}

static void change_close(void *arg)
{
	struct file_race *r = arg;
	struct fs_context *own = file_use_fs(r->fs);
	r->change_err = vfs_close(r->slot);
	if (!r->change_err && r->reopen) {
		/* The slot now holds another file, and the freed memory becomes a third. */
		int err = vfs_dup2(r->other, r->slot);
		if (err != r->slot)
			r->change_err = err < 0 ? err : -EINVAL;
		r->reopened = vfs_open(r->path, O_RDONLY, 0);
		if (r->reopened >= 0)
			r->reused = r->fs->fd[r->reopened];
	}
	current->fs = own;
}

/* Both sides are threads of one process: the table is shared, its writers lock it. */
static bool file_race_run(struct file_race *r)
{
	struct race race = {.point = "file.fget_rcu",
			    .key = r->old,
			    .racer = racer_fget,
			    .change = change_close,
			    .arg = r};
	atomic_inc(&r->fs->refs);
	bool raced = race_run(&race);
	atomic_dec(&r->fs->refs);
	return raced;
}

/* body in a directory of its own, with files freed the typesafe way whatever the boot chose. */
static void typesafe_run(const char *func, void (*body)(const char *dir))
{
	enum file_free_mode saved = file_get_free_mode();
	file_set_free_mode(FILE_FREE_TYPESAFE);
	vfs_test_run("file", func, body);
	file_set_free_mode(saved);
}

static int file_open_new(const char *path, int flags)
{
	return vfs_open(path, O_CREAT | flags, 0644);
}

static void fget_after_reuse(const char *dir)
{
	static struct file_race r;
	r = (struct file_race){.reopen = true, .reopened = -1};
	r.fs = fs_current();
	ASSERT_TRUE(r.fs != NULL);
	snprintf(r.path, sizeof(r.path), "%s/b", dir);
	int made = file_open_new(r.path, O_WRONLY);
	ASSERT_TRUE(made >= 0);
	ASSERT_EQ(vfs_close(made), 0);
	r.slot = file_open_new(vfs_at(dir, "a"), O_RDWR);
	ASSERT_TRUE(r.slot >= 0);
	r.other = file_open_new(vfs_at(dir, "o"), O_RDWR);
	ASSERT_TRUE(r.other >= 0);
	r.old = r.fs->fd[r.slot];

	if (file_race_run(&r)) {
		EXPECT_EQ(r.change_err, 0);
		ASSERT_TRUE(r.reopened >= 0);
		/* The race is the one meant only if the freed memory came back as the new file. */
		EXPECT_TRUE(r.reused == r.old);
		EXPECT_TRUE(r.got == r.fs->fd[r.slot]);
		EXPECT_TRUE(r.got != r.reused);
		EXPECT_TRUE(r.got && r.got->f_inode == r.fs->fd[r.other]->f_inode);
		if (r.got)
			fput(r.got);
		EXPECT_EQ(vfs_close(r.reopened), 0);
	}
	EXPECT_EQ(vfs_close(r.slot),
		  0); /* the other file's copy, or a, if the change did not run */
	EXPECT_EQ(vfs_close(r.other), 0);
}

TEST(file, fget_rechecks_the_slot_after_reuse)
{
	typesafe_run(__func__, fget_after_reuse);
}

static void fget_after_free(const char *dir)
{
	static struct file_race r;
	r = (struct file_race){.reopened = -1};
	r.fs = fs_current();
	ASSERT_TRUE(r.fs != NULL);
	r.slot = file_open_new(vfs_at(dir, "a"), O_RDWR);
	ASSERT_TRUE(r.slot >= 0);
	r.old = r.fs->fd[r.slot];
	long files = vfs_count_sum(NR_FILE);

	if (!file_race_run(&r)) {
		vfs_close(r.slot);
		return;
	}
	EXPECT_EQ(r.change_err, 0);
	EXPECT_TRUE(r.got == NULL);
	/* One file closed, and freed once. */
	rcu_barrier();
	EXPECT_EQ(vfs_count_sum(NR_FILE), files - 1);
	if (r.got)
		fput(r.got);
}

TEST(file, fget_takes_no_reference_on_a_freed_file)
{
	typesafe_run(__func__, fget_after_free);
}

static void close_frees_at_once(const char *dir)
{
	int fd = file_open_new(vfs_at(dir, "a"), O_RDWR);
	ASSERT_TRUE(fd >= 0);
	struct file *f = current->fs->fd[fd];
	long files = vfs_count_sum(NR_FILE);

	/*
	 * Inside a read side no grace period can end, and this CPU stays this CPU: a
	 * file that waited for one would still be counted, and not be handed out again.
	 */
	rcu_read_lock();
	int err = vfs_close(fd);
	long after = vfs_count_sum(NR_FILE);
	struct file *again = file_alloc();
	rcu_read_unlock();

	EXPECT_EQ(err, 0);
	EXPECT_EQ(after, files - 1);
	EXPECT_TRUE(again == f);
	if (again)
		file_free_unopened(again);
}

TEST(file, typesafe_close_frees_at_once)
{
	typesafe_run(__func__, close_frees_at_once);
}

/*
 * An open reserves its descriptor before its walk and installs the file after it;
 * a close meanwhile frees a lower one, which the next open must take (POSIX's
 * lowest free descriptor): the late install must not move the hint past it.
 */
static void lowest_after_late_install(const char *dir)
{
	struct fs_context *fs = fs_current();
	ASSERT_TRUE(fs != NULL);
	int a = file_open_new(vfs_at(dir, "a"), O_RDWR);
	ASSERT_TRUE(a >= 0);
	int b = file_open_new(vfs_at(dir, "b"), O_RDWR);
	ASSERT_TRUE(b >= 0);
	int reserved = fd_reserve(fs);
	ASSERT_TRUE(reserved > b);
	ASSERT_EQ(vfs_close(a), 0);
	struct file *f = fget(b);
	ASSERT_TRUE(f != NULL);
	EXPECT_EQ(fd_install(fs, reserved, f, false), reserved);

	int next = file_open_new(vfs_at(dir, "c"), O_RDWR);
	EXPECT_EQ(next, a);
	int opened[] = {next, b, reserved};
	for (unsigned i = 0; i < ARRAY_SIZE(opened); i++)
		if (opened[i] >= 0)
			EXPECT_EQ(vfs_close(opened[i]), 0);
}

TEST(file, open_after_a_late_install_takes_the_lowest_free)
{
	vfs_test_run("file", __func__, lowest_after_late_install);
}

/* The storm: each CPU's two descriptors, the inode each must name, what went wrong. */
static struct file_storm {
	struct fs_context *fs;
	const char *dir;
	unsigned ncpus;
	struct cpumask cpus; /* the ncpus that smp_run_on() runs the storm on */
	struct file_storm_cpu {
		int slot[2];
		struct inode *inode[2];
		char path[2][FILE_TEST_PATH];
		u32 wrong, missing, errors, checked;
	} __cacheline_aligned cpu[MAX_CPUS];
} storm;

static void storm_worker(void *arg)
{
	struct fs_context *own = file_use_fs(storm.fs);
	unsigned me = smp_processor_id(), n = 0;
	struct file_storm_cpu *c = &storm.cpu[me];
	u64 rng = me * 0x9e3779b97f4a7c15ULL + 1;

	for (unsigned round = 0; round < FILE_STORM_ROUNDS; round++) {
		/* Replace one of my files: the old one is freed, its memory soon another's. */
		unsigned which = round & 1;
		int tmp = vfs_open(c->path[which], O_RDONLY, 0);
		if (tmp < 0 || vfs_dup2(tmp, c->slot[which]) != c->slot[which] || vfs_close(tmp))
			c->errors++;

		/* Look up another CPU's descriptor while its owner replaces it. */
		rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
		unsigned other = (unsigned)(rng >> 33) % storm.ncpus, w = (rng >> 20) & 1;
		unsigned cpu = 0;
		for_each_cpu(cpu, &storm.cpus)
			if (n++ == other)
				break;
		n = 0;
		struct file_storm_cpu *o = &storm.cpu[cpu];
		struct file *f = fget(o->slot[w]);
		if (!f) {
			c->missing++;
			continue;
		}
		if (f->f_inode != o->inode[w] || atomic_read(&f->f_count) < 1)
			c->wrong++;
		c->checked++;
		fput(f);
	}
	current->fs = own;
}

/*
 * Every CPU's descriptors are in one table of FD_MAX: three each (its two and the one
 * it opens to replace one), with room for the test's own. Past 256 CPUs, 256 storm.
 */
#define FILE_STORM_MAX_CPUS (FD_MAX / 4)

static void fget_storm(const char *dir)
{
	storm = (struct file_storm){.dir = dir};
	storm.fs = fs_current();
	ASSERT_TRUE(storm.fs != NULL);
	/* smp_run_on() picks from the CPU it is called on: stay on this one until then. */
	struct cpumask allowed = current->allowed;
	kthread_bind(current, smp_processor_id());
	storm.ncpus = smp_pick_cpus(MIN(num_online_cpus(), FILE_STORM_MAX_CPUS), &storm.cpus);
	unsigned cpu;
	for_each_cpu(cpu, &storm.cpus) {
		struct file_storm_cpu *c = &storm.cpu[cpu];
		for (unsigned w = 0; w < 2; w++) {
			snprintf(c->path[w], FILE_TEST_PATH, "%s/c%u-%u", dir, cpu, w);
			c->slot[w] = file_open_new(c->path[w], O_RDWR);
			ASSERT_TRUE(c->slot[w] >= 0);
			c->inode[w] = storm.fs->fd[c->slot[w]]->f_inode;
		}
	}
	long files = vfs_count_sum(NR_FILE);

	atomic_add(&storm.fs->refs, (int)storm.ncpus);
	smp_run_on(storm.ncpus, storm_worker, NULL);
	set_cpus_allowed(current, &allowed);
	atomic_sub(&storm.fs->refs, (int)storm.ncpus);

	u32 wrong = 0, missing = 0, errors = 0, checked = 0;
	for_each_cpu(cpu, &storm.cpus) {
		struct file_storm_cpu *c = &storm.cpu[cpu];
		wrong += c->wrong;
		missing += c->missing;
		errors += c->errors;
		checked += c->checked;
		for (unsigned w = 0; w < 2; w++) {
			struct file *f = storm.fs->fd[c->slot[w]];
			EXPECT_TRUE(f && f->f_inode == c->inode[w] &&
				    atomic_read(&f->f_count) == 1);
			EXPECT_EQ(vfs_close(c->slot[w]), 0);
		}
	}
	EXPECT_EQ(errors, 0);
	EXPECT_EQ(wrong, 0);
	EXPECT_EQ(missing, 0);
	EXPECT_EQ(checked, storm.ncpus * FILE_STORM_ROUNDS);
	/* Every replaced file was freed once: the count is back to the descriptors' own. */
	rcu_barrier();
	EXPECT_EQ(vfs_count_sum(NR_FILE), files - 2 * (long)storm.ncpus);
}

TEST(file, fget_storm_returns_only_the_slots_files)
{
	enum file_free_mode saved = file_get_free_mode();
	for (unsigned m = 0; m < 2; m++) {
		file_set_free_mode(m ? FILE_FREE_RCU : FILE_FREE_TYPESAFE);
		vfs_test_run("file", __func__, fget_storm);
	}
	file_set_free_mode(saved);
}
