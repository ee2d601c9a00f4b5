/*
 * The cpio "newc" unpacker (070701, and 070702 whose check field is the sum of
 * a regular file's data bytes), with Linux's init/initramfs.c as the behaviour
 * to match: a member replaces a name of another type (clean_path), a regular
 * file with nlink >= 2 whose (ino, devmajor, devminor) was seen before in the
 * same archive becomes a hard link to the first name (GNU cpio writes the data
 * with the last name only), modes are set exactly (no umask), a TRAILER!!!
 * entry forgets the archive's inode numbers, and NUL bytes may pad between
 * members and archives. A call that fails for one member (a missing parent,
 * say) skips that member, as on Linux.
 *
 * Where this differs from Linux: every member is checked to lie inside the
 * buffer before anything is made for it, so a truncated archive stops with an
 * error instead of leaving a short file; a header field with a non-hex digit
 * is an error (Linux reads the digits before it); a bad 070702 checksum stops
 * before the file is made (Linux keeps the file, then stops). Owners, times
 * (mtime is ignored: ramfs keeps no times) and block devices, FIFOs and
 * sockets (ramfs has none: skipped with a line) are left out; character
 * devices are made (/dev/console, which an archive for a Linux initramfs holds). Compressed
 * archives are refused. Names are made relative to the target directory: a leading "/" is dropped
 * and ".." is resolved by the name's text, never above the target, so
 * "/a", "a" and "../a" are the same member, as they are on Linux, whose
 * unpacker resolves them from "/" (a ".." after a symlink component is taken
 * by text here, through the link on Linux).
 *
 * It runs in the calling thread, through the vfs_* calls, so the tree it makes
 * is one any thread could have made.
 */
#include <grace/boot_info.h>
#include <grace/errno.h>
#include <grace/hash.h>
#include <grace/chrdev.h>
#include <grace/initramfs.h>
#include <grace/list.h>
#include <grace/page_alloc.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/string.h>

#include "internal.h"

#define CPIO_HDR_LEN 110 /* "0707xx" and 13 fields of 8 hex digits */
#define CPIO_FIELDS 13
#define CPIO_TRAILER "TRAILER!!!"
#define LINK_HASH_BITS 5 /* Linux's 32 buckets: hard links in an initramfs are few */

/* The fields of a header, in archive order. */
enum {
	F_INO,
	F_MODE,
	F_UID,
	F_GID,
	F_NLINK,
	F_MTIME,
	F_FILESIZE,
	F_MAJOR,
	F_MINOR,
	F_RMAJOR,
	F_RMINOR,
	F_NAMESIZE,
	F_CHECK
};
static const char *const field_names[CPIO_FIELDS] = {
    "ino",	"mode",	    "uid",	 "gid",	      "nlink",	  "mtime", "filesize",
    "devmajor", "devminor", "rdevmajor", "rdevminor", "namesize", "check"};

/* A regular file's first name, for the later names of the same inode. */
struct cpio_link {
	struct list_head node;
	u32 ino, major, minor;
	char path[]; /* NUL-terminated, the target directory included */
};

struct unpack {
	const u8 *buf;
	size_t len;
	const char *dir;
	struct initramfs_report *r;
	char *path;   /* PATH_MAX: dir joined with the member's name */
	char *target; /* PATH_MAX + 1: a symlink's text */
	struct list_head links[1u << LINK_HASH_BITS];
};

static int unpack_fail(struct unpack *u, size_t off, const char *why)
{
	u->r->error = why;
	u->r->error_offset = off;
	pr_err("initramfs: malformed archive at offset %zu (0x%zx): %s; stopped after %lu "
	       "members\n",
	       off, off, why, u->r->entries);
	return -EINVAL;
}

static void links_forget(struct unpack *u)
{
	for (unsigned b = 0; b < ARRAY_SIZE(u->links); b++)
		while (!list_empty(&u->links[b])) {
			struct cpio_link *l =
			    list_first_entry(&u->links[b], struct cpio_link, node);
			list_del_init(&l->node);
			kfree(l);
		}
}

static struct list_head *links_bucket(struct unpack *u, u32 ino, u32 major, u32 minor)
{
	return &u->links[hash_64(((u64)ino << 32) ^ ((u64)major << 16) ^ minor, LINK_HASH_BITS)];
}

/* The first name of (ino, major, minor), or NULL after recording path as it. */
static const char *links_find_or_add(struct unpack *u, const u32 *f, int *err)
{
	struct list_head *b = links_bucket(u, f[F_INO], f[F_MAJOR], f[F_MINOR]);
	struct cpio_link *l;
	list_for_each_entry(l, b, node)
		if (l->ino == f[F_INO] && l->major == f[F_MAJOR] && l->minor == f[F_MINOR])
			return l->path;
	size_t n = strlen(u->path) + 1;
	l = kmalloc(sizeof(*l) + n);
	if (!l) {
		*err = -ENOMEM;
		return NULL;
	}
	l->ino = f[F_INO];
	l->major = f[F_MAJOR];
	l->minor = f[F_MINOR];
	memcpy(l->path, u->path, n);
	list_add(&l->node, b);
	return NULL;
}

