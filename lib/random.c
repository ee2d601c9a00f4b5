/*
 * get_random_bytes(): SplitMix64's output function over a shared counter
 * advanced by an odd constant per word (its golden-ratio increment), with the
 * monotonic clock folded in at each call. The counter is one atomic add per
 * call, so concurrent callers never share a word.
 */
#include <grace/arch.h>
#include <grace/atomic.h>
#include <grace/random.h>
#include <grace/string.h>

#define SPLITMIX_GAMMA 0x9e3779b97f4a7c15ULL

static u64 random_counter;

static u64 splitmix_mix(u64 z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void get_random_bytes(void *buf, size_t n)
{
	size_t words = (n + 7) / 8;
	u64 base = fetch_add_relaxed(&random_counter, words * SPLITMIX_GAMMA);
	u64 clock = splitmix_mix(arch_clock_ns());
	u8 *out = buf;

	for (size_t i = 0; i < words; i++) {
		u64 w = splitmix_mix(base + (i + 1) * SPLITMIX_GAMMA) ^ clock;
		size_t k = MIN(n - i * 8, sizeof(w));
		memcpy(out + i * 8, &w, k);
	}
}
