/*
 * Directory listings: getdents through a directory's iterate operation. The
 * generic part gives "." (position 0) and ".." (1); the file system's iterate
 * gives the rest from its own positions, each record through dir_emit(), which
 * says when the caller's buffer is full. libfs's dcache_readdir() lists the
 * names a directory holds in the dcache (ramfs, procfs's fixed directories).
 */
#include <grace/slab.h>
#include <grace/string.h>
#include <grace/uaccess.h>
#include "internal.h"

u8 dirent_type(u32 mode)
{
	return S_ISDIR(mode) ? DT_DIR : S_ISLNK(mode) ? DT_LNK : S_ISCHR(mode) ? DT_CHR : DT_REG;
}

/* getdents' dir_context: records laid out as struct dirent64 in a kernel buffer. */
struct getdents_ctx {
	struct dir_context ctx;
	void *buf;
	size_t size, used;
	bool full; /* a record did not fit */
};

static bool getdents_actor(struct dir_context *ctx, const char *name, u32 len, s64 next, u64 ino,
			   u8 type)
{
	struct getdents_ctx *c = container_of(ctx, struct getdents_ctx, ctx);
	size_t reclen = (offsetof(struct dirent64, d_name) + len + 1 + 7) & ~(size_t)7;
	if (c->used + reclen > c->size) {
		c->full = true;
		return false;
	}
	struct dirent64 *de = (struct dirent64 *)((char *)c->buf + c->used);
	de->d_ino = ino;
	de->d_off = next;
	de->d_reclen = reclen;
	de->d_type = type;
	memcpy(de->d_name, name, len);
	de->d_name[len] = '\0';
	c->used += reclen;
	return true;
}

int dcache_readdir(struct file *f, struct dir_context *ctx)
{
	struct dentry *dir = f->f_path.dentry, *child;
	s64 n = 2;
	bool global = vfs_global();
	dcache_global_lock(global);
	d_lock(dir);
	list_for_each_entry(child, &dir->d_subdirs, d_child) {
		/* The child's lock: an unlink clears d_inode and frees the inode under it. */
		d_lock_nested(child);
		struct inode *inode = child->d_inode;
		bool more = true;
		if (inode && !d_unhashed(child) && n++ >= ctx->pos)
			more = dir_emit(ctx, child->d_name.name, child->d_name.len, ctx->pos + 1,
					inode->i_ino, dirent_type(inode->i_mode));
		d_unlock(child);
		if (!more)
			break;
	}
	d_unlock(dir);
	dcache_global_unlock(global);
	return 0;
}

/*
 * Positions: 0 is ".", 1 is "..", then the file system's (dcache_readdir: n + 2
 * for the n-th name in the directory's child list; a name added or removed
 * while a reader is part-way through may shift the later ones by one, as with
 * any position-based readdir).
 */
static long file_getdents(struct file *f, void *buf, size_t size)
{
	if (!S_ISDIR(f->f_inode->i_mode) || !f->f_op->iterate)
		return -ENOTDIR;
	if (f->f_inode->i_state & I_DEADDIR)
		return -ENOENT;
	struct dentry *dir = f->f_path.dentry;
	struct getdents_ctx c = {{getdents_actor, f->f_pos}, buf, size, 0, false};
	int err = 0;
	if (c.ctx.pos == 0)
		dir_emit(&c.ctx, ".", 1, 1, dir->d_inode->i_ino, DT_DIR);
	if (c.ctx.pos == 1) {
		struct dentry *parent = dget_parent(dir);
		dir_emit(&c.ctx, "..", 2, 2, parent->d_inode->i_ino, DT_DIR);
		dput(parent);
	}
	if (!c.full)
		err = f->f_op->iterate(f, &c.ctx);
	f->f_pos = c.ctx.pos;
	if (c.used == 0 && err)
		return err;
	/* Nothing fitted although there was something to give: the buffer is too small. */
	return c.used == 0 && c.full ? -EINVAL : (long)c.used;
}

long vfs_getdents(int fd, void *buf, size_t size)
{
	struct file *f = fget(fd);
	if (!f)
		return -EBADF;
	long n = file_getdents(f, buf, size);
	fput(f);
	return n;
}

/*
 * The records are made into a kernel buffer, since the directory's locks are
 * held while they are (a copy to user memory may sleep), and copied out after.
 * A copy that faults part way keeps the records wholly copied, and the
 * position goes back to just after the last of them, as Linux's filldir64()
 * stops at the record it could not write: no name is skipped.
 */
long vfs_getdents_user(int fd, void __user *ubuf, size_t size)
{
	char *kbuf = kmalloc(size ? size : 1);
	struct file *f = fget(fd);
	long n = !f ? -EBADF : !kbuf ? -ENOMEM : 0;
	if (n) {
		if (f)
			fput(f);
		kfree(kbuf);
		return n;
	}
	s64 start = f->f_pos;
	n = file_getdents(f, kbuf, size);
	size_t copied = n > 0 ? (size_t)n - copy_to_user(ubuf, kbuf, n) : 0;
	if (n > 0 && copied < (size_t)n) {
		size_t whole = 0;
		s64 pos = start;
		for (struct dirent64 *de = (struct dirent64 *)kbuf; whole + de->d_reclen <= copied;
		     de = (struct dirent64 *)(kbuf + whole)) {
			pos = de->d_off;
			whole += de->d_reclen;
		}
		f->f_pos = pos;
		n = whole ? (long)whole : -EFAULT;
	}
	fput(f);
	kfree(kbuf);
	return n;
}
