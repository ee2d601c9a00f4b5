/*
 * Race points: a test holds one CPU inside a lockless window, so that the recheck
 * guarding that window is needed every time the test runs, not once in a million.
 *
 *   race_point("name")  in the mechanism, at the spot inside the window where a
 *                       concurrent change must be noticed (after the read that the
 *                       recheck validates, before the recheck).
 *   race_point_key("name", key)  the same, for a point reached many times in one
 *                       operation (each step of a path walk): an arm with a key
 *                       parks only where the point is reached with that key.
 *
 * A test, on one CPU, arms the point for another and drives that CPU into it
 * (tests/kernel/race_test_util.h runs the two sides):
 *
 *   struct race_arm *arm = race_point_arm("name", cpu, key);   key NULL: any;
 *                                                               NULL: no such point
 *   ... make cpu run the operation (smp_call, a bound thread) ...
 *   if (race_point_wait(arm, NULL)) {      cpu is parked at the point
 *           ... the conflicting change: rename, unlink, unmap, close ...
 *   }
 *   race_point_release(arm);          cpu goes on; the arm is free again
 *
 * The parked CPU spins with whatever it holds (an RCU read side, a reference) and
 * with interrupts as they were at the point: place points where interrupts are on,
 * so that the test's change can send IPIs. The change must not wait for a grace
 * period while the CPU parks in an RCU read side; free through call_rcu instead.
 * A CPU not released within RACE_PARK_TIMEOUT_NS reports it and goes on, so a
 * broken test fails instead of hanging.
 *
 * Only the test image has race points: files that include this header are
 * compiled a second time for it with GRACE_RACE_POINTS (the Makefile finds them),
 * and in the production kernel race_point() is nothing. In the test image an
 * unarmed point is one load and one branch that is never taken.
 */
#ifndef GRACE_RACE_POINT_H
#define GRACE_RACE_POINT_H

#include <grace/atomic.h>
#include <grace/compiler.h>
#include <grace/types.h>

/*
 * Long enough for any change a test makes at SMP=64 on two host cores; shorter
 * than the RCU stall timeout (rcu_cpu_stall_timeout, 21 s by default), so that a
 * racer parked in a read side by a broken test reports itself before RCU does.
 */
#define RACE_PARK_TIMEOUT_NS (20ULL * 1000 * 1000 * 1000)

struct race_arm;

/* One place in the code; several places may share a name (arming arms them all). */
struct race_point {
	const char *name;
	const char *file;
	int line;
	struct race_arm *arm; /* set while armed: the only field the fast path reads */
};

#ifdef GRACE_RACE_POINTS

void __race_point_reached(struct race_point *rp, struct race_arm *arm, const void *key);

#define race_point_key(name_, key_)                                                                \
	do {                                                                                       \
		static struct race_point __rp __section(".race_points")                            \
		    __used __aligned(8) = {.name = (name_), .file = __FILE__, .line = __LINE__};   \
		struct race_arm *__arm = READ_ONCE(__rp.arm);                                      \
		if (unlikely(__arm))                                                               \
			__race_point_reached(&__rp, __arm, (key_));                                \
	} while (0)
#define race_point(name_) race_point_key(name_, NULL)

/*
 * Arm every point named name for cpu: the first time cpu reaches one (with key,
 * unless key is NULL) it parks there. NULL if there is no such point or no free arm.
 */
struct race_arm *race_point_arm(const char *name, unsigned cpu, const void *key);
/*
 * Wait until the armed CPU parks; false if it did not within RACE_PARK_TIMEOUT_NS
 * or *done (when not NULL) became true first: the operation ended without parking.
 */
bool race_point_wait(struct race_arm *arm, const bool *done);
/* Let the parked CPU go (or disarm if none parked) and wait until it has left the point. */
void race_point_release(struct race_arm *arm);

#else

#define race_point_key(name_, key_)                                                                \
	do {                                                                                       \
	} while (0)
#define race_point(name_) race_point_key(name_, NULL)

#endif

#endif
