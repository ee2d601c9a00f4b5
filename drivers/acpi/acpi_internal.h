/* Shared inside drivers/acpi: table header layout and the per-table parsers. */
#ifndef ACPI_INTERNAL_H
#define ACPI_INTERNAL_H

#include <grace/acpi.h>
#include <grace/string.h>
#include <grace/unaligned.h>

#define ACPI_HEADER_LEN 36	      /* signature, length, revision, checksum, OEM ids, ... */
#define ACPI_HDR_LENGTH 4	      /* offset of the u32 length */
#define ACPI_TABLE_MAX_LEN (1u << 20) /* a larger static table is corrupt, not big */

/* The body of a table after header length and checksum were validated; len = table length. */
/*
 * Walk the (type, length, ...) entries of a MADT or SRAT from offset first to len,
 * calling fn on each. An entry whose length is under 2, under min_len[type] (when
 * type < nmin and that is nonzero) or past the end is an error: -EINVAL, reported
 * with sig.
 */
int acpi_walk_entries(const char *sig, const u8 *t, u32 len, u32 first, const u8 *min_len, u32 nmin,
		      void (*fn)(const u8 *entry, struct acpi_info *out), struct acpi_info *out);

int acpi_parse_madt(const u8 *t, u32 len, struct acpi_info *out);
int acpi_parse_srat(const u8 *t, u32 len, struct acpi_info *out);
int acpi_parse_slit(const u8 *t, u32 len, struct acpi_info *out);
int acpi_parse_mcfg(const u8 *t, u32 len, struct acpi_info *out);
int acpi_parse_hpet(const u8 *t, u32 len, struct acpi_info *out);

#endif
