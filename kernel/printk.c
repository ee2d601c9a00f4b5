/*
 * printk: every message is formatted into a per-call buffer first, then appended
 * to the log ring and written to the console under one irqsave lock, so lines from
 * different CPUs never interleave. Messages printed before the console exists stay
 * in the ring and are replayed by console_init().
 *
 * After a panic starts, printk takes the lock with a bounded wait: the holder may
 * be a CPU that the panic has stopped, and the panic message matters more.
 *
 * A line starts with the seconds since boot, as Linux's do ("[    0.123456] "),
 * unless the console shell's thread printed it: what a command prints is its
 * answer to what was typed, read as a shell's output is, so only the kernel's
 * own messages carry the time. The boot argument printk.time=0 leaves it off.
 */
#include <grace/arch.h>
#include <grace/cmdline.h>
#include <grace/console.h>
#include <grace/errno.h>
#include <grace/printk.h>
#include <grace/selftest.h>
#include <grace/shell.h>
#include <grace/sched.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include <grace/time.h>
#include <asm/cpu.h>

#include "printk_internal.h"

#define LOG_BUF_SIZE (64 * 1024) /* enough for a 64-CPU boot and a full test run's tail */
#define LINE_MAX 512

static char log_buf[LOG_BUF_SIZE];
static size_t log_head; /* total bytes ever logged; protected by printk_lock */
/* Protects log_buf, log_head, console and console_midline, and orders the console's output. */
static DEFINE_SPINLOCK(printk_lock);
static const struct console *console; /* NULL until console_init() */
int console_loglevel = 7;	      /* print levels below this; `quiet` sets 4 */
bool printk_panic_mode;		      /* set by panic(): take the lock with a bounded wait */
static bool printk_time = true;	      /* set once at boot by printk_setup() */

static unsigned long printk_lock_acquire(bool *locked)
{
	unsigned long flags = arch_irq_save();
	if (!READ_ONCE(printk_panic_mode)) {
		spin_lock(&printk_lock);
		*locked = true;
		return flags;
	}
	/* About a second of polling under TCG; then print anyway. */
	for (long i = 0; i < 10000000; i++) {
		if (spin_trylock(&printk_lock)) {
			*locked = true;
			return flags;
		}
		cpu_relax();
	}
	*locked = false;
	return flags;
}

static void log_store(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		log_buf[(log_head + i) % LOG_BUF_SIZE] = s[i];
	log_head += n;
}

/*
 * Whether the console's last byte ended a line; under printk_lock. A message that
 * arrives while the shell's prompt or echo holds a partial line starts on a line
 * of its own, so that it reads, and greps, as a line.
 */
static bool console_midline;

/*
 * line: s is a whole message line (printk), not a piece of one (console_print).
 * to_log false: the bytes are the log's own, read back for the console (dmesg).
 */
static void emit_to(const char *s, size_t n, bool to_log, bool to_console, bool line)
{
	bool locked;
	unsigned long flags = printk_lock_acquire(&locked);
	if (to_log)
		log_store(s, n);
	if (console && to_console && n) {
		if (line && console_midline)
			console->write("\n", 1);
		console->write(s, n);
		console_midline = s[n - 1] != '\n';
	}
	if (locked)
		spin_unlock(&printk_lock);
	arch_irq_restore(flags);
}

static void emit(const char *s, size_t n, bool to_console, bool line)
{
	emit_to(s, n, true, to_console, line);
}

void console_print(const char *s, size_t n)
{
	emit(s, n, true, false);
}

/*
 * Lines at KERN_ERR and worse start with this on the console and in the log, so
 * that a person and the test runner alike see that something went wrong; one
 * that the running selftest announced (test_expect_message()) starts with the
 * second instead, so that a person can tell it from a real one. The runner still
 * judges both: an "expected: " line must match what the test announced.
 */
#define ERROR_PREFIX "error: "
#define EXPECTED_PREFIX "expected: "
#define LEVEL_ERR 3

#define TIME_MAX 32 /* "[" twenty digits "." six digits "] " and the NUL */

/* "[    5.123456] ": seconds since boot, at least five digits wide, and microseconds. */
static size_t printk_format_time(char *buf)
{
	u64 us = arch_clock_ns() / NSEC_PER_USEC;
	return (size_t)scnprintf(buf, TIME_MAX, "[%5llu.%06llu] ", us / 1000000, us % 1000000);
}

/*
 * fmt formatted, then made to end with a newline, behind room for the time and a
 * prefix, which go in front once the message says which prefix (error: the line is
 * at KERN_ERR or worse, marked by whether the running test expects it); emit it.
 */
