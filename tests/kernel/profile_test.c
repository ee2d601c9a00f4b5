/* The sampling profiler: a busy loop in a known function dominates its samples. */
#include <grace/profile.h>
#include <grace/test.h>
#include <grace/time.h>
#include <asm/cpu.h>

#define PROFILE_TEST_SPIN_NS (300 * NSEC_PER_MSEC) /* about 300 samples at 1 kHz */
#define PROFILE_TEST_RELAX_PER_READ 100000

static void __noinline profile_test_spin(u64 ns)
{
	u64 end = arch_clock_ns() + ns;
	/*
	 * Read the clock rarely, so the samples land here and not in arch_clock_ns(): on
	 * QEMU's sifive_u a clock read traps to the firmware, which emulates the time
	 * CSR, and takes as long as a thousand cpu_relax() (half the samples, at 1000).
	 */
	while (arch_clock_ns() < end)
		for (int i = 0; i < PROFILE_TEST_RELAX_PER_READ; i++)
			cpu_relax();
}

TEST(profile, busy_loop_dominates_samples)
{
	ASSERT_EQ(profile_start(1), 0);
	profile_test_spin(PROFILE_TEST_SPIN_NS);
	profile_stop();

	u64 total, spin = profile_samples_of("profile_test_spin", &total);
	/* Timer interrupts did arrive and were attributed... */
	EXPECT_GT(total, 10);
	/* ...mostly to the loop. */
	EXPECT_GT(spin * 2, total);
}
