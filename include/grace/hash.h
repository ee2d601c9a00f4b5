/*
 * Multiplicative (Fibonacci) hashing of integers and pointers into 2^bits
 * buckets. The multiplier is 2^32 (or 2^64) divided by the golden ratio, made
 * odd: Knuth, TAOCP vol. 3, 6.4, shows that multiplying by it scatters
 * consecutive keys (and keys that differ in their low bits, like aligned
 * addresses) evenly, and the top bits of the product are the best mixed, so
 * the result is the product's top `bits` bits. The 32-bit constant is Linux's
 * GOLDEN_RATIO_32 (0x61C88647 = 2^32 - 2^32/phi, which works as well as
 * 2^32/phi itself); the 64-bit one is 2^64/phi rounded to odd.
 */
#ifndef GRACE_HASH_H
#define GRACE_HASH_H

#include <grace/types.h>

#define GOLDEN_RATIO_32 0x61C88647u
#define GOLDEN_RATIO_64 0x9E3779B97F4A7C15ull

/* A bucket in [0, 2^bits) for val; 1 <= bits <= 32. */
static inline u32 hash_32(u32 val, unsigned bits)
{
	return (u32)(val * GOLDEN_RATIO_32) >> (32 - bits);
}

/* A bucket in [0, 2^bits) for val; 1 <= bits <= 32, all 64 bits of val count. */
static inline u32 hash_64(u64 val, unsigned bits)
{
	return (u32)((val * GOLDEN_RATIO_64) >> (64 - bits));
}

/* A bucket in [0, 2^bits) for a pointer; every bit of the address counts. */
static inline u32 hash_ptr(const void *ptr, unsigned bits)
{
	return hash_64((uintptr_t)ptr, bits);
}

#endif
