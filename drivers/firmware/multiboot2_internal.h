/* Shared inside drivers/firmware: unaligned reads and the per-tag parsers. */
#ifndef MULTIBOOT2_INTERNAL_H
#define MULTIBOOT2_INTERNAL_H

#include <grace/multiboot2.h>
#include <grace/string.h>
#include <grace/unaligned.h>

/* Tag 17 of size bytes (header included) into out->efi_mmap; 0 or -EINVAL. */
int mb2_parse_efi_mmap(const u8 *tag, u32 size, struct mb2_info *out);

#endif
