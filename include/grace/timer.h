/*
 * Per-CPU timers and the tick.
 *
 * A struct timer calls fn(t) from the timer interrupt of its CPU (hard irq,
 * interrupts off) once arch_clock_ns() >= expires: never early, once per add.
 * Add, modify and cancel work from any CPU and any context. fn may re-add its own
 * timer (timer_add, timer_modify or timer_add_on). Each CPU keeps its pending
 * timers in its own queue under its own lock (kernel/time/timer.c).
 *
 * The tick: every HZ, calling sched_tick(), while the CPU has more than one
 * runnable thread to share its time between. The scheduler starts and stops it
 * (tick_start/tick_stop); an idle CPU, or one running a single thread, programs
 * only its next timer and is not interrupted otherwise.
 */
#ifndef GRACE_TIMER_H
#define GRACE_TIMER_H

#include <grace/time.h>
#include <grace/types.h>

struct timer {
	u64 expires;		     /* arch_clock_ns() value; read it only while not pending */
	void (*fn)(struct timer *t); /* set by timer_init */
	/* Private to kernel/time/timer.c: */
	struct timer *child, *next, *prev; /* pairing-heap links; under the base lock */
	u32 cpu;			   /* its queue; written under its lock (both, on a move) */
	u32 state;			   /* TIMER_IDLE/QUEUED/MIGRATING; under the base lock */
};

#define TIMER_NO_CPU UINT32_MAX /* cpu of a timer never added */
/* For static timers (per-CPU ones included); the same as timer_init(). */
#define TIMER_INITIALIZER(f)                                                                       \
	{                                                                                          \
		.fn = (f), .cpu = TIMER_NO_CPU                                                     \
	}

void timer_init(struct timer *t, void (*fn)(struct timer *t));
/* Fire t on cpu at expires_ns. Any CPU, any context; t must not be pending. */
void timer_add_on(struct timer *t, u64 expires_ns, unsigned cpu);
/* timer_add_on() on this CPU. */
void timer_add(struct timer *t, u64 expires_ns);
/* Re-arm t (pending or not) for expires_ns on its CPU; true if it was pending. */
bool timer_modify(struct timer *t, u64 expires_ns);
/* True if t was pending and now will not fire. Does not wait for a running fn. */
bool timer_cancel(struct timer *t);
/*
 * timer_cancel(), then wait until fn is not running on any CPU. After it returns
 * t is neither pending nor running (unless someone else adds it again), so it may
 * be freed. Not from t's own fn, and not with a lock that fn takes.
 */
bool timer_cancel_sync(struct timer *t);
/* A snapshot: t was queued (or on its way to another CPU's queue). */
bool timer_pending(const struct timer *t);

/*
 * The tick rate. 100 Hz: a 10 ms time slice is the scheduler's granularity, and
 * at 64 vCPUs on 2 host cores 100 interrupts a second per busy CPU stays cheap;
 * idle CPUs do not tick at all.
 */
#define HZ 100
#define TICK_NSEC (NSEC_PER_SEC / HZ)

/*
 * Ticks since boot, computed from the clock: no CPU writes a shared counter, and
 * every CPU agrees (the clock is the same on all of them). Read-only.
 */
static inline u64 jiffies_now(void)
{
	return arch_clock_ns() / TICK_NSEC;
}
#define jiffies jiffies_now()

static inline u64 jiffies_to_ns(u64 j)
{
	return j * TICK_NSEC;
}

/* Rounded up: waiting ns_to_jiffies(ns) ticks waits at least ns. */
static inline u64 ns_to_jiffies(u64 ns)
{
	return (ns + TICK_NSEC - 1) / TICK_NSEC;
}

/* Interrupts off, this CPU: stop the tick (arm only the next timer) / start it. Idempotent. */
void tick_stop(void);
void tick_start(void);
/* True while this CPU's periodic tick is running. */
bool tick_running(void);

/* The IPI handler calls this: reprogram the hardware if another CPU asked to. */
void timer_ipi(void);
/* This CPU's hardware lost its deadline (its hart was stopped): arm it again. */
void timer_rearm_this_cpu(void);

#endif
