/*
 * The rmdir/create storm (suite vfs_storm; its harness: vfs_storm_test_util.h): one
 * CPU removes a directory while the others create and unlink in it: rmdir must
 * never win while a file is in it, and a create may fail only because the rmdir won.
 */
#include <grace/atomic.h>
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/string.h>
#include <grace/test.h>
#include <grace/time.h>
#include <asm/cpu.h>

#include "vfs_storm_test_util.h"
#include "vfs_test_util.h"

/* ---- rmdir racing creates ---- */

#define RC_ROUNDS 6		       /* directories d0..d5, each removed by another CPU */
#define RC_CREATES_TOTAL 384	       /* creates per round, over the creators */
#define RC_MIN_CREATES 4	       /* per creator per round */
#define RC_WAIT_NS (10 * NSEC_PER_SEC) /* for the remover's word that its rmdir won */

static struct {
	const char *dir;
	unsigned creates; /* per creator per round; the last file is kept */
	struct smp_sync start[RC_ROUNDS];
	u32 removed[RC_ROUNDS];		 /* the remover's rmdir returned 0 */
	atomic_t done[RC_ROUNDS];	 /* creators finished with the round */
	u8 kept[RC_ROUNDS][MAX_CPUS];	 /* the creator's last file was made, and stays */
	u8 refused[RC_ROUNDS][MAX_CPUS]; /* a create of the creator's was -ENOENT */
} rc;

static unsigned rc_remover(unsigned round)
{
	return round % storm_cpus.n;
}

/* Remove the round's directory: -ENOTEMPTY until the creators leave a gap, or for good. */
static void rc_remove(unsigned r)
{
	char d[STORM_PATH], late[STORM_PATH];
	struct stat st;
	snprintf(d, sizeof(d), "%s/d%u", rc.dir, r);
	for (;;) {
		bool creators_done = (unsigned)atomic_read_acquire(&rc.done[r]) == storm_cpus.n - 1;
		int err = vfs_rmdir(d);
		if (err == 0) {
			/* Pairs with the creators' smp_load_acquire(). */
			smp_store_release(&rc.removed[r], 1);
			break;
		}
		if (err != -ENOTEMPTY) {
			storm_bad("rmdir", d, err);
			return;
		}
		/* They are done and each left a file: the directory stays. */
		if (creators_done)
			return;
	}
	int err = vfs_stat(d, &st);
	if (err != -ENOENT)
		storm_bad("stat of a removed directory", d, err);
	snprintf(late, sizeof(late), "%s/late", d);
	int fd = vfs_open(late, O_WRONLY | O_CREAT, 0644);
	if (fd != -ENOENT) {
		storm_bad("create in a removed directory", late, fd);
		if (fd >= 0)
			vfs_close(fd);
	}
}

static void rc_create(unsigned r, unsigned me)
{
	char p[STORM_PATH];
	struct stat st;
	for (unsigned i = 0; i < rc.creates; i++) {
		snprintf(p, sizeof(p), "%s/d%u/c%u-%u", rc.dir, r, me, i);
		int fd = vfs_open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd == -ENOENT) {
			/* Only the remover's rmdir can take the directory away: wait to hear it
			 * won. */
			u64 end = arch_clock_ns() + RC_WAIT_NS;
			while (!smp_load_acquire(&rc.removed[r]) && arch_clock_ns() < end)
				cpu_relax();
			if (!smp_load_acquire(&rc.removed[r]))
				storm_bad("create refused, but rmdir did not win:", p, fd);
			/* Gone stays gone. */
			fd = vfs_open(p, O_WRONLY | O_CREAT | O_EXCL, 0644);
			if (fd != -ENOENT)
				storm_bad("create after the directory went", p, fd);
			if (fd >= 0)
				vfs_close(fd);
			rc.refused[r][me] = 1;
			break;
		}
		if (fd < 0) {
			storm_bad("create", p, fd);
			break;
		}
		long w = vfs_write(fd, p, strlen(p));
		if (w != (long)strlen(p))
			storm_bad("write", p, w);
		vfs_close(fd);
		/* The file is in the directory, so no rmdir can have won since it was made. */
		int err = vfs_stat(p, &st);
		if (err)
			storm_bad("stat of a file just made", p, err);
		if (i == rc.creates - 1) {
			rc.kept[r][me] = 1;
			break;
		}
		if ((err = vfs_unlink(p)))
			storm_bad("unlink", p, err);
	}
	/* Release: what this creator recorded, before the remover reads that it is done. */
	atomic_fetch_add_release(&rc.done[r], 1);
}

