/*
 * Sequence counts and seqlocks. A writer makes the count odd while it writes and
 * even again when done; a reader samples the count, reads, and retries if the count
 * was odd or changed. Readers never block writers and never see a torn update.
 * seqcount_t needs the writers serialised by something else; seqlock_t brings a spinlock.
 */
#ifndef GRACE_SEQLOCK_H
#define GRACE_SEQLOCK_H

#include <grace/atomic.h>
#include <grace/spinlock.h>
#include <asm/cpu.h>

typedef struct {
	u32 seq;
} seqcount_t;

#define SEQCOUNT_INIT                                                                              \
	{                                                                                          \
		0                                                                                  \
	}

static inline u32 read_seqcount_begin(const seqcount_t *s)
{
	u32 seq;
	/* Pairs with the smp_wmb() in write_seqcount_end(). */
	while ((seq = smp_load_acquire(&s->seq)) & 1)
		cpu_relax();
	return seq;
}

/*
 * For lockless walkers that must not wait: the count as it is, its low bit
 * cleared, so a section a writer is inside never validates.
 */
static inline u32 raw_seqcount_begin(const seqcount_t *s)
{
	return smp_load_acquire(&s->seq) & ~1u;
}

static inline bool read_seqcount_retry(const seqcount_t *s, u32 start)
{
	/* Order the data reads before the re-read of the count. Pairs with write_seqcount_begin().
	 */
	smp_rmb();
	return READ_ONCE(s->seq) != start;
}

static inline void write_seqcount_begin(seqcount_t *s)
{
	WRITE_ONCE(s->seq, s->seq + 1);
	/* The odd count must be visible before any data write. Pairs with read_seqcount_retry(). */
	smp_wmb();
}

static inline void write_seqcount_end(seqcount_t *s)
{
	/* Every data write before the even count. Pairs with read_seqcount_begin()'s acquire. */
	smp_wmb();
	WRITE_ONCE(s->seq, s->seq + 1);
}

typedef struct {
	seqcount_t count;
	spinlock_t lock; /* serialises writers */
} seqlock_t;

/* Its writers' lock is its class (LOCKDEP, LOCKSTAT): keyed by where this is written. */
#define SEQLOCK_INIT                                                                               \
	{                                                                                          \
		SEQCOUNT_INIT, SPINLOCK_INIT                                                       \
	}
#define seqlock_init(sl)                                                                           \
	do {                                                                                       \
		(sl)->count = (seqcount_t)SEQCOUNT_INIT;                                           \
		spin_lock_init_named(&(sl)->lock, #sl);                                            \
	} while (0)

static inline u32 read_seqbegin(const seqlock_t *sl)
{
	return read_seqcount_begin(&sl->count);
}
static inline bool read_seqretry(const seqlock_t *sl, u32 start)
{
	return read_seqcount_retry(&sl->count, start);
}

static inline void write_seqlock(seqlock_t *sl)
{
	spin_lock(&sl->lock);
	write_seqcount_begin(&sl->count);
}

static inline void write_sequnlock(seqlock_t *sl)
{
	write_seqcount_end(&sl->count);
	spin_unlock(&sl->lock);
}

#endif
