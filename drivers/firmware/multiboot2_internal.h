/* Shared inside drivers/firmware: unaligned reads and the per-tag parsers. */
#ifndef MULTIBOOT2_INTERNAL_H
#define MULTIBOOT2_INTERNAL_H

#include <grace/multiboot2.h>
#include <grace/string.h>

static inline u32 mb2_get_u32(const u8 *p)
{
	u32 v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline u64 mb2_get_u64(const u8 *p)
{
	u64 v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* Tag 17 of size bytes (header included) into out->efi_mmap; 0 or -EINVAL. */
int mb2_parse_efi_mmap(const u8 *tag, u32 size, struct mb2_info *out);

#endif
