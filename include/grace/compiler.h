/* Compiler attributes and small helper macros shared by every file. */
#ifndef GRACE_COMPILER_H
#define GRACE_COMPILER_H

#define CACHE_LINE_SIZE 64

#define __aligned(x) __attribute__((aligned(x)))
#define __cacheline_aligned __aligned(CACHE_LINE_SIZE)
#define __section(s) __attribute__((section(s)))
#define __used __attribute__((used))
#define __unused __attribute__((unused))
#define __noreturn __attribute__((noreturn))
#define __noinline __attribute__((noinline))
#define __always_inline inline __attribute__((always_inline))
#define __packed __attribute__((packed))
#define __printf(a, b) __attribute__((format(printf, a, b)))
/* A pointer from user space: touched only through grace/uaccess.h. No code, only a mark. */
#define __user

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

#define ALIGN_UP(x, a) (((x) + (a)-1) & ~((__typeof__(x))(a)-1))
#define ALIGN_DOWN(x, a) ((x) & ~((__typeof__(x))(a)-1))
#define IS_ALIGNED(x, a) (((x) & ((__typeof__(x))(a)-1)) == 0)

#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))

#define BUILD_BUG_ON(cond) _Static_assert(!(cond), #cond)

#define KiB (1ULL << 10)
#define MiB (1ULL << 20)
#define GiB (1ULL << 30)

#endif
