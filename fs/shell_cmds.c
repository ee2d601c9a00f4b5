/*
 * The console shell's file-system commands: ls, cat, echo (with > and >>), touch,
 * mkdir, rmdir, rm, mv, ln, stat, cd, pwd, df and vfs. They call the vfs_* functions of
 * grace/fs.h as any kernel thread may, so a relative path starts at the shell
 * thread's own current directory, which cd moves. An error is one line,
 * `name: path: strerror`, and makes the command return the -errno; the command goes
 * on with its other paths, as the Unix tools do.
 *
 * The buffers are static and shared by all the commands: only the shell thread
 * runs them, one at a time, so nothing else touches them.
 */
#include <grace/console.h>
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/printk.h>
#include <grace/shell.h>
#include <grace/slab.h>
#include <grace/string.h>

/*
 * Bytes moved per read() and write(); a page, the unit ramfs keeps data in. A
 * directory's records are read into a kmalloc'd buffer instead, grown by doubling
 * and never left with less than this free, which holds any one record (19 bytes
 * of header and a name of NAME_MAX bytes).
 */
#define FS_SHELL_CHUNK 4096

static char fs_shell_io[FS_SHELL_CHUNK]; /* file data: cat, echo */
static char fs_shell_path[PATH_MAX];	 /* a directory and a name joined; the cwd */
static char fs_shell_link[PATH_MAX];	 /* a symlink's target */

/* The one-line error report every command prints; returns err, which is negative. */
static int fs_shell_err(const char *cmd, const char *path, int err)
{
	printk("%s: %s: %s\n", cmd, path, strerror(err));
	return err;
}

/* dir/name into fs_shell_path (no second '/' after one ending dir); -ENAMETOOLONG. */
static int fs_shell_join(const char *dir, const char *name)
{
	size_t len = strlen(dir);
	const char *sep = len && dir[len - 1] == '/' ? "" : "/";
	int n = snprintf(fs_shell_path, sizeof(fs_shell_path), "%s%s%s", dir, sep, name);
	return n < (int)sizeof(fs_shell_path) ? 0 : -ENAMETOOLONG;
}

static char fs_type_char(u32 mode)
{
	return S_ISDIR(mode)   ? 'd'
	       : S_ISLNK(mode) ? 'l'
	       : S_ISREG(mode) ? '-'
	       : S_ISCHR(mode) ? 'c'
			       : '?';
}

static const char *fs_type_name(u32 mode)
{
	return S_ISDIR(mode)   ? "dir"
	       : S_ISLNK(mode) ? "symlink"
	       : S_ISREG(mode) ? "file"
	       : S_ISCHR(mode) ? "chardev"
			       : "other";
}

/* ---- ls ---- */

/*
 * One name of a listing. path is what to lstat() (the name joined to its
 * directory, or an argument as typed); name is what to print.
 */
static int ls_entry(const char *path, const char *name, bool lng)
{
	struct stat st;
	if (!lng) {
		printk("%s\n", name);
		return 0;
	}
	int err = vfs_lstat(path, &st);
	if (err < 0)
		return fs_shell_err("ls", path, err);
	if (!S_ISLNK(st.st_mode)) {
		printk("%c %3u %8lld %s\n", fs_type_char(st.st_mode), st.st_nlink,
		       (long long)st.st_size, name);
		return 0;
	}
	long n = vfs_readlink(path, fs_shell_link, sizeof(fs_shell_link) - 1);
	if (n < 0)
		return fs_shell_err("ls", path, (int)n);
	fs_shell_link[n] = '\0';
	printk("l %3u %8lld %s -> %s\n", st.st_nlink, (long long)st.st_size, name, fs_shell_link);
	return 0;
}

