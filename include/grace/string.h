/* The freestanding string and memory functions (GCC may emit calls to the mem* ones). */
#ifndef GRACE_STRING_H
#define GRACE_STRING_H

#include <grace/types.h>

void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int c, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);
char *strrchr(const char *s, int c);
/* The first place needle occurs in haystack, or NULL. */
char *strstr(const char *haystack, const char *needle);
size_t strlcpy(char *dst, const char *src, size_t size);
/* Shell-style glob: * and ? only. */
bool glob_match(const char *pattern, const char *s);
/*
 * True if s matches a glob of a comma-separated list and no glob of it that starts
 * with '-' ("*,-net_*": everything but net_*).
 */
bool glob_list_match(const char *globs, const char *s);
/* Parse an unsigned number (decimal, 0x hex, optional K/M/G suffix); -EINVAL on junk. */
int parse_u64(const char *s, u64 *out);

#endif
