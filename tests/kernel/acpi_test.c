/*
 * ACPI parser selftests. The tables this machine booted with (found through the
 * RSDP in the multiboot2 block) parse to the CPUs boot put in boot_info. Then a
 * private chain RSDP -> RSDT or XSDT -> MADT copy, built in fresh pages, is damaged
 * one way at a time: bad RSDP signature or checksum, bad MADT checksum, MADT entry
 * of length 0 or running past the end, a MADT or root table cut short (by its
 * length field or by the end of mappable memory), a root table of bad length. Each
 * must give an error, not a crash. The map function used here only hands out the
 * chain's own bytes, so a parser reading past a table would be caught. MCFG and
 * HPET tables built here join the chain: they parse to their fields, and each kind
 * of damage leaves the table out (the boot goes on without ECAM or the HPET) with
 * an error line, the MADT still parsed.
 * Machines that did not boot through multiboot2 (riscv64) skip.
 */
#include <grace/acpi.h>
#include <grace/boot_info.h>
#include <grace/errno.h>
#include <grace/page_alloc.h>
#include <grace/multiboot2.h>
#include <grace/string.h>
#include <grace/test.h>

#include "blob_copy.h"
#include "host_expect.h"

#define HDR_LEN 36
#define HDR_LENGTH 4
#define HDR_CHECKSUM 9
#define RSDP_CHECKSUM 8
#define RSDP_REVISION 15
#define RSDP_RSDT 16
#define RSDP_LENGTH 20
#define RSDP_XSDT 24
#define RSDP_EXT_CHECKSUM 32
#define RSDP_V1_LEN 20
#define RSDP_V2_LEN 36
#define MADT_ENTRIES 44
#define FOUR_GIB 0x100000000ULL

/*
 * The chain lives in one 8 KiB block: RSDP, root table, then the MADT copy, and in
 * the last 512 bytes the tables a test adds (chain_add_table()).
 */
#define CHAIN_ORDER 1
#define CHAIN_RSDP 0
#define CHAIN_ROOT 64
#define CHAIN_MADT 256
#define CHAIN_SIZE (PAGE_SIZE << CHAIN_ORDER)
#define CHAIN_EXTRA (CHAIN_SIZE - 512)
#define CHAIN_EXTRA_SLOT 256
#define CHAIN_MAX_EXTRA 2

#define MCFG_ENTRIES 44
#define MCFG_ENTRY_LEN 16
#define HPET_TABLE_LEN 56
#define HPET_GAS 40

static struct mb2_info mb2;
static struct acpi_info info; /* large: not on the test's stack */

struct chain {
	u8 *buf;
	phys_addr_t pa;
	bool xsdt;
	u32 madt_len;
	u64 map_limit;			/* bytes of the chain the map function hands out */
	u32 extra_len[CHAIN_MAX_EXTRA]; /* length of each added table, for its checksum */
	unsigned nr_extra;
};

/* Map for the boot tables: anything the memory map calls RAM or firmware memory. */
static const void *map_firmware(void *ctx, u64 pa, u64 len)
{
	if (!mb2_range_in_mmap(ctx, pa, len, MB2_TYPES_FIRMWARE))
		return NULL;
	return phys_to_virt(pa);
}

/* Map for the chain: only its own first map_limit bytes. */
static const void *map_chain(void *ctx, u64 pa, u64 len)
{
	const struct chain *c = ctx;
	if (pa < c->pa || len > c->map_limit || pa - c->pa > c->map_limit - len)
		return NULL;
	return c->buf + (pa - c->pa);
}

static bool boot_acpi(void)
{
	const u8 *b = boot_info.fw_blob;
	if (!b || boot_info.fw_blob_size < 16 || get_unaligned_u32(b) != boot_info.fw_blob_size ||
	    mb2_parse(b, boot_info.fw_blob_size, &mb2) || !(mb2.rsdp_v1 || mb2.rsdp_v2)) {
		test_skip("the machine did not boot through multiboot2 with ACPI");
		return false;
	}
	return true;
}

