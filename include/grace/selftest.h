/* The selftest runner: runs the TEST()s whose suite.name matches a glob, printing KTAP. */
#ifndef GRACE_SELFTEST_H
#define GRACE_SELFTEST_H

/* Comma-separated globs; returns the number of failed tests. Ends with "tests: done". */
int selftest_run(const char *globs);

#endif
