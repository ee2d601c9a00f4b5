/* race_run(): the two sides of a race on purpose (race_test_util.h). */
#include <grace/atomic.h>
#include <grace/cpumask.h>
#include <grace/percpu.h>
#include <grace/race_point.h>
#include <grace/smp.h>
#include <grace/test.h>
#include <asm/cpu.h>

#include "race_test_util.h"

struct race_run {
	struct race *r;
	atomic_t sides;	      /* the first side to start is the racer */
	struct race_arm *arm; /* published by the racer once armed */
	bool armed;	      /* the racer has tried to arm (arm may be NULL) */
	bool racer_done;      /* the racer's operation has returned */
	bool parked;
};

static void race_side(void *arg)
{
	struct race_run *run = arg;

	if (atomic_inc_return(&run->sides) == 1) {
		run->arm = race_point_arm(run->r->point, smp_processor_id(), run->r->key);
		smp_store_release(&run->armed, true);
		if (!run->arm)
			return;
		run->r->racer(run->r->arg);
		smp_store_release(&run->racer_done, true);
		return;
	}
	while (!smp_load_acquire(&run->armed))
		cpu_relax();
	if (!run->arm)
		return;
	run->parked = race_point_wait(run->arm, &run->racer_done);
	if (run->parked)
		run->r->change(run->r->arg);
	race_point_release(run->arm);
}

bool race_cpus_available(void)
{
	struct cpumask pair;

	if (smp_pick_cpus(2, &pair) >= 2)
		return true;
	test_skip("a race needs two CPUs");
	return false;
}

bool race_run(struct race *r)
{
	struct race_run run = {.r = r, .sides = ATOMIC_INIT(0)};

	if (!race_cpus_available())
		return false;
	smp_run_on(2, race_side, &run);
	if (!run.arm)
		return test_fail(__FILE__, __LINE__, "race point '%s' could not be armed",
				 r->point);
	if (!run.parked)
		return test_fail(__FILE__, __LINE__, "the racer never parked at race point '%s'",
				 r->point);
	return true;
}
