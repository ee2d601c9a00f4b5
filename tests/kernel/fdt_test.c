/*
 * FDT parser selftests: the blob the machine booted with parses to what boot put in
 * boot_info, and damaged copies of it (truncated, bad magic, sizes, offsets,
 * unterminated strings, property lengths past the end, a tree without memory)
 * are refused with an error instead of a crash. Where the firmware blob is not a
 * device tree (x86_64 boots from multiboot2) the tests skip.
 */
#include <grace/boot_info.h>
#include <grace/errno.h>
#include <grace/fdt.h>
#include <grace/page_alloc.h>
#include <grace/string.h>
#include <grace/test.h>

#ifdef __riscv
#include "../../arch/riscv64/sbi.h"
#endif
#include "blob_copy.h"
#include "host_expect.h"

/* Header field offsets (DTB version 17), to damage copies with. */
#define HDR_MAGIC 0
#define HDR_TOTALSIZE 4
#define HDR_OFF_STRUCT 8
#define HDR_OFF_STRINGS 12
#define HDR_OFF_RSVMAP 16
#define HDR_SIZE_STRINGS 32
#define HDR_SIZE_STRUCT 36
#define FDT_PROP_TOKEN 3
#define DIRECT_MAP_BLOCK (2ULL << 20) /* riscv64's direct map: RAM in whole 2 MiB blocks */

static u32 get_be32(const u8 *p)
{
	return (u32)p[0] << 24 | (u32)p[1] << 16 | (u32)p[2] << 8 | p[3];
}

static void put_be32(u8 *p, u32 v)
{
	p[0] = (u8)(v >> 24);
	p[1] = (u8)(v >> 16);
	p[2] = (u8)(v >> 8);
	p[3] = (u8)v;
}

/* The boot blob, or false (and the test skipped) when the machine has none. */
static bool boot_fdt(void)
{
	if (!boot_info.fw_blob || boot_info.fw_blob_size < 8 ||
	    !fdt_header_size(boot_info.fw_blob)) {
		test_skip("the firmware blob is not a device tree on this machine");
		return false;
	}
	return true;
}

/* fdt_open() on the copy must fail with -EINVAL and give a reason. */
static void expect_rejected(struct blob_copy *c, size_t len, const char *what)
{
	struct fdt fdt;
	int err = fdt_open(&fdt, c->buf, len);
	if (err != -EINVAL || !fdt.error)
		test_fail(__FILE__, __LINE__, "%s: expected -EINVAL with a reason, got %d", what,
			  err);
}

TEST(fdt, boot_blob_matches_boot_info)
{
	static struct host_expect e;
	if (!boot_fdt() || !host_expect_get(&e))
		return;
	static struct fdt_machine m;
	struct fdt fdt;
	ASSERT_EQ(fdt_open(&fdt, boot_info.fw_blob, boot_info.fw_blob_size), 0);
	u32 boot_hart = boot_info.cpus[boot_info.boot_cpu].hwid;
	ASSERT_EQ(fdt_scan_machine(&fdt, boot_hart, &m), 0);

	/*
	 * What QEMU built, as the runner read it from outside, less the harts the
	 * firmware keeps (the runner knows its limit; below, each is one it refuses).
	 */
	EXPECT_EQ(boot_info.nr_cpus_found, e.cpus);
	for (unsigned i = 0; i < boot_info.nr_cpus; i++)
		if (!host_expect_has_hwid(&e, boot_info.cpus[i].hwid))
			test_fail(__FILE__, __LINE__, "hart %u is not one QEMU was given",
				  boot_info.cpus[i].hwid);
	/* The firmware may have marked its own RAM no-map (OpenSBI does on sifive_u). */
	u64 ram = m.nomap_ram;
	for (unsigned i = 0; i < m.nr_mem; i++)
		ram += m.mem[i].size;
	EXPECT_EQ(ram, e.mem_bytes);
	EXPECT_EQ(m.nr_nodes, e.nodes);

	/*
	 * And boot kept what the parser found, in whole 2 MiB blocks: the direct map's
	 * finest leaf (mmu_init drops a range with none).
	 */
	unsigned kept = 0;
	for (unsigned i = 0; i < m.nr_mem; i++) {
		u64 lo = ALIGN_UP(m.mem[i].base, DIRECT_MAP_BLOCK);
		u64 hi = ALIGN_DOWN(m.mem[i].base + m.mem[i].size, DIRECT_MAP_BLOCK);
		if (hi <= lo)
			continue;
		kept++;
		bool found = false;
		for (unsigned j = 0; j < boot_info.nr_mem; j++)
			found |= boot_info.mem[j].base == lo && boot_info.mem[j].size == hi - lo &&
				 boot_info.mem[j].node == m.mem[i].node;
		if (!found)
			test_fail(__FILE__, __LINE__,
				  "RAM [%llx, %llx) is not in boot_info as [%llx, %llx)",
				  (unsigned long long)m.mem[i].base,
				  (unsigned long long)(m.mem[i].base + m.mem[i].size),
				  (unsigned long long)lo, (unsigned long long)hi);
	}
	EXPECT_EQ(kept, boot_info.nr_mem);
	/* Boot reserves the firmware's ranges first, then adds the DTB itself. */
	ASSERT_LE(m.nr_reserved, boot_info.nr_reserved);
	for (unsigned i = 0; i < m.nr_reserved; i++) {
		EXPECT_EQ(m.reserved[i].base, boot_info.reserved[i].base);
		EXPECT_EQ(m.reserved[i].size, boot_info.reserved[i].size);
	}
	/*
	 * boot_info's CPUs are the parser's harts in order, less those the firmware
	 * cannot start (never the boot hart): each left out is one it refuses.
	 */
	ASSERT_LE(boot_info.nr_cpus, m.nr_harts);
	unsigned n = 0;
	for (unsigned i = 0; i < m.nr_harts; i++) {
		if (n < boot_info.nr_cpus && m.harts[i].hartid == boot_info.cpus[n].hwid) {
			EXPECT_EQ(m.harts[i].node, boot_info.cpus[n].node);
			if (i == m.boot_index)
				EXPECT_EQ(n, boot_info.boot_cpu);
			n++;
			continue;
		}
		EXPECT_NE(i, m.boot_index);
#ifdef __riscv
		EXPECT_FALSE(sbi_hart_startable(m.harts[i].hartid));
#endif
	}
	EXPECT_EQ(n, boot_info.nr_cpus);
	EXPECT_EQ(m.nr_harts_found - (m.nr_harts - n), boot_info.nr_cpus_found);
	EXPECT_EQ(m.nr_nodes, boot_info.nr_nodes);
	EXPECT_EQ(m.console.kind, boot_info.console.kind);
	EXPECT_EQ(m.console.base, boot_info.console.base);
	EXPECT_EQ(m.console.reg_shift, boot_info.console.reg_shift);
	EXPECT_EQ(m.console.reg_io_width, boot_info.console.reg_io_width);
	EXPECT_EQ(m.console.irq, boot_info.console.irq);
	EXPECT_EQ(m.timebase_hz, boot_info.timer_hz);
	EXPECT_EQ(strcmp(m.bootargs, boot_info.cmdline), 0);
}

