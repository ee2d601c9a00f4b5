/*
 * The monotonic clock: the TSC, calibrated at boot against the HPET when ACPI
 * describes one (its counter period is in its capabilities register, in
 * femtoseconds), else against the PIT (the 8254, whose 1.193182 MHz input clock is
 * fixed by the PC architecture). TCG offers no invariant-TSC flag, but QEMU's TSC
 * runs at a constant rate, as do the TSCs of every x86 CPU of the last fifteen
 * years. All CPUs read the same clock: QEMU starts every vCPU's TSC together, and
 * real hardware synchronises them at reset.
 *
 * Either way the reference is read with the TSC just before and after it, so every
 * sample is bracketed, over 10 ms; three runs, take the median. A run whose first or
 * last bracket is wide (the host stopped the vCPU between the reads, for as long)
 * is run again, up to a bound: under a busy host, a median of three disturbed runs
 * was seen 7% off. The HPET is one
 * memory read per sample where the PIT is three port accesses (latch, two bytes),
 * so its brackets are narrower; and PCs have been dropping the PIT (or gating it
 * off in low-power states) since the HPET came.
 *
 * PIT calibration uses channel 2 (gated through port 0x61, so no interrupt is
 * involved), counting down from 0xffff.
 */
#include <grace/arch.h>
#include <grace/printk.h>
#include <grace/time.h>
#include <asm/io.h>
#include "processor.h"
#include "x86_64.h"

#define PIT_CH2_DATA 0x42
#define PIT_CMD 0x43
#define PIT_CMD_CH2_MODE0 0xb0 /* channel 2, lo/hi byte, mode 0, binary */
#define PIT_CMD_LATCH_CH2 0x80 /* latch channel 2's count */
#define PORT_B 0x61	       /* bit 0: channel 2 gate, bit 1: speaker */
#define PORT_B_GATE2 0x01
#define PORT_B_SPEAKER 0x02

/* IA-PC HPET specification 1.0a, 2.3: the registers and the period's limit. */
#define HPET_REGS_SIZE 1024
#define HPET_CAP_ID 0x000 /* bits 63:32: counter period in femtoseconds */
#define HPET_CONFIG 0x010
#define HPET_CONFIG_ENABLE 0x1
#define HPET_COUNTER 0x0f0
#define HPET_PERIOD_MAX_FS 100000000ULL /* 100 ns: the slowest counter the spec allows */
#define FS_PER_NS 1000000ULL

#define CALIBRATE_NS (10 * NSEC_PER_MSEC)
#define CALIBRATE_PIT_TICKS 11932 /* 10 ms of PIT */
#define CALIBRATE_RUNS 3
#define CALIBRATE_TRIES 15	     /* runs with wide brackets retried, at most 150 ms in all */
#define CALIBRATE_BRACKETS_MAX 200   /* both brackets together under 1/200 of the run */
#define CALIBRATE_MAX_POLLS 10000000 /* a PIT that does not count must not hang boot */
#define NS_SHIFT 32		     /* ns = tsc delta * ns_mult >> NS_SHIFT */
#define TSC_SHIFT 24		     /* tsc delta = ns * tsc_mult >> TSC_SHIFT */
#define TSC_FALLBACK_HZ 1000000000ULL

u64 tsc_hz;
static u64 tsc_base, ns_mult, tsc_mult;

void pit_ch2_start(void)
{
	outb(PORT_B, (inb(PORT_B) & ~PORT_B_SPEAKER) | PORT_B_GATE2);
	outb(PIT_CMD, PIT_CMD_CH2_MODE0);
	outb(PIT_CH2_DATA, 0xff);
	outb(PIT_CH2_DATA, 0xff);
}

u16 pit_read_ch2(void)
{
	outb(PIT_CMD, PIT_CMD_LATCH_CH2);
	u8 lo = inb(PIT_CH2_DATA);
	u8 hi = inb(PIT_CH2_DATA);
	return (u16)(hi << 8 | lo);
}

/*
 * Whether the brackets [t0, t1] and [a, b] around a run's first and last reading
 * of the reference are narrow enough for the run's rate to be good to 0.5%.
 */
static bool brackets_tight(u64 t0, u64 t1, u64 a, u64 b)
{
	return (t1 - t0) + (b - a) <= (b - t0) / CALIBRATE_BRACKETS_MAX;
}

/*
 * TSC ticks per second from one run against the PIT, or 0 if it did not count;
 * *loose says the host disturbed the run.
 */
static u64 tsc_calibrate_pit_once(bool *loose)
{
	pit_ch2_start();
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
			*loose = !brackets_tight(t0, t1, a, b);
			return tsc * PIT_HZ / (u64)(c0 - c);
		}
	}
	return 0;
}