static const void *boot_rsdp(size_t *len)
{
	*len = mb2.rsdp_v2 ? mb2.rsdp_v2_len : mb2.rsdp_v1_len;
	return mb2.rsdp_v2 ? mb2.rsdp_v2 : mb2.rsdp_v1;
}

/* The booted machine's MADT (its tables were validated when this test's first case parsed them). */
static const u8 *boot_madt(u32 *len)
{
	size_t rlen;
	const u8 *r = boot_rsdp(&rlen);
	bool x = r[RSDP_REVISION] >= 2 && rlen >= RSDP_V2_LEN;
	u64 root_pa;
	memcpy(&root_pa, r + (x ? RSDP_XSDT : RSDP_RSDT), x ? 8 : 4);
	if (!x)
		root_pa &= 0xffffffffu;
	const u8 *root = map_firmware(&mb2, root_pa, HDR_LEN);
	if (!root)
		return NULL;
	u32 root_len = get_unaligned_u32(root + HDR_LENGTH);
	for (u32 off = HDR_LEN; off + (x ? 8 : 4) <= root_len; off += x ? 8 : 4) {
		u64 pa = 0;
		memcpy(&pa, root + off, x ? 8 : 4);
		const u8 *t = map_firmware(&mb2, pa, HDR_LEN);
		if (t && !memcmp(t, "APIC", 4)) {
			*len = get_unaligned_u32(t + HDR_LENGTH);
			return map_firmware(&mb2, pa, *len);
		}
	}
	return NULL;
}

static void fix_checksum(u8 *t, u32 len, unsigned at)
{
	t[at] = 0;
	t[at] = (u8)-acpi_checksum(t, len);
}

/* Recompute every checksum after a deliberate change, so only that change is wrong. */
static void chain_fix(struct chain *c)
{
	u8 *rsdp = c->buf + CHAIN_RSDP, *root = c->buf + CHAIN_ROOT, *madt = c->buf + CHAIN_MADT;
	for (unsigned i = 0; i < c->nr_extra; i++)
		fix_checksum(c->buf + CHAIN_EXTRA + i * CHAIN_EXTRA_SLOT,
			     MIN(c->extra_len[i], (u32)CHAIN_EXTRA_SLOT), HDR_CHECKSUM);
	fix_checksum(madt, c->madt_len, HDR_CHECKSUM);
	fix_checksum(root,
		     get_unaligned_u32(root + HDR_LENGTH) <= CHAIN_MADT - CHAIN_ROOT
			 ? get_unaligned_u32(root + HDR_LENGTH)
			 : HDR_LEN,
		     HDR_CHECKSUM);
	fix_checksum(rsdp, RSDP_V1_LEN, RSDP_CHECKSUM);
	if (c->xsdt)
		fix_checksum(rsdp, RSDP_V2_LEN, RSDP_EXT_CHECKSUM);
}

