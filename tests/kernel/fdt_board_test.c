/*
 * The device-tree parser on boards' layouts, from trees in tests/kernel/dts/ that
 * the build compiles into the test image (so they run on both arches): RAM not at
 * 0x80000000 and in two banks, /reserved-memory regions with no-map taken out of
 * RAM, a monitor core without an MMU, the boot hart not first in /cpus, 16550s with
 * 32-bit registers 4 bytes apart, SiFive UARTs, and the console's rate from
 * stdout-path's options or current-speed, none when only the clock is known; and
 * the 16550 divisor the driver computes from them.
 */
#include <grace/errno.h>
#include <grace/fdt.h>
#include <grace/string.h>
#include <grace/test.h>

#include "../../drivers/uart/uart.h"

#define TEST_DTB(name)                                                                             \
	extern const u8 dtb_##name##_start[], dtb_##name##_end[];                                  \
	static const struct test_dtb name = {#name, dtb_##name##_start, dtb_##name##_end}

struct test_dtb {
	const char *name;
	const u8 *start, *end;
};

TEST_DTB(starfive_board);
TEST_DTB(sifive_board);

/* The machine the tree describes, booted on boot_hartid; false (a failure) if it does not parse. */
static bool scan_dtb(const struct test_dtb *t, u32 boot_hartid, struct fdt_machine *m)
{
	struct fdt fdt;
	int err = fdt_open(&fdt, t->start, (size_t)(t->end - t->start));
	if (err)
		return test_fail(__FILE__, __LINE__, "%s: fdt_open: %d (%s)", t->name, err,
				 fdt.error ? fdt.error : "?");
	err = fdt_scan_machine(&fdt, boot_hartid, m);
	if (err)
		return test_fail(__FILE__, __LINE__, "%s: fdt_scan_machine: %d", t->name, err);
	return true;
}

static void expect_range(const struct mem_range *r, u64 base, u64 size)
{
	EXPECT_EQ(r->base, base);
	EXPECT_EQ(r->size, size);
}

TEST(fdt_board, ram_banks_away_from_0x80000000_less_the_no_map_region)
{
	static struct fdt_machine m;
	if (!scan_dtb(&starfive_board, 3, &m))
		return;
	/* Bank one loses its first 2 MiB to the firmware's no-map region; bank two is whole. */
	ASSERT_EQ(m.nr_mem, 2);
	expect_range(&m.mem[0], 0x40200000, 0x80000000 - 0x200000);
	expect_range(&m.mem[1], 0x100000000, 0x80000000);
	ASSERT_EQ(m.nr_nomap, 1);
	expect_range(&m.nomap[0], 0x40000000, 0x200000);
	EXPECT_EQ(m.nomap_ram, 0x200000);
	/* A mapped reservation stays RAM, reserved; one with a size only places nothing. */
	ASSERT_EQ(m.nr_reserved, 1);
	expect_range(&m.reserved[0], 0x17e000000, 0x2000000);
}

TEST(fdt_board, chosen_initrd_bounds_read_from_64_and_32_bit_cells)
{
	static struct fdt_machine m;
	if (!scan_dtb(&starfive_board, 3, &m))
		return;
	EXPECT_EQ(m.initrd_start, 0x146000000);
	EXPECT_EQ(m.initrd_end, 0x146123456);
	if (!scan_dtb(&sifive_board, 1, &m))
		return;
	EXPECT_EQ(m.initrd_start, 0x88200000);
	EXPECT_EQ(m.initrd_end, 0x88202a00);
}

TEST(fdt_board, monitor_core_skipped_and_boot_hart_found_in_the_middle)
{
	static struct fdt_machine m;
	if (!scan_dtb(&starfive_board, 3, &m))
		return;
	ASSERT_EQ(m.nr_harts, 4);
	EXPECT_EQ(m.nr_harts_found, 4);
	for (unsigned i = 0; i < m.nr_harts; i++) {
		EXPECT_EQ(m.harts[i].hartid, i + 1);
		/* Each U74's S-mode external context is the second of its two. */
		EXPECT_EQ(m.harts[i].plic, 0);
		EXPECT_EQ(m.harts[i].plic_ctx, (int)(2 * i + 2));
	}
	EXPECT_EQ(m.boot_index, 2);
	EXPECT_EQ(m.harts[m.boot_index].hartid, 3);
	EXPECT_EQ(m.timebase_hz, 4000000);
	EXPECT_EQ(strcmp(m.bootargs, "console=ttyS0"), 0);

	/* A boot hart the tree does not list is an error, not a guess. */
	static struct fdt_machine none;
	struct fdt fdt;
	test_expect_message("fdt: the boot hart (7) is not in /cpus");
	ASSERT_EQ(fdt_open(&fdt, starfive_board.start,
			   (size_t)(starfive_board.end - starfive_board.start)),
		  0);
	EXPECT_EQ(fdt_scan_machine(&fdt, 7, &none), -ENODEV);
}

TEST(fdt_board, dw_16550_with_wide_registers_and_the_alias_options_rate)
{
	static struct fdt_machine m;
	if (!scan_dtb(&starfive_board, 3, &m))
		return;
	EXPECT_EQ(m.console.kind, CONSOLE_NS16550_MMIO);
	EXPECT_EQ(m.console.base, 0x10000000);
	EXPECT_EQ(m.console.reg_shift, 2);
	EXPECT_EQ(m.console.reg_io_width, 4);
	EXPECT_EQ(m.console.irq, 32);
	EXPECT_EQ(m.console_plic, 0);
	/* Nobody programmed the divisor: the driver does, for stdout-path's "57600n8". */
	EXPECT_EQ(m.console.clock_hz, 24000000);
	EXPECT_EQ(m.console.baud, 57600);
}

TEST(fdt_board, stdout_path_picks_the_second_sifive_uart_over_the_first_uart)
{
	static struct fdt_machine m;
	if (!scan_dtb(&sifive_board, 1, &m))
		return;
	EXPECT_EQ(m.console.kind, CONSOLE_SIFIVE_UART);
	EXPECT_EQ(m.console.base, 0x10011000);
	EXPECT_EQ(m.console.reg_io_width, 4);
	EXPECT_EQ(m.console.irq, 40);
	EXPECT_EQ(m.console.clock_hz, 130000000);
	EXPECT_EQ(m.console.baud, 115200);
}

TEST(fdt_board, no_map_cuts_a_bank_in_two_and_takes_a_whole_one)
{
	static struct fdt_machine m;
	if (!scan_dtb(&sifive_board, 1, &m))
		return;
	ASSERT_EQ(m.nr_mem, 2);
	expect_range(&m.mem[0], 0x80000000, 0x10000000);
	expect_range(&m.mem[1], 0x90200000, 0xc0000000 - 0x90200000);
	EXPECT_EQ(m.nr_nomap, 2);
	EXPECT_EQ(m.nomap_ram, 0x200000 + 0x10000000);
	EXPECT_EQ(m.nr_reserved, 0);
}

/*
 * A copy of the tree with a property name in the strings block overwritten, so no
 * node has that property any more; false (a failure) if the name is not there.
 */
static bool hide_property(u8 *blob, size_t len, const char *name)
{
	size_t n = strlen(name) + 1;
	for (size_t i = 0; i + n <= len; i++)
		if (!memcmp(blob + i, name, n) && (i == 0 || blob[i - 1] == '\0')) {
			blob[i] = 'X';
			return true;
		}
	return test_fail(__FILE__, __LINE__, "no property name %s in the tree", name);
}

TEST(fdt_board, first_uart_without_stdout_path_rate_from_current_speed_else_the_firmwares)
{
	static u8 copy[4096] __aligned(8);
	static struct fdt_machine m;
	size_t len = (size_t)(sifive_board.end - sifive_board.start);
	ASSERT_LE(len, sizeof(copy));
	memcpy(copy, sifive_board.start, len);
	ASSERT_TRUE(hide_property(copy, len, "stdout-path"));
	struct test_dtb t = {"sifive_board without stdout-path", copy, copy + len};

	/* The first UART in the tree is the 16550, at the rate current-speed says. */
	if (!scan_dtb(&t, 1, &m))
		return;
	EXPECT_EQ(m.console.kind, CONSOLE_NS16550_MMIO);
	EXPECT_EQ(m.console.base, 0x10000000);
	EXPECT_EQ(m.console.reg_shift, 0);
	EXPECT_EQ(m.console.reg_io_width, 1);
	EXPECT_EQ(m.console.clock_hz, 1843200);
	EXPECT_EQ(m.console.baud, 9600);

	/* With only the clock known, no rate to program: the firmware's stays. */
	ASSERT_TRUE(hide_property(copy, len, "current-speed"));
	if (!scan_dtb(&t, 1, &m))
		return;
	EXPECT_EQ(m.console.clock_hz, 1843200);
	EXPECT_EQ(m.console.baud, 0);
}

TEST(fdt_board, ns16550_divisor_is_the_nearest_and_refuses_what_does_not_fit)
{
	EXPECT_EQ(ns16550_divisor(1843200, 115200), 1);
	EXPECT_EQ(ns16550_divisor(1843200, 9600), 12);
	EXPECT_EQ(ns16550_divisor(3686400, 115200), 2);	   /* QEMU virt's clock-frequency */
	EXPECT_EQ(ns16550_divisor(24000000, 115200), 13);  /* 13.02: JH7110's 24 MHz */
	EXPECT_EQ(ns16550_divisor(24000000, 57600), 26);   /* 26.04 */
	EXPECT_EQ(ns16550_divisor(100000000, 1500000), 4); /* 4.17 */
	EXPECT_EQ(ns16550_divisor(1000, 115200), 0);	   /* too slow a clock */
	EXPECT_EQ(ns16550_divisor(0xffffffffu, 1), 0);	   /* past the 16-bit latch */
	EXPECT_EQ(ns16550_divisor(1843200, 0), 0);
}
