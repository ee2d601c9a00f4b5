/* Freestanding string and memory functions, plus glob matching and number parsing. */
#include <grace/errno.h>
#include <grace/string.h>

/*
 * memcpy and memset move a word at a time once both ends are word aligned: under
 * TCG every emulated store costs, and clearing a 2 MiB page byte by byte takes
 * millions of instructions.
 */
#define WORD_SIZE sizeof(unsigned long)

void *memcpy(void *dst, const void *src, size_t n)
{
	char *d = dst;
	const char *s = src;
	if (((uintptr_t)d | (uintptr_t)s) % WORD_SIZE == 0) {
		for (; n >= WORD_SIZE; n -= WORD_SIZE, d += WORD_SIZE, s += WORD_SIZE)
			*(unsigned long *)d = *(const unsigned long *)s;
	}
	while (n--)
		*d++ = *s++;
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	char *d = dst;
	const char *s = src;
	if (d < s)
		return memcpy(dst, src, n);
	while (n--)
		d[n] = s[n];
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	unsigned char *d = dst;
	for (; n && (uintptr_t)d % WORD_SIZE; n--)
		*d++ = (unsigned char)c;
	unsigned long word = (unsigned char)c * (~0UL / 0xff); /* c in every byte */
	for (; n >= WORD_SIZE; n -= WORD_SIZE, d += WORD_SIZE)
		*(unsigned long *)d = word;
	while (n--)
		*d++ = (unsigned char)c;
	return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
	const unsigned char *x = a, *y = b;
	for (; n; n--, x++, y++)
		if (*x != *y)
			return *x - *y;
	return 0;
}

size_t strlen(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	return n;
}

size_t strnlen(const char *s, size_t max)
{
	size_t n = 0;
	while (n < max && s[n])
		n++;
	return n;
}

int strcmp(const char *a, const char *b)
{
	while (*a && *a == *b)
		a++, b++;
	return (unsigned char)*a - (unsigned char)*b;
}

int strncmp(const char *a, const char *b, size_t n)
{
	for (; n; n--, a++, b++) {
		if (*a != *b)
			return (unsigned char)*a - (unsigned char)*b;
		if (!*a)
			return 0;
	}
	return 0;
}

char *strchr(const char *s, int c)
{
	for (;; s++) {
		if (*s == (char)c)
			return (char *)s;
		if (!*s)
			return NULL;
	}
}

char *strrchr(const char *s, int c)
{
	const char *last = NULL;
	for (;; s++) {
		if (*s == (char)c)
			last = s;
		if (!*s)
			return (char *)last;
	}
}

char *strstr(const char *haystack, const char *needle)
{
	size_t n = strlen(needle);
	for (; *haystack; haystack++)
		if (!strncmp(haystack, needle, n))
			return (char *)haystack;
	return n ? NULL : (char *)haystack;
}

size_t strlcpy(char *dst, const char *src, size_t size)
{
	size_t len = strlen(src);
	if (size) {
		size_t n = len < size - 1 ? len : size - 1;
		memcpy(dst, src, n);
		dst[n] = '\0';
	}
	return len;
}

bool glob_match(const char *p, const char *s)
{
	/* Iterative matcher: on mismatch, retry from the last '*' one character further. */
	const char *star = NULL, *resume = NULL;
	while (*s) {
		if (*p == '*') {
			star = ++p;
			resume = s;
		} else if (*p == '?' || *p == *s) {
			p++, s++;
		} else if (star) {
			p = star;
			s = ++resume;
		} else {
			return false;
		}
	}
	while (*p == '*')
		p++;
	return !*p;
}

bool glob_list_match(const char *globs, const char *s)
{
	char glob[128];
	bool match = false;
	while (*globs) {
		size_t n = 0;
		while (globs[n] && globs[n] != ',')
			n++;
		if (n < sizeof(glob)) {
			memcpy(glob, globs, n);
			glob[n] = '\0';
			if (glob[0] == '-' && glob_match(glob + 1, s))
				return false; /* excluded, wherever the exclusion stands */
			if (glob[0] != '-' && glob_match(glob, s))
				match = true;
		}
		globs += n;
		if (*globs == ',')
			globs++;
	}
	return match;
}

int parse_u64(const char *s, u64 *out)
{
	unsigned base = 10;
	u64 v = 0;

	if (!s || !*s)
		return -EINVAL;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
		if (!*s)
			return -EINVAL;
	}
	for (; *s; s++) {
		unsigned d;
		if (*s >= '0' && *s <= '9')
			d = *s - '0';
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = *s - 'a' + 10;
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = *s - 'A' + 10;
		else
			break;
		if (v > (~0ULL - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	if (*s) {
		unsigned shift = 0;
		switch (*s) {
		case 'K':
		case 'k':
			shift = 10;
			break;
		case 'M':
		case 'm':
			shift = 20;
			break;
		case 'G':
		case 'g':
			shift = 30;
			break;
		default:
			return -EINVAL;
		}
		if (s[1])
			return -EINVAL;
		if (v > (~0ULL >> shift))
			return -ERANGE;
		v <<= shift;
	}
	*out = v;
	return 0;
}
