/*
 * ACPI table discovery: validate the RSDP, walk the RSDT (32-bit pointers) or the
 * XSDT (64-bit pointers, preferred when the RSDP is revision 2 or later), and hand
 * the MADT, SRAT, SLIT, MCFG and HPET tables to their parsers. Each table is mapped in two steps:
 * the 36-byte header first, so its length can be checked (at least a header, at most
 * ACPI_TABLE_MAX_LEN) before the whole table is mapped and checksummed.
 */
#include <grace/acpi.h>
#include <grace/errno.h>
#include <grace/printk.h>
#include "acpi_internal.h"

#define RSDP_SIGNATURE "RSD PTR "
#define RSDP_V1_LEN 20
#define RSDP_V2_LEN 36
#define RSDP_CHECKSUM_LEN RSDP_V1_LEN /* the v1 checksum covers the first 20 bytes */
#define RSDP_OEMID 9
#define RSDP_REVISION 15
#define RSDP_RSDT 16
#define RSDP_LENGTH 20
#define RSDP_XSDT 24

u8 acpi_checksum(const void *p, size_t len)
{
	const u8 *b = p;
	u8 sum = 0;
	for (size_t i = 0; i < len; i++)
		sum += b[i];
	return sum;
}

unsigned acpi_enabled_cpus(const struct acpi_info *info)
{
	unsigned n = 0;
	for (unsigned i = 0; i < info->nr_cpus; i++)
		n += info->cpus[i].enabled;
	return n;
}

/* Map and validate the table at pa; sig may be NULL to accept any. NULL on error. */
static const u8 *acpi_map_table(acpi_map_fn map, void *ctx, u64 pa, const char *sig, u32 *len_out)
{
	char name[5] = {0};
	const u8 *h = map(ctx, pa, ACPI_HEADER_LEN);
	if (!h) {
		pr_err("acpi: table at %llx is not in firmware memory\n", (unsigned long long)pa);
		return NULL;
	}
	memcpy(name, h, 4);
	if (sig && memcmp(h, sig, 4)) {
		pr_err("acpi: table at %llx is '%s', expected '%s'\n", (unsigned long long)pa, name,
		       sig);
		return NULL;
	}
	u32 len = get_unaligned_u32(h + ACPI_HDR_LENGTH);
	if (len < ACPI_HEADER_LEN || len > ACPI_TABLE_MAX_LEN) {
		pr_err("acpi: table %s at %llx has bad length %u\n", name, (unsigned long long)pa,
		       len);
		return NULL;
	}
	const u8 *t = map(ctx, pa, len);
	if (!t) {
		pr_err("acpi: table %s at %llx (%u bytes) is not in firmware memory\n", name,
		       (unsigned long long)pa, len);
		return NULL;
	}
	/* Re-read the length from the full mapping: it must not have changed under us. */
	if (get_unaligned_u32(t + ACPI_HDR_LENGTH) != len || acpi_checksum(t, len) != 0) {
		pr_err("acpi: table %s at %llx has a bad checksum\n", name, (unsigned long long)pa);
		return NULL;
	}
	*len_out = len;
	return t;
}

static int acpi_parse_rsdp(const u8 *r, size_t len, struct acpi_info *out, u64 *root, bool *xsdt)
{
	if (!r || len < RSDP_V1_LEN || memcmp(r, RSDP_SIGNATURE, 8)) {
		pr_err("acpi: no valid RSDP signature (%zu bytes)\n", len);
		return -EINVAL;
	}
	if (acpi_checksum(r, RSDP_CHECKSUM_LEN) != 0) {
		pr_err("acpi: RSDP checksum is bad\n");
		return -EINVAL;
	}
	out->rsdp_revision = r[RSDP_REVISION];
	memcpy(out->oem_id, r + RSDP_OEMID, 6);
	out->oem_id[6] = 0;
	*root = get_unaligned_u32(r + RSDP_RSDT);
	*xsdt = false;
	if (out->rsdp_revision >= 2) {
		u32 full = len >= RSDP_V2_LEN ? get_unaligned_u32(r + RSDP_LENGTH) : 0;
		if (full < RSDP_V2_LEN || full > len || acpi_checksum(r, full) != 0) {
			pr_err(
			    "acpi: RSDP revision %u has a bad length (%u) or extended checksum\n",
			    out->rsdp_revision, full);
			return -EINVAL;
		}
		u64 x = get_unaligned_u64(r + RSDP_XSDT);
		if (x) {
			*root = x;
			*xsdt = true;
		}
	}
	if (!*root) {
		pr_err("acpi: RSDP gives no root table\n");
		return -EINVAL;
	}
	return 0;
}

