/*
 * /proc/self/exe: a magic link to the program the calling process runs (busybox
 * runs its applets of a pipeline through it; a program finds itself by it). A
 * walk through it goes to the file execve opened (the process's descriptor
 * context keeps a reference, fs_set_exe()), not to a name, as Linux's goes to
 * mm->exe_file: a program renamed or unlinked since is still reached. readlink
 * gives the file's path now, with " (deleted)" after an unlinked one. A kernel
 * thread, which runs no program, finds that it leads nowhere.
 */
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/string.h>
#include "internal.h"

/* The caller's program, with a reference; NULL for a kernel thread. */
static struct file *exe_get(void)
{
	struct fs_context *fs = current->fs;
	if (!fs)
		return NULL;
	bool locked = fs_lock(fs);
	struct file *f = fs->exe;
	if (f)
		atomic_inc(&f->f_count);
	fs_unlock(fs, locked);
	return f;
}

static int exe_jump_link(struct inode *inode, struct path *out)
{
	struct file *f = exe_get();
	if (!f)
		return -ENOENT;
	*out = f->f_path;
	path_get(out);
	fput(f);
	return 0;
}

static long exe_get_link(struct inode *inode, const char **text, char **buf)
{
	struct file *f = exe_get();
	if (!f)
		return -ENOENT;
	long len = (*buf = fs_alloc(PATH_MAX)) ? file_path_text(f, *buf) : -ENOMEM;
	*text = *buf;
	fput(f);
	return len;
}

static const struct inode_operations exe_iops = {
    .get_link = exe_get_link,
    .jump_link = exe_jump_link,
    .setattr = proc_setattr,
};

void fs_set_exe(struct file *f)
{
	struct fs_context *fs = fs_current();
	if (!fs) {
		if (f)
			fput(f);
		return;
	}
	bool locked = fs_lock(fs);
	struct file *old = fs->exe;
	fs->exe = f;
	fs_unlock(fs, locked);
	if (old)
		fput(old);
}

bool proc_self_add(struct dentry *self)
{
	return proc_add(self, "exe", S_IFLNK | 0777, &exe_iops, &empty_fops) != NULL;
}
