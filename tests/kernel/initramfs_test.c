/*
 * The initramfs unpacker (fs/initramfs.c) on archives built here, byte for byte
 * as GNU cpio -o -H newc writes them (a header of 13 hex fields, the name and
 * its NUL padded to 4 bytes with the header, the data padded to 4 bytes, hard
 * links with the data on the last name only), unpacked into each test's own
 * directory: names, types, modes, sizes, contents, symlink targets and link
 * counts; then each kind of malformed input, which must stop at the right
 * offset, say why, keep the members before it and leave the tree consistent
 * (vfs_test_run() checks the caches' counts after every test). The last test
 * checks the boot's own archive: unpacked, and its pages given back.
 */
#include <grace/boot_info.h>
#include <grace/errno.h>
#include <grace/fs.h>
#include <grace/chrdev.h>
#include <grace/initramfs.h>
#include <grace/page.h>
#include <grace/page_alloc.h>
#include <grace/printk.h>
#include <grace/string.h>
#include <grace/test.h>

#include "vfs_test_util.h"

#define ARCHIVE_MAX 16384
#define F_FILESIZE_FIELD 6 /* the header's seventh field */

static u8 archive[ARCHIVE_MAX];
static size_t archive_len;
static bool archive_crc; /* 070702: the check field is the sum of the data bytes */

static void ar_reset(bool crc)
{
	archive_len = 0;
	archive_crc = crc;
	memset(archive, 0, sizeof(archive));
}

static void ar_pad(void)
{
	while (archive_len & 3)
		archive[archive_len++] = 0;
}

/* One member; returns the offset of its header. */
static size_t ar_add(const char *name, u32 mode, u32 ino, u32 nlink, const void *data, u32 size)
{
	size_t at = archive_len, namesize = strlen(name) + 1;
	u32 sum = 0;
	for (u32 i = 0; i < size; i++)
		sum += ((const u8 *)data)[i];
	archive_len += snprintf((char *)archive + at, ARCHIVE_MAX - at,
				"%s%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x%08x",
				archive_crc ? "070702" : "070701", ino, mode, 0, 0, nlink, 0, size,
				8, 1, 0, 0, (u32)namesize, archive_crc ? sum : 0);
	memcpy(archive + archive_len, name, namesize);
	archive_len += namesize;
	ar_pad();
	memcpy(archive + archive_len, data, size);
	archive_len += size;
	ar_pad();
	return at;
}

static void ar_trailer(void)
{
	ar_add("TRAILER!!!", 0, 0, 1, NULL, 0);
	archive_len = ALIGN_UP(archive_len, 512); /* cpio's blocking: NULs */
}

static void ar_file(const char *name, u32 perm, u32 ino, const char *text)
{
	ar_add(name, S_IFREG | perm, ino, 1, text, strlen(text));
}

static void ar_dir(const char *name, u32 perm, u32 ino)
{
	ar_add(name, S_IFDIR | perm, ino, 2, NULL, 0);
}

static void ar_symlink(const char *name, u32 ino, const char *target)
{
	ar_add(name, S_IFLNK | 0777, ino, 1, target, strlen(target));
}

/* Does s hold part? */
static bool contains(const char *s, const char *part)
{
	size_t n = strlen(part);
	for (; *s; s++)
		if (!strncmp(s, part, n))
			return true;
	return false;
}

static int unpack(const char *dir, struct initramfs_report *r)
{
	return initramfs_unpack(archive, archive_len, dir, r);
}

static bool expect_mode(const char *path, u32 mode)
{
	struct stat st;
	int err = vfs_lstat(path, &st);
	if (err)
		return test_fail(__FILE__, __LINE__, "lstat %s: %d", path, err);
	if (st.st_mode != mode)
		return test_fail(__FILE__, __LINE__, "%s: mode 0%o, expected 0%o", path, st.st_mode,
				 mode);
	return true;
}

static u64 ino_of(const char *path)
{
	struct stat st;
	return vfs_lstat(path, &st) ? 0 : st.st_ino;
}

/* A page and a bit of data, so a file crosses a block boundary and its size is not 4-aligned. */
static char big[4096 + 7];

