/*
 * Multiboot2 EFI memory map selftests (tag 17, drivers/firmware/multiboot2_efi.c).
 * Blocks built here, so they run on every arch: a map of the descriptor types a
 * UEFI firmware uses becomes the E820-style ranges boot takes RAM from, merged where
 * they touch, when the block has no BIOS-style map; with one, that map wins, in
 * either tag order. Bad descriptor sizes and versions, a tag ending inside a
 * descriptor and descriptors that wrap or are not page-aligned are refused with
 * -EINVAL, even beside a good BIOS-style map. On a machine booted through UEFI (the block has tag
 * 17), the two maps GRUB passed agree on the RAM.
 */
#include <grace/boot_info.h>
#include <grace/errno.h>
#include <grace/multiboot2.h>
#include <grace/string.h>
#include <grace/test.h>

#include "blob_copy.h"

#define MB2_TAG_END 0
#define MB2_TAG_MMAP 6
#define MB2_TAG_EFI_MMAP 17
#define EFI_MMAP_HEADER 16
#define EFI_DESC_SIZE 48 /* what OVMF uses: 40 bytes of UEFI 2.x and 8 of padding */
#define EFI_DESC_VERSION 1
#define EFI_MEMORY_SP (1ull << 18)
#define EFI_PAGE 4096ull
#define MiB_ (1ull << 20)

/* EFI_MEMORY_TYPE values the map below uses. */
#define EFI_RESERVED 0
#define EFI_LOADER_CODE 1
#define EFI_LOADER_DATA 2
#define EFI_BOOT_CODE 3
#define EFI_BOOT_DATA 4
#define EFI_RUNTIME_CODE 5
#define EFI_RUNTIME_DATA 6
#define EFI_CONVENTIONAL 7
#define EFI_UNUSABLE 8
#define EFI_ACPI_RECLAIM 9
#define EFI_ACPI_NVS 10
#define EFI_MMIO 11

struct efi_desc {
	u32 type;
	u64 base, pages, attr;
};

/* A small PC's map as OVMF draws it: low RAM, the image, firmware pieces, MMIO. */
static const struct efi_desc pc_map[] = {
    {EFI_BOOT_CODE, 0x0, 1, 0},
    {EFI_CONVENTIONAL, 0x1000, 0x9f, 0},
    {EFI_CONVENTIONAL, 0x100000, 0x700, 0},
    {EFI_LOADER_DATA, 0x800000, 0x10, 0},
    {EFI_LOADER_CODE, 0x810000, 0x10, 0},
    {EFI_BOOT_DATA, 0x820000, 0x7e0, 0},
    {EFI_ACPI_NVS, 0x1000000, 0x100, 0},
    {EFI_CONVENTIONAL, 0x1100000, 0xe00, 0},
    {EFI_CONVENTIONAL, 0x1f00000, 0, 0}, /* empty: skipped, not a hole in the merge */
    {EFI_RUNTIME_DATA, 0x1f00000, 0x40, 0},
    {EFI_RUNTIME_CODE, 0x1f40000, 0x40, 0},
    {EFI_ACPI_RECLAIM, 0x1f80000, 0x10, 0},
    {EFI_CONVENTIONAL, 0x1f90000, 0x60, EFI_MEMORY_SP},
    {EFI_UNUSABLE, 0x1ff0000, 0x10, 0},
    {EFI_CONVENTIONAL, 0x100000000ull, 0x40000, 0},
    {EFI_MMIO, 0xffc00000, 0x400, 0},
    {EFI_RESERVED, 0xfd00000000ull, 0x300000, 0},
};

/* What pc_map must become. */
static const struct mb2_mmap_entry pc_ranges[] = {
    {0x0, 0xa0000, MB2_MEM_AVAILABLE},
    {0x100000, 0xf00000, MB2_MEM_AVAILABLE},
    {0x1000000, 0x100000, MB2_MEM_NVS},
    {0x1100000, 0xe00000, MB2_MEM_AVAILABLE},
    {0x1f00000, 0x80000, MB2_MEM_RESERVED}, /* runtime data and code: one type here */
    {0x1f80000, 0x10000, MB2_MEM_ACPI_RECLAIMABLE},
    {0x1f90000, 0x60000, MB2_MEM_RESERVED}, /* specific-purpose memory is not ours */
    {0x1ff0000, 0x10000, MB2_MEM_BADRAM},
    {0x100000000ull, 0x40000000, MB2_MEM_AVAILABLE},
    {0xffc00000, 0x400000, MB2_MEM_RESERVED},
    {0xfd00000000ull, 0x300000000ull, MB2_MEM_RESERVED},
};

#define BLOCK_SIZE 2048
static u8 block[BLOCK_SIZE] __aligned(8);
static struct mb2_info info; /* large: not on the test's stack */

