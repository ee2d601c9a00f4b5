/*
 * The monotonic clock against the PC's other clocks: the TSC was calibrated at
 * boot (arch/x86_64/time.c, against the HPET when ACPI describes one, else the
 * PIT), and arch_clock_ns() must then run at the rate of each clock it was not
 * calibrated from as well as the one it was. Each test times windows of the
 * clock with the other one, read on both sides of each clock reading so that a
 * host preemption shows up as a wide bracket; windows with one are left out.
 * riscv64 (no multiboot2, no PC clocks) skips.
 */
#include <grace/arch.h>
#include <grace/test.h>
#include <grace/time.h>
#include <asm/cpu.h>
#include <asm/io.h>
#include <asm/irq.h>

#include "boot_acpi.h"
#ifdef ARCH_HAS_PORT_IO
#include "../../arch/x86_64/x86_64.h"
#endif

#define WINDOW_NS (20 * NSEC_PER_MSEC)
/*
 * A window counts only if both brackets are tight and the clock's loop did not
 * overrun: a host that stopped the vCPU between two reads widens a bracket (or the
 * loop) by as long. Its uncertainty is then under 0.5% of the window.
 */
#define FUZZ_MAX_NS (WINDOW_NS / 200)
#define GOOD_WINDOWS 5
#define MAX_WINDOWS 40
/*
 * The median window must agree to 2%: the calibration itself is good to about
 * 0.01% (three 10 ms runs), a window's uncertainty is at most 0.5%, and a TSC
 * calibrated 5% off fails.
 */
#define TOLERANCE_PPM 20000

#define HPET_CAP_ID 0x000
#define HPET_COUNTER 0x0f0
#define FS_PER_NS 1000000ull

static struct mb2_info mb2;
static struct acpi_info acpi; /* large: not on the test's stack */

/* One timed window: its length by arch_clock_ns() and by the other clock, and how unsure that is.
 */
struct window {
	u64 ns, ref_ns;
	u64 fuzz_ns; /* the two brackets' widths, in the other clock's ns */
};

/* Median of n values, sorting them in place. */
static u64 median(u64 *v, unsigned n)
{
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
			u64 t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v[n / 2];
}

/*
 * Time windows with measure() until GOOD_WINDOWS are tight (at most MAX_WINDOWS);
 * their median error against the other clock must be within the tolerance. A host
 * too busy to give that many tight windows says nothing either way: skip.
 */
static void expect_rates_agree(const char *clock, struct window (*measure)(void *), void *arg)
{
	u64 err_ppm[GOOD_WINDOWS];
	unsigned good = 0;
	for (unsigned i = 0; i < MAX_WINDOWS && good < GOOD_WINDOWS; i++) {
		struct window w = measure(arg);
		if (w.fuzz_ns > FUZZ_MAX_NS || w.ns > WINDOW_NS + FUZZ_MAX_NS || !w.ref_ns)
			continue;
		u64 diff = w.ns > w.ref_ns ? w.ns - w.ref_ns : w.ref_ns - w.ns;
		err_ppm[good++] = diff * 1000000 / w.ref_ns;
	}
	if (good < GOOD_WINDOWS) {
		test_skip("the host stopped the vCPU in too many windows to time them");
		return;
	}
	u64 ppm = median(err_ppm, GOOD_WINDOWS);
	if (ppm > TOLERANCE_PPM)
		test_fail(__FILE__, __LINE__,
			  "arch_clock_ns() ran %llu ppm off the %s's rate (median of %u windows)",
			  (unsigned long long)ppm, clock, GOOD_WINDOWS);
}

struct hpet {
	uintptr_t regs;
	u64 period_fs;
};

static struct window hpet_window(void *arg)
{
	const struct hpet *h = arg;
	unsigned long flags = arch_irq_save();
	u32 h0 = mmio_read32(h->regs + HPET_COUNTER);
	u64 n0 = arch_clock_ns();
	u32 h1 = mmio_read32(h->regs + HPET_COUNTER);
	while (arch_clock_ns() - n0 < WINDOW_NS)
		cpu_relax();
	u32 h2 = mmio_read32(h->regs + HPET_COUNTER);
	u64 n2 = arch_clock_ns();
	u32 h3 = mmio_read32(h->regs + HPET_COUNTER);
	arch_irq_restore(flags);
	/* Ticks between the midpoints of the brackets around n0 and n2. */
	u64 ticks = ((u64)(u32)(h2 - h0) + (u32)(h3 - h1)) / 2;
	u64 fuzz = (u64)(u32)(h1 - h0) + (u32)(h3 - h2);
	return (struct window){n2 - n0, ticks * h->period_fs / FS_PER_NS,
			       fuzz * h->period_fs / FS_PER_NS};
}

TEST(time, clock_agrees_with_the_hpet)
{
	if (!boot_acpi_parse(&mb2, &acpi))
		return;
	if (!acpi.hpet_addr) {
		test_skip("no HPET table");
		return;
	}
	static struct hpet h;
	h.regs = (uintptr_t)ioremap(acpi.hpet_addr, PAGE_SIZE);
	ASSERT_NE(h.regs, 0);
	h.period_fs = mmio_read64(h.regs + HPET_CAP_ID) >> 32;
	ASSERT_GT(h.period_fs, 0);
	expect_rates_agree("HPET", hpet_window, &h);
}

#ifdef ARCH_HAS_PORT_IO
static struct window pit_window(void *arg)
{
	(void)arg;
	unsigned long flags = arch_irq_save();
	/* Channel 2 counts down from 0xffff: 55 ms, more than any window that counts. */
	pit_ch2_start();
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
	u64 fuzz = (u64)(u16)(p0 - p1) + (u16)(p2 - p3);
	return (struct window){n2 - n0, ticks * NSEC_PER_SEC / PIT_HZ,
			       fuzz * NSEC_PER_SEC / PIT_HZ};
}

TEST(time, clock_agrees_with_the_pit)
{
	if (!boot_acpi_parse(&mb2, &acpi))
		return;
	expect_rates_agree("PIT", pit_window, NULL);
}
/*
 * Boot calibrates against the PIT only where there is no HPET, which QEMU's pc and
 * q35 both have: run that calibration here and hold it to the rate boot found. A
 * run the host disturbed may miss; a calibration that is wrong misses every time.
 */
#define PIT_CALIBRATIONS 5
#define PIT_AGREE_PPM 10000

TEST(time, pit_calibration_finds_the_boot_rate)
{
	if (!boot_acpi_parse(&mb2, &acpi))
		return;
	if (!acpi.hpet_addr) {
		test_skip("no HPET: boot calibrated against the PIT already");
		return;
	}
	u64 best_ppm = ~0ull, hz = 0;
	for (unsigned i = 0; i < PIT_CALIBRATIONS && best_ppm > PIT_AGREE_PPM; i++) {
		hz = tsc_calibrate_pit();
		u64 diff = hz > tsc_hz ? hz - tsc_hz : tsc_hz - hz;
		best_ppm = MIN(best_ppm, diff * 1000000 / tsc_hz);
	}
	if (best_ppm > PIT_AGREE_PPM)
		test_fail(__FILE__, __LINE__,
			  "the PIT gives the TSC %llu Hz at best %llu ppm off boot's %llu Hz",
			  (unsigned long long)hz, (unsigned long long)best_ppm,
			  (unsigned long long)tsc_hz);
}
#endif
