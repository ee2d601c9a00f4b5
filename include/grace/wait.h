/*
 * Wait queues: a list of sleeping threads under a spinlock, and wait_event(),
 * the loop that cannot lose a wake-up (see grace/sched.h). Completions
 * (grace/completion.h) and most sleeping in the kernel are built on these.
 */
#ifndef GRACE_WAIT_H
#define GRACE_WAIT_H

#include <grace/list.h>
#include <grace/spinlock.h>
#include <grace/time.h>
#include <grace/types.h>

struct task;

struct wait_queue_head {
	spinlock_t lock;	  /* protects waiters (the entries' links); taken irqsave */
	struct list_head waiters; /* struct wait_entry, in the order they queued */
};

/*
 * var: the queue (its list points to itself); name: its lock's class name (LOCKDEP,
 * LOCKSTAT builds), keyed by where the initializer is written, so each wait queue
 * initialised at its own place is a class of its own.
 */
/* clang-format off */
#define WAIT_QUEUE_HEAD_INIT_NAMED(var, name) \
	{ SPINLOCK_INIT_NAMED(name), LIST_HEAD_INIT((var).waiters) }
/* clang-format on */
#define WAIT_QUEUE_HEAD_INIT(name) WAIT_QUEUE_HEAD_INIT_NAMED(name, #name)
#define DEFINE_WAIT_QUEUE_HEAD(name) struct wait_queue_head name = WAIT_QUEUE_HEAD_INIT(name)
#define wait_queue_init_named(wq, name)                                                            \
	do {                                                                                       \
		struct wait_queue_head *__wq = (wq);                                               \
		*__wq = (struct wait_queue_head)WAIT_QUEUE_HEAD_INIT_NAMED(*__wq, name);           \
	} while (0)
#ifdef GRACE_LOCK_CLASSES
#define wait_queue_init(wq) wait_queue_init_named(wq, #wq)
#else
void wait_queue_init(struct wait_queue_head *wq); /* the same; a normal build has no names */
#endif

/* WAIT_EXCLUSIVE: wake_up() wakes only the first such waiter (plus any non-exclusive ones). */
#define WAIT_EXCLUSIVE 1u

struct wait_entry {
	struct task *task;
	u32 flags;
	struct list_head node; /* empty once woken by wake_up() or removed by finish_wait() */
};

/* Queue entry (if it is not queued) and set the current thread TASK_SLEEPING. */
void prepare_to_wait(struct wait_queue_head *wq, struct wait_entry *entry, u32 flags);
/* TASK_RUNNING again, and off the queue. */
void finish_wait(struct wait_queue_head *wq, struct wait_entry *entry);

/* Wake every non-exclusive waiter and the first exclusive one; returns how many woke. */
unsigned wake_up(struct wait_queue_head *wq);
unsigned wake_up_all(struct wait_queue_head *wq);

bool wait_queue_active(struct wait_queue_head *wq);

void schedule(void);
/*
 * Sleep until woken or until arch_clock_ns() >= deadline; the time left (0 if it
 * expired). UINT64_MAX: no deadline, just schedule().
 */
u64 schedule_timeout_until(u64 deadline_ns);
/* The same with a relative timeout. Set TASK_SLEEPING first, as for schedule(). */
u64 schedule_timeout(u64 timeout_ns);

/*
 * Sleep on wq until cond is true. cond is re-evaluated after every wake-up, first
 * without the queue lock: wake_up() has usually taken the entry off the queue
 * already, so a waiter whose condition came true leaves without touching the
 * lock its waker and the other waiters want.
 */
#define wait_event(wq, cond)                                                                       \
	do {                                                                                       \
		struct wait_entry __we = {.flags = 0};                                             \
		might_sleep();                                                                     \
		for (;;) {                                                                         \
			prepare_to_wait(&(wq), &__we, 0);                                          \
			if (cond)                                                                  \
				break;                                                             \
			schedule();                                                                \
			if (cond)                                                                  \
				break;                                                             \
		}                                                                                  \
		finish_wait(&(wq), &__we);                                                         \
	} while (0)

/*
 * Like wait_event, but a signal for the calling thread ends the wait too:
 * evaluates to 0 once cond is true, -ERESTARTSYS if a signal came first (the
 * system call then restarts or fails with -EINTR on its way back to user mode).
 * The sender sets the thread's sigpending before waking it, so a signal that
 * arrives between the check and the sleep still ends the sleep.
 */
#define wait_event_interruptible(wq, cond)                                                         \
	({                                                                                         \
		struct wait_entry __we = {.flags = 0};                                             \
		int __ret = 0;                                                                     \
		might_sleep();                                                                     \
		for (;;) {                                                                         \
			prepare_to_wait(&(wq), &__we, 0);                                          \
			if (cond)                                                                  \
				break;                                                             \
			if (signal_pending()) {                                                    \
				__ret = -ERESTARTSYS;                                              \
				break;                                                             \
			}                                                                          \
			schedule();                                                                \
		}                                                                                  \
		finish_wait(&(wq), &__we);                                                         \
		__ret;                                                                             \
	})

/*
 * Like wait_event, for at most timeout_ns. Evaluates to true if cond became true,
 * false on timeout (cond is checked once more at the deadline).
 */
#define wait_event_timeout(wq, cond, timeout_ns)                                                   \
	({                                                                                         \
		struct wait_entry __we = {.flags = 0};                                             \
		u64 __deadline = arch_clock_ns() + (timeout_ns);                                   \
		bool __ok;                                                                         \
		might_sleep();                                                                     \
		for (;;) {                                                                         \
			prepare_to_wait(&(wq), &__we, 0);                                          \
			if ((__ok = (cond)))                                                       \
				break;                                                             \
			if (!schedule_timeout_until(__deadline)) {                                 \
				__ok = (cond);                                                     \
				break;                                                             \
			}                                                                          \
		}                                                                                  \
		finish_wait(&(wq), &__we);                                                         \
		__ok;                                                                              \
	})

#endif
