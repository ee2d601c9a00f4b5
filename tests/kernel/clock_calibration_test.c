/*
 * The monotonic clock against the PC's other clocks: the TSC was calibrated at
 * boot (arch/x86_64/time.c, against the HPET when ACPI describes one, else the
 * PIT), and arch_clock_ns() must then run at the rate of each clock it was not
 * calibrated from as well as the one it was. Each test times a window of the
 * clock with the other one, read on both sides of each clock reading so a host
 * preemption shows up as a wide bracket, five times, and takes the median.
 * riscv64 (no multiboot2, no PC clocks) skips.
 */
#include <grace/arch.h>
#include <grace/test.h>
#include <grace/time.h>
#include <asm/cpu.h>
#include <asm/io.h>
#include <asm/irq.h>

#include "boot_acpi.h"

#define WINDOW_NS (20 * NSEC_PER_MSEC)
#define ATTEMPTS 5
/*
 * The rates must agree to 2%: the calibration itself is good to about 0.01% (three
 * 10 ms runs), and a window of 20 ms keeps a preempted bracket's error under that
 * unless the host stops the vCPU for 0.4 ms at the wrong instant in most attempts.
 */
#define TOLERANCE_PPM 20000

#define HPET_CAP_ID 0x000
#define HPET_COUNTER 0x0f0
#define FS_PER_NS 1000000ull

static struct mb2_info mb2;
static struct acpi_info acpi; /* large: not on the test's stack */

/* Median of ATTEMPTS values, sorting them in place. */
static u64 median(u64 *v)
{
	for (unsigned i = 1; i < ATTEMPTS; i++)
		for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
			u64 t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v[ATTEMPTS / 2];
}

/* Does the clock's window (ns) agree with what the other clock measured (ref_ns)? */
static void expect_rates_agree(const char *clock, u64 ns, u64 ref_ns)
{
	u64 diff = ns > ref_ns ? ns - ref_ns : ref_ns - ns;
	if (diff * 1000000 > ref_ns * TOLERANCE_PPM)
		test_fail(__FILE__, __LINE__,
			  "arch_clock_ns() counted %llu ns while the %s counted %llu ns",
			  (unsigned long long)ns, clock, (unsigned long long)ref_ns);
}

TEST(time, clock_agrees_with_the_hpet)
{
	if (!boot_acpi_parse(&mb2, &acpi))
		return;
	if (!acpi.hpet_addr) {
		test_skip("no HPET table");
		return;
	}
	uintptr_t regs = (uintptr_t)ioremap(acpi.hpet_addr, PAGE_SIZE);
	ASSERT_NE(regs, 0);
	u64 period_fs = mmio_read64(regs + HPET_CAP_ID) >> 32;
	ASSERT_GT(period_fs, 0);

	u64 clock_ns[ATTEMPTS], hpet_ns[ATTEMPTS];
	for (unsigned i = 0; i < ATTEMPTS; i++) {
		unsigned long flags = arch_irq_save();
		u32 h0 = mmio_read32(regs + HPET_COUNTER);
		u64 n0 = arch_clock_ns();
		u32 h1 = mmio_read32(regs + HPET_COUNTER);
		while (arch_clock_ns() - n0 < WINDOW_NS)
			cpu_relax();
		u32 h2 = mmio_read32(regs + HPET_COUNTER);
		u64 n2 = arch_clock_ns();
		u32 h3 = mmio_read32(regs + HPET_COUNTER);
		arch_irq_restore(flags);
		/* Ticks between the midpoints of the brackets around n0 and n2. */
		u64 ticks = ((u64)(u32)(h2 - h0) + (u32)(h3 - h1)) / 2;
		hpet_ns[i] = ticks * period_fs / FS_PER_NS;
		clock_ns[i] = n2 - n0;
	}
	expect_rates_agree("HPET", median(clock_ns), median(hpet_ns));
}

#ifdef ARCH_HAS_PORT_IO
#define PIT_HZ 1193182ull
#define PIT_CH2_DATA 0x42
#define PIT_CMD 0x43
#define PIT_CMD_CH2_MODE0 0xb0
#define PIT_CMD_LATCH_CH2 0x80
#define PORT_B 0x61
#define PORT_B_GATE2 0x01
#define PORT_B_SPEAKER 0x02

static u16 pit_read_ch2(void)
{
	outb(PIT_CMD, PIT_CMD_LATCH_CH2);
	u8 lo = inb(PIT_CH2_DATA);
	u8 hi = inb(PIT_CH2_DATA);
	return (u16)(hi << 8 | lo);
}

TEST(time, clock_agrees_with_the_pit)
{
	if (!boot_acpi_parse(&mb2, &acpi))
		return;
	u64 clock_ns[ATTEMPTS], pit_ns[ATTEMPTS];
	for (unsigned i = 0; i < ATTEMPTS; i++) {
		unsigned long flags = arch_irq_save();
		/* Channel 2 counts down from 0xffff: 55 ms, more than the window. */
		outb(PORT_B, (inb(PORT_B) & ~PORT_B_SPEAKER) | PORT_B_GATE2);
		outb(PIT_CMD, PIT_CMD_CH2_MODE0);
		outb(PIT_CH2_DATA, 0xff);
		outb(PIT_CH2_DATA, 0xff);
		u16 p0 = pit_read_ch2();
		u64 n0 = arch_clock_ns();
		u16 p1 = pit_read_ch2();
		while (arch_clock_ns() - n0 < WINDOW_NS)
			cpu_relax();
		u16 p2 = pit_read_ch2();
		u64 n2 = arch_clock_ns();
		u16 p3 = pit_read_ch2();
		arch_irq_restore(flags);
		u64 ticks = ((u64)(u16)(p0 - p2) + (u16)(p1 - p3)) / 2;
		pit_ns[i] = ticks * NSEC_PER_SEC / PIT_HZ;
		clock_ns[i] = n2 - n0;
	}
	expect_rates_agree("PIT", median(clock_ns), median(pit_ns));
}
#endif
