/*
 * Console input: the UART's receive interrupt appends each byte to a ring, and
 * the one reader (the shell thread) sleeps until there is something to take.
 * The interrupt only stores and wakes; what a byte means is the reader's
 * business, in thread context.
 *
 * Input that arrives while the ring is full is dropped: a person types far
 * slower than the shell reads, and a script (tests/run --input) waits for the
 * prompt before it sends the next line.
 */
#include <grace/chrdev.h>
#include <grace/console.h>
#include <grace/errno.h>
#include <grace/sched.h>
#include <grace/fs.h>
#include <grace/spinlock.h>
#include <grace/wait.h>

#define CONSOLE_RING_SIZE 256 /* two full lines of the shell's; a power of two */

static struct {
	spinlock_t lock; /* protects buf, head and tail; taken with interrupts off */
	char buf[CONSOLE_RING_SIZE];
	u32 head, tail; /* bytes ever written and read; head - tail is the fill */
} ring = {.lock = SPINLOCK_INIT};

static DEFINE_WAIT_QUEUE_HEAD(console_wq);

void console_input(char c)
{
	if (tty_input_signal(c))
		return;
	unsigned long flags = spin_lock_irqsave(&ring.lock);
	if (ring.head - ring.tail < CONSOLE_RING_SIZE)
		ring.buf[ring.head++ % CONSOLE_RING_SIZE] = c;
	spin_unlock_irqrestore(&ring.lock, flags);
	wake_up(&console_wq);
	poll_notify();
}

bool console_input_pending(void)
{
	return READ_ONCE(ring.head) != READ_ONCE(ring.tail);
}

static bool console_take(char *c)
{
	unsigned long flags = spin_lock_irqsave(&ring.lock);
	bool got = ring.head != ring.tail;
	if (got)
		*c = ring.buf[ring.tail++ % CONSOLE_RING_SIZE];
	spin_unlock_irqrestore(&ring.lock, flags);
	return got;
}

char console_getc(void)
{
	char c;
	/* wait_event re-checks after queueing itself, so a byte stored meanwhile is not missed. */
	wait_event(console_wq, console_take(&c));
	return c;
}

int console_getc_interruptible(char *c)
{
	return wait_event_interruptible(console_wq, console_take(c));
}