static void rc_fn(void *arg)
{
	unsigned me = storm_my_place();
	for (unsigned r = 0; r < RC_ROUNDS; r++) {
		smp_sync_wait(&rc.start[r], storm_cpus.n);
		if (me == rc_remover(r))
			rc_remove(r);
		else
			rc_create(r, me);
	}
}

static void rc_storm(const char *dir)
{
	struct vfs_counts base;
	char name[STORM_PATH];
	storm_cpus_init();
	if (storm_cpus.n < 2) {
		test_skip("needs two CPUs to race");
		return;
	}
	for (unsigned r = 0; r < RC_ROUNDS; r++)
		ASSERT_EQ(vfs_mkdir(vfs_at(dir, "d%u", r), 0755), 0);
	storm_begin(dir, &base);
	rc.dir = dir;
	rc.creates = MAX(RC_CREATES_TOTAL / (storm_cpus.n - 1), RC_MIN_CREATES);
	for (unsigned r = 0; r < RC_ROUNDS; r++) {
		rc.start[r] = (struct smp_sync){0};
		rc.removed[r] = 0;
		atomic_set(&rc.done[r], 0);
		memset(rc.kept[r], 0, sizeof(rc.kept[r]));
		memset(rc.refused[r], 0, sizeof(rc.refused[r]));
	}
	smp_run_all(rc_fn, NULL);

	long left = 0;
	unsigned won = 0;
	for (unsigned r = 0; r < RC_ROUNDS; r++) {
		struct stat st;
		const char *d = vfs_at(dir, "d%u", r);
		if (rc.removed[r]) {
			/* Gone, and then no file of it can have been made and kept. */
			won++;
			left--;
			EXPECT_EQ(vfs_stat(d, &st), -ENOENT);
			for (unsigned p = 0; p < storm_cpus.n; p++) {
				snprintf(name, sizeof(name), "%s/c%u-%u", d, p, rc.creates - 1);
				EXPECT_EQ(vfs_stat(name, &st), -ENOENT);
			}
			for (unsigned p = 0; p < storm_cpus.n; p++)
				if (rc.kept[r][p])
					test_fail(__FILE__, __LINE__,
						  "round %u: rmdir won though cpu %u's file stayed",
						  r, storm_cpus.cpu[p]);
			continue;
		}
		/* Still there: every creator kept its last file, and those are all it holds. */
		struct vfs_text t;
		vfs_text_init(&t, vfs_expected, sizeof(vfs_expected));
		for (unsigned p = 0; p < storm_cpus.n; p++) {
			if (p == rc_remover(r))
				continue;
			if (!rc.kept[r][p] || rc.refused[r][p])
				test_fail(__FILE__, __LINE__,
					  "round %u: cpu %u was refused, but rmdir did not win", r,
					  storm_cpus.cpu[p]);
			snprintf(name, sizeof(name), "%s/d%u/c%u-%u", dir, r, p, rc.creates - 1);
			const char *leaf = name + strlen(d) + 1;
			vfs_line_file(&t, leaf, name, strlen(name), 1);
			left++;
		}
		vfs_expect_listing("rmdir/create", d, &t);
	}
	printk("# vfs_storm: rmdir won %u of %u rounds against %u creators\n", won, RC_ROUNDS,
	       storm_cpus.n - 1);
	storm_expect_counts(&base, left, "rmdir/create");
}

TEST(vfs_storm, rmdir_racing_creates_never_removes_a_directory_that_holds_a_file)
{
	vfs_test_run("vfs_storm", __func__, rc_storm);
}
