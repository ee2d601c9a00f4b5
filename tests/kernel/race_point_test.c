/*
 * Race points themselves (grace/race_point.h, race_test_util.h): the racer parks
 * at the point until the change has run, an arm with a key parks only at that key,
 * and arming a point that does not exist is refused.
 */
#include <grace/atomic.h>
#include <grace/race_point.h>
#include <grace/test.h>

#include "race_test_util.h"

struct race_probe {
	int value; /* written by the change */
	int step;  /* the racer's progress */
	int seen;  /* value, as the racer read it after the point */
	int step_at_change;
};

static void probe_racer(void *arg)
{
	struct race_probe *p = arg;

	WRITE_ONCE(p->step, 1);
	race_point_key("race_point.probe", &p->step);
	WRITE_ONCE(p->step, 2);
	race_point_key("race_point.probe", &p->seen);
	WRITE_ONCE(p->step, 3);
	p->seen = READ_ONCE(p->value);
}

static void probe_change(void *arg)
{
	struct race_probe *p = arg;

	p->step_at_change = READ_ONCE(p->step);
	WRITE_ONCE(p->value, 42);
}

TEST(race_point, parks_until_released)
{
	struct race_probe p = {0};
	struct race r = {
	    .point = "race_point.probe", .racer = probe_racer, .change = probe_change, .arg = &p};

	if (!race_run(&r))
		return;
	/* Parked at the first point reached, and saw the change after it. */
	EXPECT_EQ(p.step_at_change, 1);
	EXPECT_EQ(p.step, 3);
	EXPECT_EQ(p.seen, 42);
}

TEST(race_point, key_selects_the_place)
{
	struct race_probe p = {0};
	struct race r = {.point = "race_point.probe",
			 .key = &p.seen,
			 .racer = probe_racer,
			 .change = probe_change,
			 .arg = &p};

	if (!race_run(&r))
		return;
	EXPECT_EQ(p.step_at_change, 2);
	EXPECT_EQ(p.seen, 42);
}

TEST(race_point, unknown_point_refused)
{
	test_expect_message("race point 'race_point.no_such_point': there is no such point");
	EXPECT_TRUE(race_point_arm("race_point.no_such_point", 0, NULL) == NULL);
}
