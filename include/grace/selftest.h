/* The selftest runner: runs the TEST()s whose suite.name matches a glob, printing KTAP. */
#ifndef GRACE_SELFTEST_H
#define GRACE_SELFTEST_H

#include <grace/types.h>

/* Comma-separated globs; returns the number of failed tests. Ends with "tests: done". */
int selftest_run(const char *globs);

/*
 * Whether the test now running announced (test_expect_message()) a text that
 * message contains: printk marks such an error line "expected: ". Any context.
 */
bool selftest_expects(const char *message);

#endif
