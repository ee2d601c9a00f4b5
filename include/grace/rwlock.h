/*
 * Reader-writer spinlock. Readers share; a writer excludes everyone. Writers are
 * not starved: a waiting writer sets RW_WRITER_WAITING, and new readers wait
 * for it. The writer still waits for the readers already inside to leave.
 */
#ifndef GRACE_RWLOCK_H
#define GRACE_RWLOCK_H

#include <grace/atomic.h>
#include <grace/preempt.h>

typedef struct {
	u32 state; /* reader count | RW_WRITER | RW_WRITER_WAITING */
} rwlock_t;

#define RW_WRITER (1u << 31)
#define RW_WRITER_WAITING (1u << 30)
#define RW_READER_MASK (RW_WRITER_WAITING - 1)

#define RWLOCK_INIT                                                                                \
	{                                                                                          \
		0                                                                                  \
	}

void read_lock(rwlock_t *rw);
void read_unlock(rwlock_t *rw);
void write_lock(rwlock_t *rw);
void write_unlock(rwlock_t *rw);

#endif
