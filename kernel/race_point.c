/*
 * Race points (grace/race_point.h): arming, parking and releasing. Compiled only
 * into the test image; the production kernel has neither the points nor this.
 *
 * An arm is one of a few static slots, never freed: a CPU that read a point's arm
 * pointer just before the point was disarmed may still look at the slot, so a slot
 * must stay memory it can read, and that CPU checks the name before it parks.
 */
#include <grace/printk.h>
#include <grace/race_point.h>
#include <grace/percpu.h>
#include <grace/string.h>
#include <grace/time.h>
#include <asm/cpu.h>

#ifdef GRACE_RACE_POINTS

enum race_arm_state {
	RACE_FREE,     /* slot unused */
	RACE_CLAIMED,  /* being filled in by race_point_arm() */
	RACE_ARMED,    /* waiting for its CPU to reach a point */
	RACE_PARKED,   /* its CPU spins at the point */
	RACE_RELEASED, /* its CPU may go on */
	RACE_LEFT,     /* its CPU has gone on (or none will park): the slot may be freed */
};

struct race_arm {
	const char *name;
	unsigned cpu;
	const void *key; /* NULL: any */
	int state;	 /* enum race_arm_state */
	struct race_point *parked_at;
};

/* A test arms one point at a time, or two; the rest are spare. */
#define RACE_ARMS 4

static struct race_arm race_arms[RACE_ARMS];
extern struct race_point __race_points_start[], __race_points_end[];

/* Point every race point called name at arm (NULL disarms); returns how many. */
static unsigned race_points_set(const char *name, struct race_arm *arm)
{
	unsigned n = 0;
	for (struct race_point *rp = __race_points_start; rp < __race_points_end; rp++) {
		if (strcmp(rp->name, name))
			continue;
		/* The arm filled in before a CPU can follow the pointer to it. */
		smp_store_release(&rp->arm, arm);
		n++;
	}
	return n;
}

struct race_arm *race_point_arm(const char *name, unsigned cpu, const void *key)
{
	for (unsigned i = 0; i < RACE_ARMS; i++) {
		struct race_arm *arm = &race_arms[i];
		if (cmpxchg(&arm->state, RACE_FREE, RACE_CLAIMED) != RACE_FREE)
			continue;
		arm->name = name;
		arm->cpu = cpu;
		arm->key = key;
		arm->parked_at = NULL;
		smp_store_release(&arm->state, RACE_ARMED);
		if (race_points_set(name, arm))
			return arm;
		pr_err("race point '%s': there is no such point\n", name);
		smp_store_release(&arm->state, RACE_FREE);
		return NULL;
	}
	pr_err("race point '%s': all %d arms are in use\n", name, RACE_ARMS);
	return NULL;
}

void __race_point_reached(struct race_point *rp, struct race_arm *arm, const void *key)
{
	int armed = RACE_ARMED;

	/*
	 * arm was read through rp->arm, which may be stale by now: released, and the
	 * slot armed again for another point. Park only for the arm rp still has.
	 */
	if (READ_ONCE(rp->arm) != arm || arm->cpu != smp_processor_id() ||
	    (arm->key && arm->key != key) || strcmp(arm->name, rp->name))
		return;
	if (!try_cmpxchg(&arm->state, &armed, RACE_PARKED))
		return;
	WRITE_ONCE(arm->parked_at, rp);

	u64 deadline = arch_clock_ns() + RACE_PARK_TIMEOUT_NS;
	while (smp_load_acquire(&arm->state) == RACE_PARKED) {
		if (arch_clock_ns() > deadline) {
			int parked = RACE_PARKED;
			if (try_cmpxchg(&arm->state, &parked, RACE_LEFT)) {
				pr_err("race point '%s' (%s:%d): CPU %u not released after %llu s, "
				       "going on\n",
				       rp->name, rp->file, rp->line, arm->cpu,
				       RACE_PARK_TIMEOUT_NS / NSEC_PER_SEC);
				return;
			}
		}
		cpu_relax();
	}
	/* Everything the releasing CPU did before its release is seen after the point. */
	smp_store_release(&arm->state, RACE_LEFT);
}

bool race_point_wait(struct race_arm *arm, const bool *done)
{
	u64 deadline = arch_clock_ns() + RACE_PARK_TIMEOUT_NS;
	while (smp_load_acquire(&arm->state) == RACE_ARMED) {
		if (done && smp_load_acquire(done))
			break;
		if (arch_clock_ns() > deadline) {
			pr_err("race point '%s': CPU %u did not reach it within %llu s\n",
			       arm->name, arm->cpu, RACE_PARK_TIMEOUT_NS / NSEC_PER_SEC);
			return false;
		}
		cpu_relax();
	}
	return smp_load_acquire(&arm->state) == RACE_PARKED;
}

void race_point_release(struct race_arm *arm)
{
	int state = RACE_ARMED;

	race_points_set(arm->name, NULL);
	/* Nobody parked: a CPU that still finds the slot cannot park any more. */
	if (!try_cmpxchg(&arm->state, &state, RACE_LEFT) && state == RACE_PARKED)
		try_cmpxchg_release(&arm->state, &state, RACE_RELEASED);
	while (smp_load_acquire(&arm->state) != RACE_LEFT)
		cpu_relax();
	smp_store_release(&arm->state, RACE_FREE);
}

#endif
