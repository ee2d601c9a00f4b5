/*
 * Page allocation. Until the memory issue brings the buddy allocator, an early
 * allocator hands out pages from boot_info's RAM minus the reserved ranges and the
 * kernel image. Addresses returned are direct-map virtual addresses.
 */
#ifndef GRACE_MM_H
#define GRACE_MM_H

#include <grace/types.h>
#include <asm/memory.h>

/* 2^order contiguous, zeroed pages, aligned to their size; NULL when out of memory. */
void *alloc_pages(unsigned order);
void free_pages(void *addr, unsigned order);
void mm_early_init(void);
u64 mm_free_bytes(void);

#endif
