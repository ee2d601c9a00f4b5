/*
 * Kernel threads. A thread is created asleep (kthread_create), may be bound to a
 * CPU before or after it starts, and is started with wake_up_process(); or all
 * at once with kthread_run(). It ends by returning from fn or by kthread_exit().
 *
 * Every thread has two references: its own, dropped when it has switched out for
 * the last time, and its creator's handle, dropped by kthread_stop() (ask it to
 * stop, wait, reap), kthread_join() (wait for it to end by itself, reap) or
 * kthread_detach() (nobody will wait). The stack and struct are freed when both
 * are gone.
 */
#ifndef GRACE_KTHREAD_H
#define GRACE_KTHREAD_H

#include <grace/compiler.h>
#include <grace/sched.h>

/* NULL on out of memory. The thread may run on any online CPU until bound. */
struct task *kthread_create(int (*fn)(void *arg), void *arg, const char *fmt, ...) __printf(3, 4);
/* The same, bound to cpu from the start (its stack on cpu's node); NULL if cpu is not online. */
struct task *kthread_create_on_cpu(int (*fn)(void *arg), void *arg, unsigned cpu, const char *fmt,
				   ...) __printf(4, 5);
struct task *kthread_run(int (*fn)(void *arg), void *arg, const char *fmt, ...) __printf(3, 4);
/* Restrict p to one CPU (any time; a running thread moves at its next switch). */
int kthread_bind(struct task *p, unsigned cpu);

/* Inside a thread: has kthread_stop() been called on it? */
bool kthread_should_stop(void);
/* Set should_stop, wake p, wait for it to end; its exit code. Drops the handle. */
int kthread_stop(struct task *p);
/* Wait for p to end by itself; its exit code. Drops the handle. */
int kthread_join(struct task *p);
/* Drop the handle without waiting. */
void kthread_detach(struct task *p);
/*
 * Keep p's struct and stack (not the thread itself) from being freed until the
 * matching task_put(): for a caller that found p alive under a lock that its
 * exit takes, and must use it after dropping that lock. Not in interrupts.
 */
void task_get(struct task *p);
void task_put(struct task *p);
void __noreturn kthread_exit(int code);

/* Threads that exist now (every CPU's idle thread included). */
unsigned kthread_count(void);

#endif
