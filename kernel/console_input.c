/*
 * Console input: the UART's receive interrupt appends each byte to a ring, and
 * the one reader (the shell thread, or a program reading the terminal) sleeps
 * until there is something to take. The interrupt only stores and wakes; what a
 * byte means is the reader's business, in thread context. Two bytes are taken
 * out of band: ^C for the program or shell command in the foreground
 * (tty_input_signal(), shell_input_interrupt()).
 *
 * A paste arrives far faster than the shell runs its lines, so the ring has flow
 * control, as a tty's throttle does: when it fills, console_input() has the
 * driver mask its receive interrupt, and the driver leaves the rest in the UART
 * (console_input_held()). The reader unmasks it once it has taken half the ring. A UART
 * that can hold its sender loses nothing then: QEMU's 16550 and SiFive UART
 * stop taking bytes from their chardev while their receive FIFO is full (their
 * can_receive callbacks say so; a paste of 11 KB through a 4 KiB ring loses
 * none, tests/shell/input.txt), as a UART with RTS/CTS holds a real sender. A
 * bare UART on real hardware overruns its FIFO instead; the driver reports that
 * (console_input_overrun()). Whatever is lost is counted and said once on the
 * console, and `console` shows the counts.
 */
#include <grace/chrdev.h>
#include <grace/console.h>
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/shell.h>
#include <grace/spinlock.h>
#include <grace/wait.h>

/*
 * A power of two. 4 KiB holds the longest line the shell takes (SHELL_LINE_MAX) and a
 * screenful typed ahead; a longer paste waits in the UART (flow control, above).
 */
#define CONSOLE_RING_SIZE 4096
/*
 * The reader restarts input when the ring is down to half full: the interrupt then
 * comes back once per half ring, not once per byte taken.
 */
#define CONSOLE_RING_RESUME (CONSOLE_RING_SIZE / 2)

static struct {
	spinlock_t lock; /* protects everything below; taken with interrupts off */
	char buf[CONSOLE_RING_SIZE];
	u32 head, tail;		    /* bytes ever written and read; head - tail is the fill */
	bool held;		    /* the driver's receive interrupt is masked: the ring filled */
	void (*rx_enable)(bool on); /* the driver's switch for it; NULL: none registered */
	u64 received, dropped;	    /* bytes stored; bytes not stored (the ring was full) */
	u64 overruns;		    /* times the UART said it lost input (its FIFO overflowed) */
	u64 holds;		    /* times the ring filled and input was held back */
	bool told;		    /* the console has been told that input was lost */
} ring = {.lock = SPINLOCK_INIT};

static DEFINE_WAIT_QUEUE_HEAD(console_wq);

void console_input_flow_control(void (*rx_enable)(bool on))
{
	unsigned long flags = spin_lock_irqsave(&ring.lock);
	ring.rx_enable = rx_enable;
	spin_unlock_irqrestore(&ring.lock, flags);
}

/* Whether to say that input was lost: the first time only. Under ring.lock. */
static bool console_first_loss_locked(void)
{
	bool first = !ring.told;
	ring.told = true;
	return first;
}

/* Outside ring.lock: printing a line takes as long as the UART needs to send it. */
static void console_tell_loss(void)
{
	pr_err("console: input lost (the receive ring or the UART overflowed); "
	       "'console' counts it\n");
}

void console_input(char c)
{
	if (tty_input_signal(c) || shell_input_interrupt(c))
		return;
	bool tell = false;
	unsigned long flags = spin_lock_irqsave(&ring.lock);
	if (ring.head - ring.tail < CONSOLE_RING_SIZE) {
		ring.buf[ring.head++ % CONSOLE_RING_SIZE] = c;
		ring.received++;
	} else {
		/* Only a driver without flow control, or one that read on after being told. */
		ring.dropped++;
		tell = console_first_loss_locked();
	}
	if (ring.head - ring.tail == CONSOLE_RING_SIZE && ring.rx_enable && !ring.held) {
		WRITE_ONCE(ring.held, true);
		ring.holds++;
		ring.rx_enable(false);
	}
	spin_unlock_irqrestore(&ring.lock, flags);
	if (tell)
		console_tell_loss();
	wake_up(&console_wq);
	poll_notify();
}

bool console_input_held(void)
{
	return READ_ONCE(ring.held);
}

void console_input_overrun(void)
{
	unsigned long flags = spin_lock_irqsave(&ring.lock);
	ring.overruns++;
	bool tell = console_first_loss_locked();
	spin_unlock_irqrestore(&ring.lock, flags);
	if (tell)
		console_tell_loss();
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
	if (ring.held && ring.head - ring.tail <= CONSOLE_RING_RESUME) {
		/* Under the lock, so a hold that console_input() decides cannot come after this. */
		WRITE_ONCE(ring.held, false);
		ring.rx_enable(true);
	}
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

SHELL_CMD(console, "", "console input: bytes received, held back by flow control, lost")
{
	if (argc != 1)
		return SHELL_USAGE;
	unsigned long flags = spin_lock_irqsave(&ring.lock);
	u64 received = ring.received, dropped = ring.dropped, overruns = ring.overruns;
	u64 holds = ring.holds;
	u32 fill = ring.head - ring.tail;
	spin_unlock_irqrestore(&ring.lock, flags);
	printk("console: received=%llu dropped=%llu overruns=%llu holds=%llu ring=%u/%u\n",
	       received, dropped, overruns, holds, fill, CONSOLE_RING_SIZE);
	return 0;
}