/*
 * dir joined with name, name's components resolved by their text: empty ones
 * and "." dropped, ".." removing the one before (none above dir). -ENAMETOOLONG.
 */
static int unpack_join(struct unpack *u, const char *name)
{
	size_t base = strlcpy(u->path, u->dir, PATH_MAX), len;
	if (base >= PATH_MAX)
		return -ENAMETOOLONG;
	while (base > 1 && u->path[base - 1] == '/')
		base--;
	len = base;
	for (const char *p = name; *p;) {
		while (*p == '/')
			p++;
		const char *c = p;
		while (*p && *p != '/')
			p++;
		size_t n = p - c;
		if (n == 0 || (n == 1 && c[0] == '.'))
			continue;
		if (n == 2 && c[0] == '.' && c[1] == '.') {
			while (len > base && u->path[len - 1] != '/')
				len--;
			if (len > base)
				len--; /* the '/' before the component removed */
			continue;
		}
		bool slash = len > 0 && u->path[len - 1] != '/';
		if (len + slash + n >= PATH_MAX)
			return -ENAMETOOLONG;
		if (slash)
			u->path[len++] = '/';
		memcpy(u->path + len, c, n);
		len += n;
	}
	u->path[len] = '\0';
	return 0;
}

/* Set the permission bits of path (not following a last symlink): Linux's chmod after create. */
static int unpack_chmod(const char *path, u32 mode)
{
	return vfs_chmodat(AT_FDCWD, path, mode, AT_SYMLINK_NOFOLLOW);
}

/* Linux's clean_path(): a name of another type than fmt (0: any) is removed first. */
static void unpack_clean(const char *path, u32 fmt)
{
	struct stat st;
	if (vfs_lstat(path, &st) || (st.st_mode & S_IFMT) == fmt)
		return;
	if (S_ISDIR(st.st_mode))
		vfs_rmdir(path); /* not empty: stays, and the member's own call then fails */
	else
		vfs_unlink(path);
}

static int unpack_write(const char *path, int flags, u32 mode, const u8 *data, u64 size)
{
	int fd = vfs_open(path, O_WRONLY | O_CREAT | flags, mode & 07777);
	if (fd < 0)
		return fd;
	int err = unpack_chmod(path, mode);
	if (!err && size)
		err = vfs_ftruncate(fd, (s64)size);
	for (u64 done = 0; !err && done < size;) {
		long n = vfs_write(fd, data + done, size - done);
		if (n <= 0)
			err = n < 0 ? (int)n : -EIO;
		else
			done += n;
	}
	vfs_close(fd);
	return err;
}

static int unpack_file(struct unpack *u, const u32 *f, const u8 *data)
{
	u32 mode = f[F_MODE];
	int err = 0;
	if (f[F_NLINK] >= 2) {
		const char *old = links_find_or_add(u, f, &err);
		if (err)
			return err;
		if (old) {
			unpack_clean(u->path, 0);
			err = vfs_link(old, u->path);
			/* The inode's data comes with its last name: written in place, no O_TRUNC.
			 */
			return err ? err : unpack_write(u->path, 0, mode, data, f[F_FILESIZE]);
		}
	}
	return unpack_write(u->path, O_TRUNC, mode, data, f[F_FILESIZE]);
}

static int unpack_symlink(struct unpack *u, const u32 *f, const u8 *data)
{
	/* The text as a C string: a NUL inside it ends it, as on Linux. */
	memcpy(u->target, data, f[F_FILESIZE]);
	u->target[f[F_FILESIZE]] = '\0';
	unpack_clean(u->path, 0);
	return vfs_symlink(u->target, u->path);
}

/* Make one member whose header, name and data were checked to lie in the buffer. */
static void unpack_member(struct unpack *u, const u32 *f, const char *name, const u8 *data)
{
	u32 mode = f[F_MODE];
	int err = unpack_join(u, name);
	const char *what = NULL;
	if (!err) {
		switch (mode & S_IFMT) {
		case S_IFREG:
			unpack_clean(u->path, S_IFREG);
			err = unpack_file(u, f, data);
			break;
		case S_IFDIR:
			unpack_clean(u->path, S_IFDIR);
			err = vfs_mkdir(u->path, mode & 07777);
			if (!err || err == -EEXIST)
				err = unpack_chmod(u->path, mode);
			break;
		case S_IFLNK:
			/* Linux skips a link whose text is longer than a path. */
			if (f[F_FILESIZE] > PATH_MAX)
				err = -ENAMETOOLONG;
			else
				err = unpack_symlink(u, f, data);
			break;
		case S_IFCHR:
			/* Linux's clean_path() and mknod, with the member's major and minor. */
			unpack_clean(u->path, 0);
			err = vfs_mknod(u->path, mode, MKDEV(f[F_RMAJOR], f[F_RMINOR]));
			break;
		default:
			what = "block devices, FIFOs and sockets are not supported";
		}
	}
	if (!err && !what) {
		u->r->entries++;
		return;
	}
	u->r->skipped++;
	printk("initramfs: %s: %s, skipped\n", name, what ? what : strerror(err));
}

