/*
 * Futexes (grace/futex.h): a hash of buckets, each a mutex and the list of
 * threads waiting on the words that hash to it.
 *
 * No wake is lost between a waiter's check of the word and its sleep: the
 * waiter reads the word and queues itself under the bucket's lock, and a waker
 * changes the word before it takes that lock to look for waiters (libc's
 * protocol). So either the waker's store came first and the waiter sees the
 * new value and does not sleep, or the waiter was queued first and the waker
 * finds it. The lock is a mutex because the waiter reads user memory under it,
 * which may fault a page in.
 *
 * A waker takes each waiter it wakes off the queue, marks it woken and wakes
 * its task, all under the bucket's lock. The waiter's entry is on its own
 * stack, so before it returns it takes the lock once more: after that no waker
 * can still be touching the entry, and one that timed out or was interrupted
 * takes itself off the queue there.
 */
#include <grace/address_space.h>
#include <grace/errno.h>
#include <grace/futex.h>
#include <grace/hash.h>
#include <grace/list.h>
#include <grace/mutex.h>
#include <grace/process.h>
#include <grace/race_point.h>
#include <grace/sched.h>
#include <grace/time.h>
#include <grace/wait.h>

#define FUTEX_HASH_BITS 8

struct futex_key {
	struct mm *mm;
	uintptr_t addr;
};

struct futex_bucket {
	struct mutex lock;
	struct list_head waiters; /* struct futex_waiter, oldest first */
} __cacheline_aligned;

struct futex_waiter {
	struct list_head node; /* on its bucket's waiters until woken */
	struct futex_key key;
	u32 bitset;
	struct task *task;
	bool woken; /* set by the waker under the bucket's lock, with the entry taken off */
};

static struct futex_bucket futex_buckets[1 << FUTEX_HASH_BITS];

static int futex_key_of(u32 __user *uaddr, struct futex_key *key)
{
	uintptr_t addr = (uintptr_t)uaddr;
	if (addr % sizeof(u32))
		return -EINVAL;
	key->mm = current->mm; /* the address space the caller runs on: a process's, or a test's */
	key->addr = addr;
	return 0;
}

static bool futex_key_eq(const struct futex_key *a, const struct futex_key *b)
{
	return a->mm == b->mm && a->addr == b->addr;
}

static struct futex_bucket *futex_bucket_of(const struct futex_key *key)
{
	return &futex_buckets[hash_64((uintptr_t)key->mm ^ key->addr, FUTEX_HASH_BITS)];
}

/* Take w off its queue and wake it. Its bucket's lock held. */
static void futex_wake_one(struct futex_waiter *w)
{
	list_del_init(&w->node);
	/* Stored before wake_up_process()'s barrier: the waiter sees it once running. */
	WRITE_ONCE(w->woken, true);
	wake_up_process(w->task);
}

/*
 * Lock the bucket w is queued on (or was, when woken). A requeue moves it and
 * changes its key holding both buckets' locks, so the key read here may be
 * stale, but once read again under a lock of the bucket it names, it holds.
 */
static struct futex_bucket *futex_lock_waiter(struct futex_waiter *w)
{
	for (;;) {
		struct futex_bucket *b = futex_bucket_of(&w->key);
		mutex_lock(&b->lock);
		if (futex_bucket_of(&w->key) == b)
			return b;
		mutex_unlock(&b->lock);
	}
}