/* All of fd's records into *bufp (kmalloc'd, the caller frees it): their bytes, or -errno. */
static long ls_read_dir(int fd, char **bufp)
{
	size_t cap = 2 * FS_SHELL_CHUNK, len = 0;
	char *buf = kmalloc(cap);
	while (buf) {
		long n = vfs_getdents(fd, buf + len, cap - len);
		if (n < 0) {
			kfree(buf);
			return n;
		}
		if (n == 0) {
			*bufp = buf;
			return (long)len;
		}
		len += n;
		if (cap - len < FS_SHELL_CHUNK) {
			char *bigger = kmalloc(2 * cap);
			if (bigger)
				memcpy(bigger, buf, len);
			kfree(buf);
			buf = bigger;
			cap *= 2;
		}
	}
	return -ENOMEM;
}

/* Shell sort with Knuth's gaps (1, 4, 13, ...): a few lines, and O(n^1.5) compares at worst. */
static void ls_sort(struct dirent64 **d, size_t n)
{
	size_t gap = 1;
	while (gap < n / 3)
		gap = 3 * gap + 1;
	for (; gap; gap /= 3)
		for (size_t i = gap; i < n; i++) {
			struct dirent64 *x = d[i];
			size_t j = i;
			for (; j >= gap && strcmp(d[j - gap]->d_name, x->d_name) > 0; j -= gap)
				d[j] = d[j - gap];
			d[j] = x;
		}
}

/* "." and "..", which ls leaves out (as `ls -A` does). */
static bool ls_is_dot(const char *name)
{
	return name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2]));
}

/* List one argument: a directory's entries in name order, anything else by itself. */
static int ls_path(const char *path, bool lng, bool header)
{
	int fd = vfs_open(path, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0) {
		/*
		 * A file, or a symlink that leads to no directory, is listed by its own
		 * name; anything else (no such name, a file where a directory was needed
		 * on the way) is the open's error.
		 */
		struct stat st;
		if (vfs_lstat(path, &st) < 0 || S_ISDIR(st.st_mode))
			return fs_shell_err("ls", path, fd);
		return ls_entry(path, path, lng);
	}
	char *recs = NULL;
	long len = ls_read_dir(fd, &recs);
	vfs_close(fd);
	if (len < 0)
		return fs_shell_err("ls", path, (int)len);

	/* Count the records, then point at each; a record of length 0 would never end. */
	size_t n = 0;
	for (long off = 0; off < len; n++) {
		unsigned reclen = ((struct dirent64 *)(recs + off))->d_reclen;
		if (!reclen) {
			kfree(recs);
			return fs_shell_err("ls", path, -EIO);
		}
		off += reclen;
	}
	struct dirent64 **d = kmalloc(n * sizeof(*d));
	if (!d) {
		kfree(recs);
		return fs_shell_err("ls", path, -ENOMEM);
	}
	for (size_t i = 0, off = 0; i < n; off += d[i++]->d_reclen)
		d[i] = (struct dirent64 *)(recs + off);
	ls_sort(d, n);

	int ret = 0;
	if (header)
		printk("%s:\n", path);
	for (size_t i = 0; i < n; i++) {
		if (ls_is_dot(d[i]->d_name))
			continue;
		int err = lng ? fs_shell_join(path, d[i]->d_name) : 0;
		err = err ? fs_shell_err("ls", d[i]->d_name, err)
			  : ls_entry(fs_shell_path, d[i]->d_name, lng);
		ret = ret ? ret : err;
	}
	kfree(d);
	kfree(recs);
	return ret;
}

SHELL_CMD(ls, "[-l] [path ...]",
	  "list directories in name order (-l: type, links, size, name, symlink target)")
{
	bool lng = argc > 1 && !strcmp(argv[1], "-l");
	int first = lng ? 2 : 1, ret = 0;
	for (int i = first; i < argc; i++)
		if (argv[i][0] == '-' && argv[i][1])
			return SHELL_USAGE;
	if (first == argc)
		return ls_path(".", lng, false);
	for (int i = first; i < argc; i++) {
		int err = ls_path(argv[i], lng, argc - first > 1);
		ret = ret ? ret : err;
	}
	return ret;
}