/* A valid private chain: RSDP (v1 + RSDT, or v2 + XSDT) -> root table -> MADT copy. */
static bool chain_build(struct chain *c, bool xsdt)
{
	u32 madt_len;
	const u8 *madt = boot_madt(&madt_len);
	if (!madt)
		return test_fail(__FILE__, __LINE__, "cannot find the boot MADT");
	if (madt_len > CHAIN_EXTRA - CHAIN_MADT) {
		test_skip("the MADT is larger than the test's chain buffer");
		return false;
	}
	c->buf = alloc_pages(CHAIN_ORDER);
	if (!c->buf)
		return test_fail(__FILE__, __LINE__, "no memory for the table chain");
	c->pa = virt_to_phys(c->buf);
	if (!xsdt && c->pa + CHAIN_SIZE > FOUR_GIB) {
		free_pages(c->buf, CHAIN_ORDER);
		test_skip("no memory below 4 GiB for an RSDT's 32-bit pointers");
		return false;
	}
	c->xsdt = xsdt;
	c->madt_len = madt_len;
	c->map_limit = CHAIN_SIZE;
	c->nr_extra = 0;

	u8 *rsdp = c->buf + CHAIN_RSDP, *root = c->buf + CHAIN_ROOT;
	memcpy(rsdp, "RSD PTR ", 8);
	memcpy(rsdp + 9, "GRACE ", 6);
	rsdp[RSDP_REVISION] = xsdt ? 2 : 0;
	put_u32(rsdp + RSDP_RSDT, xsdt ? 0 : (u32)(c->pa + CHAIN_ROOT));
	if (xsdt) {
		put_u32(rsdp + RSDP_LENGTH, RSDP_V2_LEN);
		put_u64(rsdp + RSDP_XSDT, c->pa + CHAIN_ROOT);
	}
	memcpy(root, xsdt ? "XSDT" : "RSDT", 4);
	u32 root_len = HDR_LEN + (xsdt ? 8 : 4);
	put_u32(root + HDR_LENGTH, root_len);
	root[8] = 1; /* revision */
	if (xsdt)
		put_u64(root + HDR_LEN, c->pa + CHAIN_MADT);
	else
		put_u32(root + HDR_LEN, (u32)(c->pa + CHAIN_MADT));
	memcpy(c->buf + CHAIN_MADT, madt, madt_len);
	chain_fix(c);
	return true;
}

/*
 * Add a table of len bytes with signature sig after the MADT in the root table; its
 * body is the caller's to fill (zeroed), then chain_fix(). Returns the table.
 */
static u8 *chain_add_table(struct chain *c, const char *sig, u32 len)
{
	u8 *root = c->buf + CHAIN_ROOT, *t = c->buf + CHAIN_EXTRA + c->nr_extra * CHAIN_EXTRA_SLOT;
	u64 pa = c->pa + CHAIN_EXTRA + c->nr_extra * CHAIN_EXTRA_SLOT;
	u32 root_len = get_unaligned_u32(root + HDR_LENGTH);
	memset(t, 0, CHAIN_EXTRA_SLOT);
	memcpy(t, sig, 4);
	put_u32(t + HDR_LENGTH, len);
	t[8] = 1; /* revision */
	if (c->xsdt)
		put_u64(root + root_len, pa);
	else
		put_u32(root + root_len, (u32)pa);
	put_u32(root + HDR_LENGTH, root_len + (c->xsdt ? 8 : 4));
	c->extra_len[c->nr_extra++] = len;
	return t;
}

static int chain_parse(struct chain *c)
{
	return acpi_parse(c->buf + CHAIN_RSDP, c->xsdt ? RSDP_V2_LEN : RSDP_V1_LEN, map_chain, c,
			  &info);
}

/* -EINVAL for a damaged table, -ENODEV when the damage hides the MADT altogether. */
static void expect_error(struct chain *c, const char *what)
{
	int err = chain_parse(c);
	if (err != -EINVAL && err != -ENODEV)
		test_fail(__FILE__, __LINE__, "%s: expected -EINVAL or -ENODEV, got %d", what, err);
}

/* Offset of the last MADT entry in the chain's copy. */
static u32 madt_last_entry(const struct chain *c)
{
	const u8 *m = c->buf + CHAIN_MADT;
	u32 last = MADT_ENTRIES;
	for (u32 off = MADT_ENTRIES; off + 2 <= c->madt_len && m[off + 1]; off += m[off + 1])
		last = off;
	return last;
}

/* Proximity domains that hold memory in the SRAT; 1 without one. */
static unsigned srat_memory_domains(const struct acpi_info *a)
{
	if (!a->has_srat)
		return 1;
	unsigned n = 0;
	for (unsigned i = 0; i < a->nr_mem_affinity; i++) {
		bool seen = false;
		for (unsigned j = 0; j < i; j++)
			seen |= a->mem_affinity[j].domain == a->mem_affinity[i].domain;
		n += !seen && a->mem_affinity[i].length;
	}
	return n;
}

