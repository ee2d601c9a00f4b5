/*
 * Reader-writer spinlock. Readers share; a writer excludes everyone. Writers are
 * not starved: a waiting writer sets RW_WRITER_WAITING, and new readers wait
 * for it. The writer still waits for the readers already inside to leave.
 */
#ifndef GRACE_RWLOCK_H
#define GRACE_RWLOCK_H

#include <grace/atomic.h>
#include <grace/lockdep.h>
#include <grace/preempt.h>

typedef struct {
	u32 state; /* reader count | RW_WRITER | RW_WRITER_WAITING */
#ifdef GRACE_LOCK_CLASSES
	struct lockdep_map dep_map; /* its class (LOCKDEP, LOCKSTAT): the init site */
#endif
} rwlock_t;

#define RW_WRITER (1u << 31)
#define RW_WRITER_WAITING (1u << 30)
#define RW_READER_MASK (RW_WRITER_WAITING - 1)

/* Named as spinlock_t's initializers are (grace/spinlock.h). */
/* clang-format off */
#define RWLOCK_INIT_NAMED(name) { 0 LOCKDEP_MAP_FIELD(name) }
/* clang-format on */
#define RWLOCK_INIT RWLOCK_INIT_NAMED("")
#define DEFINE_RWLOCK(name) rwlock_t name = RWLOCK_INIT_NAMED(#name)
#define rwlock_init(rw) (*(rw) = (rwlock_t)RWLOCK_INIT_NAMED(#rw))

void read_lock(rwlock_t *rw);
void read_unlock(rwlock_t *rw);
void write_lock(rwlock_t *rw);
void write_unlock(rwlock_t *rw);

#endif