/* ---- cat, echo ---- */

static int cat_one(const char *path)
{
	int fd = vfs_open(path, O_RDONLY, 0);
	if (fd < 0)
		return fs_shell_err("cat", path, fd);
	long n;
	while ((n = vfs_read(fd, fs_shell_io, sizeof(fs_shell_io))) > 0)
		console_print(fs_shell_io, n);
	vfs_close(fd);
	return n < 0 ? fs_shell_err("cat", path, (int)n) : 0;
}

SHELL_CMD(cat, "path ...", "print the files' bytes as they are")
{
	int ret = 0;
	if (argc < 2)
		return SHELL_USAGE;
	for (int i = 1; i < argc; i++) {
		int err = cat_one(argv[i]);
		ret = ret ? ret : err;
	}
	return ret;
}

/* All of buf's len bytes to fd, however many each write() takes. */
static long fs_write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		long n = vfs_write(fd, buf, len);
		if (n <= 0)
			return n < 0 ? n : -EIO;
		buf += n;
		len -= n;
	}
	return 0;
}

/*
 * The shell splits at spaces and knows nothing of redirection, so echo looks for
 * it itself: ">" or ">>" as a word of its own, second to last, before the file.
 */
SHELL_CMD(echo, "[word ...] [> file | >> file]",
	  "print the words; > file or >> file (words of their own) writes or appends them")
{
	int nwords = argc - 1;
	int flags = 0;
	for (int i = 1; i < argc; i++) {
		bool redirect = !strcmp(argv[i], ">") || !strcmp(argv[i], ">>");
		if (redirect && i != argc - 2)
			return SHELL_USAGE;
		if (redirect) {
			flags = O_WRONLY | O_CREAT | (argv[i][1] ? O_APPEND : O_TRUNC);
			nwords = i - 1;
		}
	}
	/* The words came from one line of SHELL_LINE_MAX bytes, so they fit. */
	size_t len = 0;
	fs_shell_io[0] = '\0';
	for (int i = 1; i <= nwords; i++)
		len += scnprintf(fs_shell_io + len, sizeof(fs_shell_io) - len, "%s%s",
				 i > 1 ? " " : "", argv[i]);
	if (!flags) {
		printk("%s\n", fs_shell_io);
		return 0;
	}
	fs_shell_io[len++] = '\n';
	const char *path = argv[argc - 1];
	int fd = vfs_open(path, flags, 0644);
	if (fd < 0)
		return fs_shell_err("echo", path, fd);
	long err = fs_write_all(fd, fs_shell_io, len);
	vfs_close(fd);
	return err < 0 ? fs_shell_err("echo", path, (int)err) : 0;
}

/* ---- the calls that take paths and print nothing ---- */

/* Call op on each argument from argv[1], reporting each failure; 0 or the first -errno. */
static int fs_each_path(int argc, char **argv, int (*op)(const char *path))
{
	int ret = 0;
	if (argc < 2)
		return SHELL_USAGE;
	for (int i = 1; i < argc; i++) {
		int err = op(argv[i]);
		if (err < 0)
			err = fs_shell_err(argv[0], argv[i], err);
		ret = ret ? ret : err;
	}
	return ret;
}

/*
 * An empty file if there is none; one that exists is left as it is. Grace's files
 * keep no times, so there is nothing of Linux touch's to update: a directory too
 * (which cannot be opened for writing) is left alone, without an error.
 */
static int touch_one(const char *path)
{
	int fd = vfs_open(path, O_WRONLY | O_CREAT, 0644);
	if (fd == -EISDIR)
		return 0;
	return fd < 0 ? fd : vfs_close(fd);
}

SHELL_CMD(touch, "path ...", "make empty files (mode 0644); a file that exists is left alone")
{
	return fs_each_path(argc, argv, touch_one);
}

static int mkdir_0755(const char *path)
{
	return vfs_mkdir(path, 0755);
}

