/*
 * The libgcc helpers GCC emits calls to for this freestanding kernel (we link no
 * libgcc): __builtin_popcount* for cpumask weights, on CPUs without a popcount
 * instruction (riscv64 without Zbb, x86_64 without -mpopcnt).
 */
#include <grace/types.h>

int __popcountdi2(u64 x);

int __popcountdi2(u64 x)
{
	/* Sum bits in pairs, nibbles, then bytes (the classic SWAR count). */
	x = x - ((x >> 1) & 0x5555555555555555ULL);
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (int)((x * 0x0101010101010101ULL) >> 56);
}
