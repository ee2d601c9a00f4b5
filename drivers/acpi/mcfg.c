/*
 * The MCFG (PCI Express memory-mapped configuration space, PCI Firmware spec 3.x,
 * 4.1.2): where each PCI segment's ECAM lies. After the header, 8 reserved bytes,
 * then 16-byte allocations: u64 base address, u16 segment group, u8 first bus, u8
 * last bus, 4 reserved bytes. Bus b's configuration space is the 1 MiB at base +
 * (b << 20): the base is that of bus 0 even when the first bus is not 0.
 *
 * ECAM is a refinement (the PC's port mechanism #1 still reaches segment 0), so a
 * bad table is refused whole and acpi_parse() carries on without it.
 */
#include <grace/errno.h>
#include <grace/printk.h>
#include "acpi_internal.h"

#define MCFG_ENTRIES (ACPI_HEADER_LEN + 8)
#define MCFG_ENTRY_LEN 16
#define MCFG_BASE 0
#define MCFG_SEGMENT 8
#define MCFG_START_BUS 10
#define MCFG_END_BUS 11
#define ECAM_BUS_SHIFT 20 /* 1 MiB per bus: 32 devices, 8 functions, 4 KiB each */

int acpi_parse_mcfg(const u8 *t, u32 len, struct acpi_info *out)
{
	out->nr_mcfg = 0;
	if (len < MCFG_ENTRIES || (len - MCFG_ENTRIES) % MCFG_ENTRY_LEN) {
		pr_err("acpi: MCFG length %u is not a header plus %u-byte allocations\n", len,
		       MCFG_ENTRY_LEN);
		return -EINVAL;
	}
	unsigned n = 0;
	for (u32 off = MCFG_ENTRIES; off < len; off += MCFG_ENTRY_LEN) {
		const u8 *e = t + off;
		struct acpi_mcfg m = {
		    .base = get_unaligned_u64(e + MCFG_BASE),
		    .segment = get_unaligned_u16(e + MCFG_SEGMENT),
		    .start_bus = e[MCFG_START_BUS],
		    .end_bus = e[MCFG_END_BUS],
		};
		if (!m.base || m.base % (1u << ECAM_BUS_SHIFT) || m.end_bus < m.start_bus ||
		    m.base + ((u64)(m.end_bus + 1) << ECAM_BUS_SHIFT) < m.base) {
			pr_err("acpi: MCFG allocation %llx for segment %u, buses %u-%u, is "
			       "malformed\n",
			       (unsigned long long)m.base, m.segment, m.start_bus, m.end_bus);
			return -EINVAL;
		}
		if (n == ACPI_MAX_MCFG) {
			pr_warn("acpi: MCFG has more than %u allocations; segment %u ignored\n",
				ACPI_MAX_MCFG, m.segment);
			continue;
		}
		out->mcfg[n++] = m;
	}
	out->nr_mcfg = n;
	return 0;
}
