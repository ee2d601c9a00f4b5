/*
 * The MADT ("APIC" table): after the common header, the local APIC address and
 * flags, then variable-length entries, each starting with a type byte and a length
 * byte. An entry whose length is 0, shorter than its type needs, or running past
 * the table's end makes the whole table invalid: the walk cannot continue safely.
 */
#include <grace/errno.h>
#include <grace/printk.h>
#include "acpi_internal.h"

#define MADT_LAPIC_ADDR 36
#define MADT_FLAGS 40
#define MADT_ENTRIES 44
#define MADT_FLAG_PCAT_COMPAT 0x1 /* the PC's two 8259s are present */

enum {
	MADT_LOCAL_APIC = 0,   /* 8 bytes: uid u8 @2, apic id u8 @3, flags u32 @4 */
	MADT_IO_APIC = 1,      /* 12 bytes: id u8 @2, address u32 @4, gsi base u32 @8 */
	MADT_INT_OVERRIDE = 2, /* 10 bytes: bus u8 @2, source u8 @3, gsi u32 @4, flags u16 @8 */
	MADT_LAPIC_ADDR_OVERRIDE = 5, /* 12 bytes: address u64 @4 */
	MADT_LOCAL_X2APIC = 9,	      /* 16 bytes: x2apic id u32 @4, flags u32 @8, uid u32 @12 */
};

#define LAPIC_FLAG_ENABLED 0x1
#define LAPIC_FLAG_ONLINE_CAPABLE 0x2

static const u8 madt_min_len[] = {
    [MADT_LOCAL_APIC] = 8,	     [MADT_IO_APIC] = 12,      [MADT_INT_OVERRIDE] = 10,
    [MADT_LAPIC_ADDR_OVERRIDE] = 12, [MADT_LOCAL_X2APIC] = 16,
};

static void madt_add_cpu(struct acpi_info *out, u32 apic_id, u32 uid, u32 flags)
{
	if (!(flags & (LAPIC_FLAG_ENABLED | LAPIC_FLAG_ONLINE_CAPABLE)))
		return; /* neither present nor hot-pluggable: a placeholder entry */
	for (unsigned i = 0; i < out->nr_cpus; i++)
		if (out->cpus[i].apic_id == apic_id) {
			pr_warn("acpi: MADT lists APIC id %u twice; keeping the first\n", apic_id);
			return;
		}
	if (out->nr_cpus == ACPI_MAX_CPUS) {
		out->nr_cpus_dropped++;
		return;
	}
	out->cpus[out->nr_cpus++] = (struct acpi_cpu){
	    .apic_id = apic_id,
	    .uid = uid,
	    .enabled = flags & LAPIC_FLAG_ENABLED,
	    .online_capable = !(flags & LAPIC_FLAG_ENABLED) && (flags & LAPIC_FLAG_ONLINE_CAPABLE),
	    .domain = ACPI_NO_DOMAIN,
	};
}

static void madt_parse_entry(const u8 *e, struct acpi_info *out)
{
	switch (e[0]) {
	case MADT_LOCAL_APIC:
		madt_add_cpu(out, e[3], e[2], get_unaligned_u32(e + 4));
		break;
	case MADT_LOCAL_X2APIC:
		madt_add_cpu(out, get_unaligned_u32(e + 4), get_unaligned_u32(e + 12),
			     get_unaligned_u32(e + 8));
		break;
	case MADT_IO_APIC:
		if (out->nr_ioapics == ACPI_MAX_IOAPICS) {
			pr_warn("acpi: more than %u I/O APICs; ignoring id %u\n", ACPI_MAX_IOAPICS,
				e[2]);
			break;
		}
		out->ioapics[out->nr_ioapics++] =
		    (struct acpi_ioapic){e[2], get_unaligned_u32(e + 4), get_unaligned_u32(e + 8)};
		break;
	case MADT_INT_OVERRIDE:
		if (out->nr_overrides == ACPI_MAX_OVERRIDES) {
			pr_warn("acpi: more than %u interrupt overrides; ignoring IRQ %u\n",
				ACPI_MAX_OVERRIDES, e[3]);
			break;
		}
		out->overrides[out->nr_overrides++] = (struct acpi_override){
		    e[2], e[3], get_unaligned_u32(e + 4), get_unaligned_u16(e + 8)};
		break;
	case MADT_LAPIC_ADDR_OVERRIDE:
		out->lapic_addr = get_unaligned_u64(e + 4);
		break;
	default:
		break; /* NMI sources, LINT wiring, GIC entries, ...: not needed */
	}
}

int acpi_parse_madt(const u8 *t, u32 len, struct acpi_info *out)
{
	if (len >= MADT_ENTRIES) {
		out->lapic_addr = get_unaligned_u32(t + MADT_LAPIC_ADDR);
		out->pcat_compat = get_unaligned_u32(t + MADT_FLAGS) & MADT_FLAG_PCAT_COMPAT;
	}
	int err = acpi_walk_entries("MADT", t, len, MADT_ENTRIES, madt_min_len,
				    sizeof(madt_min_len), madt_parse_entry, out);
	if (err)
		return err;
	if (out->nr_cpus_dropped)
		pr_warn("acpi: MADT lists %u CPUs past the first %u\n", out->nr_cpus_dropped,
			ACPI_MAX_CPUS);
	if (acpi_enabled_cpus(out) == 0) {
		pr_err("acpi: MADT lists no enabled CPU\n");
		return -EINVAL;
	}
	return 0;
}
