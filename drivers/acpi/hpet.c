/*
 * The HPET table (IA-PC HPET specification 1.0a, 3.2.4): where the High Precision
 * Event Timer's registers are. After the header: u32 event timer block id (the
 * general capabilities register's low half), a Generic Address Structure for the
 * register block (u8 address space, u8 bit width, u8 bit offset, u8 access size,
 * u64 address), u8 HPET number, u16 minimum clock tick, u8 page protection.
 * Only the first HPET is kept: it is used for one thing, calibrating the TSC.
 *
 * Like the MCFG, a refinement: a bad table is refused and the PIT does the job.
 */
#include <grace/errno.h>
#include <grace/printk.h>
#include "acpi_internal.h"

#define HPET_TABLE_LEN 56
#define HPET_BLOCK_ID ACPI_HEADER_LEN
#define HPET_GAS (ACPI_HEADER_LEN + 4)
#define HPET_GAS_SPACE 0
#define HPET_GAS_ADDRESS 4
#define HPET_NUMBER (ACPI_HEADER_LEN + 16)
#define HPET_MIN_TICK (ACPI_HEADER_LEN + 17)
#define GAS_SYSTEM_MEMORY 0
#define HPET_REG_ALIGN 8 /* its registers are 64 bits wide */

int acpi_parse_hpet(const u8 *t, u32 len, struct acpi_info *out)
{
	out->hpet_addr = 0;
	if (len < HPET_TABLE_LEN) {
		pr_err("acpi: HPET table of %u bytes is too short (needs %u)\n", len,
		       HPET_TABLE_LEN);
		return -EINVAL;
	}
	u8 space = t[HPET_GAS + HPET_GAS_SPACE];
	u64 addr = get_unaligned_u64(t + HPET_GAS + HPET_GAS_ADDRESS);
	if (space != GAS_SYSTEM_MEMORY || !addr || addr % HPET_REG_ALIGN) {
		pr_err("acpi: HPET registers at %llx in address space %u are unusable\n",
		       (unsigned long long)addr, space);
		return -EINVAL;
	}
	out->hpet_addr = addr;
	out->hpet_block_id = get_unaligned_u32(t + HPET_BLOCK_ID);
	out->hpet_number = t[HPET_NUMBER];
	out->hpet_min_tick = get_unaligned_u16(t + HPET_MIN_TICK);
	return 0;
}
