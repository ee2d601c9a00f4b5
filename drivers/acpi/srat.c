/*
 * The SRAT (System Resource Affinity Table): which proximity domain (NUMA node)
 * each CPU and each memory range belongs to. Entries after a 48-byte prefix, each
 * with a type and a length byte, validated like the MADT's. CPU entries name the
 * APIC ids the MADT already gave us (acpi_parse reads the MADT first).
 */
#include <grace/errno.h>
#include <grace/printk.h>
#include "acpi_internal.h"

#define SRAT_ENTRIES 48

enum {
	SRAT_CPU_AFFINITY = 0, /* 16 bytes: domain[7:0] @2, apic id @3, flags @4, domain[31:8] @9 */
	SRAT_MEM_AFFINITY = 1, /* 40 bytes: domain @2, base @8, length @16, flags @28 */
	SRAT_X2APIC_AFFINITY = 2, /* 24 bytes: domain @4, x2apic id @8, flags @12 */
};

#define SRAT_FLAG_ENABLED 0x1

static const u8 srat_min_len[] = {
    [SRAT_CPU_AFFINITY] = 16,
    [SRAT_MEM_AFFINITY] = 40,
    [SRAT_X2APIC_AFFINITY] = 24,
};

static void srat_set_cpu_domain(struct acpi_info *out, u32 apic_id, u32 domain)
{
	for (unsigned i = 0; i < out->nr_cpus; i++)
		if (out->cpus[i].apic_id == apic_id)
			out->cpus[i].domain = domain;
}

static void srat_parse_entry(const u8 *e, struct acpi_info *out)
{
	switch (e[0]) {
	case SRAT_CPU_AFFINITY:
		if (get_unaligned_u32(e + 4) & SRAT_FLAG_ENABLED)
			srat_set_cpu_domain(
			    out, e[3], e[2] | (u32)e[9] << 8 | (u32)e[10] << 16 | (u32)e[11] << 24);
		break;
	case SRAT_X2APIC_AFFINITY:
		if (get_unaligned_u32(e + 12) & SRAT_FLAG_ENABLED)
			srat_set_cpu_domain(out, get_unaligned_u32(e + 8),
					    get_unaligned_u32(e + 4));
		break;
	case SRAT_MEM_AFFINITY: {
		u64 base = get_unaligned_u64(e + 8), length = get_unaligned_u64(e + 16);
		if (!(get_unaligned_u32(e + 28) & SRAT_FLAG_ENABLED) || length == 0)
			break;
		if (out->nr_mem_affinity == ACPI_MAX_MEM_AFFINITY) {
			pr_warn("acpi: more than %u SRAT memory ranges; ignoring %llx\n",
				ACPI_MAX_MEM_AFFINITY, (unsigned long long)base);
			break;
		}
		out->mem_affinity[out->nr_mem_affinity++] =
		    (struct acpi_mem_affinity){base, length, get_unaligned_u32(e + 2)};
		break;
	}
	default:
		break;
	}
}

int acpi_parse_srat(const u8 *t, u32 len, struct acpi_info *out)
{
	return acpi_walk_entries("SRAT", t, len, SRAT_ENTRIES, srat_min_len, sizeof(srat_min_len),
				 srat_parse_entry, out);
}