static void members_body(const char *dir)
{
	struct initramfs_report r;
	for (size_t i = 0; i < sizeof(big) - 1; i++)
		big[i] = 'a' + i % 26;
	ar_reset(false);
	ar_dir(".", 0750, 1);
	ar_dir("etc", 0755, 2);
	ar_file("etc/motd", 0644, 3, "hello\n");
	ar_file("etc/odd", 04751, 4, "abc"); /* 3 bytes: the data padding is used */
	ar_add("etc/empty", S_IFREG | 0600, 5, 1, NULL, 0);
	ar_dir("etc/private", 0700, 6);
	ar_symlink("motd-link", 7, "etc/motd");
	ar_symlink("abs-link", 8, "/nowhere/at/all");
	ar_file("big", 0444, 9, big);
	ar_trailer();
	ASSERT_EQ(unpack(dir, &r), 0);
	EXPECT_EQ(r.error, NULL);
	EXPECT_EQ(r.entries, 9);
	EXPECT_EQ(r.skipped, 0);

	struct vfs_text t;
	static char want[4096];
	vfs_text_init(&t, want, sizeof(want));
	vfs_line_dir(&t, "etc", 4, 3);
	vfs_line_file(&t, "etc/motd", "hello\n", 6, 1);
	vfs_line_file(&t, "etc/odd", "abc", 3, 1);
	vfs_line_file(&t, "etc/empty", "", 0, 1);
	vfs_line_dir(&t, "etc/private", 0, 2);
	vfs_line_symlink(&t, "motd-link", "etc/motd");
	vfs_line_symlink(&t, "abs-link", "/nowhere/at/all");
	vfs_line_file(&t, "big", big, sizeof(big) - 1, 1);
	vfs_expect_listing("the unpacked tree", dir, &t);

	/* Modes exactly as archived: "." gives the target directory its mode, as "/" on Linux. */
	expect_mode(dir, S_IFDIR | 0750);
	expect_mode(vfs_at(dir, "etc"), S_IFDIR | 0755);
	expect_mode(vfs_at(dir, "etc/motd"), S_IFREG | 0644);
	expect_mode(vfs_at(dir, "etc/odd"), S_IFREG | 04751);
	expect_mode(vfs_at(dir, "etc/empty"), S_IFREG | 0600);
	expect_mode(vfs_at(dir, "etc/private"), S_IFDIR | 0700);
	expect_mode(vfs_at(dir, "motd-link"), S_IFLNK | 0777);
	expect_mode(vfs_at(dir, "big"), S_IFREG | 0444);
	EXPECT_TRUE(vfs_file_is(vfs_at(dir, "motd-link"), "hello\n"));
}

TEST(initramfs, files_directories_and_symlinks_keep_names_types_modes_sizes_and_contents)
{
	vfs_test_run("initramfs", __func__, members_body);
}

/* A member's device: ar_add() writes devmajor 8, devminor 1; patch the minor. */
static void ar_set_minor(size_t member, u32 minor)
{
	char hex[9];
	snprintf(hex, sizeof(hex), "%08x", minor);
	memcpy(archive + member + 6 + 8 * 8, hex, 8);
}

static void hard_links_body(const char *dir)
{
	struct initramfs_report r;
	ar_reset(false);
	/* GNU cpio: every name of the inode with nlink 3, the data with the last one only. */
	ar_add("one", S_IFREG | 0640, 42, 3, NULL, 0);
	ar_dir("d", 0755, 43);
	ar_add("d/two", S_IFREG | 0640, 42, 3, NULL, 0);
	ar_add("three", S_IFREG | 0640, 42, 3, "shared data", 11);
	/* Same ino, other device: another file. */
	ar_set_minor(ar_add("other-dev", S_IFREG | 0600, 42, 2, "other", 5), 2);
	ar_trailer();
	ASSERT_EQ(unpack(dir, &r), 0);
	EXPECT_EQ(r.entries, 5);

	struct vfs_text t;
	static char want[1024];
	vfs_text_init(&t, want, sizeof(want));
	vfs_line_file(&t, "one", "shared data", 11, 3);
	vfs_line_dir(&t, "d", 1, 2);
	vfs_line_file(&t, "d/two", "shared data", 11, 3);
	vfs_line_file(&t, "three", "shared data", 11, 3);
	vfs_line_file(&t, "other-dev", "other", 5, 1);
	vfs_expect_listing("three names of one inode", dir, &t);
	u64 ino = ino_of(vfs_at(dir, "one"));
	EXPECT_NE(ino, 0);
	EXPECT_EQ(ino_of(vfs_at(dir, "d/two")), ino);
	EXPECT_EQ(ino_of(vfs_at(dir, "three")), ino);
	/* One inode, not copies: a write through one name is read through another. */
	ASSERT_EQ(vfs_write_file(vfs_at(dir, "d/two"), "changed", 7), 0);
	EXPECT_TRUE(vfs_file_is(vfs_at(dir, "one"), "changed"));
}

