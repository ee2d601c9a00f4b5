/*
 * Multiboot2 boot information parser (see include/grace/multiboot2.h). The layout:
 * a u32 total_size and a reserved u32, then tags, each starting 8-aligned with a
 * u32 type and a u32 size (header included), until the end tag (type 0, size 8).
 * Every offset and size is checked against min(total_size, buffer size) before
 * the bytes behind it are read; unknown tags are skipped. The EFI memory map tag
 * has its own file, multiboot2_efi.c.
 */
#include <grace/errno.h>
#include <grace/multiboot2.h>
#include <grace/printk.h>
#include <grace/string.h>
#include "multiboot2_internal.h"

#define MB2_FIXED_HEADER 8 /* total_size, reserved */
#define MB2_TAG_HEADER 8   /* type, size */
#define MB2_TAG_ALIGN 8

enum {
	MB2_TAG_END = 0,
	MB2_TAG_CMDLINE = 1,
	MB2_TAG_LOADER_NAME = 2,
	MB2_TAG_MODULE = 3,
	MB2_TAG_BASIC_MEMINFO = 4,
	MB2_TAG_MMAP = 6,
	MB2_TAG_ACPI_OLD = 14,
	MB2_TAG_ACPI_NEW = 15,
	MB2_TAG_EFI_MMAP = 17,
};

#define MB2_MMAP_HEADER 16    /* tag header, entry_size, entry_version */
#define MB2_MMAP_ENTRY_MIN 24 /* base, length, type, reserved */
#define MB2_MODULE_HEADER 16  /* tag header, mod_start, mod_end */
#define MB2_MEMINFO_SIZE 16
#define ACPI_RSDP_V1_LEN 20 /* the ACPI 1.0 RSDP */
#define ACPI_RSDP_V2_LEN 36 /* ACPI 2.0+: adds length, XSDT address, extended checksum */

/* A NUL-terminated string filling part of [p, p + len), or NULL. */
static const char *tag_string(const u8 *p, u32 len)
{
	if (len == 0 || strnlen((const char *)p, len) == len)
		return NULL;
	return (const char *)p;
}

static int mb2_parse_mmap(const u8 *tag, u32 size, struct mb2_info *out)
{
	if (size < MB2_MMAP_HEADER) {
		pr_err("multiboot2: memory map tag of %u bytes is too short\n", size);
		return -EINVAL;
	}
	u32 entry_size = get_unaligned_u32(tag + 8);
	if (entry_size < MB2_MMAP_ENTRY_MIN || entry_size % 8) {
		pr_err("multiboot2: memory map entry size %u is invalid\n", entry_size);
		return -EINVAL;
	}
	for (u32 off = MB2_MMAP_HEADER; off + entry_size <= size; off += entry_size) {
		const u8 *e = tag + off;
		u64 base = get_unaligned_u64(e), len = get_unaligned_u64(e + 8);
		if (len == 0)
			continue;
		if (base + len < base) {
			pr_err("multiboot2: memory map entry %llx+%llx wraps around\n",
			       (unsigned long long)base, (unsigned long long)len);
			return -EINVAL;
		}
		if (out->nr_mmap == MB2_MAX_MMAP) {
			out->nr_mmap_dropped++;
			continue;
		}
		out->mmap[out->nr_mmap++] =
		    (struct mb2_mmap_entry){base, len, get_unaligned_u32(e + 16)};
	}
	return 0;
}

static int mb2_parse_module(const u8 *tag, u32 size, struct mb2_info *out)
{
	if (size < MB2_MODULE_HEADER + 1) {
		pr_err("multiboot2: module tag of %u bytes is too short\n", size);
		return -EINVAL;
	}
	u32 start = get_unaligned_u32(tag + 8), end = get_unaligned_u32(tag + 12);
	const char *s = tag_string(tag + MB2_MODULE_HEADER, size - MB2_MODULE_HEADER);
	if (end < start || !s) {
		pr_err("multiboot2: module [%x, %x) is malformed\n", start, end);
		return -EINVAL;
	}
	if (out->nr_modules == MB2_MAX_MODULES) {
		out->nr_modules_dropped++;
		return 0;
	}
	out->modules[out->nr_modules++] = (struct mb2_module){start, end, s};
	return 0;
}

