/*
 * Multiboot2 parser selftests: the information block GRUB handed this machine
 * parses to what boot put in boot_info (command line, RAM), and damaged copies of
 * it (truncated at several points, bad total_size, a tag running past the end, a
 * missing end tag, an unterminated string, a bad memory map entry size, a short
 * RSDP tag) are refused with -EINVAL instead of a crash. Where the machine did not
 * boot through multiboot2 (riscv64 boots with a device tree) the tests skip.
 */
#include <grace/boot_info.h>
#include <grace/errno.h>
#include <grace/page_alloc.h>
#include <grace/multiboot2.h>
#include <grace/string.h>
#include <grace/test.h>

#include "blob_copy.h"
#include "host_expect.h"

#define MB2_TAG_END 0
#define MB2_TAG_CMDLINE 1
#define MB2_TAG_MMAP 6
#define MB2_TAG_ACPI_OLD 14
#define MB2_TAG_ACPI_NEW 15
#define TAG_NOT_FOUND 0

static struct mb2_info info; /* large: not on the test's stack */

/* The boot blob is a multiboot2 block when it starts with its own size and a zero word. */
static bool boot_mb2(void)
{
	const u8 *b = boot_info.fw_blob;
	if (!b || boot_info.fw_blob_size < 16 || get_unaligned_u32(b) != boot_info.fw_blob_size ||
	    get_unaligned_u32(b + 4) != 0) {
		test_skip("the machine did not boot through multiboot2");
		return false;
	}
	return true;
}

/* Offset of the first tag of this type in the (valid) copy, or TAG_NOT_FOUND. */
static u32 tag_find(const struct blob_copy *c, u32 type)
{
	for (u32 off = 8; off + 8 <= c->size;) {
		u32 t = get_unaligned_u32(c->buf + off), size = get_unaligned_u32(c->buf + off + 4);
		if (t == type)
			return off;
		if (t == MB2_TAG_END || size < 8)
			break;
		off += ALIGN_UP(size, 8);
	}
	return TAG_NOT_FOUND;
}

static void expect_rejected(struct blob_copy *c, size_t len, const char *what)
{
	int err = mb2_parse(c->buf, len, &info);
	if (err != -EINVAL)
		test_fail(__FILE__, __LINE__, "%s: expected -EINVAL, got %d", what, err);
}

/*
 * RAM the firmware keeps for itself out of what QEMU was given: below 1 MiB the
 * legacy hole and the EBDA (385 KiB), at the top SeaBIOS's tables (128 KiB);
 * 513 KiB in all at MEM=96M and 512M. Twice that, rounded up, is the allowance.
 * OVMF keeps more: its runtime services code and data, ACPI tables and NVS, and the
 * legacy hole, 6.5 MiB at MEM=512M (pc and q35); twice that, rounded up, again.
 */
#define MB2_FIRMWARE_RAM_MAX (2ULL << 20)
#define MB2_UEFI_FIRMWARE_RAM_MAX (14ULL << 20)

TEST(multiboot2, boot_blob_matches_boot_info)
{
	static struct host_expect e;
	if (!boot_mb2() || !host_expect_get(&e))
		return;
	ASSERT_EQ(mb2_parse(boot_info.fw_blob, boot_info.fw_blob_size, &info), 0);

	/* The RAM QEMU was given, as the runner knows it from outside, less the firmware's. */
	u64 avail = mb2_available_bytes(&info);
	u64 firmware_max = info.nr_efi_mmap ? MB2_UEFI_FIRMWARE_RAM_MAX : MB2_FIRMWARE_RAM_MAX;
	if (avail > e.mem_bytes || avail + firmware_max < e.mem_bytes)
		test_fail(__FILE__, __LINE__, "%llu KiB available of the %llu KiB QEMU was given",
			  (unsigned long long)(avail >> 10),
			  (unsigned long long)(e.mem_bytes >> 10));

	EXPECT_EQ(info.total_size, boot_info.fw_blob_size);
	EXPECT_EQ(strncmp(info.cmdline, boot_info.cmdline, CMDLINE_MAX - 1), 0);
	EXPECT_TRUE(info.rsdp_v1 || info.rsdp_v2);

	/* Boot's RAM is the available entries (maybe split at NUMA boundaries): same bytes. */
	u64 ram = 0;
	for (unsigned i = 0; i < boot_info.nr_mem; i++) {
		ram += boot_info.mem[i].size;
		EXPECT_TRUE(mb2_range_in_mmap(&info, boot_info.mem[i].base, boot_info.mem[i].size,
					      1u << MB2_MEM_AVAILABLE));
	}
	EXPECT_EQ(mb2_available_bytes(&info), ram);

	/* Boot reserved the block itself and every module. */
	phys_addr_t blob_pa = virt_to_phys(boot_info.fw_blob);
	bool blob_reserved = false;
	for (unsigned i = 0; i < boot_info.nr_reserved; i++)
		blob_reserved |= boot_info.reserved[i].base <= blob_pa &&
				 blob_pa + info.total_size <=
				     boot_info.reserved[i].base + boot_info.reserved[i].size;
	EXPECT_TRUE(blob_reserved);
}