static int hex_digit(u8 c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The header at off (CPIO_HDR_LEN bytes there): its fields, or -EINVAL and the error. */
static int unpack_header(struct unpack *u, size_t off, u32 *f, bool *csum)
{
	const u8 *h = u->buf + off;
	if (!memcmp(h, "070701", 6))
		*csum = false;
	else if (!memcmp(h, "070702", 6))
		*csum = true;
	else if (!memcmp(h, "070707", 6))
		return unpack_fail(u, off, "old binary-compatible cpio format (use cpio -H newc)");
	else
		return unpack_fail(u, off, "bad magic (not a cpio newc header)");
	for (unsigned i = 0; i < CPIO_FIELDS; i++) {
		u32 v = 0;
		for (unsigned j = 0; j < 8; j++) {
			size_t at = 6 + 8 * i + j;
			int d = hex_digit(h[at]);
			if (d < 0) {
				static char why[64];
				snprintf(why, sizeof(why), "non-hex digit in the %s field",
					 field_names[i]);
				return unpack_fail(u, off + at, why);
			}
			v = v << 4 | (u32)d;
		}
		f[i] = v;
	}
	return 0;
}

static int unpack_all(struct unpack *u)
{
	size_t off = 0;
	u32 f[CPIO_FIELDS];
	bool csum;

	while (off < u->len) {
		/* NULs pad between members and archives. */
		if (u->buf[off] == 0) {
			off++;
			continue;
		}
		if (off & 3)
			return unpack_fail(u, off,
					   "broken padding (a header not on a 4-byte boundary)");
		if (u->buf[off] == 0x1f && off + 1 < u->len && u->buf[off + 1] == 0x8b)
			return unpack_fail(u, off, "gzip-compressed archive (not supported)");
		if (u->len - off < CPIO_HDR_LEN)
			return unpack_fail(u, off, "truncated header");
		int err = unpack_header(u, off, f, &csum);
		if (err)
			return err;
		size_t name_off = off + CPIO_HDR_LEN, left = u->len - name_off;
		u64 namesize = f[F_NAMESIZE], size = f[F_FILESIZE];
		if (namesize > left)
			return unpack_fail(u, name_off, "name runs past the end of the archive");
		/* Name and header padded together to 4 bytes, the data to 4 bytes after it. */
		u64 data_off = ALIGN_UP(name_off + namesize, 4);
		if (size && (data_off > u->len || size > u->len - data_off))
			return unpack_fail(u, data_off,
					   "file data runs past the end of the archive");
		u64 next = ALIGN_UP(data_off + size, 4);
		const char *name = (const char *)u->buf + name_off;
		const u8 *data = u->buf + data_off;

		/* Linux skips a member whose name is empty or longer than a path. */
		if (namesize == 0 || namesize > PATH_MAX) {
			u->r->skipped++;
			printk("initramfs: member at offset %zu: name of %llu bytes, skipped\n",
			       off, (unsigned long long)namesize);
		} else if (name[namesize - 1] != '\0') {
			return unpack_fail(u, name_off, "name not NUL-terminated");
		} else if (!strcmp(name, CPIO_TRAILER)) {
			links_forget(u);
		} else {
			if (csum && S_ISREG(f[F_MODE])) {
				u32 sum = 0;
				for (u64 i = 0; i < size; i++)
					sum += data[i];
				if (sum != f[F_CHECK])
					return unpack_fail(u, data_off,
							   "bad data checksum (070702)");
			}
			unpack_member(u, f, name, data);
		}
		off = next > u->len ? u->len : next;
	}
	return 0;
}

int initramfs_unpack(const void *buf, size_t len, const char *dir, struct initramfs_report *r)
{
	struct unpack u = {.buf = buf, .len = len, .dir = dir, .r = r};
	struct stat st;
	int err;

	*r = (struct initramfs_report){0};
	err = vfs_stat(dir, &st);
	if (err)
		return err;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	u.path = kmalloc(PATH_MAX);
	u.target = kmalloc(PATH_MAX + 1);
	for (unsigned b = 0; b < ARRAY_SIZE(u.links); b++)
		list_init(&u.links[b]);
	err = u.path && u.target ? unpack_all(&u) : -ENOMEM;
	links_forget(&u);
	kfree(u.path);
	kfree(u.target);
	return err;
}