static int mb2_parse_tag(u32 type, const u8 *tag, u32 size, struct mb2_info *out)
{
	const u8 *body = tag + MB2_TAG_HEADER;
	u32 body_len = size - MB2_TAG_HEADER;

	switch (type) {
	case MB2_TAG_CMDLINE:
	case MB2_TAG_LOADER_NAME: {
		const char *s = tag_string(body, body_len);
		if (!s) {
			pr_err("multiboot2: tag %u holds an unterminated string\n", type);
			return -EINVAL;
		}
		if (type == MB2_TAG_CMDLINE)
			out->cmdline = s;
		else
			out->loader_name = s;
		return 0;
	}
	case MB2_TAG_MODULE:
		return mb2_parse_module(tag, size, out);
	case MB2_TAG_BASIC_MEMINFO:
		if (size < MB2_MEMINFO_SIZE) {
			pr_err("multiboot2: basic meminfo tag of %u bytes is too short\n", size);
			return -EINVAL;
		}
		out->mem_lower_kib = get_unaligned_u32(body);
		out->mem_upper_kib = get_unaligned_u32(body + 4);
		return 0;
	case MB2_TAG_MMAP:
		return mb2_parse_mmap(tag, size, out);
	case MB2_TAG_EFI_MMAP:
		return mb2_parse_efi_mmap(tag, size, out);
	case MB2_TAG_ACPI_OLD:
	case MB2_TAG_ACPI_NEW: {
		u32 need = type == MB2_TAG_ACPI_OLD ? ACPI_RSDP_V1_LEN : ACPI_RSDP_V2_LEN;
		if (body_len < need) {
			pr_err("multiboot2: ACPI RSDP tag %u holds %u bytes, needs %u\n", type,
			       body_len, need);
			return -EINVAL;
		}
		if (type == MB2_TAG_ACPI_OLD) {
			out->rsdp_v1 = body;
			out->rsdp_v1_len = body_len;
		} else {
			out->rsdp_v2 = body;
			out->rsdp_v2_len = body_len;
		}
		return 0;
	}
	default:
		return 0; /* framebuffer, ELF sections, EFI, ...: not ours */
	}
}

int mb2_parse(const void *blob, size_t size, struct mb2_info *out)
{
	const u8 *p = blob;

	memset(out, 0, sizeof(*out));
	out->cmdline = "";
	if (!blob || size < MB2_FIXED_HEADER + MB2_TAG_HEADER) {
		pr_err("multiboot2: info of %zu bytes is too short\n", size);
		return -EINVAL;
	}
	u32 total = get_unaligned_u32(p);
	if (total < MB2_FIXED_HEADER + MB2_TAG_HEADER || total > size ||
	    total > MB2_INFO_MAX_SIZE) {
		pr_err("multiboot2: total_size %u is invalid (buffer holds %zu bytes)\n", total,
		       size);
		return -EINVAL;
	}
	out->total_size = total;

	u32 off = MB2_FIXED_HEADER;
	for (;;) {
		if (off > total - MB2_TAG_HEADER) {
			pr_err("multiboot2: no end tag within %u bytes\n", total);
			return -EINVAL;
		}
		u32 type = get_unaligned_u32(p + off), tag_size = get_unaligned_u32(p + off + 4);
		if (tag_size < MB2_TAG_HEADER || tag_size > total - off) {
			pr_err("multiboot2: tag %u at offset %u has size %u, past the end (%u)\n",
			       type, off, tag_size, total);
			return -EINVAL;
		}
		if (type == MB2_TAG_END)
			break;
		int err = mb2_parse_tag(type, p + off, tag_size, out);
		if (err)
			return err;
		off += ALIGN_UP(tag_size, MB2_TAG_ALIGN);
	}
	/* Without a BIOS-style map (loaders give it whenever they can), the EFI one. */
	if (out->nr_mmap == 0 && out->nr_efi_mmap) {
		memcpy(out->mmap, out->efi_mmap, sizeof(out->mmap));
		out->nr_mmap = out->nr_efi_mmap;
		out->nr_mmap_dropped = out->nr_efi_mmap_dropped;
		out->mmap_from_efi = true;
	}
	if (out->nr_mmap == 0) {
		pr_err("multiboot2: no memory map\n");
		return -EINVAL;
	}
	if (out->nr_mmap_dropped)
		pr_warn("multiboot2: memory map has %u more entries than the %u kept\n",
			out->nr_mmap_dropped, MB2_MAX_MMAP);
	if (out->nr_modules_dropped)
		pr_warn("multiboot2: %u modules past the first %u ignored\n",
			out->nr_modules_dropped, MB2_MAX_MODULES);
	return 0;
}

u64 mb2_available_bytes(const struct mb2_info *info)
{
	u64 sum = 0;
	for (unsigned i = 0; i < info->nr_mmap; i++)
		if (info->mmap[i].type == MB2_MEM_AVAILABLE)
			sum += info->mmap[i].length;
	return sum;
}

bool mb2_range_in_mmap(const struct mb2_info *info, u64 pa, u64 len, u32 type_mask)
{
	u64 end = pa + len;
	if (len == 0 || end < pa)
		return false;
	/* Walk forward through entries that cover the next uncovered byte (they may abut). */
	while (pa < end) {
		u64 next = pa;
		for (unsigned i = 0; i < info->nr_mmap; i++) {
			const struct mb2_mmap_entry *e = &info->mmap[i];
			if (e->type < 32 && (type_mask & (1u << e->type)) && e->base <= pa &&
			    pa - e->base < e->length)
				next = e->base + e->length;
		}
		if (next == pa)
			return false;
		pa = next;
	}
	return true;
}
