/*
 * Completions: "this happened" for one or many waiters. complete() lets one
 * waiter through (or the next to arrive), complete_all() every present and
 * future one. Any context may complete; only threads wait.
 */
#ifndef GRACE_COMPLETION_H
#define GRACE_COMPLETION_H

#include <grace/wait.h>

#define COMPLETION_ALL 0x7fffffffu

struct completion {
	u32 done; /* completions not yet consumed; COMPLETION_ALL after complete_all() */
	struct wait_queue_head wq; /* its lock also protects done */
};

/* clang-format off */
#define COMPLETION_INIT(name) { 0, WAIT_QUEUE_HEAD_INIT((name).wq) }
/* clang-format on */

void completion_init(struct completion *c);
void complete(struct completion *c);
void complete_all(struct completion *c);
void wait_for_completion(struct completion *c);
/* false if timeout_ns passed first. */
bool wait_for_completion_timeout(struct completion *c, u64 timeout_ns);
/* Ready for reuse (only when nobody waits on it). */
void reinit_completion(struct completion *c);

#endif
