/*
 * /proc/self/fd: a directory whose names are the calling process's open
 * descriptors, each a link to what the descriptor has open. What it holds
 * depends on who looks: its lookup accepts only the canonical decimal name of
 * one of the caller's open descriptors, and every cached name is revalidated
 * against the caller's table at each walk (d_revalidate, so RCU-walk leaves
 * them to ref-walk); a listing gives the caller's table, not the directory.
 *
 * The link for descriptor N is named N and its text is N itself: made the
 * first time any process looks N up, under the directory's i_mutex, and shared
 * from then on by every process, since nothing in it belongs to one. So there
 * is at most one per number below FD_MAX, and a program run twice finds the
 * names its first run made. The link has its operations before it is hashed,
 * so no walk sees it without them.
 *
 * As on Linux the link is "magic" (jump_link): a walk through it goes to the
 * open file itself (its f_path), not to a name, so it reaches a file unlinked
 * since and opens a new description of it. readlink gives the file's path
 * (" (deleted)" after it for an unlinked one), or for a pipe or a socket
 * "pipe:[INODE]" and "socket:[INODE]" as Linux prints them; those have no path
 * to walk to, and a walk through them fails with -ENXIO, as Linux's does for a
 * socket (Linux reopens a pipe; Grace does not).
 *
 * Lock order: the directory's i_mutex, then the caller's descriptor table's
 * lock (fd_next_open()).
 */
#include <grace/slab.h>
#include <grace/string.h>
#include "internal.h"

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

/* Is the name one of the caller's open descriptors? */
static bool fd_name_open(const struct qstr *name)
{
	int fd = fd_of_name(name->name, name->len);
	return fd >= 0 && fd_next_open(fd) == fd;
}

static int fd_revalidate(struct dentry *d)
{
	return fd_name_open(&d->d_name) ? 0 : -ENOENT;
}

static const struct dentry_operations fd_dops = {.d_revalidate = fd_revalidate};

static int fd_jump_link(struct inode *link, struct path *out)
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

long file_path_text(struct file *f, char *buf)
{
	struct dentry *d = f->f_path.dentry;
	long len;
	if (d) {
		len = d_path(&f->f_path, buf, PATH_MAX);
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
	return len == -ERANGE ? -ENAMETOOLONG : len;
}

static long fd_link_text(struct inode *link, char *buf)
{
	struct file *f = fget(fd_of_link(link));
	if (!f)
		return -ENOENT;
	long len = file_path_text(f, buf);
	fput(f);
	return len;
}

static long fd_get_link(struct inode *link, const char **text, char **buf)
{
	if (!(*buf = fs_alloc(PATH_MAX)))
		return -ENOMEM;
	*text = *buf;
	return fd_link_text(link, *buf);
}

static const struct inode_operations fd_link_iops = {
    .get_link = fd_get_link,
    .jump_link = fd_jump_link,
    .setattr = proc_setattr,
};

/* The link for an open descriptor's name, made now: the first lookup of it by any process. */
static int fd_lookup(struct inode *dir, struct dentry *d)
{
	if (!fd_name_open(&d->d_name))
		return -ENOENT;
	char *text = fs_alloc(d->d_name.len + 1);
	struct inode *inode = text ? new_inode(proc_sb, S_IFLNK | 0700) : NULL;
	if (!inode) {
		kfree(text);
		return -ENOMEM;
	}
	memcpy(text, d->d_name.name, d->d_name.len + 1);
	inode->link = text;
	inode->i_size = d->d_name.len;
	inode->i_op = &fd_link_iops;
	d->d_op = &fd_dops;
	simple_add(d, inode);
	return 0;
}

static const struct inode_operations fd_dir_iops = {.lookup = fd_lookup, .setattr = proc_setattr};

/* The inode number of the directory's link for the caller's descriptor fd, or -errno. */
static long fd_ino(struct dentry *dir, int fd)
{
	char name[FD_NAME_MAX + 1];
	int len = snprintf(name, sizeof(name), "%d", fd);
	struct qstr q = {name_hash(name, len), len, name};
	int err = 0;
	mutex_lock(&dir->d_inode->i_mutex);
	struct dentry *d = lookup_locked(dir, &q, &err);
	mutex_unlock(&dir->d_inode->i_mutex);
	if (!d)
		return err;
	long ino = d->d_inode->i_ino;
	dput(d);
	return ino;
}

/*
 * The caller's descriptors from ctx->pos on, position fd + 2 for descriptor fd
 * (as Linux numbers them), so that a descriptor opened or closed meanwhile
 * moves no other.
 */
static int fd_readdir(struct file *f, struct dir_context *ctx)
{
	char name[12]; /* an int in decimal */
	for (int fd; ctx->pos - 2 < FD_MAX && (fd = fd_next_open(ctx->pos - 2)) >= 0;) {
		long ino = fd_ino(f->f_path.dentry, fd);
		if (ino == -ENOENT) {
			ctx->pos = fd + 3; /* closed since: no name to give */
			continue;
		}
		if (ino < 0)
			return ino;
		int len = snprintf(name, sizeof(name), "%d", fd);
		if (!dir_emit(ctx, name, len, fd + 3, ino, DT_LNK))
			return 0;
	}
	return 0;
}

static const struct file_operations fd_dir_fops = {
    .llseek = generic_file_llseek,
    .iterate = fd_readdir,
};

bool proc_fd_add(struct dentry *self)
{
	/* dr-x------ as on Linux. */
	return proc_add(self, "fd", S_IFDIR | 0500, &fd_dir_iops, &fd_dir_fops) != NULL;
}
