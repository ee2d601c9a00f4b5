/*
 * What the RCU selftests (rcu_guarantee_test.c, rcu_gp_test.c) share. Work is sized
 * by CPU count and every wait has a deadline: 64 vCPUs share two host cores, so a
 * grace period that needs an IPI to a spinning reader can take a good fraction of a
 * second there.
 */
#ifndef TESTS_RCU_TEST_UTIL_H
#define TESTS_RCU_TEST_UTIL_H

#include <grace/time.h>

#define RCU_TEST_TIMEOUT_NS (120 * NSEC_PER_SEC)

#endif
