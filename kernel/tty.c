/*
 * The console as a terminal: /dev/console and /dev/tty. Output goes to the
 * console as it is; input comes from the console's ring (console_getc()) through
 * a line discipline with Linux's defaults. In canonical mode (ICANON) a read
 * waits for a whole line, echoing what is typed and honouring erase (DEL or
 * Backspace), kill (Ctrl-U) and end-of-file (Ctrl-D at the start of a line); in
 * raw mode a read returns what has arrived, at least one byte. ICRNL turns the
 * carriage return a terminal sends for Enter into a newline.
 *
 * One console, one terminal state: tty_lock protects the settings and the
 * line being edited. Readers take tty_read_lock (a mutex) so that two readers
 * never interleave one line; the shell does not read while a program it ran is
 * in the foreground.
 */
#include <grace/chrdev.h>
#include <grace/console.h>
#include <grace/errno.h>
#include <grace/mutex.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include <grace/uaccess.h>
#include <grace/uapi/termios.h>

#define TTY_LINE_MAX 4096 /* N_TTY_BUF_SIZE: Linux's longest canonical line */

static struct {
	spinlock_t lock; /* termios and winsize */
	struct termios termios;
	struct winsize winsize;
	char line[TTY_LINE_MAX]; /* under tty_read_lock: the line read so far */
	size_t len, given;	 /* bytes in line; of those, returned by earlier reads */
} tty = {
    .lock = SPINLOCK_INIT, .termios = TERMIOS_DEFAULT,
    /* A serial line cannot tell its size: 0x0, as Linux reports it, until TIOCSWINSZ. */
};
static DEFINE_MUTEX(tty_read_lock);

static void tty_settings(struct termios *t)
{
	spin_lock(&tty.lock);
	*t = tty.termios;
	spin_unlock(&tty.lock);
}

static void tty_echo(const struct termios *t, const char *s, size_t n)
{
	if (t->c_lflag & ECHO)
		console_print(s, n);
}

/* Read and edit a line until it ends (newline or EOF) or is full. */
static void tty_read_line(const struct termios *t)
{
	for (;;) {
		char c = console_getc();
		if (c == '\r' && (t->c_iflag & ICRNL))
			c = '\n';
		if (c == t->c_cc[VERASE] || c == '\b') {
			if (tty.len) {
				tty.len--;
				tty_echo(t, "\b \b", 3);
			}
			continue;
		}
		if (c == t->c_cc[VKILL]) {
			for (; tty.len; tty.len--)
				tty_echo(t, "\b \b", 3);
			continue;
		}
		if (c == t->c_cc[VEOF])
			return; /* the line so far, maybe nothing: read() returns 0 then */
		tty.line[tty.len++] = c;
		tty_echo(t, &c, 1);
		if (c == '\n' || tty.len == TTY_LINE_MAX)
			return;
	}
}

static long tty_read(struct file *f, void *buf, size_t count)
{
	struct termios t;
	size_t n = 0;

	if (!count)
		return 0;
	mutex_lock(&tty_read_lock);
	tty_settings(&t);
	if (t.c_lflag & ICANON) {
		if (tty.given == tty.len) {
			tty.len = tty.given = 0;
			tty_read_line(&t);
		}
		n = MIN(count, tty.len - tty.given);
		memcpy(buf, tty.line + tty.given, n);
		tty.given += n;
	} else {
		/* Raw: one byte, waiting for it, then what else has arrived is left for later
		 * reads. */
		char c = console_getc();
		if (c == '\r' && (t.c_iflag & ICRNL))
			c = '\n';
		tty_echo(&t, &c, 1);
		((char *)buf)[0] = c;
		n = 1;
	}
	mutex_unlock(&tty_read_lock);
	return n;
}

static long tty_write(struct file *f, const void *buf, size_t count)
{
	console_print(buf, count);
	return count;
}

static long tty_ioctl(struct file *f, unsigned cmd, unsigned long arg)
{
	void __user *p = (void __user *)arg;
	struct termios t;

	switch (cmd) {
	case TCGETS:
		tty_settings(&t);
		return copy_to_user(p, &t, sizeof(t)) ? -EFAULT : 0;
	case TCSETS:
	case TCSETSW:
	case TCSETSF:
		if (copy_from_user(&t, p, sizeof(t)))
			return -EFAULT;
		spin_lock(&tty.lock);
		tty.termios = t;
		spin_unlock(&tty.lock);
		return 0;
	case TIOCGWINSZ: {
		struct winsize w;
		spin_lock(&tty.lock);
		w = tty.winsize;
		spin_unlock(&tty.lock);
		return copy_to_user(p, &w, sizeof(w)) ? -EFAULT : 0;
	}
	case TIOCSWINSZ: {
		struct winsize w;
		if (copy_from_user(&w, p, sizeof(w)))
			return -EFAULT;
		spin_lock(&tty.lock);
		tty.winsize = w;
		spin_unlock(&tty.lock);
		return 0;
	}
	default:
		return -ENOTTY;
	}
}

const struct file_ops tty_ops = {.read = tty_read, .write = tty_write, .ioctl = tty_ioctl};
