/*
 * The copy cursor (grace/uio.h): a kernel cursor over several segments, empty
 * ones among them, moves what fits and counts what is left; a user cursor
 * stops at the first byte that faults and stays on it, so the caller knows
 * exactly what was moved, over one buffer or at an unmapped segment in the
 * middle of a vector; and a user cursor given a mapped kernel address moves
 * nothing (access_ok()), where a copy without the check would succeed.
 */
#include <grace/string.h>
#include <grace/uaccess.h>
#include <grace/uio.h>
#include "as_test.h"

static u8 uio_src[64], uio_dst[64];

static void uio_pattern(void)
{
	for (unsigned i = 0; i < sizeof(uio_src); i++)
		uio_src[i] = (u8)(i + 1);
	memset(uio_dst, 0xee, sizeof(uio_dst));
}

TEST(uio, kernel_cursor_walks_segments_and_counts_what_is_left)
{
	uio_pattern();
	struct iovec v[] = {{uio_dst, 5}, {uio_dst + 10, 0}, {uio_dst + 20, 7}, {uio_dst + 40, 4}};
	struct iov_iter it;
	iov_iter_init(&it, ITER_KERNEL, v, ARRAY_SIZE(v), 16);

	EXPECT_EQ(copy_to_iter(uio_src, 3, &it), 3);
	EXPECT_EQ(iov_iter_count(&it), 13);
	/* Across the end of the first segment, over the empty one, into the third. */
	EXPECT_EQ(copy_to_iter(uio_src + 3, 6, &it), 6);
	EXPECT_EQ(memcmp(uio_dst, uio_src, 5), 0);
	EXPECT_EQ(memcmp(uio_dst + 20, uio_src + 5, 4), 0);
	EXPECT_EQ(uio_dst[24], 0xee);
	/* More than is left: only what is left. */
	EXPECT_EQ(copy_to_iter(uio_src + 9, 40, &it), 7);
	EXPECT_EQ(iov_iter_count(&it), 0);
	EXPECT_EQ(memcmp(uio_dst + 24, uio_src + 9, 3), 0);
	EXPECT_EQ(memcmp(uio_dst + 40, uio_src + 12, 4), 0);
	EXPECT_EQ(uio_dst[44], 0xee);
	EXPECT_EQ(copy_to_iter(uio_src, 1, &it), 0);

	/* The other way, and zeros, after a step over. */
	u8 k[8];
	iov_iter_init(&it, ITER_KERNEL, v, ARRAY_SIZE(v), 16);
	iov_iter_advance(&it, 4);
	EXPECT_EQ(copy_from_iter(k, 3, &it), 3);
	EXPECT_EQ(k[0], uio_src[4]);
	EXPECT_EQ(k[1], uio_src[5]);
	EXPECT_EQ(k[2], uio_src[6]);
	EXPECT_EQ(iov_iter_zero(2, &it), 2);
	EXPECT_EQ(uio_dst[21], uio_src[6]);
	EXPECT_EQ(uio_dst[22], 0);
	EXPECT_EQ(uio_dst[23], 0);
	EXPECT_EQ(iov_iter_count(&it), 7);
}

/* Two pages mapped, the third not: the copy stops at its first byte, and so does the cursor. */
TEST(uio, user_cursor_stops_at_the_first_faulting_byte)
{
	uintptr_t va = as_slot(0), end = va + 2 * PAGE_SIZE;
	struct mm *mm = mm_create();
	ASSERT_TRUE(mm != NULL);
	mm_switch(mm);
	ASSERT_EQ(vma_map(mm, va, 2 * PAGE_SIZE, PROT_READ | PROT_WRITE, VMA_NOHUGE), 0);
	uio_pattern();
	struct iov_iter it;

	iov_iter_ubuf(&it, (void __user *)(end - 10), 30);
	EXPECT_TRUE(iov_iter_access_ok(&it));
	EXPECT_EQ(copy_to_iter(uio_src, 30, &it), 10);
	EXPECT_EQ(iov_iter_count(&it), 20);
	EXPECT_EQ(copy_to_iter(uio_src, 30, &it), 0); /* still on the faulting byte */
	EXPECT_EQ(iov_iter_zero(5, &it), 0);
	EXPECT_EQ(iov_iter_count(&it), 20);
	EXPECT_EQ(copy_from_user(uio_dst, (const void __user *)(end - 10), 10), 0);
	EXPECT_EQ(memcmp(uio_dst, uio_src, 10), 0);

	/* In: the bytes past the fault keep what they had. */
	memset(uio_dst, 0xee, sizeof(uio_dst));
	iov_iter_ubuf(&it, (void __user *)(end - 4), 16);
	EXPECT_EQ(copy_from_iter(uio_dst, 16, &it), 4);
	EXPECT_EQ(memcmp(uio_dst, uio_src + 6, 4), 0);
	EXPECT_EQ(uio_dst[4], 0xee);

	/* A vector whose middle segment is unmapped: the first, then nothing. */
	struct iovec v[] = {{(void *)va, 8}, {(void *)end, 8}, {(void *)(va + 64), 8}};
	iov_iter_init(&it, ITER_USER, v, ARRAY_SIZE(v), 24);
	EXPECT_EQ(copy_to_iter(uio_src, 24, &it), 8);
	EXPECT_EQ(iov_iter_count(&it), 16);
	EXPECT_EQ(copy_to_iter(uio_src, 24, &it), 0);
	mm_switch(NULL);
	mm_destroy(mm);
}

/*
 * A kernel address that is mapped (this test's own buffer): a copy with no range
 * check would succeed, so only access_ok() keeps the bytes where they are.
 */
TEST(uio, user_cursor_over_a_kernel_address_moves_nothing)
{
	uio_pattern();
	struct iov_iter it;
	iov_iter_ubuf(&it, (void __user *)uio_dst, 16);
	EXPECT_FALSE(iov_iter_access_ok(&it));
	EXPECT_EQ(copy_to_iter(uio_src, 16, &it), 0);
	EXPECT_EQ(iov_iter_zero(16, &it), 0);
	EXPECT_EQ(uio_dst[0], 0xee);
	EXPECT_EQ(iov_iter_count(&it), 16);
	iov_iter_ubuf(&it, (void __user *)uio_src, 16);
	EXPECT_EQ(copy_from_iter(uio_dst, 16, &it), 0);
	EXPECT_EQ(uio_dst[0], 0xee);
}
