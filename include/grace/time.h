/*
 * Time: the monotonic clock (arch_clock_ns), busy-wait delays, and a one-shot
 * per-CPU timer. The scheduler issue replaces the single timer slot with a timer
 * wheel and a tick; until then idle CPUs have no periodic interrupt at all.
 */
#ifndef GRACE_TIME_H
#define GRACE_TIME_H

#include <grace/types.h>

#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC 1000000000ULL

u64 arch_clock_ns(void);

/* Busy-wait at least ns nanoseconds. */
void delay_ns(u64 ns);

typedef void (*timer_fn_t)(void *arg);
/*
 * Call fn(arg) from this CPU's timer interrupt once arch_clock_ns() >= deadline.
 * One slot per CPU: a second call replaces a pending one. Call with preemption off.
 */
void timer_oneshot(u64 deadline_ns, timer_fn_t fn, void *arg);
void timer_cancel(void);
/* Run profile_sample() from this CPU's timer interrupt every period_ns; 0 stops it. */
void timer_sampling(u64 period_ns);
/* Timer interrupts taken by cpu since boot. */
u64 timer_interrupts(unsigned cpu);

#endif
