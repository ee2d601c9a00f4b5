/* Fixed-width integer types and the few freestanding basics the kernel uses. */
#ifndef GRACE_TYPES_H
#define GRACE_TYPES_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <stdarg.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef unsigned long long u64; /* as in Linux: prints with %llu on every arch */
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef long long s64;
typedef u64 phys_addr_t;
typedef long ssize_t;

#endif
