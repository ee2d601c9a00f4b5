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
#include <grace/fs.h>
#include <grace/mutex.h>
#include <grace/process.h>
#include <grace/slab.h>
#include <grace/workqueue.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include <grace/uaccess.h>
#include <grace/uio.h>
#include <grace/uapi/termios.h>
#include <asm/memory.h>

#define TTY_LINE_MAX 4096 /* N_TTY_BUF_SIZE: Linux's longest canonical line */

static struct {
	spinlock_t lock; /* termios and winsize */
	struct termios termios;
	struct winsize winsize;
	char line[TTY_LINE_MAX]; /* under tty_read_lock: the line read so far */
	size_t len, given;	 /* bytes in line; of those, returned by earlier reads */
	bool ready;		 /* the line has ended: reads return it, then a new one starts */
	int pgrp;		 /* the foreground process group: Ctrl-C's; 0: none (the shell's) */
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

/*
 * Read and edit a line until it ends (newline or EOF) or is full: 0, or
 * -ERESTARTSYS if a signal came first (what was typed stays for the next read).
 */
static int tty_read_line(const struct termios *t)
{
	for (;;) {
		char c;
		int err = console_getc_interruptible(&c);
		if (err)
			return err;
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
			break; /* the line so far, maybe nothing: read() returns 0 then */
		tty.line[tty.len++] = c;
		tty_echo(t, &c, 1);
		if (c == '\n' || tty.len == TTY_LINE_MAX)
			break;
	}
	tty.ready = true;
	return 0;
}

/*
 * A line's bytes that did not fit, or that a faulting copy could not take, stay
 * for the next read; a raw byte that could not be copied is lost, as on Linux.
 */
static long tty_read(struct kiocb *iocb, struct iov_iter *to)
{
	size_t count = iov_iter_count(to);
	struct termios t;
	long n = 0;

	if (!count)
		return 0;
	mutex_lock(&tty_read_lock);
	tty_settings(&t);
	if (t.c_lflag & ICANON) {
		if (!tty.ready)
			n = tty_read_line(&t);
		if (!n) {
			size_t want = MIN(count, tty.len - tty.given);
			n = copy_to_iter(tty.line + tty.given, want, to);
			tty.given += n;
			if (tty.given == tty.len)
				tty.len = tty.given = 0, tty.ready = false;
			else if (!n)
				n = -EFAULT;
		}
	} else {
		/* Raw: one byte, waiting for it; what else has arrived is left for later reads. */
		char c;
		n = console_getc_interruptible(&c);
		if (!n) {
			if (c == '\r' && (t.c_iflag & ICRNL))
				c = '\n';
			tty_echo(&t, &c, 1);
			n = copy_to_iter(&c, 1, to) ? 1 : -EFAULT;
		}
	}
	mutex_unlock(&tty_read_lock);
	return n;
}

/* Through a kernel buffer, a page at a time: the console prints kernel memory. */
static long tty_write(struct kiocb *iocb, struct iov_iter *from)
{
	size_t count = iov_iter_count(from), done = 0;
	if (!count)
		return 0;
	char *buf = kmalloc(MIN(count, PAGE_SIZE));
	if (!buf)
		return -ENOMEM;
	while (done < count) {
		size_t n = copy_from_iter(buf, MIN(count - done, PAGE_SIZE), from);
		if (!n)
			break;
		console_print(buf, n);
		done += n;
	}
	kfree(buf);
	return done ? (long)done : -EFAULT;
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
	case TIOCGPGRP: {
		int pgrp = tty_foreground();
		return copy_to_user(p, &pgrp, sizeof(pgrp)) ? -EFAULT : 0;
	}
	case TIOCSPGRP: {
		int pgrp;
		if (copy_from_user(&pgrp, p, sizeof(pgrp)))
			return -EFAULT;
		if (pgrp < 0)
			return -EINVAL;
		tty_set_foreground(pgrp);
		return 0;
	}
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

int tty_foreground(void)
{
	return READ_ONCE(tty.pgrp);
}

void tty_set_foreground(int pgrp)
{
	WRITE_ONCE(tty.pgrp, pgrp);
}

/* The signal a typed character asked for, sent from thread context (it takes proc_lock). */
static int tty_signal_pending;
static void tty_signal_work_fn(struct work *w)
{
	int sig = xchg(&tty_signal_pending, 0);
	int pgrp = tty_foreground();
	if (sig && pgrp > 0)
		proc_kill(-pgrp, sig, SI_KERNEL);
}
static struct work tty_signal_work;

bool tty_input_signal(char c)
{
	struct termios t = tty.termios; /* racy read from the interrupt: a heuristic is fine */
	int sig = c == t.c_cc[VINTR] ? SIGINT : c == t.c_cc[VQUIT] ? SIGQUIT : 0;
	if (!sig || !(t.c_lflag & ISIG) || tty_foreground() <= 0)
		return false;
	if (t.c_lflag & ECHO)
		console_print(sig == SIGINT ? "^C" : "^\\", 2);
	WRITE_ONCE(tty_signal_pending, sig);
	queue_work(&tty_signal_work);
	return true;
}

void tty_init(void)
{
	work_init(&tty_signal_work, tty_signal_work_fn);
}

/* Readable once a line is ready or (raw, or a line being typed) input waits; always writable. */
static short tty_poll(struct file *f)
{
	return POLLOUT | (READ_ONCE(tty.ready) || console_input_pending() ? POLLIN : 0);
}

const struct file_operations tty_ops = {
    .read_iter = tty_read, .write_iter = tty_write, .ioctl = tty_ioctl, .poll = tty_poll};
