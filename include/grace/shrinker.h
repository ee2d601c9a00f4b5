/*
 * Shrinkers: caches that can give memory back when the page allocator runs out.
 * A cache (the dcache's unused dentries, say) registers a shrinker; when an
 * allocation is about to fail for lack of free pages, the page allocator calls
 * shrink_caches(), which asks each shrinker how much it could free (count) and
 * then to free up to nr objects (scan), and tries once more before it fails.
 *
 * count and scan run wherever memory is allocated: with interrupts off, in an
 * interrupt handler, with any spinlock held, including the cache's own locks if
 * the allocation came from inside the cache. So they must never sleep and never
 * wait for a lock: take locks only with trylock, skip what is busy, and return
 * what was freed (0 is fine). Several CPUs may run one shrinker's scan at once.
 * What scan frees may be allocated again at once by the caller that ran out.
 *
 * The shrinker list is walked under rcu_read_lock(), which never waits, so the
 * shrink path can run in any context; register and unregister are thread context.
 * A CPU already inside shrink_caches() (a scan that allocates, or an interrupt
 * that runs out meanwhile) is not let in again: it gets 0.
 */
#ifndef GRACE_SHRINKER_H
#define GRACE_SHRINKER_H

#include <grace/list.h>
#include <grace/types.h>

struct shrinker {
	const char *name;
	/* Objects it could free now; 0 skips it. Any context, no waiting. */
	unsigned long (*count)(struct shrinker *s);
	/* Free up to nr objects; returns how many it freed. Any context, no waiting. */
	unsigned long (*scan)(struct shrinker *s, unsigned long nr);
	struct list_head node; /* on the shrinker list: RCU readers, writers under its lock */
};

/* Add s (once) to the list shrink_caches() walks. Thread context. */
void register_shrinker(struct shrinker *s);
/*
 * Take s off the list; once this returns its count and scan are not running and
 * will not run again, so s and what they use may be freed. Sleeps for a grace
 * period: thread context, no spinlock held, not from count or scan.
 */
void unregister_shrinker(struct shrinker *s);
/*
 * Ask every shrinker with a nonzero count to free up to nr objects; returns the
 * total freed. Any context. 0 from a CPU already inside shrink_caches().
 */
unsigned long shrink_caches(unsigned long nr);

#endif