int acpi_parse(const void *rsdp, size_t rsdp_len, acpi_map_fn map, void *ctx, struct acpi_info *out)
{
	u64 root_pa;
	bool xsdt;
	u32 root_len;

	memset(out, 0, sizeof(*out));
	int err = acpi_parse_rsdp(rsdp, rsdp_len, out, &root_pa, &xsdt);
	if (err)
		return err;
	out->xsdt = xsdt;

	const u8 *root = acpi_map_table(map, ctx, root_pa, xsdt ? "XSDT" : "RSDT", &root_len);
	if (!root)
		return -EINVAL;
	unsigned entry_size = xsdt ? 8 : 4;
	if ((root_len - ACPI_HEADER_LEN) % entry_size) {
		pr_err("acpi: %s length %u is not a header plus %u-byte entries\n",
		       xsdt ? "XSDT" : "RSDT", root_len, entry_size);
		return -EINVAL;
	}

	/* Find the tables first: the SRAT's CPU entries refer to the MADT's, in either order. */
	u64 madt_pa = 0, srat_pa = 0, slit_pa = 0, mcfg_pa = 0, hpet_pa = 0;
	for (u32 off = ACPI_HEADER_LEN; off < root_len; off += entry_size) {
		u64 pa = xsdt ? get_unaligned_u64(root + off) : get_unaligned_u32(root + off);
		const u8 *h = pa ? map(ctx, pa, ACPI_HEADER_LEN) : NULL;
		if (!h) {
			pr_warn(
			    "acpi: root table entry %u (%llx) is not in firmware memory; skipped\n",
			    (off - ACPI_HEADER_LEN) / entry_size, (unsigned long long)pa);
			continue;
		}
		if (!memcmp(h, "APIC", 4) && !madt_pa)
			madt_pa = pa;
		else if (!memcmp(h, "SRAT", 4) && !srat_pa)
			srat_pa = pa;
		else if (!memcmp(h, "SLIT", 4) && !slit_pa)
			slit_pa = pa;
		else if (!memcmp(h, "MCFG", 4) && !mcfg_pa)
			mcfg_pa = pa;
		else if (!memcmp(h, "HPET", 4) && !hpet_pa)
			hpet_pa = pa;
	}
	if (!madt_pa) {
		pr_err("acpi: no MADT: cannot find the CPUs and I/O APICs\n");
		return -ENODEV;
	}

	u32 len;
	const u8 *t = acpi_map_table(map, ctx, madt_pa, "APIC", &len);
	if (!t)
		return -EINVAL;
	err = acpi_parse_madt(t, len, out);
	if (err)
		return err;
	if (srat_pa) {
		t = acpi_map_table(map, ctx, srat_pa, "SRAT", &len);
		if (!t)
			return -EINVAL;
		err = acpi_parse_srat(t, len, out);
		if (err)
			return err;
		out->has_srat = true;
	}
	/* Distances are a refinement: a bad SLIT leaves the defaults, it does not stop the boot. */
	if (slit_pa && (t = acpi_map_table(map, ctx, slit_pa, "SLIT", &len)))
		acpi_parse_slit(t, len, out);
	/* So are ECAM (port mechanism #1 reaches segment 0) and the HPET (the PIT calibrates). */
	if (mcfg_pa && (t = acpi_map_table(map, ctx, mcfg_pa, "MCFG", &len)))
		acpi_parse_mcfg(t, len, out);
	if (hpet_pa && (t = acpi_map_table(map, ctx, hpet_pa, "HPET", &len)))
		acpi_parse_hpet(t, len, out);
	return 0;
}

int acpi_walk_entries(const char *sig, const u8 *t, u32 len, u32 first, const u8 *min_len, u32 nmin,
		      void (*fn)(const u8 *entry, struct acpi_info *out), struct acpi_info *out)
{
	if (len < first) {
		pr_err("acpi: %s of %u bytes is too short\n", sig, len);
		return -EINVAL;
	}
	for (u32 off = first; off < len;) {
		if (len - off < 2) {
			pr_err("acpi: %s entry header at offset %u runs past the end (%u)\n", sig,
			       off, len);
			return -EINVAL;
		}
		u8 type = t[off], elen = t[off + 1];
		u8 need = type < nmin && min_len[type] ? min_len[type] : 2;
		if (elen < need || elen > len - off) {
			pr_err("acpi: %s entry type %u at offset %u has bad length %u (needs %u, "
			       "%u left)\n",
			       sig, type, off, elen, need, len - off);
			return -EINVAL;
		}
		fn(t + off, out);
		off += elen;
	}
	return 0;
}