SHELL_CMD(mkdir, "path ...", "make directories (mode 0755)")
{
	return fs_each_path(argc, argv, mkdir_0755);
}

SHELL_CMD(rmdir, "path ...", "remove empty directories")
{
	return fs_each_path(argc, argv, vfs_rmdir);
}

SHELL_CMD(rm, "path ...", "remove names (unlink); a file goes with its last name")
{
	return fs_each_path(argc, argv, vfs_unlink);
}

SHELL_CMD(mv, "old new", "rename old to new, replacing new if it exists")
{
	if (argc != 3)
		return SHELL_USAGE;
	int err = vfs_rename(argv[1], argv[2], 0);
	return err < 0 ? fs_shell_err("mv", argv[1], err) : 0;
}

SHELL_CMD(ln, "[-s] target linkname", "make a hard link to target, or with -s a symbolic one")
{
	bool sym = argc == 4 && !strcmp(argv[1], "-s");
	if (argc != 3 && !sym)
		return SHELL_USAGE;
	const char *target = argv[argc - 2], *name = argv[argc - 1];
	int err = sym ? vfs_symlink(target, name) : vfs_link(target, name);
	return err < 0 ? fs_shell_err("ln", name, err) : 0;
}

SHELL_CMD(cd, "[path]", "change the shell's current directory (default /)")
{
	if (argc > 2)
		return SHELL_USAGE;
	const char *path = argc == 2 ? argv[1] : "/";
	int err = vfs_chdir(path);
	return err < 0 ? fs_shell_err("cd", path, err) : 0;
}

/* ---- stat, pwd, df, vfs ---- */

static int stat_one(const char *path)
{
	struct stat st;
	int err = vfs_lstat(path, &st);
	if (err < 0)
		return err;
	/* Octal by hand: vsnprintf has no %o. */
	printk("%s: ino=%llu type=%s mode=%u%u%u%u nlink=%u size=%lld blocks=%llu\n", path,
	       (unsigned long long)st.st_ino, fs_type_name(st.st_mode), (st.st_mode >> 9) & 7,
	       (st.st_mode >> 6) & 7, (st.st_mode >> 3) & 7, st.st_mode & 7, st.st_nlink,
	       (long long)st.st_size, (unsigned long long)st.st_blocks);
	return 0;
}

SHELL_CMD(stat, "path ...", "inode number, type, mode, links, size and blocks (of a link itself)")
{
	return fs_each_path(argc, argv, stat_one);
}

SHELL_CMD(pwd, "", "the shell's current directory")
{
	if (argc != 1)
		return SHELL_USAGE;
	long n = vfs_getcwd(fs_shell_path, sizeof(fs_shell_path));
	if (n < 0)
		return fs_shell_err("pwd", "getcwd", (int)n);
	printk("%s\n", fs_shell_path);
	return 0;
}

SHELL_CMD(df, "", "dentry, inode and open-file counts; the vfs, inode_free and file_free modes")
{
	struct vfs_counts c;
	if (argc != 1)
		return SHELL_USAGE;
	vfs_counts(&c);
	printk("dentries=%ld unused=%ld negative=%ld inodes=%ld unused=%ld files=%ld vfs=%s "
	       "inode_free=%s file_free=%s\n",
	       c.dentries, c.dentries_unused, c.dentries_negative, c.inodes, c.inodes_unused,
	       c.files, vfs_mode_name(vfs_get_mode()), inode_free_mode_name(inode_get_free_mode()),
	       file_free_mode_name(file_get_free_mode()));
	return 0;
}

SHELL_CMD(vfs, "[scalable|global]", "show or switch the VFS design (boot argument vfs=)")
{
	enum vfs_mode mode;
	if (argc > 2 || (argc == 2 && !vfs_parse_mode(argv[1], &mode)))
		return SHELL_USAGE;
	if (argc == 2)
		vfs_set_mode(mode);
	printk("vfs: %s\n", vfs_mode_name(vfs_get_mode()));
	return 0;
}
