/*
 * printk: formatted kernel messages. Safe from any CPU and from interrupt context;
 * a line is assembled in full before it is written, so lines never interleave.
 * A level prefix ("<3>" = KERN_ERR) may start the format; lines below the console
 * level are kept in the log buffer only. KERN_ERR and worse are always printed,
 * starting with "error: " (the test runner fails a boot on such a line unless the
 * running test announced it with test_expect_message(), when they start with "expected: " instead).
 * KTAP lines use printk_raw(): no level prefix. Every line but the console shell's
 * command output starts with the seconds since boot, "[    0.123456] ", unless the boot
 * argument printk.time=0 turns that off.
 */
#ifndef GRACE_PRINTK_H
#define GRACE_PRINTK_H

#include <grace/compiler.h>
#include <grace/types.h>

#define KERN_EMERG "<0>"
#define KERN_ERR "<3>"
#define KERN_WARNING "<4>"
#define KERN_NOTICE "<5>"
#define KERN_INFO "<6>"
#define KERN_DEBUG "<7>"

int printk(const char *fmt, ...) __printf(1, 2);
int vprintk(const char *fmt, va_list ap);
/* The text at the start of a line, no level or CPU prefix (KTAP, bench:); the time as printk's. */
int printk_raw(const char *fmt, ...) __printf(1, 2);

#define pr_err(fmt, ...) printk(KERN_ERR fmt, ##__VA_ARGS__)
#define pr_warn(fmt, ...) printk(KERN_WARNING fmt, ##__VA_ARGS__)
#define pr_info(fmt, ...) printk(KERN_INFO fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...) printk(KERN_DEBUG fmt, ##__VA_ARGS__)

/* Formatting into a buffer: %d %i %u %x %X %p %s %c %%, with l/ll/z, width, 0, -. */
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...) __printf(3, 4);
/* Like snprintf, but returns what it wrote (never more than size - 1): safe for len += ... */
int scnprintf(char *buf, size_t size, const char *fmt, ...) __printf(3, 4);

/* Read the boot arguments printk obeys (printk.time); called once the command line is parsed. */
void printk_setup(void);

/* Console: the UART from boot_info. Called by kernel_main; replays what was logged before. */
void console_init(void);

void __noreturn panic(const char *fmt, ...) __printf(1, 2);

#define BUG_ON(cond)                                                                               \
	do {                                                                                       \
		if (unlikely(cond))                                                                \
			panic("BUG_ON(%s) at %s:%d", #cond, __FILE__, __LINE__);                   \
	} while (0)

#endif
