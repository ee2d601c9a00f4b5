/*
 * The contended path of the ticket spinlock: proportional backoff with a delay
 * auto-tuned per CPU and per hashed lock address (or, spinlock_delay=single, one
 * delay per CPU for every lock), or plain spinning (see
 * include/grace/spinlock.h); either bounded, under paravirtual waits, by
 * SPIN_PV_THRESHOLD loops before the waiter halts (spinlock_pv.c).
 */
#include <grace/percpu.h>
#include <grace/hash.h>
#include <grace/spinlock.h>
#include <grace/smp.h>
#include <asm/cpu.h>

#include "spinlock_internal.h"

bool spinlock_backoff = true;
bool spinlock_delay_single;

/*
 * Per CPU, so tuning writes no shared line; indexed by spin_delay_slot(). Starts
 * at 0 in the .percpu template, which spin_delay_get() reads as SPIN_DELAY_MIN.
 */
static DEFINE_PER_CPU(u16[SPIN_DELAY_SLOTS], spin_delay);
/* The largest delay each slot reached since the last reset: shows tuning happened. */
static DEFINE_PER_CPU(u16[SPIN_DELAY_SLOTS], spin_delay_peak);

unsigned spin_delay_slot(const spinlock_t *lock)
{
	/* The golden-ratio hash (grace/hash.h) of the address's low 32 bits. */
	return hash_32((u32)(uintptr_t)lock, SPIN_DELAY_HASH_SHIFT);
}

static unsigned spin_delay_get(u16 *slot)
{
	return *slot < SPIN_DELAY_MIN ? SPIN_DELAY_MIN : *slot;
}

/*
 * The slot a wait for lock tunes: its hash, or, under spinlock_delay=single, slot 0
 * for every lock, the one delay per CPU of Rik van Riel's first patch.
 */
static unsigned spin_delay_index(const spinlock_t *lock)
{
	return READ_ONCE(spinlock_delay_single) ? 0 : spin_delay_slot(lock);
}

void spin_delay_set_single(bool single)
{
	WRITE_ONCE(spinlock_delay_single, single);
}

unsigned spin_delay_of_cpu(unsigned cpu, const spinlock_t *lock)
{
	return spin_delay_get(&per_cpu(spin_delay, cpu)[spin_delay_index(lock)]);
}

unsigned spin_delay_peak_of_cpu(unsigned cpu, const spinlock_t *lock)
{
	return spin_delay_get(&per_cpu(spin_delay_peak, cpu)[spin_delay_index(lock)]);
}

unsigned spin_delay_next(unsigned delay, bool acquired, u32 owner)
{
	if (acquired)
		/* We may have waited past the release: shorten the next wait. */
		return delay > SPIN_DELAY_MIN ? delay - 1 : delay;
	/*
	 * Still busy: the wait was too short. Grow on 3 of every 8 owner values (the
	 * owner's low bits are as good as random here), so about 2.7 busy polls cancel
	 * one decrement, as in Rik van Riel's patch (spinlock_internal.h): a
	 * non-integer ratio avoids settling into a cycle that always oversleeps by
	 * the same amount.
	 */
	if (delay < SPIN_DELAY_MAX && ((owner & 7) == 1 || (owner & 7) == 4 || (owner & 7) == 6))
		delay++;
	return delay;
}

void spin_delay_reset(void)
{
	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++)
		if (cpumask_test_cpu(&cpu_online_mask, cpu))
			for (unsigned i = 0; i < SPIN_DELAY_SLOTS; i++) {
				WRITE_ONCE(per_cpu(spin_delay, cpu)[i], SPIN_DELAY_MIN);
				WRITE_ONCE(per_cpu(spin_delay_peak, cpu)[i], SPIN_DELAY_MIN);
			}
}

static const spinlock_t *watched;
static DEFINE_PER_CPU(u32[2], watched_waits); /* [0] tuned, [1] plain */

void spin_delay_watch(const spinlock_t *lock)
{
	for (unsigned cpu = 0; cpu < MAX_CPUS; cpu++)
		if (cpumask_test_cpu(&cpu_online_mask, cpu)) {
			WRITE_ONCE(per_cpu(watched_waits, cpu)[0], 0);
			WRITE_ONCE(per_cpu(watched_waits, cpu)[1], 0);
		}
	WRITE_ONCE(watched, lock);
}

