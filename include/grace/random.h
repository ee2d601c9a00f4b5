/*
 * Random bytes for user programs (getrandom, AT_RANDOM): a 64-bit mixer
 * (SplitMix64's finaliser) over a counter and the monotonic clock read at each
 * call, so that no two calls, boots or CPUs give the same stream. Not a
 * cryptographic generator: the clock's low bits are its only entropy.
 */
#ifndef GRACE_RANDOM_H
#define GRACE_RANDOM_H

#include <grace/types.h>

void get_random_bytes(void *buf, size_t n);

#endif
