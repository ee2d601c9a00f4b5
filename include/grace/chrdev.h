/*
 * Character devices: a file whose inode is a device node (S_IFCHR) gets its
 * read, write and ioctl from the driver registered for the node's number,
 * looked up when it is opened. Numbers are Linux's (Documentation/admin-guide/
 * devices.txt), so a program sees the st_rdev it would on Linux.
 *
 * read_iter and write_iter copy through a cursor (grace/uio.h) over the
 * caller's memory, a program's or the kernel's, and return the bytes moved or
 * -errno. A copy that faults part way returns what was moved before the fault
 * (-EFAULT if nothing), and what it could not move stays where it was: in the
 * pipe, the device, the caller's buffer. ioctl's arg is the user's argument, a
 * user pointer for the requests that take one.
 */
#ifndef GRACE_CHRDEV_H
#define GRACE_CHRDEV_H

#include <grace/compiler.h>
#include <grace/types.h>

#define MKDEV(major, minor) (((u32)(major) << 8) | (minor))
#define MAJOR(dev) ((dev) >> 8)
#define MINOR(dev) ((dev)&0xff)

#define DEV_NULL MKDEV(1, 3)
#define DEV_ZERO MKDEV(1, 5)
#define DEV_TTY MKDEV(5, 0)
#define DEV_CONSOLE MKDEV(5, 1)
/* Grace's own, from the range devices.txt keeps for local use: the profiler's phases. */
#define DEV_BENCH_MARK MKDEV(240, 0)

struct file;
struct iov_iter;

struct file_ops {
	long (*read_iter)(struct file *f, struct iov_iter *to);		/* NULL: -EINVAL */
	long (*write_iter)(struct file *f, struct iov_iter *from);	/* NULL: -EINVAL */
	long (*ioctl)(struct file *f, unsigned cmd, unsigned long arg); /* NULL: -ENOTTY */
	void (*release)(struct file *f); /* the last reference to the file is gone; may be NULL */
	short (*poll)(struct file *f);	 /* POLLIN/POLLOUT/POLLHUP now; NULL: always ready */
};

/* The calls of device dev, or NULL (open fails -ENXIO, as Linux's for a missing driver). */
const struct file_ops *chrdev_ops(u32 dev);

/* The console as a terminal (kernel/tty.c). */
extern const struct file_ops tty_ops;
/* Its foreground process group (0: none, the kernel's shell reads the console). */
int tty_foreground(void);
void tty_set_foreground(int pgrp);
/*
 * From the console's receive interrupt: is c the interrupt or quit character of a
 * terminal with a foreground group? Then it is consumed here and SIGINT or SIGQUIT
 * goes to the group, and true.
 */
bool tty_input_signal(char c);
/* At boot, before the console takes input. */
void tty_init(void);

/* /dev/bench_mark: a program's phase marks for the QEMU profiler (kernel/bench.c). */
extern const struct file_ops bench_mark_ops;

/* Make /dev and its nodes (console, tty, null, zero); at boot, after the root is mounted. */
void chrdev_init(void);

#endif