TEST(fdt, walk_finds_cpus_and_chosen)
{
	if (!boot_fdt())
		return;
	struct fdt fdt;
	ASSERT_EQ(fdt_open(&fdt, boot_info.fw_blob, boot_info.fw_blob_size), 0);
	int cpus = fdt_path(&fdt, "/cpus", 5);
	ASSERT_GE(cpus, 0);
	unsigned n = 0;
	for (int c = fdt_first_child(&fdt, cpus); c >= 0; c = fdt_next_sibling(&fdt, c)) {
		const char *type = fdt_prop_string(&fdt, c, "device_type");
		n += type && !strcmp(type, "cpu");
	}
	EXPECT_GE(n, boot_info.nr_cpus);
	EXPECT_GE(fdt_path(&fdt, "/chosen", 7), 0);
	EXPECT_EQ(fdt_path(&fdt, "/no-such-node", 13), -ENOENT);
	EXPECT_EQ(fdt_path(&fdt, "relative", 8), -EINVAL);
	EXPECT_EQ(fdt_node_by_phandle(&fdt, 0), -ENOENT);
}

TEST(fdt, rejects_truncated)
{
	if (!boot_fdt())
		return;
	struct blob_copy c;
	if (!blob_copy_get(&c))
		return;
	u32 off_struct = get_be32(c.buf + HDR_OFF_STRUCT);
	u32 size_struct = get_be32(c.buf + HDR_SIZE_STRUCT);

	/* A buffer shorter than the header says. */
	u32 cuts[] = {0, 1, 39, 40, off_struct, off_struct + 5, c.size / 2, c.size - 1};
	for (unsigned i = 0; i < ARRAY_SIZE(cuts); i++)
		expect_rejected(&c, cuts[i], "buffer cut short");

	/* A structure block that stops early: the walk must run out cleanly at every point. */
	for (u32 cut = 0; cut < size_struct; cut += cut < 256 ? 1 : 61) {
		blob_copy_reset(&c);
		put_be32(c.buf + HDR_SIZE_STRUCT, cut);
		expect_rejected(&c, c.size, "structure block cut short");
	}
	blob_copy_put(&c);
}

