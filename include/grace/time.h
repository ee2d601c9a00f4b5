/*
 * Time: the monotonic clock (arch_clock_ns), busy-wait delays, the profiler's
 * sampling interrupt and the per-CPU timer-interrupt count. Timers and the tick
 * are in grace/timer.h.
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

/* Run profile_sample() from this CPU's timer interrupt every period_ns; 0 stops it. */
void timer_sampling(u64 period_ns);
/* Timer interrupts taken by cpu since boot. */
u64 timer_interrupts(unsigned cpu);

#endif