void spin_delay_watched_waits(unsigned cpu, u32 *tuned, u32 *plain)
{
	*tuned = READ_ONCE(per_cpu(watched_waits, cpu)[0]);
	*plain = READ_ONCE(per_cpu(watched_waits, cpu)[1]);
}

/* Preemption is off (spin_lock disabled it): this CPU's counts stay ours. */
static void count_watched(const spinlock_t *lock, bool plain)
{
	if (unlikely(lock == READ_ONCE(watched)))
		this_cpu(watched_waits)[plain]++;
}

/* No bound on spinning: paravirtual waits are off. */
#define SPIN_UNBOUNDED UINT64_MAX

/*
 * Both spinning paths stop after about budget loop iterations (SPIN_PV_THRESHOLD,
 * under paravirtual waits) and return false; true once the lock is ours.
 */
static bool spin_wait_plain(spinlock_t *lock, u32 ticket, u64 budget)
{
	/* Pairs with the release in spin_unlock(). */
	for (u64 polls = 0; spin_owner_ticket(smp_load_acquire(&lock->owner)) != ticket; polls++) {
		if (polls >= budget)
			return false;
		cpu_relax();
	}
	return true;
}

static bool spin_wait_backoff(spinlock_t *lock, u32 ticket, u64 budget)
{
	/* Preemption is off (spin_lock disabled it), so this CPU's table stays ours. */
	unsigned index = spin_delay_index(lock);
	u16 *slot = &this_cpu(spin_delay)[index];
	u16 *peak = &this_cpu(spin_delay_peak)[index];
	unsigned delay = spin_delay_get(slot);
	bool acquired;

	for (u64 spent = 0;;) {
		u32 owner = spin_owner_ticket(READ_ONCE(lock->owner));
		/* Waiters ahead of us, each expected to hold the lock about `delay` loops. */
		u32 ahead = (ticket - owner) / SPIN_TICKET_INC;
		u32 loops = delay * ahead;
		for (u32 i = loops; i; i--)
			cpu_relax();
		spent += loops + 1;

		/* Pairs with the release in spin_unlock(). */
		owner = spin_owner_ticket(smp_load_acquire(&lock->owner));
		acquired = owner == ticket;
		delay = spin_delay_next(delay, acquired, owner / SPIN_TICKET_INC);
		if (acquired || spent >= budget)
			break;
		if (delay > *peak)
			*peak = delay;
	}
	*slot = delay;
	if (delay > *peak)
		*peak = delay;
	return acquired;
}

/*
 * Held: clear SPIN_OWNER_HALTED unless a ticket is out behind ours, whose waiter
 * may be halted and needs the bit for our unlock to kick it. A waiter that draws
 * its ticket after we look sets the bit itself after we clear it (its ticket,
 * then its bit, fully ordered; we clear, then look).
 */
void spin_owner_clear_halted(spinlock_t *lock)
{
	if (!(READ_ONCE(lock->owner) & SPIN_OWNER_HALTED))
		return;
	u32 owner = spin_owner_ticket(fetch_and(&lock->owner, ~SPIN_OWNER_HALTED));
	if (READ_ONCE(lock->next) != owner + SPIN_TICKET_INC)
		fetch_or(&lock->owner, SPIN_OWNER_HALTED);
}

void spin_lock_wait(spinlock_t *lock, u32 ticket)
{
	bool plain = !READ_ONCE(spinlock_backoff) || READ_ONCE(lock->plain);

	count_watched(lock, plain);
	for (;;) {
		/* Under paravirtual waits: spin a bounded time, then halt until kicked. */
		u64 budget = READ_ONCE(spinlock_pv) ? SPIN_PV_THRESHOLD : SPIN_UNBOUNDED;
		if ((plain ? spin_wait_plain(lock, ticket, budget)
			   : spin_wait_backoff(lock, ticket, budget)) ||
		    spin_pv_wait(lock, ticket))
			break;
	}
	/* A waiter before us, or we, may have halted and left the bit. */
	spin_owner_clear_halted(lock);
}