TEST(acpi, boot_tables_match_boot_info)
{
	static struct host_expect e;
	if (!boot_acpi() || !host_expect_get(&e))
		return;
	size_t len;
	const void *rsdp = boot_rsdp(&len);
	ASSERT_EQ(acpi_parse(rsdp, len, map_firmware, &mb2, &info), 0);

	/* What QEMU was given, as the runner knows it from outside. */
	EXPECT_EQ(acpi_enabled_cpus(&info), e.cpus);
	for (unsigned j = 0; j < info.nr_cpus; j++)
		if (info.cpus[j].enabled && !host_expect_has_hwid(&e, info.cpus[j].apic_id))
			test_fail(__FILE__, __LINE__,
				  "MADT CPU with APIC id %u is not one QEMU was given",
				  info.cpus[j].apic_id);
	EXPECT_EQ(srat_memory_domains(&info), e.nodes);

	/* And boot kept what the parser found. */
	EXPECT_EQ(acpi_enabled_cpus(&info), boot_info.nr_cpus_found);
	EXPECT_GE(info.nr_ioapics, 1);
	/* Every CPU boot started is an enabled MADT CPU with the same APIC id. */
	for (unsigned i = 0; i < boot_info.nr_cpus; i++) {
		bool found = false;
		for (unsigned j = 0; j < info.nr_cpus; j++)
			found |=
			    info.cpus[j].enabled && info.cpus[j].apic_id == boot_info.cpus[i].hwid;
		if (!found)
			test_fail(__FILE__, __LINE__, "CPU %u (APIC id %u) is not in the MADT", i,
				  boot_info.cpus[i].hwid);
	}
}

TEST(acpi, private_chains_parse)
{
	struct chain c;
	if (!boot_acpi())
		return;
	for (int x = 0; x < 2; x++) {
		if (!chain_build(&c, x))
			return;
		/* The harness itself is sound: the undamaged chain gives the boot CPUs. */
		EXPECT_EQ(chain_parse(&c), 0);
		EXPECT_EQ(info.xsdt, (bool)x);
		EXPECT_EQ(acpi_enabled_cpus(&info), boot_info.nr_cpus_found);
		free_pages(c.buf, CHAIN_ORDER);
	}
}

TEST(acpi, rejects_bad_rsdp)
{
	test_expect_message("acpi: ");
	struct chain c;
	if (!boot_acpi() || !chain_build(&c, true))
		return;
	u8 *rsdp = c.buf + CHAIN_RSDP;
	rsdp[RSDP_CHECKSUM] ^= 0x5a;
	expect_error(&c, "RSDP checksum");
	chain_fix(&c);
	rsdp[RSDP_EXT_CHECKSUM] ^= 0x5a;
	expect_error(&c, "RSDP extended checksum");
	chain_fix(&c);
	rsdp[0] = 'X';
	chain_fix(&c);
	expect_error(&c, "RSDP signature");
	memcpy(rsdp, "RSD PTR ", 8);
	chain_fix(&c);
	size_t cuts[] = {0, 8, RSDP_V1_LEN - 1, RSDP_V2_LEN - 1};
	for (unsigned i = 0; i < ARRAY_SIZE(cuts); i++) {
		int err = acpi_parse(rsdp, cuts[i], map_chain, &c, &info);
		if (err != -EINVAL)
			test_fail(__FILE__, __LINE__, "RSDP cut at %zu: expected -EINVAL, got %d",
				  cuts[i], err);
	}
	free_pages(c.buf, CHAIN_ORDER);
}

TEST(acpi, rejects_bad_madt_checksum)
{
	test_expect_message("acpi: ");
	struct chain c;
	if (!boot_acpi() || !chain_build(&c, false))
		return;
	c.buf[CHAIN_MADT + MADT_ENTRIES + 3] ^= 0x01; /* an APIC id, checksum not fixed */
	expect_error(&c, "MADT checksum");
	free_pages(c.buf, CHAIN_ORDER);
}