TEST(initramfs, hard_links_by_ino_and_device_are_one_inode_holding_the_last_names_data)
{
	vfs_test_run("initramfs", __func__, hard_links_body);
}

static void concatenated_body(const char *dir)
{
	struct initramfs_report r;
	ar_reset(false);
	ar_add("a", S_IFREG | 0644, 7, 2, "first", 5);
	ar_trailer();
	/* Extra NULs between archives, a multiple of 4 as Linux requires. */
	archive_len += 64;
	/* The second archive's ino 7 is a file of its own: TRAILER!!! forgot the first's. */
	ar_add("b", S_IFREG | 0644, 7, 2, "second", 6);
	ar_dir("sub", 0711, 8);
	ar_trailer();
	/* A third without a trailer, as the format allows. */
	ar_file("sub/c", 0600, 9, "third");
	ASSERT_EQ(unpack(dir, &r), 0);
	EXPECT_EQ(r.entries, 4);

	struct vfs_text t;
	static char want[1024];
	vfs_text_init(&t, want, sizeof(want));
	vfs_line_file(&t, "a", "first", 5, 1);
	vfs_line_file(&t, "b", "second", 6, 1);
	vfs_line_dir(&t, "sub", 1, 2);
	vfs_line_file(&t, "sub/c", "third", 5, 1);
	vfs_expect_listing("three archives in a row", dir, &t);
	EXPECT_NE(ino_of(vfs_at(dir, "a")), ino_of(vfs_at(dir, "b")));
	expect_mode(vfs_at(dir, "sub"), S_IFDIR | 0711);
}

TEST(initramfs, concatenated_archives_with_nul_padding_and_a_trailer_ending_the_link_table)
{
	vfs_test_run("initramfs", __func__, concatenated_body);
}

static void names_body(const char *dir)
{
	struct initramfs_report r;
	ar_reset(false);
	ar_dir("/top", 0755, 1);
	ar_file("/top/abs", 0644, 2, "absolute");
	ar_file("../../up", 0644, 3, "climbed");
	ar_file("top/./x/../rel", 0644, 4, "dotted");
	ar_file("top//twice", 0644, 5, "slashes");
	ar_trailer();
	ASSERT_EQ(unpack(dir, &r), 0);
	EXPECT_EQ(r.entries, 5);

	struct vfs_text t;
	static char want[1024];
	vfs_text_init(&t, want, sizeof(want));
	vfs_line_dir(&t, "top", 3, 2);
	vfs_line_file(&t, "top/abs", "absolute", 8, 1);
	vfs_line_file(&t, "top/rel", "dotted", 6, 1);
	vfs_line_file(&t, "top/twice", "slashes", 7, 1);
	vfs_line_file(&t, "up", "climbed", 7, 1);
	vfs_expect_listing("names resolved inside the target", dir, &t);
	struct stat st;
	EXPECT_EQ(vfs_lstat("/top", &st), -ENOENT);
	EXPECT_EQ(vfs_lstat("/up", &st), -ENOENT);
}

TEST(initramfs, absolute_and_dotdot_names_land_inside_the_target_as_linux_resolves_them_from_root)
{
	vfs_test_run("initramfs", __func__, names_body);
}

static void replace_body(const char *dir)
{
	struct initramfs_report r;
	ASSERT_EQ(vfs_write_file(vfs_at(dir, "was-file"), "old", 3), 0);
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "was-dir"), 0755), 0);
	ASSERT_EQ(vfs_write_file(vfs_at(dir, "kept"), "old contents", 12), 0);
	ASSERT_EQ(vfs_mkdir(vfs_at(dir, "full"), 0755), 0);
	ASSERT_EQ(vfs_write_file(vfs_at(dir, "full/x"), "x", 1), 0);
	ar_reset(false);
	ar_dir("was-file", 0700, 1);	    /* a file replaced by a directory */
	ar_file("was-dir", 0600, 2, "new"); /* an empty directory by a file */
	ar_file("kept", 0640, 3, "new");    /* a file rewritten: truncated, then written */
	ar_symlink("full", 4, "t");	    /* a non-empty directory stays: the member is skipped */
	ar_trailer();
	ASSERT_EQ(unpack(dir, &r), 0);
	EXPECT_EQ(r.entries, 3);
	EXPECT_EQ(r.skipped, 1);
	expect_mode(vfs_at(dir, "was-file"), S_IFDIR | 0700);
	expect_mode(vfs_at(dir, "was-dir"), S_IFREG | 0600);
	expect_mode(vfs_at(dir, "kept"), S_IFREG | 0640);
	EXPECT_TRUE(vfs_file_is(vfs_at(dir, "kept"), "new"));
	expect_mode(vfs_at(dir, "full"), S_IFDIR | 0755);
}

