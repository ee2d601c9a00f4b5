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
#define COMPLETION_INIT_NAMED(var, name) { 0, WAIT_QUEUE_HEAD_INIT_NAMED((var).wq, name) }
/* clang-format on */
#define COMPLETION_INIT(name) COMPLETION_INIT_NAMED(name, #name)
/* Its lock's class is named by c and keyed by the call site (LOCKDEP, LOCKSTAT builds). */
#ifdef GRACE_LOCK_CLASSES
#define completion_init(c)                                                                         \
	do {                                                                                       \
		struct completion *__c = (c);                                                      \
		*__c = (struct completion)COMPLETION_INIT_NAMED(*__c, #c);                         \
	} while (0)
#else
void completion_init(struct completion *c);
#endif

void complete(struct completion *c);
void complete_all(struct completion *c);
void wait_for_completion(struct completion *c);
/* false if timeout_ns passed first. */
bool wait_for_completion_timeout(struct completion *c, u64 timeout_ns);
/* Ready for reuse (only when nobody waits on it). */
void reinit_completion(struct completion *c);

#endif
