/*
 * Failure injection for slab allocations, so that the error paths behind an
 * allocation are run on purpose instead of only when memory runs out (design §9).
 * Allocations from a cache created with SLAB_FAILSLAB, and kmalloc_failable() and
 * kzalloc_failable() (grace/slab.h), ask should_failslab() first and return NULL
 * when it says so, before they touch the cache: an injected failure leaks nothing
 * and changes no state.
 *
 * The probability is in parts per million (0: off, the default; 1000000: every
 * time), set at boot with failslab=<p> (a decimal in [0, 1], 0.01 for 1%) and at
 * the console with `failslab <p>`. Failures are injected only in thread context:
 * never in a hard interrupt handler, a softirq handler (softirqd, whose callers
 * cannot be told) or the idle thread, whose allocations have no caller to return
 * an error to. Each CPU draws from its own xorshift generator and counts its own
 * injected failures, so an allocation that is not failed writes no shared line.
 */
#ifndef GRACE_FAILSLAB_H
#define GRACE_FAILSLAB_H

#include <grace/types.h>

#define FAILSLAB_PPM_ALWAYS 1000000u /* parts per million: every allocation fails */

/* Should this allocation fail? Any context; false outside thread context. */
bool should_failslab(void);
/* Set the probability; values above FAILSLAB_PPM_ALWAYS mean always. */
void failslab_set_ppm(u32 ppm);
u32 failslab_get_ppm(void);
/* Failures injected since boot, all CPUs together. */
u64 failslab_injected(void);
/*
 * Parse a probability, a decimal in [0, 1] with at most six places ("0", "1",
 * "0.01", "0.000001", "1.0"), into parts per million: 0, or -EINVAL for anything
 * else (nothing stored).
 */
int failslab_parse(const char *s, u32 *ppm);
/* At boot, from slab_init(): failslab=<p> from the command line, if given. */
void failslab_init(void);

#endif