/* Append a tag of type with body_len bytes of body; returns the body, or NULL when full. */
static u8 *block_tag(u32 *len, u32 type, u32 body_len)
{
	if (*len + 8 + body_len + 8 > BLOCK_SIZE)
		return NULL;
	u8 *tag = block + *len;
	put_u32(tag, type);
	put_u32(tag + 4, 8 + body_len);
	*len += ALIGN_UP(8 + body_len, 8);
	return tag + 8;
}

/* Append tag 17 holding the n descriptors of map. */
static void block_efi_mmap(u32 *len, const struct efi_desc *map, unsigned n)
{
	u8 *body = block_tag(len, MB2_TAG_EFI_MMAP, 8 + n * EFI_DESC_SIZE);
	put_u32(body, EFI_DESC_SIZE);
	put_u32(body + 4, EFI_DESC_VERSION);
	for (unsigned i = 0; i < n; i++) {
		u8 *d = body + 8 + i * EFI_DESC_SIZE;
		memset(d, 0, EFI_DESC_SIZE);
		put_u32(d, map[i].type);
		put_u64(d + 8, map[i].base);
		put_u64(d + 16, map[i].base + 0xffff000000000000ull); /* virtual: unused */
		put_u64(d + 24, map[i].pages);
		put_u64(d + 32, map[i].attr);
		memset(d + 40, 0xa5, EFI_DESC_SIZE - 40); /* a newer firmware's fields: skipped */
	}
}

/* Append tag 6 with one available range. */
static void block_bios_mmap(u32 *len, u64 base, u64 size)
{
	u8 *body = block_tag(len, MB2_TAG_MMAP, 8 + 24);
	put_u32(body, 24); /* entry size */
	put_u32(body + 4, 0);
	put_u64(body + 8, base);
	put_u64(body + 16, size);
	put_u32(body + 24, MB2_MEM_AVAILABLE);
	put_u32(body + 28, 0);
}

/* Close the block with the end tag and set total_size; returns it. */
static u32 block_end(u32 len)
{
	put_u32(block + len, MB2_TAG_END);
	put_u32(block + len + 4, 8);
	len += 8;
	put_u32(block, len);
	put_u32(block + 4, 0);
	return len;
}

/*
 * A block with tag 17 of pc_map (*efi: its offset), after a BIOS-style map when
 * with_bios: then a refusal can only come from the EFI map itself.
 */
static u32 block_pc_map(u32 *efi, bool with_bios)
{
	u32 len = 8;
	if (with_bios)
		block_bios_mmap(&len, MiB_, 31 * MiB_);
	*efi = len;
	block_efi_mmap(&len, pc_map, ARRAY_SIZE(pc_map));
	return block_end(len);
}

static void expect_rejected(u32 len, const char *what)
{
	int err = mb2_parse(block, len, &info);
	if (err != -EINVAL)
		test_fail(__FILE__, __LINE__, "%s: expected -EINVAL, got %d", what, err);
}

TEST(multiboot2, efi_memory_map_alone_gives_the_ram)
{
	u32 efi, len = block_pc_map(&efi, false);
	ASSERT_EQ(mb2_parse(block, len, &info), 0);
	EXPECT_TRUE(info.mmap_from_efi);
	ASSERT_EQ(info.nr_mmap, ARRAY_SIZE(pc_ranges));
	for (unsigned i = 0; i < ARRAY_SIZE(pc_ranges); i++) {
		const struct mb2_mmap_entry *got = &info.mmap[i], *want = &pc_ranges[i];
		if (got->base != want->base || got->length != want->length ||
		    got->type != want->type)
			test_fail(__FILE__, __LINE__,
				  "range %u: %llx+%llx type %u, expected %llx+%llx type %u", i,
				  (unsigned long long)got->base, (unsigned long long)got->length,
				  got->type, (unsigned long long)want->base,
				  (unsigned long long)want->length, want->type);
	}
	EXPECT_EQ(mb2_available_bytes(&info), 0xa0000 + 0xf00000 + 0xe00000 + 0x40000000ull);
	EXPECT_TRUE(mb2_range_in_mmap(&info, 0x1f80000, 0x10000, MB2_TYPES_FIRMWARE));
	EXPECT_FALSE(mb2_range_in_mmap(&info, 0x1ff0000, 0x1000, MB2_TYPES_FIRMWARE));
}

TEST(multiboot2, bios_memory_map_wins_over_the_efi_one)
{
	for (int bios_first = 0; bios_first < 2; bios_first++) {
		u32 len = 8;
		if (bios_first)
			block_bios_mmap(&len, MiB_, 31 * MiB_);
		block_efi_mmap(&len, pc_map, ARRAY_SIZE(pc_map));
		if (!bios_first)
			block_bios_mmap(&len, MiB_, 31 * MiB_);
		len = block_end(len);
		ASSERT_EQ(mb2_parse(block, len, &info), 0);
		EXPECT_FALSE(info.mmap_from_efi);
		EXPECT_EQ(info.nr_mmap, 1);
		EXPECT_EQ(mb2_available_bytes(&info), 31 * MiB_);
		/* The EFI map was still read (and checked): it is there for whoever compares. */
		EXPECT_EQ(info.nr_efi_mmap, ARRAY_SIZE(pc_ranges));
	}
}

