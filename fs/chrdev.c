/*
 * The character devices there are, by number, and the two that need no
 * hardware: /dev/null (reads end at once, writes vanish) and /dev/zero (reads
 * give zeros). /dev and its nodes are made at boot, as devtmpfs makes them on
 * Linux, so a program finds them without an initramfs that carries them, and
 * with them /dev/stdin, /dev/stdout and /dev/stderr, the links to the caller's
 * descriptors 0, 1 and 2 that udev (or an init script) makes beside them.
 */
#include <grace/chrdev.h>
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/printk.h>
#include <grace/string.h>

static long null_read(struct file *f, void *buf, size_t count)
{
	return 0;
}

static long null_write(struct file *f, const void *buf, size_t count)
{
	return count;
}

static long zero_read(struct file *f, void *buf, size_t count)
{
	memset(buf, 0, count);
	return count;
}

static const struct file_ops null_ops = {.read = null_read, .write = null_write};
static const struct file_ops zero_ops = {.read = zero_read, .write = null_write};

static const struct {
	u32 dev;
	const char *path;
	const struct file_ops *ops;
} chrdevs[] = {
    {DEV_NULL, "/dev/null", &null_ops},
    {DEV_ZERO, "/dev/zero", &zero_ops},
    {DEV_TTY, "/dev/tty", &tty_ops},
    {DEV_CONSOLE, "/dev/console", &tty_ops},
    {DEV_BENCH_MARK, "/dev/bench_mark", &bench_mark_ops},
};

static const struct {
	const char *path;
	const char *target;
} std_links[] = {
    {"/dev/stdin", "/proc/self/fd/0"},
    {"/dev/stdout", "/proc/self/fd/1"},
    {"/dev/stderr", "/proc/self/fd/2"},
};

const struct file_ops *chrdev_ops(u32 dev)
{
	for (unsigned i = 0; i < ARRAY_SIZE(chrdevs); i++)
		if (chrdevs[i].dev == dev)
			return chrdevs[i].ops;
	return NULL;
}

void chrdev_init(void)
{
	int err = vfs_mkdir("/dev", 0755);
	if (err && err != -EEXIST)
		pr_warn("chrdev: cannot make /dev: %d\n", err);
	for (unsigned i = 0; i < ARRAY_SIZE(chrdevs); i++) {
		/* 0666 as udev's defaults; the console 0600, as Linux's devtmpfs makes it. */
		unsigned perm = chrdevs[i].dev == DEV_CONSOLE ? 0600 : 0666;
		err = vfs_mknod(chrdevs[i].path, S_IFCHR | perm, chrdevs[i].dev);
		if (err && err != -EEXIST)
			pr_warn("chrdev: cannot make %s: %d\n", chrdevs[i].path, err);
	}
	for (unsigned i = 0; i < ARRAY_SIZE(std_links); i++) {
		err = vfs_symlink(std_links[i].target, std_links[i].path);
		if (err && err != -EEXIST)
			pr_warn("chrdev: cannot make %s: %d\n", std_links[i].path, err);
	}
}