TEST(acpi, rejects_bad_madt_entry_length)
{
	test_expect_message("acpi: ");
	struct chain c;
	if (!boot_acpi() || !chain_build(&c, false))
		return;
	u8 *madt = c.buf + CHAIN_MADT;
	u32 last = madt_last_entry(&c);
	u8 first_len = madt[MADT_ENTRIES + 1], last_len = madt[last + 1];

	madt[MADT_ENTRIES + 1] = 0;
	chain_fix(&c);
	expect_error(&c, "MADT entry of length 0");
	madt[MADT_ENTRIES + 1] = 1; /* shorter than an entry header */
	chain_fix(&c);
	expect_error(&c, "MADT entry of length 1");
	madt[MADT_ENTRIES + 1] = first_len;

	madt[last + 1] = (u8)(c.madt_len - last + 1);
	chain_fix(&c);
	expect_error(&c, "MADT entry past the end");
	madt[last + 1] = last_len;

	chain_fix(&c);
	EXPECT_EQ(chain_parse(&c), 0);
	free_pages(c.buf, CHAIN_ORDER);
}

TEST(acpi, rejects_truncated_madt)
{
	test_expect_message("acpi: ");
	struct chain c;
	if (!boot_acpi() || !chain_build(&c, false))
		return;
	u8 *madt = c.buf + CHAIN_MADT;
	u32 full = c.madt_len;

	/* The length field cuts the table inside an entry, or inside the fixed part. */
	u32 cuts[] = {HDR_LEN, MADT_ENTRIES - 1, MADT_ENTRIES + 1, MADT_ENTRIES + 5, full - 1};
	for (unsigned i = 0; i < ARRAY_SIZE(cuts); i++) {
		c.madt_len = cuts[i];
		put_u32(madt + HDR_LENGTH, cuts[i]);
		chain_fix(&c);
		expect_error(&c, "MADT length cutting an entry");
	}
	c.madt_len = full;
	put_u32(madt + HDR_LENGTH, full);
	chain_fix(&c);
	EXPECT_EQ(chain_parse(&c), 0);

	/* The table runs into unmappable memory at several points. */
	u64 limits[] = {CHAIN_MADT, CHAIN_MADT + 20, CHAIN_MADT + HDR_LEN, CHAIN_MADT + full - 1};
	for (unsigned i = 0; i < ARRAY_SIZE(limits); i++) {
		c.map_limit = limits[i];
		expect_error(&c, "MADT past the end of memory");
	}
	c.map_limit = CHAIN_SIZE;

	/* Absurd lengths are refused before anything is mapped or summed. */
	put_u32(madt + HDR_LENGTH, 0x7fffffffu);
	expect_error(&c, "MADT with a huge length");
	put_u32(madt + HDR_LENGTH, 10);
	expect_error(&c, "MADT shorter than a header");
	free_pages(c.buf, CHAIN_ORDER);
}

TEST(acpi, rejects_bad_root_table_length)
{
	test_expect_message("acpi: ");
	struct chain c;
	if (!boot_acpi())
		return;
	for (int x = 0; x < 2; x++) {
		if (!chain_build(&c, x))
			return;
		u8 *root = c.buf + CHAIN_ROOT;
		u32 good = get_unaligned_u32(root + HDR_LENGTH);
		u32 bad[] = {0, HDR_LEN - 1, good + 1, good - 1, 0x10000000u};
		for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
			put_u32(root + HDR_LENGTH, bad[i]);
			chain_fix(&c);
			expect_error(&c, x ? "XSDT length" : "RSDT length");
		}
		put_u32(root + HDR_LENGTH, good);
		chain_fix(&c);
		EXPECT_EQ(chain_parse(&c), 0);

		/* An entry pointing nowhere: no MADT, an error, no fault. */
		put_u32(root + HDR_LEN, 0xfffff000u);
		if (x)
			put_u32(root + HDR_LEN + 4, 0);
		chain_fix(&c);
		EXPECT_EQ(chain_parse(&c), -ENODEV);
		free_pages(c.buf, CHAIN_ORDER);
	}
}

