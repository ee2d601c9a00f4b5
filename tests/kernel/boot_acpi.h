/*
 * For selftests that compare the machine with its ACPI tables: the tables the
 * machine booted with (through the RSDP in its multiboot2 block), parsed afresh.
 */
#ifndef GRACE_TESTS_BOOT_ACPI_H
#define GRACE_TESTS_BOOT_ACPI_H

#include <grace/acpi.h>
#include <grace/boot_info.h>
#include <grace/multiboot2.h>
#include <grace/test.h>
#include <asm/memory.h>

#include "blob_copy.h"

/* Map for the boot tables: anything the memory map calls RAM or firmware memory. */
static inline const void *boot_acpi_map(void *mb2, u64 pa, u64 len)
{
	if (!mb2_range_in_mmap(mb2, pa, len, MB2_TYPES_FIRMWARE))
		return NULL;
	return phys_to_virt(pa);
}

/*
 * Parse the boot tables into *acpi (mb2 is the parsed block the tables' map checks
 * against; both large, so the caller's statics). False after a skip (no multiboot2 or
 * no ACPI: riscv64) or a failure (tables that no longer parse).
 */
static inline bool boot_acpi_parse(struct mb2_info *mb2, struct acpi_info *acpi)
{
	const u8 *b = boot_info.fw_blob;
	if (!b || boot_info.fw_blob_size < 16 || get_unaligned_u32(b) != boot_info.fw_blob_size ||
	    mb2_parse(b, boot_info.fw_blob_size, mb2) || !(mb2->rsdp_v1 || mb2->rsdp_v2)) {
		test_skip("the machine did not boot through multiboot2 with ACPI");
		return false;
	}
	const void *rsdp = mb2->rsdp_v2 ? mb2->rsdp_v2 : mb2->rsdp_v1;
	size_t len = mb2->rsdp_v2 ? mb2->rsdp_v2_len : mb2->rsdp_v1_len;
	return acpi_parse(rsdp, len, boot_acpi_map, mb2, acpi) == 0 ||
	       test_fail(__FILE__, __LINE__, "the boot ACPI tables no longer parse");
}

#endif
