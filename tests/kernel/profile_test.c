/* The sampling profiler: a busy loop in a known function dominates its samples. */
#include <grace/profile.h>
#include <grace/test.h>
#include <grace/time.h>
#include <asm/cpu.h>

#define PROFILE_TEST_SPIN_NS (300 * NSEC_PER_MSEC) /* about 300 samples at 1 kHz */

static void __noinline profile_test_spin(u64 ns)
{
	u64 end = arch_clock_ns() + ns;
	/* Read the clock rarely, so the samples land here and not in arch_clock_ns(). */
	while (arch_clock_ns() < end)
		for (int i = 0; i < 1000; i++)
			cpu_relax();
}

/*
 * Work left by earlier tests (RCU callbacks, workqueue items, timers) may run on
 * this CPU during a window and take its samples; a profiler that attributes the
 * loop's samples elsewhere misses in every window. So: up to three windows.
 */
#define PROFILE_TEST_WINDOWS 3

TEST(profile, busy_loop_dominates_samples)
{
	u64 total = 0, spin = 0;
	for (unsigned w = 0; w < PROFILE_TEST_WINDOWS && spin * 2 <= total; w++) {
		ASSERT_EQ(profile_start(1), 0);
		profile_test_spin(PROFILE_TEST_SPIN_NS);
		profile_stop();
		spin = profile_samples_of("profile_test_spin", &total);
	}
	/* Timer interrupts did arrive and were attributed... */
	EXPECT_GT(total, 10);
	/* ...mostly to the loop. */
	EXPECT_GT(spin * 2, total);
}