/* QEMU q35's MCFG, and a second segment: the first allocation ECAM at 0xb0000000. */
static u8 *chain_add_mcfg(struct chain *c, unsigned entries)
{
	u8 *t = chain_add_table(c, "MCFG", MCFG_ENTRIES + entries * MCFG_ENTRY_LEN);
	for (unsigned i = 0; i < entries; i++) {
		u8 *e = t + MCFG_ENTRIES + i * MCFG_ENTRY_LEN;
		put_u64(e, i ? 0x4000000000ull : 0xb0000000ull);
		put_u32(e + 8, i ? 1 | 0x10 << 16 | 0x1f << 24 : 0 | 0 << 16 | 0xff << 24);
	}
	return t;
}

/* QEMU's HPET table: 3 timers of Intel's, 64-bit counter, legacy replacement capable. */
static u8 *chain_add_hpet(struct chain *c)
{
	u8 *t = chain_add_table(c, "HPET", HPET_TABLE_LEN);
	put_u32(t + HDR_LEN, 0x8086a201);
	t[HPET_GAS] = 0;      /* system memory */
	t[HPET_GAS + 1] = 64; /* register width */
	put_u64(t + HPET_GAS + 4, 0xfed00000);
	t[HPET_GAS + 12] = 0; /* HPET number */
	put_u32(t + HPET_GAS + 13, 0x80);
	return t;
}

TEST(acpi, mcfg_and_hpet_parse)
{
	struct chain c;
	if (!boot_acpi())
		return;
	for (int x = 0; x < 2; x++) {
		if (!chain_build(&c, x))
			return;
		chain_add_mcfg(&c, 2);
		chain_add_hpet(&c);
		chain_fix(&c);
		ASSERT_EQ(chain_parse(&c), 0);
		EXPECT_EQ(acpi_enabled_cpus(&info), boot_info.nr_cpus_found);
		ASSERT_EQ(info.nr_mcfg, 2);
		EXPECT_EQ(info.mcfg[0].base, 0xb0000000ull);
		EXPECT_EQ(info.mcfg[0].segment, 0);
		EXPECT_EQ(info.mcfg[0].start_bus, 0);
		EXPECT_EQ(info.mcfg[0].end_bus, 0xff);
		EXPECT_EQ(info.mcfg[1].base, 0x4000000000ull);
		EXPECT_EQ(info.mcfg[1].segment, 1);
		EXPECT_EQ(info.mcfg[1].start_bus, 0x10);
		EXPECT_EQ(info.mcfg[1].end_bus, 0x1f);
		EXPECT_EQ(info.hpet_addr, 0xfed00000ull);
		EXPECT_EQ(info.hpet_block_id, 0x8086a201u);
		EXPECT_EQ(info.hpet_min_tick, 0x80);
		free_pages(c.buf, CHAIN_ORDER);
	}
}

/* The damaged table is left out, everything else parses. */
static void expect_left_out(struct chain *c, bool mcfg, const char *what)
{
	int err = chain_parse(c);
	if (err)
		test_fail(__FILE__, __LINE__,
			  "%s: parse failed with %d; expected the table dropped", what, err);
	else if (mcfg ? info.nr_mcfg != 0 : info.hpet_addr != 0)
		test_fail(__FILE__, __LINE__, "%s: the %s was kept", what, mcfg ? "MCFG" : "HPET");
	else if (acpi_enabled_cpus(&info) != boot_info.nr_cpus_found)
		test_fail(__FILE__, __LINE__, "%s: %u CPUs, expected %u", what,
			  acpi_enabled_cpus(&info), boot_info.nr_cpus_found);
}

