/* Reader-writer spinlock (see include/grace/rwlock.h). */
#include <grace/rwlock.h>
#include <asm/cpu.h>

void read_lock(rwlock_t *rw)
{
	preempt_disable();
	for (;;) {
		u32 s = READ_ONCE(rw->state);
		/* A writer inside or waiting goes first. Acquire: pairs with write_unlock(). */
		if (!(s & (RW_WRITER | RW_WRITER_WAITING)) &&
		    try_cmpxchg_acquire(&rw->state, &s, s + 1))
			return;
		cpu_relax();
	}
}

void read_unlock(rwlock_t *rw)
{
	/* Release: pairs with the acquire in write_lock(). */
	fetch_sub_release(&rw->state, 1);
	preempt_enable();
}

void write_lock(rwlock_t *rw)
{
	preempt_disable();
	for (;;) {
		u32 s = READ_ONCE(rw->state);
		if (!(s & (RW_WRITER | RW_READER_MASK))) {
			/*
			 * No writer, no readers: take it, clearing our waiting mark. Acquire:
			 * pairs with the release in read_unlock() and write_unlock().
			 */
			if (try_cmpxchg_acquire(&rw->state, &s, RW_WRITER))
				return;
		} else if (!(s & RW_WRITER_WAITING)) {
			/* Hold back new readers while the current ones drain. */
			fetch_or_relaxed(&rw->state, RW_WRITER_WAITING);
		}
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
	preempt_enable();
}
