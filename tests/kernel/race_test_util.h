/*
 * Running a race on purpose (grace/race_point.h): of two CPUs, the racer runs on
 * one and parks at a race point inside its lockless window; the change runs on
 * the other meanwhile (a rename, an unlink, an unmap, a close); then the racer
 * goes on, and must notice the change through the recheck under test.
 *
 *   struct race r = {.point = "namei.step_rcu", .key = dir, .racer = walk,
 *                    .change = move, .arg = &ctx};
 *   if (!race_run(&r))
 *           return;        skipped on one CPU, or failed: the racer never parked
 *
 * Both sides run in threads bound to their CPUs, with interrupts on (this CPU's
 * and one other's, from smp_run_on; whichever starts first is the racer). The
 * racer arms the point for its own CPU before it starts, so the change never
 * misses it.
 * The change must not wait for a grace period (the racer may park inside an RCU
 * read side): free through call_rcu, and wait after race_run returns.
 */
#ifndef TESTS_RACE_TEST_UTIL_H
#define TESTS_RACE_TEST_UTIL_H

#include <grace/types.h>

struct race {
	const char *point; /* the race point the racer parks at */
	const void *key;   /* park only where the point is reached with this key; NULL: any */
	void (*racer)(void *arg);  /* the operation holding the window */
	void (*change)(void *arg); /* on the other CPU, while the racer is parked */
	void *arg;
};

/*
 * Run r once. False if the machine has one CPU (the test is marked skipped) or if
 * the racer ended without parking (a failure is recorded): either way the test has
 * no race to judge. True once the racer parked, the change ran and the racer ended.
 */
bool race_run(struct race *r);
/* False, with the test marked skipped, on one CPU: for a test that sets up at length first. */
bool race_cpus_available(void);

#endif
