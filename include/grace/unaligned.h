/*
 * Numbers at any alignment in firmware tables and blobs (ACPI tables, multiboot2
 * tags): read through memcpy, which the compiler turns into whatever loads the
 * arch allows. Both arches are little-endian, as these formats are.
 */
#ifndef GRACE_UNALIGNED_H
#define GRACE_UNALIGNED_H

#include <grace/string.h>
#include <grace/types.h>

static inline u16 get_unaligned_u16(const void *p)
{
	u16 v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline u32 get_unaligned_u32(const void *p)
{
	u32 v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline u64 get_unaligned_u64(const void *p)
{
	u64 v;
	memcpy(&v, p, sizeof(v));
	return v;
}

#endif
