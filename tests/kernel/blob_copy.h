/*
 * Helpers shared by the firmware-parser selftests (fdt, multiboot2, acpi): a
 * private copy of the blob the machine booted with, to damage and restore, and
 * unaligned writes to go with grace/unaligned.h's reads.
 */
#ifndef GRACE_TESTS_BLOB_COPY_H
#define GRACE_TESTS_BLOB_COPY_H

#include <grace/boot_info.h>
#include <grace/page_alloc.h>
#include <grace/string.h>
#include <grace/unaligned.h>
#include <grace/test.h>

struct blob_copy {
	u8 *buf;
	unsigned order;
	u32 size;
};

/* A fresh copy of boot_info.fw_blob in its own pages; false (a test failure) without memory. */
static inline bool blob_copy_get(struct blob_copy *c)
{
	c->size = boot_info.fw_blob_size;
	c->order = pages_order(c->size);
	c->buf = alloc_pages(c->order);
	if (!c->buf)
		return test_fail(__FILE__, __LINE__, "no memory for a %u-byte copy", c->size);
	memcpy(c->buf, boot_info.fw_blob, c->size);
	return true;
}

/* Undo the damage done to the copy. */
static inline void blob_copy_reset(struct blob_copy *c)
{
	memcpy(c->buf, boot_info.fw_blob, c->size);
}

static inline void blob_copy_put(struct blob_copy *c)
{
	free_pages(c->buf, c->order);
}

static inline void put_u32(u8 *p, u32 v)
{
	memcpy(p, &v, sizeof(v));
}

static inline void put_u64(u8 *p, u64 v)
{
	memcpy(p, &v, sizeof(v));
}

#endif