TEST(initramfs, a_member_replaces_a_name_of_another_type_as_linux_clean_path_does)
{
	vfs_test_run("initramfs", __func__, replace_body);
}

static void crc_body(const char *dir)
{
	struct initramfs_report r;
	ar_reset(true);
	ar_file("good", 0644, 1, "checked bytes");
	size_t bad = ar_add("bad", S_IFREG | 0644, 2, 1, "tampered", 8);
	ar_file("after", 0644, 3, "never");
	ar_trailer();
	/* One byte of bad's data changed after its sum was written. */
	size_t data = bad + ALIGN_UP(110 + 4, 4);
	archive[data] ^= 1;
	test_expect_message("bad data checksum");
	EXPECT_EQ(unpack(dir, &r), -EINVAL);
	EXPECT_EQ(r.entries, 1);
	EXPECT_EQ(r.error_offset, data);
	EXPECT_TRUE(r.error && contains(r.error, "checksum"));
	struct vfs_text t;
	static char want[256];
	vfs_text_init(&t, want, sizeof(want));
	vfs_line_file(&t, "good", "checked bytes", 13, 1);
	vfs_expect_listing("only the member before the bad sum", dir, &t);
}

TEST(initramfs, crc_format_checks_each_files_sum_and_stops_at_a_wrong_one)
{
	vfs_test_run("initramfs", __func__, crc_body);
}

/* ---- malformed archives ---- */

struct malformed {
	const char *what;
	const char *reason; /* in the error */
	size_t offset;	    /* where it must be reported */
};

/* Two good members, then the damage done by how; returns what must be reported. */
static struct malformed damage(int how)
{
	ar_reset(false);
	ar_file("kept", 0644, 1, "before");
	ar_dir("kept-dir", 0755, 2);
	size_t m = archive_len;
	size_t name = m + 110;
	switch (how) {
	case 0:
		ar_file("lost", 0644, 3, "after");
		memcpy(archive + m, "070703", 6);
		return (struct malformed){"bad magic", "bad magic", m};
	case 1:
		ar_file("lost", 0644, 3, "after");
		archive_len = m + 60;
		return (struct malformed){"truncated header", "truncated header", m};
	case 2:
		ar_file("a-long-name-running-past-the-end", 0644, 3, "");
		archive_len = name + 10;
		return (struct malformed){"name past the end", "name runs past", name};
	case 3:
		ar_file("lost", 0644, 3, "data that is cut short");
		archive_len -= 8;
		return (struct malformed){"data past the end", "data runs past",
					  ALIGN_UP(name + 5, 4)};
	case 4:
		ar_file("lost", 0644, 3, "after");
		archive[m + 6 + 8 * F_FILESIZE_FIELD + 3] = 'g';
		return (struct malformed){"non-hex digit", "non-hex digit in the filesize",
					  m + 6 + 8 * F_FILESIZE_FIELD + 3};
	case 5:
		ar_file("lost", 0644, 3, "after");
		archive[name + 4] = 'X'; /* "lost\0" -> "lostX" */
		return (struct malformed){"name without NUL", "not NUL-terminated", name};
	case 6:
		/* A filesize so large that offset + size wraps if added carelessly. */
		ar_file("lost", 0644, 3, "after");
		memcpy(archive + m + 6 + 8 * F_FILESIZE_FIELD, "ffffffff", 8);
		return (struct malformed){"huge filesize", "data runs past", ALIGN_UP(name + 5, 4)};
	default:
		/* A header two bytes off the 4-byte grid, after two NULs: broken padding. */
		ar_file("lost", 0644, 3, "after");
		memmove(archive + m + 2, archive + m, archive_len - m);
		archive[m] = archive[m + 1] = 0;
		archive_len += 2;
		return (struct malformed){"broken padding", "broken padding", m + 2};
	}
}

#define MALFORMED_KINDS 8