TEST(multiboot2, rejects_bad_efi_descriptor_size)
{
	test_expect_message("multiboot2: ");
	u32 efi, len = block_pc_map(&efi, true);
	u32 bad[] = {0, 8, 32, 39, 41, 44, 0xfffffff8u};
	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		put_u32(block + efi + 8, bad[i]);
		expect_rejected(len, "EFI descriptor size");
	}
}

TEST(multiboot2, rejects_bad_efi_descriptor_version)
{
	test_expect_message("multiboot2: ");
	u32 efi, len = block_pc_map(&efi, true);
	u32 bad[] = {0, 2, 0xffffffffu};
	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		put_u32(block + efi + 12, bad[i]);
		expect_rejected(len, "EFI descriptor version");
	}
}

TEST(multiboot2, rejects_truncated_efi_memory_map)
{
	test_expect_message("multiboot2: ");
	/* The tag's size ends it inside a descriptor, or inside its own header. */
	u32 cuts[] = {8,
		      12,
		      15,
		      EFI_MMAP_HEADER + 1,
		      EFI_MMAP_HEADER + EFI_DESC_SIZE - 8,
		      EFI_MMAP_HEADER + 3 * EFI_DESC_SIZE + 40};
	for (unsigned i = 0; i < ARRAY_SIZE(cuts); i++) {
		u32 efi, len = block_pc_map(&efi, true);
		put_u32(block + efi + 4, cuts[i]);
		/* The end tag follows the cut tag, as a loader that wrote it so would place it. */
		u32 end = efi + ALIGN_UP(cuts[i], 8);
		len = block_end(end);
		expect_rejected(len, "EFI memory map cut inside a descriptor");
	}
	/* The block itself ends in the middle of the map. */
	u32 efi, len = block_pc_map(&efi, true);
	expect_rejected(efi + EFI_MMAP_HEADER + EFI_DESC_SIZE, "block cut inside the EFI map");
	put_u32(block, efi + EFI_MMAP_HEADER + EFI_DESC_SIZE);
	expect_rejected(len, "total_size cutting the EFI map");
}

TEST(multiboot2, rejects_wrapping_efi_descriptors)
{
	test_expect_message("multiboot2: ");
	static const struct efi_desc bad[] = {
	    {EFI_CONVENTIONAL, 0xfffffffffffff000ull, 2, 0},	    /* wraps past 2^64 */
	    {EFI_CONVENTIONAL, 0x100000, 0x0010000000000000ull, 0}, /* 2^52 pages: 2^64 bytes */
	    {EFI_CONVENTIONAL, 0x100800, 1, 0},			    /* not page-aligned */
	};
	for (unsigned i = 0; i < ARRAY_SIZE(bad); i++) {
		u32 len = 8;
		block_bios_mmap(&len, MiB_, 31 * MiB_);
		block_efi_mmap(&len, &bad[i], 1);
		len = block_end(len);
		expect_rejected(len, "malformed EFI descriptor");
	}
}

/*
 * GRUB reads the firmware's map twice: for tag 6 when it builds the block, and for
 * tag 17 when it exits boot services. Its own allocations in between only move memory
 * between types it calls available in both, so the RAM must agree to the byte.
 */
TEST(multiboot2, boot_efi_memory_map_agrees_with_the_bios_one)
{
	const u8 *b = boot_info.fw_blob;
	if (!b || boot_info.fw_blob_size < 16 || get_unaligned_u32(b) != boot_info.fw_blob_size ||
	    get_unaligned_u32(b + 4) != 0) {
		test_skip("the machine did not boot through multiboot2");
		return;
	}
	ASSERT_EQ(mb2_parse(b, boot_info.fw_blob_size, &info), 0);
	if (!info.nr_efi_mmap) {
		test_skip("no EFI memory map: the machine did not boot through UEFI");
		return;
	}
	EXPECT_EQ(info.nr_efi_mmap_dropped, 0);
	u64 efi_avail = 0;
	for (unsigned i = 0; i < info.nr_efi_mmap; i++) {
		const struct mb2_mmap_entry *e = &info.efi_mmap[i];
		if (e->type != MB2_MEM_AVAILABLE)
			continue;
		efi_avail += e->length;
		/* Every EFI range of RAM is RAM in the BIOS-style map too. */
		if (!info.mmap_from_efi &&
		    !mb2_range_in_mmap(&info, e->base, e->length, 1u << MB2_MEM_AVAILABLE))
			test_fail(__FILE__, __LINE__, "EFI RAM %llx+%llx is not RAM in tag 6",
				  (unsigned long long)e->base, (unsigned long long)e->length);
	}
	EXPECT_EQ(efi_avail, mb2_available_bytes(&info));
}
