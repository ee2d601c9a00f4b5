/*
 * The libgcc helpers GCC emits calls to for this freestanding kernel (we link no
 * libgcc): __builtin_popcount* for cpumask weights and __builtin_ctz* for
 * cpumask_next, on CPUs without the instructions (riscv64 without Zbb, x86_64
 * without -mpopcnt; x86_64 has bsf).
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

int __ctzdi2(u64 x);

/* Trailing zeros of a nonzero x: the lowest set bit, isolated, then its index. */
int __ctzdi2(u64 x)
{
	return __popcountdi2((x & -x) - 1);
}
