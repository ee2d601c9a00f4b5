/*
 * The multiboot2 boot information (what GRUB hands an x86 kernel in EBX), parsed
 * from a buffer of known size. Generic C: compiled on every arch so its selftests
 * build everywhere; only x86_64 boots with it.
 *
 * mb2_parse() validates the total size, every tag's size against the buffer, the
 * end tag, string termination and the memory map's entry size before it reads
 * anything, and returns -EINVAL (after a printk saying what is wrong) on bad data.
 * Pointers in struct mb2_info point into the caller's buffer.
 *
 * The memory map comes from the BIOS-style tag (6, E820 types) when the loader gives
 * one, else from the EFI memory map tag (17), whose descriptors are converted to the
 * same types: GRUB booted by UEFI passes both today, another loader may pass only
 * the EFI one.
 */
#ifndef GRACE_MULTIBOOT2_H
#define GRACE_MULTIBOOT2_H

#include <grace/types.h>

#define MB2_BOOTLOADER_MAGIC 0x36d76289 /* in EAX at entry */

/* Memory map entry types (the E820 types GRUB passes through). */
#define MB2_MEM_AVAILABLE 1
#define MB2_MEM_RESERVED 2
#define MB2_MEM_ACPI_RECLAIMABLE 3
#define MB2_MEM_NVS 4
#define MB2_MEM_BADRAM 5

#define MB2_MAX_MMAP 64
#define MB2_MAX_MODULES 8
#define MB2_INFO_MAX_SIZE (1u << 20) /* no sane boot loader passes more than 1 MiB */

struct mb2_mmap_entry {
	u64 base, length;
	u32 type;
};

struct mb2_module {
	u64 start, end;	    /* physical, [start, end) */
	const char *string; /* the module's command line */
};

struct mb2_info {
	u32 total_size;
	bool mmap_from_efi;	 /* no tag 6: mmap[] is the EFI memory map, converted */
	const char *cmdline;	 /* "" when the tag is absent */
	const char *loader_name; /* NULL when absent */
	struct mb2_mmap_entry mmap[MB2_MAX_MMAP];
	unsigned nr_mmap;
	unsigned nr_mmap_dropped; /* entries past MB2_MAX_MMAP */
	struct mb2_module modules[MB2_MAX_MODULES];
	unsigned nr_modules;
	unsigned nr_modules_dropped;
	/* ACPI RSDP copies: v2 (tag 15) when the firmware has ACPI 2.0+, else v1 (tag 14). */
	const void *rsdp_v1;
	u32 rsdp_v1_len;
	const void *rsdp_v2;
	u32 rsdp_v2_len;
	u32 mem_lower_kib, mem_upper_kib; /* basic meminfo, 0 when absent */
	/* The EFI memory map (tag 17), converted, adjacent ranges of one type merged. */
	struct mb2_mmap_entry efi_mmap[MB2_MAX_MMAP];
	unsigned nr_efi_mmap;	      /* 0: no tag 17, or an empty one */
	unsigned nr_efi_mmap_dropped; /* ranges past MB2_MAX_MMAP */
};

int mb2_parse(const void *blob, size_t size, struct mb2_info *out);

/*
 * True if every byte of [pa, pa + len) lies in memory map entries whose type is in
 * type_mask (bit 1 << type), e.g. RAM and ACPI areas when checking an ACPI table.
 */
bool mb2_range_in_mmap(const struct mb2_info *info, u64 pa, u64 len, u32 type_mask);
#define MB2_TYPES_FIRMWARE                                                                         \
	((1u << MB2_MEM_AVAILABLE) | (1u << MB2_MEM_RESERVED) | (1u << MB2_MEM_ACPI_RECLAIMABLE) | \
	 (1u << MB2_MEM_NVS))

/* Sum of the lengths of the available (type 1) entries. */
u64 mb2_available_bytes(const struct mb2_info *info);

#endif