TEST(multiboot2, rejects_truncated_copies)
{
	test_expect_message("multiboot2: ");
	struct blob_copy c;
	if (!boot_mb2() || !blob_copy_get(&c))
		return;
	u32 cuts[] = {0, 4, 8, 15, 16, c.size / 2, c.size - 8, c.size - 1};
	for (unsigned i = 0; i < ARRAY_SIZE(cuts); i++) {
		/* The buffer ends early, total_size still claims the whole block. */
		expect_rejected(&c, cuts[i], "buffer cut short");
		/* total_size agrees with the cut: the tags (or the end tag) are cut off. */
		u32 cut = ALIGN_DOWN(cuts[i], 8);
		if (cut >= 8) {
			put_u32(c.buf, cut);
			expect_rejected(&c, cut, "block cut with matching total_size");
			blob_copy_reset(&c);
		}
	}
	/* The uncut copy still parses: the damage above is what was refused. */
	EXPECT_EQ(mb2_parse(c.buf, c.size, &info), 0);
	blob_copy_put(&c);
}

TEST(multiboot2, rejects_bad_total_size)
{
	test_expect_message("multiboot2: ");
	struct blob_copy c;
	if (!boot_mb2() || !blob_copy_get(&c))
		return;
	u32 bad[] = {0, 7, 15, c.size + 8, 0xffffffffu};
	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		put_u32(c.buf, bad[i]);
		expect_rejected(&c, c.size, "bad total_size");
	}
	blob_copy_put(&c);
}

TEST(multiboot2, rejects_tag_past_end)
{
	test_expect_message("multiboot2: ");
	struct blob_copy c;
	if (!boot_mb2() || !blob_copy_get(&c))
		return;
	u32 off = tag_find(&c, MB2_TAG_MMAP);
	ASSERT_NE(off, TAG_NOT_FOUND);
	put_u32(c.buf + off + 4, c.size - off + 8);
	expect_rejected(&c, c.size, "memory map tag running past the end");
	put_u32(c.buf + off + 4, 0xfffffff8u);
	expect_rejected(&c, c.size, "memory map tag with a huge size");
	put_u32(c.buf + off + 4, 4);
	expect_rejected(&c, c.size, "tag smaller than its header");
	blob_copy_put(&c);
}

TEST(multiboot2, rejects_missing_end_tag)
{
	test_expect_message("multiboot2: ");
	struct blob_copy c;
	if (!boot_mb2() || !blob_copy_get(&c))
		return;
	u32 off = tag_find(&c, MB2_TAG_END);
	ASSERT_NE(off, TAG_NOT_FOUND);
	put_u32(c.buf + off, 0x7777); /* an unknown tag where the end tag was */
	expect_rejected(&c, c.size, "no end tag");
	blob_copy_put(&c);
}

TEST(multiboot2, rejects_unterminated_cmdline)
{
	test_expect_message("multiboot2: ");
	struct blob_copy c;
	if (!boot_mb2() || !blob_copy_get(&c))
		return;
	u32 off = tag_find(&c, MB2_TAG_CMDLINE);
	ASSERT_NE(off, TAG_NOT_FOUND);
	u32 size = get_unaligned_u32(c.buf + off + 4);
	memset(c.buf + off + 8, 'x', size - 8);
	expect_rejected(&c, c.size, "command line without its NUL");
	blob_copy_put(&c);
}

TEST(multiboot2, rejects_bad_mmap_entry_size)
{
	test_expect_message("multiboot2: ");
	struct blob_copy c;
	if (!boot_mb2() || !blob_copy_get(&c))
		return;
	u32 off = tag_find(&c, MB2_TAG_MMAP);
	ASSERT_NE(off, TAG_NOT_FOUND);
	u32 bad[] = {0, 8, 23, 25};
	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		put_u32(c.buf + off + 8, bad[i]);
		expect_rejected(&c, c.size, "memory map entry size");
	}
	blob_copy_put(&c);
}

TEST(multiboot2, rejects_short_rsdp_tag)
{
	test_expect_message("multiboot2: ");
	struct blob_copy c;
	if (!boot_mb2() || !blob_copy_get(&c))
		return;
	u32 off = tag_find(&c, MB2_TAG_ACPI_NEW);
	if (off == TAG_NOT_FOUND)
		off = tag_find(&c, MB2_TAG_ACPI_OLD);
	ASSERT_NE(off, TAG_NOT_FOUND);
	put_u32(c.buf + off + 4, 8 + 10); /* half an RSDP */
	expect_rejected(&c, c.size, "RSDP tag shorter than an RSDP");
	blob_copy_put(&c);
}