/* The same against the HPET at regs, counting every period_fs. */
static u64 tsc_calibrate_hpet_once(uintptr_t regs, u64 period_fs, bool *loose)
{
	/* The low 32 bits suffice: even a 1 GHz counter wraps only after 4 s, not in a run. */
	u32 want = (u32)(CALIBRATE_NS * FS_PER_NS / period_fs);
	u64 t0 = rdtsc();
	u32 c0 = mmio_read32(regs + HPET_COUNTER);
	u64 t1 = rdtsc();
	for (long i = 0; i < CALIBRATE_MAX_POLLS; i++) {
		u64 a = rdtsc();
		u32 c = mmio_read32(regs + HPET_COUNTER);
		u64 b = rdtsc();
		u32 ticks = c - c0;
		if (ticks >= want) {
			u64 tsc = (a + b) / 2 - (t0 + t1) / 2;
			/* A run stopped for seconds (tsc * 10^9 past 64 bits) is no use. */
			u64 ns = (u64)ticks * period_fs / FS_PER_NS;
			if (!ns || tsc > ~0ull / NSEC_PER_SEC)
				return 0;
			*loose = !brackets_tight(t0, t1, a, b);
			return tsc * NSEC_PER_SEC / ns;
		}
	}
	return 0;
}

static u64 median3(const u64 r[3])
{
	/* One run disturbed by the host scheduler does not matter. */
	return MAX(MIN(r[0], r[1]), MIN(MAX(r[0], r[1]), r[2]));
}

/* The runs of one calibration: CALIBRATE_RUNS tight ones wanted, loose ones kept in case. */
struct calibration {
	u64 tight[CALIBRATE_RUNS], loose[CALIBRATE_RUNS];
	unsigned nr_tight, nr_loose, tries;
	bool dead; /* a run saw the reference not count: no use trying again */
};

/* Whether to run once more, given the last run's rate (0: not counting) and looseness. */
static bool calibration_add(struct calibration *cal, u64 hz, bool loose)
{
	cal->tries++;
	if (!hz)
		cal->dead = true;
	else if (!loose)
		cal->tight[cal->nr_tight++] = hz;
	else if (cal->nr_loose < CALIBRATE_RUNS)
		cal->loose[cal->nr_loose++] = hz;
	return !cal->dead && cal->nr_tight < CALIBRATE_RUNS && cal->tries < CALIBRATE_TRIES;
}

/* The median of the tight runs, of the loose ones if none was tight; 0 if the clock is dead. */
static u64 calibration_result(const struct calibration *cal)
{
	const u64 *r = cal->nr_tight ? cal->tight : cal->loose;
	unsigned n = cal->nr_tight ? cal->nr_tight : cal->nr_loose;
	if (cal->dead || !n)
		return 0;
	if (n < CALIBRATE_RUNS)
		return r[n - 1]; /* the last, of one or two: no median to take */
	return median3(r);
}

/* The TSC rate against the HPET, or 0 when there is none or it does not count. */
static u64 tsc_calibrate_hpet(void)
{
	if (!x86_platform.hpet_phys)
		return 0;
	uintptr_t regs = (uintptr_t)ioremap(x86_platform.hpet_phys, HPET_REGS_SIZE);
	if (!regs) {
		pr_err("time: cannot map the HPET at %llx\n",
		       (unsigned long long)x86_platform.hpet_phys);
		return 0;
	}
	u64 period_fs = mmio_read64(regs + HPET_CAP_ID) >> 32;
	if (period_fs == 0 || period_fs > HPET_PERIOD_MAX_FS) {
		pr_err("time: HPET counter period of %llu fs is impossible\n",
		       (unsigned long long)period_fs);
		return 0;
	}
	/* Firmware may leave the main counter stopped; starting it changes nothing else. */
	u64 config = mmio_read64(regs + HPET_CONFIG);
	if (!(config & HPET_CONFIG_ENABLE))
		mmio_write64(regs + HPET_CONFIG, config | HPET_CONFIG_ENABLE);

	struct calibration cal = {0};
	bool loose = false;
	while (calibration_add(&cal, tsc_calibrate_hpet_once(regs, period_fs, &loose), loose))
		;
	u64 hz = calibration_result(&cal);
	if (!hz)
		pr_err("time: the HPET does not count\n");
	return hz;
}

u64 tsc_calibrate_pit(void)
{
	struct calibration cal = {0};
	bool loose = false;
	while (calibration_add(&cal, tsc_calibrate_pit_once(&loose), loose))
		;
	return calibration_result(&cal);
}

void tsc_calibrate(void)
{
	const char *source = "the HPET";
	tsc_hz = tsc_calibrate_hpet();
	if (!tsc_hz) {
		tsc_hz = tsc_calibrate_pit();
		source = "the PIT";
	}
	if (!tsc_hz) {
		pr_err("time: the PIT does not count; assuming a 1 GHz TSC\n");
		tsc_hz = TSC_FALLBACK_HZ;
		source = "nothing (assumed)";
	}
	ns_mult = (NSEC_PER_SEC << NS_SHIFT) / tsc_hz;
	tsc_mult = (tsc_hz << TSC_SHIFT) / NSEC_PER_SEC;
	tsc_base = rdtsc();
	printk("time: TSC at %llu.%03llu MHz (calibrated against %s)\n",
	       (unsigned long long)(tsc_hz / 1000000), (unsigned long long)(tsc_hz / 1000 % 1000),
	       source);
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