TEST(fdt, rejects_bad_header)
{
	if (!boot_fdt())
		return;
	struct blob_copy c;
	if (!blob_copy_get(&c))
		return;
	struct {
		unsigned field;
		u32 value;
		const char *what;
	} bad[] = {
	    {HDR_MAGIC, 0xfeedd00d, "bad magic"},
	    {HDR_TOTALSIZE, c.size + 1, "totalsize past the buffer"},
	    {HDR_TOTALSIZE, 0xffffffff, "huge totalsize"},
	    {HDR_TOTALSIZE, 8, "totalsize smaller than the header"},
	    {HDR_OFF_STRUCT, c.size, "struct offset at the end"},
	    {HDR_OFF_STRUCT, 0xfffffff0, "struct offset past the end"},
	    {HDR_OFF_STRUCT, 2, "struct offset inside the header"},
	    {HDR_SIZE_STRUCT, 0xffffff00, "struct size past the end"},
	    {HDR_OFF_STRINGS, 0xfffffff0, "strings offset past the end"},
	    {HDR_SIZE_STRINGS, c.size, "strings size past the end"},
	    {HDR_OFF_RSVMAP, c.size, "reservation block at the end"},
	    {HDR_OFF_RSVMAP, 44, "misaligned reservation block"},
	};
	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		blob_copy_reset(&c);
		put_be32(c.buf + bad[i].field, bad[i].value);
		expect_rejected(&c, c.size, bad[i].what);
	}
	/* Misaligned structure block: shift the offset by 2. */
	blob_copy_reset(&c);
	put_be32(c.buf + HDR_OFF_STRUCT, get_be32(c.buf + HDR_OFF_STRUCT) + 2);
	expect_rejected(&c, c.size, "misaligned struct offset");
	blob_copy_put(&c);
}

/* Offset in the blob of the PROP token of /cpus's #address-cells (any property will do). */
static u32 some_prop_token(const struct blob_copy *c)
{
	struct fdt fdt;
	if (fdt_open(&fdt, c->buf, c->size))
		return 0;
	int cpus = fdt_path(&fdt, "/cpus", 5);
	const u8 *v = cpus >= 0 ? fdt_prop(&fdt, cpus, "#address-cells", NULL) : NULL;
	return v ? (u32)(v - c->buf) - 12 : 0;
}

TEST(fdt, rejects_bad_strings_and_lengths)
{
	if (!boot_fdt())
		return;
	struct blob_copy c;
	if (!blob_copy_get(&c))
		return;
	u32 prop = some_prop_token(&c);
	ASSERT_NE(prop, 0);
	ASSERT_EQ(get_be32(c.buf + prop), FDT_PROP_TOKEN);
	u32 size_struct = get_be32(c.buf + HDR_SIZE_STRUCT);
	u32 size_strings = get_be32(c.buf + HDR_SIZE_STRINGS);

	u32 lens[] = {size_struct, 0x7ffffff0, 0xffffffff};
	for (unsigned i = 0; i < ARRAY_SIZE(lens); i++) {
		blob_copy_reset(&c);
		put_be32(c.buf + prop + 4, lens[i]);
		expect_rejected(&c, c.size, "property length past the end");
	}
	u32 nameoffs[] = {size_strings, size_strings + 100, 0xffffffff};
	for (unsigned i = 0; i < ARRAY_SIZE(nameoffs); i++) {
		blob_copy_reset(&c);
		put_be32(c.buf + prop + 8, nameoffs[i]);
		expect_rejected(&c, c.size, "property name offset past the strings");
	}
	/* Drop the strings block's last NUL: the last property name is then unterminated. */
	blob_copy_reset(&c);
	put_be32(c.buf + HDR_SIZE_STRINGS, size_strings - 1);
	expect_rejected(&c, c.size, "unterminated property name");

	/* An unknown token where the property was. */
	blob_copy_reset(&c);
	put_be32(c.buf + prop, 0x77);
	expect_rejected(&c, c.size, "unknown token");

	/* The root node's name runs to the end of a structure block that ends inside it. */
	blob_copy_reset(&c);
	u32 off_struct = get_be32(c.buf + HDR_OFF_STRUCT);
	c.buf[off_struct + 4] = 'x';
	put_be32(c.buf + HDR_SIZE_STRUCT, 5);
	expect_rejected(&c, c.size, "unterminated node name");
	blob_copy_put(&c);
}

TEST(fdt, tree_without_memory_is_an_error)
{
	test_expect_message("fdt: ");
	if (!boot_fdt())
		return;
	static struct fdt_machine m;
	struct blob_copy c;
	if (!blob_copy_get(&c))
		return;
	struct fdt fdt;
	ASSERT_EQ(fdt_open(&fdt, c.buf, c.size), 0);
	/* Turn every memory node's device_type into something else. */
	int depth = 0;
	for (int n = fdt_root(&fdt); n >= 0; n = fdt_next_node(&fdt, n, &depth)) {
		char *type = (char *)fdt_prop_string(&fdt, n, "device_type");
		if (type && !strcmp(type, "memory"))
			type[0] = 'x';
	}
	u32 boot_hart = boot_info.cpus[boot_info.boot_cpu].hwid;
	EXPECT_EQ(fdt_scan_machine(&fdt, boot_hart, &m), -ENOENT);
	/* And a boot hart the tree does not describe. */
	blob_copy_reset(&c);
	ASSERT_EQ(fdt_open(&fdt, c.buf, c.size), 0);
	EXPECT_EQ(fdt_scan_machine(&fdt, 0xfffffffe, &m), -ENODEV);
	blob_copy_put(&c);
}
