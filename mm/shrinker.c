/*
 * Shrinkers (grace/shrinker.h): the list of caches that can give memory back,
 * walked by the page allocator when it runs out.
 *
 * The walk runs in whatever context ran out of memory: interrupts off, inside an
 * interrupt handler, holding any spinlock, perhaps one a registrant holds while
 * it waits for this CPU. It can wait for nothing, so it takes no lock at all: it
 * walks the list under rcu_read_lock() (a preemption-off stretch, fine in every
 * context), and unregister_shrinker() unlinks under shrinker_lock and then waits
 * a grace period, after which no walk that could have seen the shrinker is still
 * running (each calls count and scan inside its read-side section). Registration
 * and unregistration serialise on shrinker_lock, which the walk never takes.
 *
 * in_reclaim keeps a CPU out of a second walk while it is in one: a scan may
 * allocate and run out too, or an interrupt may run out of memory meanwhile, and
 * neither should re-enter scans that are half done on this CPU. It is per CPU and read and written
 * only by its CPU with preemption off (inside the read-side section), so it costs no shared line;
 * an interrupt that gets in between the test and the set runs a whole walk of its own and leaves
 * the flag clear, as it found it.
 */
#include <grace/percpu.h>
#include <grace/rculist.h>
#include <grace/shrinker.h>
#include <grace/spinlock.h>

static LIST_HEAD(shrinkers);		/* struct shrinker, by node; RCU readers */
static DEFINE_SPINLOCK(shrinker_lock);	/* serialises writers of shrinkers; thread context */
static DEFINE_PER_CPU(u32, in_reclaim); /* this CPU is inside shrink_caches() */

void register_shrinker(struct shrinker *s)
{
	spin_lock(&shrinker_lock);
	/* s's fields before s: pairs with the walk's rcu_dereference(). */
	list_add_tail_rcu(&s->node, &shrinkers);
	spin_unlock(&shrinker_lock);
}

void unregister_shrinker(struct shrinker *s)
{
	might_sleep();
	spin_lock(&shrinker_lock);
	list_del_rcu(&s->node);
	spin_unlock(&shrinker_lock);
	/* Every walk that could still reach s ends within this grace period. */
	synchronize_rcu();
}

unsigned long shrink_caches(unsigned long nr)
{
	/* A racy peek: with nothing registered, running out costs nothing more. */
	if (nr == 0 || READ_ONCE(shrinkers.next) == &shrinkers)
		return 0;
	unsigned long freed = 0;
	rcu_read_lock();
	u32 *busy = this_cpu_ptr(&in_reclaim);
	if (READ_ONCE(*busy)) {
		rcu_read_unlock();
		return 0;
	}
	WRITE_ONCE(*busy, 1);
	barrier(); /* the flag before the scans, for an interrupt on this CPU */
	struct shrinker *s;
	list_for_each_entry_rcu(s, &shrinkers, node)
		if (s->count(s))
			freed += s->scan(s, nr);
	barrier();
	WRITE_ONCE(*busy, 0);
	rcu_read_unlock();
	return freed;
}
