/*
 * The log ring read back, as dmesg reads it: for a reader inside the kernel that
 * wants what was printed since some point (the selftests of what commands print).
 */
#ifndef GRACE_PRINTK_INTERNAL_H
#define GRACE_PRINTK_INTERNAL_H

#include <grace/types.h>

/* The position of the next byte to be logged: bytes ever logged. */
size_t printk_log_head(void);

/*
 * Up to size bytes of the log from *pos on into buf, advancing *pos; the number
 * copied (0 once *pos is the head). A *pos the ring has overwritten moves up to
 * the oldest byte it still holds.
 */
size_t printk_log_read(size_t *pos, char *buf, size_t size);

#endif
