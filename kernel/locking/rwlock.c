/* Reader-writer spinlock (see include/grace/rwlock.h). */
#include <grace/rwlock.h>
#include <asm/cpu.h>

void read_lock(rwlock_t *rw)
{
	preempt_disable();
	for (;;) {
		u32 s = READ_ONCE(rw->state);
		/* A writer inside or waiting goes first. */
		if (!(s & (RW_WRITER | RW_WRITER_WAITING)) &&
		    __atomic_compare_exchange_n(&rw->state, &s, s + 1, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
		cpu_relax();
	}
}

void read_unlock(rwlock_t *rw)
{
	__atomic_fetch_sub(&rw->state, 1, __ATOMIC_RELEASE);
	preempt_enable();
}

void write_lock(rwlock_t *rw)
{
	preempt_disable();
	for (;;) {
		u32 s = READ_ONCE(rw->state);
		if (!(s & (RW_WRITER | RW_READER_MASK))) {
			/* No writer, no readers: take it, clearing our waiting mark. */
			if (__atomic_compare_exchange_n(&rw->state, &s, RW_WRITER, false,
							__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
				return;
		} else if (!(s & RW_WRITER_WAITING)) {
			/* Hold back new readers while the current ones drain. */
			__atomic_fetch_or(&rw->state, RW_WRITER_WAITING, __ATOMIC_RELAXED);
		}
		cpu_relax();
	}
}

void write_unlock(rwlock_t *rw)
{
	/* Keep a WAITING mark another writer may have set meanwhile. */
	__atomic_fetch_and(&rw->state, ~RW_WRITER, __ATOMIC_RELEASE);
	preempt_enable();
}
