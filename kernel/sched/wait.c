/*
 * Wait queues, completions and timed sleeps. The lost-wake-up argument is in
 * grace/sched.h: a waiter is on the queue and TASK_SLEEPING before it checks its
 * condition, and wake_up() takes the queue lock after the waker made the
 * condition true.
 */
#include <grace/completion.h>
#include <grace/sched.h>
#include <grace/timer.h>
#include <grace/wait.h>

#ifndef GRACE_LOCK_CLASSES
/* Out of line where no class is named (in LOCKDEP and LOCKSTAT builds, macros: wait.h). */
void wait_queue_init(struct wait_queue_head *wq)
{
	spin_lock_init(&wq->lock);
	list_init(&wq->waiters);
}

void completion_init(struct completion *c)
{
	c->done = 0;
	wait_queue_init(&c->wq);
}
#endif

void prepare_to_wait(struct wait_queue_head *wq, struct wait_entry *entry, u32 flags)
{
	entry->task = current;
	entry->flags = flags;
	unsigned long irq = spin_lock_irqsave(&wq->lock);
	if (!entry->node.next || list_empty(&entry->node))
		list_add_tail(&entry->node, &wq->waiters);
	set_current_state(TASK_SLEEPING);
	spin_unlock_irqrestore(&wq->lock, irq);
}

void finish_wait(struct wait_queue_head *wq, struct wait_entry *entry)
{
	__set_current_state(TASK_RUNNING);
	/*
	 * Woken entries are already off the list; skip the lock for them. The waker
	 * unlinks an entry after waking its task, with list_del_init_careful(): once
	 * we see it unlinked the waker is done with it, and our stack may go.
	 */
	if (entry->node.next && !list_empty_careful(&entry->node)) {
		unsigned long irq = spin_lock_irqsave(&wq->lock);
		list_del_init(&entry->node);
		spin_unlock_irqrestore(&wq->lock, irq);
	}
}

/* Wake waiters; wq->lock held. */
static unsigned wake_up_locked(struct wait_queue_head *wq, bool all)
{
	struct wait_entry *e, *n;
	unsigned woken = 0;

	lockdep_assert_held(&wq->lock);
	list_for_each_entry_safe(e, n, &wq->waiters, node) {
		u32 exclusive = e->flags & WAIT_EXCLUSIVE;
		/*
		 * Wake, then unlink: the waiter may leave as soon as it sees its entry
		 * unlinked (finish_wait), taking the entry and perhaps its task with it.
		 */
		wake_up_process(e->task);
		list_del_init_careful(&e->node);
		woken++;
		if (exclusive && !all)
			break;
	}
	return woken;
}

static unsigned wake_up_n(struct wait_queue_head *wq, bool all)
{
	unsigned long irq = spin_lock_irqsave(&wq->lock);
	unsigned woken = wake_up_locked(wq, all);
	spin_unlock_irqrestore(&wq->lock, irq);
	return woken;
}

unsigned wake_up(struct wait_queue_head *wq)
{
	return wake_up_n(wq, false);
}

unsigned wake_up_all(struct wait_queue_head *wq)
{
	return wake_up_n(wq, true);
}

bool wait_queue_active(struct wait_queue_head *wq)
{
	return !list_empty(&wq->waiters);
}

struct sleep_timer {
	struct timer timer;
	struct task *task;
};

static void sleep_timer_fn(struct timer *t)
{
	wake_up_process(container_of(t, struct sleep_timer, timer)->task);
}

/* schedule_timeout_until() for callers that made the validator's check already. */
static u64 sleep_until(u64 deadline_ns)
{
	if (deadline_ns == UINT64_MAX) {
		schedule();
		return UINT64_MAX;
	}
	u64 now = arch_clock_ns();
	if (now >= deadline_ns) {
		__set_current_state(TASK_RUNNING);
		return 0;
	}
	struct sleep_timer st = {.task = current};
	timer_init(&st.timer, sleep_timer_fn);
	timer_add(&st.timer, deadline_ns);
	schedule();
	/* The timer may be firing on another CPU: it must be done with st before we return. */
	timer_cancel_sync(&st.timer);
	now = arch_clock_ns();
	return now >= deadline_ns ? 0 : deadline_ns - now;
}

u64 schedule_timeout_until(u64 deadline_ns)
{
	lockdep_might_sleep((uintptr_t)__builtin_return_address(0));
	return sleep_until(deadline_ns);
}

u64 schedule_timeout(u64 timeout_ns)
{
	lockdep_might_sleep((uintptr_t)__builtin_return_address(0));
	return sleep_until(arch_clock_ns() + timeout_ns);
}

void msleep(u64 ms)
{
	lockdep_might_sleep((uintptr_t)__builtin_return_address(0));
	u64 deadline = arch_clock_ns() + ms * NSEC_PER_MSEC;
	/* Loop: any wake-up (a stray wake_up_process) before the deadline sleeps again. */
	do
		set_current_state(TASK_SLEEPING);
	while (sleep_until(deadline));
}

void reinit_completion(struct completion *c)
{
	WRITE_ONCE(c->done, 0);
}

/*
 * The wake-up happens under the lock: a waiter that sees done may return and
 * free the completion (often on its stack), so after the unlock c is not ours.
 */
void complete(struct completion *c)
{
	unsigned long irq = spin_lock_irqsave(&c->wq.lock);
	if (c->done != COMPLETION_ALL)
		c->done++;
	wake_up_locked(&c->wq, false);
	spin_unlock_irqrestore(&c->wq.lock, irq);
}

void complete_all(struct completion *c)
{
	unsigned long irq = spin_lock_irqsave(&c->wq.lock);
	c->done = COMPLETION_ALL;
	wake_up_locked(&c->wq, true);
	spin_unlock_irqrestore(&c->wq.lock, irq);
}

/*
 * Wait until a completion can be consumed or the deadline passes. The waits are
 * exclusive, so complete() wakes one waiter instead of every waiter racing for
 * the lock to find one winner. Consuming, giving up and leaving the queue happen
 * under the lock that complete() takes: a waiter woken by complete() always sees
 * its completion, so one that times out cannot swallow another waiter's wake-up.
 */
static bool wait_completion(struct completion *c, u64 deadline)
{
	struct wait_entry we = {.task = current, .flags = WAIT_EXCLUSIVE};
	bool ok;

	/*
	 * Always under the lock, even after complete_all(): a waiter that returned on
	 * a lockless look at done could free c while complete_all() still holds its lock.
	 */
	list_init(&we.node);
	for (;;) {
		unsigned long irq = spin_lock_irqsave(&c->wq.lock);
		if (c->done) {
			if (c->done != COMPLETION_ALL)
				c->done--;
			ok = true;
		} else if (arch_clock_ns() >= deadline) {
			ok = false;
		} else {
			if (list_empty(&we.node))
				list_add_tail(&we.node, &c->wq.waiters);
			set_current_state(TASK_SLEEPING);
			spin_unlock_irqrestore(&c->wq.lock, irq);
			sleep_until(deadline); /* the callers made the validator's check */
			continue;
		}
		list_del_init(&we.node);
		spin_unlock_irqrestore(&c->wq.lock, irq);
		__set_current_state(TASK_RUNNING);
		return ok;
	}
}

void wait_for_completion(struct completion *c)
{
	lockdep_might_sleep((uintptr_t)__builtin_return_address(0));
	wait_completion(c, UINT64_MAX);
}

bool wait_for_completion_timeout(struct completion *c, u64 timeout_ns)
{
	lockdep_might_sleep((uintptr_t)__builtin_return_address(0));
	return wait_completion(c, arch_clock_ns() + timeout_ns);
}
