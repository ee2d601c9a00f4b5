/*
 * /proc/self/fd: a directory whose names are the calling process's open
 * descriptors, each a link to what the descriptor has open. It is a ramfs
 * directory marked I_SELF_FD, and what it holds depends on who looks: a lookup
 * in it (always by reference: RCU-walk leaves it to ref-walk) accepts only the
 * canonical decimal name of one of the caller's open descriptors, checked at
 * every lookup, and getdents lists the caller's table, not the directory.
 *
 * The link for descriptor N is a ramfs symlink named N, marked I_FD_LINK, whose
 * text is N itself: made the first time any process looks N up, under the
 * directory's i_mutex, and shared from then on by every process, since nothing
 * in it belongs to one. So there is at most one per number below FD_MAX, and a
 * program run twice finds the names its first run made. Every lookup in the
 * directory holds its i_mutex, so no walk sees a link before its mark is set.
 *
 * As on Linux the link is "magic": a walk through it goes to the open file
 * itself (its f_path), not to a name, so it reaches a file unlinked since and
 * opens a new description of it. readlink gives the file's path (" (deleted)"
 * after it for an unlinked one), or for a pipe or a socket "pipe:[INODE]" and
 * "socket:[INODE]" as Linux prints them; those have no path to walk to, and a
 * walk through them fails with -ENXIO, as Linux's does for a socket (Linux
 * reopens a pipe; Grace does not).
 *
 * Lock order: the directory's i_mutex, then the caller's descriptor table's
 * lock (fd_next_open()).
 */
#include <grace/printk.h>
#include <grace/string.h>

#include "internal.h"

#define PROC_SELF_FD "/proc/self/fd"
/* Digits of the largest descriptor, FD_MAX - 1. */
#define FD_NAME_MAX 4

/* The descriptor a name stands for: canonical decimal (no sign, no leading 0) below FD_MAX. */
static int fd_of_name(const char *name, u32 len)
{
	if (!len || len > FD_NAME_MAX || (name[0] == '0' && len > 1))
		return -1;
	int fd = 0;
	for (u32 i = 0; i < len; i++) {
		if (name[i] < '0' || name[i] > '9')
			return -1;
		fd = fd * 10 + (name[i] - '0');
	}
	return fd < FD_MAX ? fd : -1;
}

/* The descriptor a link of the directory stands for: its text is its own name. */
static int fd_of_link(const struct inode *link)
{
	return fd_of_name(link->link, link->i_size);
}

struct dentry *proc_fd_lookup_locked(struct dentry *dir, const struct qstr *name, int *err)
{
	int fd = fd_of_name(name->name, name->len);
	if (fd < 0 || fd_next_open(fd) != fd) {
		*err = -ENOENT;
		return NULL;
	}
	struct dentry *d = d_lookup(dir, name);
	if (!d) {
		if (!(d = d_alloc(dir, name))) {
			*err = -ENOMEM;
			return NULL;
		}
		d_add(d, NULL);
	}
	if (!d_is_negative(d))
		return d;
	/* Negative only if a first making ran out of memory: this one tries again. */
	char text[FD_NAME_MAX + 1];
	memcpy(text, name->name, name->len);
	text[name->len] = '\0';
	if ((*err = ramfs_mknod(dir, d, S_IFLNK | 0700, text, 0))) {
		dput(d);
		return NULL;
	}
	struct inode *inode = d->d_inode;
	spin_lock(&inode->i_lock);
	inode->i_state |= I_FD_LINK;
	spin_unlock(&inode->i_lock);
	return d;
}

long proc_fd_ino(struct dentry *dir, int fd)
{
	char name[FD_NAME_MAX + 1];
	int len = snprintf(name, sizeof(name), "%d", fd);
	struct qstr q = {name_hash(name, len), len, name};
	int err = 0;
	mutex_lock(&dir->d_inode->i_mutex);
	struct dentry *d = proc_fd_lookup_locked(dir, &q, &err);
	mutex_unlock(&dir->d_inode->i_mutex);
	if (!d)
		return err;
	long ino = d->d_inode->i_ino;
	dput(d);
	return ino;
}

int proc_fd_follow(struct inode *link, struct path *out)
{
	struct file *f = fget(fd_of_link(link));
	if (!f)
		return -ENOENT; /* closed since the lookup */
	int err = 0;
	if (f->f_path.dentry) {
		*out = f->f_path;
		path_get(out);
	} else {
		err = -ENXIO;
	}
	fput(f);
	return err;
}

/* Linux's " (deleted)" after the path of a file whose name is gone. */
static const char deleted[] = " (deleted)";

long proc_fd_link_text(struct inode *link, char *buf)
{
	struct file *f = fget(fd_of_link(link));
	if (!f)
		return -ENOENT;
	struct dentry *d = f->f_path.dentry;
	long len;
	if (d) {
		len = d_path(d, buf, PATH_MAX);
		if (len >= 0 && d_unhashed(d) && !d_is_root(d)) {
			if (len + sizeof(deleted) <= PATH_MAX) {
				memcpy(buf + len, deleted, sizeof(deleted));
				len += sizeof(deleted) - 1;
			} else {
				len = -ERANGE;
			}
		}
	} else {
		/* The files no name reaches are pipes' ends and sockets (fs/pipe.c, fs/anon.c). */
		const char *kind = S_ISFIFO(f->f_inode->i_mode) ? "pipe" : "socket";
		len = snprintf(buf, PATH_MAX, "%s:[%llu]", kind,
			       (unsigned long long)f->f_inode->i_ino);
	}
	fput(f);
	return len == -ERANGE ? -ENAMETOOLONG : len;
}

void proc_fd_init(void)
{
	struct path p;
	/* dr-x------ as on Linux; no call but the lookup above makes or removes a name in it. */
	int err = vfs_mkdir(PROC_SELF_FD, 0500);
	if (!err || err == -EEXIST)
		err = path_lookup(PROC_SELF_FD, LOOKUP_DIRECTORY, &p);
	if (err) {
		pr_warn("proc: cannot make %s: %s\n", PROC_SELF_FD, errno_name(err));
		return;
	}
	struct inode *inode = p.dentry->d_inode;
	spin_lock(&inode->i_lock);
	inode->i_state |= I_SELF_FD;
	spin_unlock(&inode->i_lock);
	path_put(&p);
}