TEST(acpi, rejects_bad_mcfg)
{
	test_expect_message("acpi: ");
	struct chain c;
	if (!boot_acpi() || !chain_build(&c, true))
		return;
	u8 *t = chain_add_mcfg(&c, 1), *e = t + MCFG_ENTRIES;
	chain_fix(&c);

	t[MCFG_ENTRIES + 3] ^= 0x40; /* checksum not fixed */
	expect_left_out(&c, true, "MCFG checksum");
	t[MCFG_ENTRIES + 3] ^= 0x40;

	/* Lengths that cut the reserved bytes or an allocation. */
	u32 cuts[] = {HDR_LEN, MCFG_ENTRIES - 1, MCFG_ENTRIES + 8, MCFG_ENTRIES + 15};
	for (unsigned i = 0; i < ARRAY_SIZE(cuts); i++) {
		put_u32(t + HDR_LENGTH, cuts[i]);
		c.extra_len[0] = cuts[i];
		chain_fix(&c);
		expect_left_out(&c, true, "MCFG length cutting an allocation");
	}
	put_u32(t + HDR_LENGTH, MCFG_ENTRIES + MCFG_ENTRY_LEN);
	c.extra_len[0] = MCFG_ENTRIES + MCFG_ENTRY_LEN;

	/* Allocations no ECAM can be: no base, a base inside a bus, buses backwards. */
	u64 bases[] = {0, 0xb0080000ull, 0xfffffffffff00000ull};
	for (unsigned i = 0; i < ARRAY_SIZE(bases); i++) {
		put_u64(e, bases[i]);
		chain_fix(&c);
		expect_left_out(&c, true, "MCFG base");
	}
	put_u64(e, 0xb0000000ull);
	e[10] = 0x20, e[11] = 0x1f;
	chain_fix(&c);
	expect_left_out(&c, true, "MCFG buses backwards");
	e[10] = 0, e[11] = 0xff;

	/* The table runs into unmappable memory. */
	chain_fix(&c);
	c.map_limit = CHAIN_EXTRA + MCFG_ENTRIES + 4;
	expect_left_out(&c, true, "MCFG past the end of memory");
	c.map_limit = CHAIN_SIZE;

	/* Undamaged again: kept. */
	ASSERT_EQ(chain_parse(&c), 0);
	EXPECT_EQ(info.nr_mcfg, 1);
	free_pages(c.buf, CHAIN_ORDER);
}

TEST(acpi, rejects_bad_hpet)
{
	test_expect_message("acpi: ");
	struct chain c;
	if (!boot_acpi() || !chain_build(&c, false))
		return;
	u8 *t = chain_add_hpet(&c);
	chain_fix(&c);

	t[HPET_GAS + 5] ^= 0x10; /* the address, checksum not fixed */
	expect_left_out(&c, false, "HPET checksum");
	t[HPET_GAS + 5] ^= 0x10;

	u32 cuts[] = {HDR_LEN, HDR_LEN + 4, HPET_TABLE_LEN - 1};
	for (unsigned i = 0; i < ARRAY_SIZE(cuts); i++) {
		put_u32(t + HDR_LENGTH, cuts[i]);
		c.extra_len[0] = cuts[i];
		chain_fix(&c);
		expect_left_out(&c, false, "HPET table cut short");
	}
	put_u32(t + HDR_LENGTH, HPET_TABLE_LEN);
	c.extra_len[0] = HPET_TABLE_LEN;

	t[HPET_GAS] = 1; /* system I/O space */
	chain_fix(&c);
	expect_left_out(&c, false, "HPET in I/O space");
	t[HPET_GAS] = 0;
	u64 addrs[] = {0, 0xfed00004ull};
	for (unsigned i = 0; i < ARRAY_SIZE(addrs); i++) {
		put_u64(t + HPET_GAS + 4, addrs[i]);
		chain_fix(&c);
		expect_left_out(&c, false, "HPET address");
	}
	put_u64(t + HPET_GAS + 4, 0xfed00000ull);

	chain_fix(&c);
	c.map_limit = CHAIN_EXTRA + HPET_TABLE_LEN - 1;
	expect_left_out(&c, false, "HPET past the end of memory");
	c.map_limit = CHAIN_SIZE;

	ASSERT_EQ(chain_parse(&c), 0);
	EXPECT_EQ(info.hpet_addr, 0xfed00000ull);
	free_pages(c.buf, CHAIN_ORDER);
}