int futex_wait(u32 __user *uaddr, u32 val, u32 bitset, u64 deadline_ns)
{
	struct futex_waiter w = {.bitset = bitset, .task = current};
	if (!bitset)
		return -EINVAL;
	int err = futex_key_of(uaddr, &w.key);
	if (err)
		return err;
	struct futex_bucket *b = futex_bucket_of(&w.key);

	mutex_lock(&b->lock);
	u32 now;
	if (copy_from_user(&now, uaddr, sizeof(now)))
		err = -EFAULT;
	else if (now != val)
		err = -EAGAIN;
	else {
		/* A waker that changed the word after the read above waits for this lock. */
		race_point_key("futex.wait_checked", w.key.mm);
		list_add_tail(&w.node, &b->waiters);
	}
	mutex_unlock(&b->lock);
	if (err)
		return err;

	for (;;) {
		set_current_state(TASK_SLEEPING);
		if (READ_ONCE(w.woken))
			break;
		if (signal_pending()) {
			err = -ERESTARTSYS;
			break;
		}
		if (!schedule_timeout_until(deadline_ns) && !READ_ONCE(w.woken)) {
			err = -ETIMEDOUT;
			break;
		}
	}
	__set_current_state(TASK_RUNNING);

	/* No waker is inside the entry once this lock is ours; off the queue if none came. */
	b = futex_lock_waiter(&w);
	if (w.woken)
		err = 0; /* woken and interrupted at once: the wake is not lost */
	else
		list_del_init(&w.node);
	mutex_unlock(&b->lock);
	return err;
}

int futex_wake(u32 __user *uaddr, int nr, u32 bitset)
{
	struct futex_key key;
	int err = futex_key_of(uaddr, &key);
	if (err)
		return err;
	if (!bitset)
		return -EINVAL;
	struct futex_bucket *b = futex_bucket_of(&key);
	struct futex_waiter *w, *tmp;
	int woken = 0;

	mutex_lock(&b->lock);
	list_for_each_entry_safe(w, tmp, &b->waiters, node) {
		if (futex_key_eq(&w->key, &key) && (w->bitset & bitset)) {
			futex_wake_one(w);
			/* Checked after the wake, as Linux: nr 0 or less still wakes one. */
			if (++woken >= nr)
				break;
		}
	}
	mutex_unlock(&b->lock);
	return woken;
}

/* Both buckets' locks, the lower address first; once if they are the same bucket. */
static void futex_lock_two(struct futex_bucket *a, struct futex_bucket *b)
{
	if (a == b) {
		mutex_lock(&a->lock);
		return;
	}
	if (a > b) {
		struct futex_bucket *t = a;
		a = b;
		b = t;
	}
	mutex_lock(&a->lock);
	mutex_lock_nested(&b->lock, 1);
}

static void futex_unlock_two(struct futex_bucket *a, struct futex_bucket *b)
{
	mutex_unlock(&a->lock);
	if (a != b)
		mutex_unlock(&b->lock);
}

int futex_requeue(u32 __user *uaddr, int nr_wake, u32 __user *uaddr2, int nr_requeue, bool check,
		  u32 cmpval)
{
	struct futex_key key, key2;
	int err = futex_key_of(uaddr, &key);
	if (!err)
		err = futex_key_of(uaddr2, &key2);
	if (err)
		return err;
	if (nr_wake < 0 || nr_requeue < 0)
		return -EINVAL;
	struct futex_bucket *b = futex_bucket_of(&key), *b2 = futex_bucket_of(&key2);
	struct futex_waiter *w, *tmp;
	int woken = 0, moved = 0;

	futex_lock_two(b, b2);
	if (check) {
		u32 now;
		if (copy_from_user(&now, uaddr, sizeof(now)))
			err = -EFAULT;
		else if (now != cmpval)
			err = -EAGAIN;
	}
	list_for_each_entry_safe(w, tmp, &b->waiters, node) {
		if (err || (woken >= nr_wake && moved >= nr_requeue))
			break;
		if (!futex_key_eq(&w->key, &key))
			continue;
		if (woken < nr_wake) {
			futex_wake_one(w);
			woken++;
			continue;
		}
		/*
		 * Its waiter unqueues itself from wherever its key says. Within one bucket
		 * it stays where it is: moved to the tail, the walk would meet it again.
		 */
		w->key = key2;
		if (b2 != b) {
			list_del_init(&w->node);
			list_add_tail(&w->node, &b2->waiters);
		}
		moved++;
	}
	futex_unlock_two(b, b2);
	return err ? err : woken + moved;
}

void futex_init(void)
{
	for (unsigned i = 0; i < ARRAY_SIZE(futex_buckets); i++) {
		mutex_init(&futex_buckets[i].lock);
		list_init(&futex_buckets[i].waiters);
	}
}
