/*
 * The monotonic clock: the TSC, calibrated at boot against the PIT (the 8254,
 * whose 1.193182 MHz input clock is fixed by the PC architecture). TCG offers no
 * invariant-TSC flag, but QEMU's TSC runs at a constant rate, as do the TSCs of
 * every x86 CPU of the last fifteen years. All CPUs read the same clock: QEMU
 * starts every vCPU's TSC together, and real hardware synchronises them at reset.
 *
 * Calibration uses PIT channel 2 (gated through port 0x61, so no interrupt is
 * involved): start it counting down, and read the TSC just before and after each
 * latch of the count, so every sample is bracketed; three runs, take the median.
 */
#include <grace/printk.h>
#include <grace/time.h>
#include <asm/io.h>
#include "processor.h"
#include "x86_64.h"

#define PIT_HZ 1193182ULL
#define PIT_CH2_DATA 0x42
#define PIT_CMD 0x43
#define PIT_CMD_CH2_MODE0 0xb0 /* channel 2, lo/hi byte, mode 0, binary */
#define PIT_CMD_LATCH_CH2 0x80 /* latch channel 2's count */
#define PORT_B 0x61	       /* bit 0: channel 2 gate, bit 1: speaker */
#define PORT_B_GATE2 0x01
#define PORT_B_SPEAKER 0x02

#define CALIBRATE_PIT_TICKS 11932 /* 10 ms of PIT */
#define CALIBRATE_RUNS 3
#define CALIBRATE_MAX_POLLS 10000000 /* a PIT that does not count must not hang boot */
#define NS_SHIFT 32		     /* ns = tsc delta * ns_mult >> NS_SHIFT */
#define TSC_SHIFT 24		     /* tsc delta = ns * tsc_mult >> TSC_SHIFT */
#define TSC_FALLBACK_HZ 1000000000ULL

u64 tsc_hz;
static u64 tsc_base, ns_mult, tsc_mult;

static u16 pit_read_ch2(void)
{
	outb(PIT_CMD, PIT_CMD_LATCH_CH2);
	u8 lo = inb(PIT_CH2_DATA);
	u8 hi = inb(PIT_CH2_DATA);
	return (u16)(hi << 8 | lo);
}

/* TSC ticks per second from one run, or 0 if the PIT did not count. */
static u64 tsc_calibrate_once(void)
{
	outb(PORT_B, (inb(PORT_B) & ~PORT_B_SPEAKER) | PORT_B_GATE2);
	outb(PIT_CMD, PIT_CMD_CH2_MODE0);
	outb(PIT_CH2_DATA, 0xff);
	outb(PIT_CH2_DATA, 0xff);

	u64 t0 = rdtsc();
	u16 c0 = pit_read_ch2();
	u64 t1 = rdtsc();
	for (long i = 0; i < CALIBRATE_MAX_POLLS; i++) {
		u64 a = rdtsc();
		u16 c = pit_read_ch2();
		u64 b = rdtsc();
		if (c > c0)
			return 0; /* wrapped: far too slow, or not counting at all */
		if ((u16)(c0 - c) >= CALIBRATE_PIT_TICKS) {
			/* Midpoints of the brackets around the two latches. */
			u64 tsc = (a + b) / 2 - (t0 + t1) / 2;
			return tsc * PIT_HZ / (u64)(c0 - c);
		}
	}
	return 0;
}

void tsc_calibrate(void)
{
	u64 runs[CALIBRATE_RUNS];
	for (unsigned i = 0; i < CALIBRATE_RUNS; i++)
		runs[i] = tsc_calibrate_once();
	/* Median of three: one run disturbed by the host scheduler does not matter. */
	u64 a = runs[0], b = runs[1], c = runs[2];
	tsc_hz = MAX(MIN(a, b), MIN(MAX(a, b), c));
	if (!tsc_hz) {
		pr_err("time: the PIT does not count; assuming a 1 GHz TSC\n");
		tsc_hz = TSC_FALLBACK_HZ;
	}
	ns_mult = (NSEC_PER_SEC << NS_SHIFT) / tsc_hz;
	tsc_mult = (tsc_hz << TSC_SHIFT) / NSEC_PER_SEC;
	tsc_base = rdtsc();
	printk("time: TSC at %llu.%03llu MHz (calibrated against the PIT)\n",
	       (unsigned long long)(tsc_hz / 1000000), (unsigned long long)(tsc_hz / 1000 % 1000));
}

u64 arch_clock_ns(void)
{
	u64 delta = rdtsc() - tsc_base;
	if ((s64)delta < 0)
		return 0; /* a TSC a hair behind the boot CPU's, before tsc_base */
	return (u64)(((unsigned __int128)delta * ns_mult) >> NS_SHIFT);
}

u64 tsc_from_ns(u64 ns)
{
	return tsc_base + (u64)(((unsigned __int128)ns * tsc_mult) >> TSC_SHIFT);
}
