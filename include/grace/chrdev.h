/*
 * Character devices: a file whose inode is a device node (S_IFCHR) gets its
 * read, write and ioctl from the driver registered for the node's number,
 * looked up when it is opened. Numbers are Linux's (Documentation/admin-guide/
 * devices.txt), so a program sees the st_rdev it would on Linux.
 *
 * A driver is a struct file_operations (grace/fs.h), which a device node's open
 * puts in the file (chrdev_open). ioctl's arg is the user's argument, a user
 * pointer for the requests that take one.
 */
#ifndef GRACE_CHRDEV_H
#define GRACE_CHRDEV_H

#include <grace/compiler.h>
#include <grace/fs.h>
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

/* The calls of device dev, or NULL (open fails -ENXIO, as Linux's for a missing driver). */
const struct file_operations *chrdev_ops(u32 dev);
/* What a device node's file starts with: an open that looks its driver up by number. */
extern const struct file_operations def_chr_fops;

/* The console as a terminal (kernel/tty.c). */
extern const struct file_operations tty_ops;
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
extern const struct file_operations bench_mark_ops;

/* Make /dev and its nodes (console, tty, null, zero); at boot, after the root is mounted. */
void chrdev_init(void);

#endif
