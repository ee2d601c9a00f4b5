/*
 * The clock and the per-hart one-shot timer.
 *
 * The time CSR counts at the device tree's timebase-frequency, the same counter on
 * every hart. arch_clock_ns() converts with a precomputed 32.32 fixed-point
 * multiplier and a 128-bit product, so neither overflows for centuries of ticks.
 * The timer fires when time >= a compare value: the stimecmp CSR when every hart
 * has Sstc (no firmware call per arming), else the SBI TIME extension.
 */
#include <grace/arch.h>
#include <grace/time.h>
#include <asm/csr.h>
#include "riscv.h"
#include "sbi.h"

#define MULT_SHIFT 32

static u64 ns_mult;    /* ns = ticks * ns_mult >> 32 */
static u64 tick_mult;  /* ticks = ns * tick_mult >> 32, rounded up */
static u64 boot_ticks; /* arch_clock_ns() counts from here */
static bool use_sstc;

void riscv_timer_init(u64 hz, bool sstc)
{
	/* hz < 2^32 (checked at boot), so both shifted numerators fit 64 bits. */
	ns_mult = (NSEC_PER_SEC << MULT_SHIFT) / hz;
	tick_mult = ((hz << MULT_SHIFT) + NSEC_PER_SEC - 1) / NSEC_PER_SEC;
	use_sstc = sstc;
	boot_ticks = rdtime();
}

const char *riscv_timer_kind(void)
{
	return use_sstc ? "Sstc stimecmp" : "SBI TIME";
}

u64 arch_clock_ns(void)
{
	u64 ticks = rdtime() - boot_ticks;
	return (u64)(((unsigned __int128)ticks * ns_mult) >> MULT_SHIFT);
}

static void timer_set(u64 ticks)
{
	if (use_sstc)
		csr_write(CSR_STIMECMP, ticks);
	else
		sbi_set_timer(ticks);
}

void riscv_timer_disarm(void)
{
	timer_set(UINT64_MAX);
}

void arch_timer_arm(u64 deadline_ns)
{
	if (deadline_ns == UINT64_MAX) {
		timer_set(UINT64_MAX);
		return;
	}
	/*
	 * Round up, plus one tick: ns_mult rounds down, so the clock may read a few ns
	 * behind the true time; the timer must not fire before arch_clock_ns() agrees.
	 */
	unsigned __int128 t =
	    (((unsigned __int128)deadline_ns * tick_mult) >> MULT_SHIFT) + 1 + boot_ticks;
	timer_set(t > UINT64_MAX ? UINT64_MAX : (u64)t);
}
