/*
 * printk: every message is formatted into a per-call buffer first, then appended
 * to the log ring and written to the console under one irqsave lock, so lines from
 * different CPUs never interleave. Messages printed before the console exists stay
 * in the ring and are replayed by console_init().
 *
 * After a panic starts, printk takes the lock with a bounded wait: the holder may
 * be a CPU that the panic has stopped, and the panic message matters more.
 */
#include <grace/console.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include <asm/cpu.h>

#define LOG_BUF_SIZE (64 * 1024) /* enough for a 64-CPU boot and a full test run's tail */
#define LINE_MAX 512

static char log_buf[LOG_BUF_SIZE];
static size_t log_head; /* total bytes ever logged; protected by printk_lock */
/* Protects log_buf, log_head, console and console_midline, and orders the console's output. */
static DEFINE_SPINLOCK(printk_lock);
static const struct console *console; /* NULL until console_init() */
int console_loglevel = 7;	      /* print levels below this; `quiet` sets 4 */
bool printk_panic_mode;		      /* set by panic(): take the lock with a bounded wait */

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

/* line: s is a whole message line (printk), not a piece of one (console_print). */
static void emit(const char *s, size_t n, bool to_console, bool line)
{
	bool locked;
	unsigned long flags = printk_lock_acquire(&locked);
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

void console_print(const char *s, size_t n)
{
	emit(s, n, true, false);
}

/*
 * Lines at KERN_ERR and worse start with this on the console and in the log, so
 * that a person and the test runner alike see that something went wrong.
 */
#define ERROR_PREFIX "error: "
#define LEVEL_ERR 3

/* prefix, then fmt formatted, into line[]; make sure it ends with a newline, and emit it. */
static int emit_formatted(const char *prefix, const char *fmt, va_list ap, bool to_console)
{
	char line[LINE_MAX];
	size_t len = strlcpy(line, prefix, sizeof(line));
	int n = vsnprintf(line + len, sizeof(line) - len - 1, fmt, ap);
	size_t room = sizeof(line) - len - 2;
	len += (size_t)n < room ? (size_t)n : room;
	if (len == 0 || line[len - 1] != '\n')
		line[len++] = '\n';
	emit(line, len, to_console, true);
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
		return emit_formatted(ERROR_PREFIX, fmt, ap, true);
	/* What the shell prints was asked for: the log level does not hide it. */
	bool asked = READ_ONCE(current->flags) & TASK_CONSOLE;
	return emit_formatted("", fmt, ap, level < console_loglevel || asked);
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
	int n = emit_formatted("", fmt, ap, true);
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
