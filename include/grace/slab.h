/*
 * Slab caches: fixed-size objects carved from buddy pages, with a per-CPU array
 * of free objects in front of per-node slab lists, so most allocations and frees
 * touch only their own CPU's memory. kmalloc() serves 8 bytes to a page from a
 * set of such caches and larger sizes straight from the buddy allocator.
 *
 * Out of memory is NULL. A constructor, if given, runs once per object when its
 * slab is created, not on every allocation: an object must be given back in its
 * constructed state (as in Bonwick's design and Linux). It runs with no lock held
 * and must not allocate from the cache it constructs for.
 *
 * SLAB_TYPESAFE_BY_RCU: a freed object may be handed out again at once, but its
 * memory stays an object of this cache, so a lockless reader that still holds a
 * pointer reads a valid (maybe reused) object of the same type and must re-check
 * its identity. Empty slabs go back to the buddy through call_rcu(), after a
 * grace period, and kmem_cache_destroy() calls rcu_barrier() first. Their objects are not poisoned
 * in DEBUG builds (a reader may still look at them), and the free list lives outside the object.
 *
 * DEBUG=1 (make DEBUG=1, defines GRACE_DEBUG): red zones before and after every
 * object, freed objects poisoned (0x6b) and checked when handed out again, and
 * every free checked for double free and overwritten red zones. A problem is
 * printed with the cache name and the caller (and the allocating caller), and
 * counted; the object is then leaked rather than corrupting the cache.
 */
#ifndef GRACE_SLAB_H
#define GRACE_SLAB_H

#include <grace/types.h>

#define SLAB_TYPESAFE_BY_RCU (1u << 0)
#define SLAB_HWCACHE_ALIGN (1u << 1) /* align objects to a cache line */
/*
 * Allocations from such a cache may be made to fail by failslab (grace/failslab.h):
 * for caches whose users handle NULL and want that handling tested.
 */
#define SLAB_FAILSLAB (1u << 2)
#define KMEM_CACHE_NAME_MAX 24 /* longer names are cut */

struct kmem_cache;

/*
 * A cache of size-byte objects aligned to align (0: 8; a power of two up to a page).
 * The name is copied. NULL on bad arguments (size 0 or over a page, bad align) or OOM.
 */
struct kmem_cache *kmem_cache_create(const char *name, size_t size, size_t align, unsigned flags,
				     void (*ctor)(void *obj));
/*
 * Give everything back and free the cache: 0, or -EBUSY (printed) when objects are
 * still allocated, and the cache stays. The caller guarantees nobody uses the cache
 * any more (for SLAB_TYPESAFE_BY_RCU: no reader holds an object; destroy waits
 * for the pending slab releases with rcu_barrier()).
 */
int kmem_cache_destroy(struct kmem_cache *c);
void *kmem_cache_alloc(struct kmem_cache *c);
void *kmem_cache_alloc_node(struct kmem_cache *c, int node);
void kmem_cache_free(struct kmem_cache *c, void *obj);
/* Empty every CPU's array and give empty slabs back (SLAB_TYPESAFE_BY_RCU: after a grace period).
 */
void kmem_cache_shrink(struct kmem_cache *c);

struct kmem_cache_stats {
	u64 slabs;	      /* slabs the cache holds */
	u64 objects;	      /* object slots in them */
	u64 free_objects;     /* on slab free lists (not counting per-CPU arrays) */
	u64 cpu_objects;      /* in per-CPU arrays */
	unsigned object_size; /* the caller's size */
	unsigned stride;      /* bytes per object slot, debug metadata included */
	unsigned order;	      /* of each slab's block */
};
void kmem_cache_stats(struct kmem_cache *c, struct kmem_cache_stats *s);
const char *kmem_cache_name(const struct kmem_cache *c);
/* Call fn on every cache under the list's lock (fn must not sleep or create caches). */
void kmem_cache_for_each(void (*fn)(struct kmem_cache *c, void *arg), void *arg);

/* size bytes (0 counts as 1), 8-aligned at least, power-of-two sizes to their size; NULL on OOM. */
void *kmalloc(size_t size);
void *kzalloc(size_t size);
/*
 * kmalloc() and kzalloc() that may be made to fail by failslab (grace/failslab.h),
 * as a SLAB_FAILSLAB cache is: for allocations whose NULL path should be tested.
 */
void *kmalloc_failable(size_t size);
void *kzalloc_failable(size_t size);
void kfree(const void *obj);
/* Usable bytes at obj (at least what was asked). */
size_t ksize(const void *obj);
#define KMALLOC_MAX_CACHE_SIZE 4096 /* above: whole buddy blocks */

/* DEBUG builds: what the checks found. */
enum slab_debug_kind {
	SLAB_BUG_DOUBLE_FREE,
	SLAB_BUG_REDZONE,  /* write before or after the object */
	SLAB_BUG_POISON,   /* write to a free object */
	SLAB_BUG_BAD_FREE, /* pointer is not an object of this cache */
	SLAB_BUG_KINDS
};

struct slab_debug_report {
	enum slab_debug_kind kind;
	char cache[KMEM_CACHE_NAME_MAX]; /* the cache's name (copied: the cache may be gone) */
	const void *obj;
	uintptr_t caller;	/* who freed (or allocated, for poison) */
	uintptr_t alloc_caller; /* who allocated the object last */
};

/* True when built with DEBUG=1. */
bool slab_debug_enabled(void);
/* Reports of kind since boot (0 in a non-debug build). */
u64 slab_debug_count(enum slab_debug_kind kind);
/* The latest report; false if there was none. */
bool slab_debug_last(struct slab_debug_report *out);

#endif