static void malformed_body(const char *dir)
{
	for (int how = 0; how < MALFORMED_KINDS; how++) {
		struct initramfs_report r;
		const char *sub = vfs_at(dir, "case%d", how);
		ASSERT_EQ(vfs_mkdir(sub, 0755), 0);
		struct malformed want = damage(how);
		test_expect_message(want.reason);
		EXPECT_EQ(unpack(sub, &r), -EINVAL);
		if (!EXPECT_TRUE(r.error && contains(r.error, want.reason)))
			printk("# %s: error '%s', expected '%s'\n", want.what,
			       r.error ? r.error : "(none)", want.reason);
		if (!EXPECT_EQ(r.error_offset, want.offset))
			printk("# %s\n", want.what);
		EXPECT_EQ(r.entries, 2);
		struct vfs_text t;
		static char lines[256];
		vfs_text_init(&t, lines, sizeof(lines));
		vfs_line_file(&t, "kept", "before", 6, 1);
		vfs_line_dir(&t, "kept-dir", 0, 2);
		vfs_expect_listing(want.what, vfs_at(dir, "case%d", how), &t);
	}
}

/* A member's rdev: ar_add() writes rdevmajor and rdevminor 0; patch them (fields 9 and 10). */
static void ar_set_rdev(size_t member, u32 major, u32 minor)
{
	char hex[17];
	snprintf(hex, sizeof(hex), "%08x%08x", major, minor);
	memcpy(archive + member + 6 + 9 * 8, hex, 16);
}

static void devices_body(const char *dir)
{
	struct initramfs_report r;
	struct stat st;
	char path[256];
	ar_reset(false);
	ar_set_rdev(ar_add("console", S_IFCHR | 0600, 1, 1, NULL, 0), 5, 1);
	ar_add("disk", 0060000 | 0600, 2, 1, NULL, 0); /* a block device: skipped */
	ar_trailer();
	ASSERT_EQ(unpack(dir, &r), 0);
	EXPECT_EQ(r.entries, 1);
	EXPECT_EQ(r.skipped, 1);
	snprintf(path, sizeof(path), "%s/console", dir);
	EXPECT_TRUE(expect_mode(path, S_IFCHR | 0600));
	EXPECT_EQ(vfs_lstat(path, &st), 0);
	EXPECT_EQ(st.st_rdev, MKDEV(5, 1));
	snprintf(path, sizeof(path), "%s/disk", dir);
	EXPECT_EQ(vfs_lstat(path, &st), -ENOENT);
}

TEST(initramfs, a_character_device_member_is_made_with_its_number_and_a_block_device_skipped)
{
	vfs_test_run("initramfs", __func__, devices_body);
}

TEST(initramfs, malformed_input_stops_at_its_offset_with_a_reason_and_keeps_what_came_before)
{
	vfs_test_run("initramfs", __func__, malformed_body);
}

/* ---- the boot's archive ---- */

TEST(initramfs, the_boot_archive_is_unpacked_and_its_pages_go_back_to_the_allocator)
{
	const struct initramfs_boot *b = &initramfs_boot;
	if (!b->present) {
		test_skip("no initramfs handed over at this boot");
		return;
	}
	EXPECT_EQ(b->report.error, NULL);
	EXPECT_GT(b->report.entries, 0);
	/*
	 * Each page of the archive is given back unless another reservation shares it
	 * (GRUB may put its information block in the archive's last page): those stay
	 * reserved, every other one is the allocator's now and counted as managed.
	 */
	u64 first = b->start >> PAGE_SHIFT, last = ALIGN_UP(b->end, PAGE_SIZE) >> PAGE_SHIFT;
	u64 own = 0;
	for (u64 pfn = first; pfn < last; pfn++) {
		phys_addr_t pa = pfn << PAGE_SHIFT;
		bool shared = false;
		for (unsigned i = 0; i < boot_info.nr_reserved; i++) {
			const struct mem_range *r = &boot_info.reserved[i];
			bool archive_own = r->base >= b->start && r->base + r->size <= b->end;
			shared |=
			    !archive_own && r->base < pa + PAGE_SIZE && pa < r->base + r->size;
		}
		own += !shared;
		if (!EXPECT_EQ(!!(pfn_to_page(pfn)->flags & PG_RESERVED), shared))
			break;
	}
	EXPECT_EQ(b->pages_freed, own);
	EXPECT_GE(own,
		  (ALIGN_DOWN(b->end, PAGE_SIZE) - ALIGN_UP(b->start, PAGE_SIZE)) >> PAGE_SHIFT);
	u64 managed = 0;
	for (unsigned n = 0; n < MAX_NODES; n++)
		managed += node_managed_pages((int)n);
	EXPECT_EQ(managed, b->managed_before + b->pages_freed);
}
