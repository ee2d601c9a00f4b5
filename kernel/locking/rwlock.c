/* Reader-writer spinlock (see include/grace/rwlock.h). */
#include <grace/rwlock.h>
#include <asm/cpu.h>

void read_lock(rwlock_t *rw)
{
	preempt_disable();
	/*
	 * For the validator a reader is as exclusive as a writer: a reader that waits
	 * behind a waiting writer closes a cycle as a writer would (see rwlock.h).
	 */
	lock_acquire(&rw->dep_map, 0, LOCK_READ, (uintptr_t)__builtin_return_address(0));
	for (;;) {
		u32 s = READ_ONCE(rw->state);
		/* A writer inside or waiting goes first. Acquire: pairs with write_unlock(). */
		if (!(s & (RW_WRITER | RW_WRITER_WAITING)) &&
		    try_cmpxchg_acquire(&rw->state, &s, s + 1)) {
			lock_acquired(&rw->dep_map);
			return;
		}
		lock_contended(&rw->dep_map); /* the first call marks the wait's start */
		cpu_relax();
	}
}

void read_unlock(rwlock_t *rw)
{
	/* Release: pairs with the acquire in write_lock(). */
	fetch_sub_release(&rw->state, 1);
	lock_release(&rw->dep_map, (uintptr_t)__builtin_return_address(0));
	preempt_enable();
}

void write_lock(rwlock_t *rw)
{
	preempt_disable();
	lock_acquire(&rw->dep_map, 0, 0, (uintptr_t)__builtin_return_address(0));
	for (;;) {
		u32 s = READ_ONCE(rw->state);
		if (!(s & (RW_WRITER | RW_READER_MASK))) {
			/*
			 * No writer, no readers: take it, clearing our waiting mark. Acquire:
			 * pairs with the release in read_unlock() and write_unlock().
			 */
			if (try_cmpxchg_acquire(&rw->state, &s, RW_WRITER)) {
				lock_acquired(&rw->dep_map);
				return;
			}
		} else if (!(s & RW_WRITER_WAITING)) {
			/* Hold back new readers while the current ones drain. */
			fetch_or_relaxed(&rw->state, RW_WRITER_WAITING);
		}
		lock_contended(&rw->dep_map); /* the first call marks the wait's start */
		cpu_relax();
	}
}

void write_unlock(rwlock_t *rw)
{
	/*
	 * Keep a WAITING mark another writer may have set meanwhile. Release: pairs with
	 * the acquire in read_lock() and write_lock().
	 */
	fetch_and_release(&rw->state, ~RW_WRITER);
	lock_release(&rw->dep_map, (uintptr_t)__builtin_return_address(0));
	preempt_enable();
}
