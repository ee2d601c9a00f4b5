/* Busy-wait delays on the monotonic clock. */
#include <grace/time.h>
#include <asm/cpu.h>

void delay_ns(u64 ns)
{
	u64 end = arch_clock_ns() + ns;
	while (arch_clock_ns() < end)
		cpu_relax();
}