static int emit_formatted(const char *fmt, va_list ap, bool to_console, bool error)
{
	char line[TIME_MAX + sizeof(EXPECTED_PREFIX) + LINE_MAX];
	char *msg = line + TIME_MAX + sizeof(EXPECTED_PREFIX), *start = msg;
	int n = vsnprintf(msg, LINE_MAX - 1, fmt, ap);
	size_t len = (size_t)n < LINE_MAX - 2 ? (size_t)n : LINE_MAX - 2;

	if (error) {
		const char *mark = selftest_expects(msg) ? EXPECTED_PREFIX : ERROR_PREFIX;
		start -= strlen(mark);
		memcpy(start, mark, strlen(mark));
	}
	if (READ_ONCE(printk_time) && !(READ_ONCE(current->flags) & TASK_CONSOLE)) {
		char time[TIME_MAX];
		size_t t = printk_format_time(time);
		start -= t;
		memcpy(start, time, t);
	}
	if (len == 0 || msg[len - 1] != '\n')
		msg[len++] = '\n';
	len += (size_t)(msg - start);
	emit(start, len, to_console, true);
	return (int)len;
}

int vprintk(const char *fmt, va_list ap)
{
	int level = 6; /* KERN_INFO when no level is given */
	if (fmt[0] == '<' && fmt[1] >= '0' && fmt[1] <= '7' && fmt[2] == '>') {
		level = fmt[1] - '0';
		fmt += 3;
	}
	if (level <= LEVEL_ERR)
		return emit_formatted(fmt, ap, true, true);
	/* What the shell prints was asked for: the log level does not hide it. */
	bool asked = READ_ONCE(current->flags) & TASK_CONSOLE;
	return emit_formatted(fmt, ap, level < console_loglevel || asked, false);
}

int printk(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vprintk(fmt, ap);
	va_end(ap);
	return n;
}

int printk_raw(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = emit_formatted(fmt, ap, true, false);
	va_end(ap);
	return n;
}

void console_register(const struct console *con)
{
	bool locked;
	unsigned long flags = printk_lock_acquire(&locked);
	console = con;
	/* Replay what was logged before there was a console (the ring's oldest part may be gone).
	 */
	size_t start = log_head > LOG_BUF_SIZE ? log_head - LOG_BUF_SIZE : 0;
	for (size_t i = start; i < log_head; i++)
		con->write(&log_buf[i % LOG_BUF_SIZE], 1);
	if (locked)
		spin_unlock(&printk_lock);
	arch_irq_restore(flags);
}

void printk_setup(void)
{
	WRITE_ONCE(printk_time, cmdline_get_bool("printk.time", true));
}

size_t printk_log_head(void)
{
	bool locked;
	unsigned long flags = printk_lock_acquire(&locked);
	size_t head = log_head;
	if (locked)
		spin_unlock(&printk_lock);
	arch_irq_restore(flags);
	return head;
}

size_t printk_log_read(size_t *pos, char *buf, size_t size)
{
	bool locked;
	size_t n = 0;
	unsigned long flags = printk_lock_acquire(&locked);
	/* What the ring still holds: a reader that fell behind skips what was overwritten. */
	if (*pos + LOG_BUF_SIZE < log_head)
		*pos = log_head - LOG_BUF_SIZE;
	for (; n < size && *pos < log_head; n++, (*pos)++)
		buf[n] = log_buf[*pos % LOG_BUF_SIZE];
	if (locked)
		spin_unlock(&printk_lock);
	arch_irq_restore(flags);
	return n;
}

/*
 * The kernel's own messages in the ring as it stood when the command began, oldest
 * first, to the console alone: logging them again would make the log hold itself.
 * The ring also holds what the shell printed (prompts, echo, answers), which carries
 * no time: those lines are left out, so dmesg shows what Linux's would. Under `quiet`
 * this is where the informational lines are, Linux's "segfault at" among them.
 */
SHELL_CMD(dmesg, "", "print the kernel's messages from the log ring, as dmesg does")
{
	char in[256], out[256];
	size_t pos = 0, n, kept = 0;
	bool line_start = true, keep = false;

	if (argc != 1)
		return SHELL_USAGE;
	if (!READ_ONCE(printk_time)) {
		printk("dmesg: with printk.time=0 the kernel's lines cannot be told from the "
		       "shell's\n");
		return -EINVAL;
	}
	size_t head = printk_log_head();
	while (pos < head && (n = printk_log_read(&pos, in, MIN(sizeof(in), head - pos)))) {
		for (size_t i = 0; i < n; i++) {
			if (line_start)
				keep = in[i] == '[';
			line_start = in[i] == '\n';
			if (!keep)
				continue;
			out[kept++] = in[i];
			if (kept == sizeof(out)) {
				emit_to(out, kept, false, true, false);
				kept = 0;
			}
		}
	}
	emit_to(out, kept, false, true, false);
	return 0;
}
