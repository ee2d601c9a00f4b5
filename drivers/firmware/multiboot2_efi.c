/*
 * The EFI memory map as multiboot2 tag 17 carries it: a u32 descriptor size and a
 * u32 descriptor version after the tag header, then EFI_MEMORY_DESCRIPTORs (UEFI
 * 2.x, 7.2 GetMemoryMap()): u32 type, u32 padding, u64 physical start, u64 virtual
 * start, u64 number of 4 KiB pages, u64 attributes. A firmware may make descriptors
 * larger than the 40 bytes it knows, so they are walked by the size the tag gives,
 * and a tag that does not hold a whole number of them is refused.
 *
 * GRUB takes the map when it calls ExitBootServices(), so boot services memory and
 * the loader's own memory are free for the kernel from then on: they are available
 * RAM here, as GRUB's BIOS-style map calls them too. Runtime services memory stays
 * the firmware's (UEFI calls it at those addresses), as does anything of a type this
 * code does not know.
 */
#include <grace/errno.h>
#include <grace/printk.h>
#include "multiboot2_internal.h"

#define EFI_MMAP_HEADER 16 /* tag header, descriptor size, descriptor version */
#define EFI_DESC_MIN 40	   /* the UEFI 2.x EFI_MEMORY_DESCRIPTOR */
#define EFI_DESC_VERSION 1 /* EFI_MEMORY_DESCRIPTOR_VERSION */
#define EFI_PAGE_SHIFT 12  /* NumberOfPages counts 4 KiB pages whatever the CPU's */
#define EFI_DESC_TYPE 0
#define EFI_DESC_PHYS 8
#define EFI_DESC_PAGES 24
#define EFI_DESC_ATTR 32
#define EFI_MEMORY_SP (1ull << 18) /* "specific purpose": set aside for one use, not ours */

/* EFI_MEMORY_TYPE */
enum {
	EFI_RESERVED = 0,
	EFI_LOADER_CODE = 1,
	EFI_LOADER_DATA = 2,
	EFI_BOOT_SERVICES_CODE = 3,
	EFI_BOOT_SERVICES_DATA = 4,
	EFI_RUNTIME_SERVICES_CODE = 5,
	EFI_RUNTIME_SERVICES_DATA = 6,
	EFI_CONVENTIONAL = 7,
	EFI_UNUSABLE = 8,
	EFI_ACPI_RECLAIM = 9,
	EFI_ACPI_NVS = 10,
};

static u32 efi_to_mb2_type(u32 efi_type, u64 attr)
{
	switch (efi_type) {
	case EFI_LOADER_CODE:
	case EFI_LOADER_DATA:
	case EFI_BOOT_SERVICES_CODE:
	case EFI_BOOT_SERVICES_DATA:
	case EFI_CONVENTIONAL:
		return attr & EFI_MEMORY_SP ? MB2_MEM_RESERVED : MB2_MEM_AVAILABLE;
	case EFI_UNUSABLE:
		return MB2_MEM_BADRAM;
	case EFI_ACPI_RECLAIM:
		return MB2_MEM_ACPI_RECLAIMABLE;
	case EFI_ACPI_NVS:
		return MB2_MEM_NVS;
	default: /* reserved, runtime services, MMIO, persistent memory, newer types */
		return MB2_MEM_RESERVED;
	}
}

static void efi_mmap_add(struct mb2_info *out, u64 base, u64 len, u32 type)
{
	/* Firmware lists descriptors in address order: most merge into the previous one. */
	if (out->nr_efi_mmap) {
		struct mb2_mmap_entry *last = &out->efi_mmap[out->nr_efi_mmap - 1];
		if (last->type == type && last->base + last->length == base) {
			last->length += len;
			return;
		}
	}
	if (out->nr_efi_mmap == MB2_MAX_MMAP) {
		out->nr_efi_mmap_dropped++;
		return;
	}
	out->efi_mmap[out->nr_efi_mmap++] = (struct mb2_mmap_entry){base, len, type};
}

int mb2_parse_efi_mmap(const u8 *tag, u32 size, struct mb2_info *out)
{
	if (size < EFI_MMAP_HEADER) {
		pr_err("multiboot2: EFI memory map tag of %u bytes is too short\n", size);
		return -EINVAL;
	}
	u32 desc_size = get_unaligned_u32(tag + 8), version = get_unaligned_u32(tag + 12);
	if (desc_size < EFI_DESC_MIN || desc_size % 8) {
		pr_err("multiboot2: EFI memory descriptor size %u is invalid\n", desc_size);
		return -EINVAL;
	}
	if (version != EFI_DESC_VERSION) {
		pr_err("multiboot2: EFI memory descriptor version %u is not %u\n", version,
		       EFI_DESC_VERSION);
		return -EINVAL;
	}
	if ((size - EFI_MMAP_HEADER) % desc_size) {
		pr_err("multiboot2: EFI memory map of %u bytes ends inside a %u-byte descriptor\n",
		       size - EFI_MMAP_HEADER, desc_size);
		return -EINVAL;
	}
	out->nr_efi_mmap = out->nr_efi_mmap_dropped = 0;
	for (u32 off = EFI_MMAP_HEADER; off < size; off += desc_size) {
		const u8 *d = tag + off;
		u64 base = get_unaligned_u64(d + EFI_DESC_PHYS),
		    pages = get_unaligned_u64(d + EFI_DESC_PAGES);
		if (pages == 0)
			continue;
		u64 len = pages << EFI_PAGE_SHIFT;
		if (base % (1u << EFI_PAGE_SHIFT) || pages >> (64 - EFI_PAGE_SHIFT) ||
		    base + len < base) {
			pr_err("multiboot2: EFI memory descriptor %llx + %llx pages is malformed\n",
			       (unsigned long long)base, (unsigned long long)pages);
			return -EINVAL;
		}
		efi_mmap_add(out, base, len,
			     efi_to_mb2_type(get_unaligned_u32(d + EFI_DESC_TYPE),
					     get_unaligned_u64(d + EFI_DESC_ATTR)));
	}
	return 0;
}
