/*
 * The inside of a slab cache, shared by mm/slab.c (caches, per-CPU arrays, slab
 * lists), mm/slab_debug.c (red zones, poison, reports) and mm/kmalloc.c.
 *
 * An object slot, `stride` bytes, is laid out as
 *   [left red zone: obj_offset bytes, DEBUG only] [object: size bytes]
 *   [right red zone up to the next 8 bytes + 8, DEBUG only]
 *   [free pointer at free_offset, when it must not live inside the object]
 *   [state, alloc caller, free caller: DEBUG only, at meta_offset]
 * Without DEBUG, and without a constructor or SLAB_TYPESAFE_BY_RCU, the free
 * pointer is the object's first word and obj_offset is 0.
 *
 * Lock order: docs/locking.md. The slab locks do not nest, but for the listing
 * of caches under slab_caches_lock, which reads each node's counts under its lock.
 */
#ifndef MM_SLAB_INTERNAL_H
#define MM_SLAB_INTERNAL_H

#include <grace/boot_info.h>
#include <grace/compiler.h>
#include <grace/list.h>
#include <grace/page.h>
#include <grace/slab.h>
#include <grace/spinlock.h>

/* Per-CPU array capacity: 29 pointers fill a 256-byte slot with the lock and counts. */
#define SLAB_CPU_CAP 29

struct slab_cpu {
	spinlock_t lock; /* protects avail, objs[]: its CPU with irqs off, shrink/destroy any CPU */
	u32 avail;	 /* objs[0..avail) are free objects, the last one the hottest */
	u32 limit;	 /* at most this many */
	void *objs[SLAB_CPU_CAP];
} __cacheline_aligned;

struct slab_node {
	spinlock_t lock;      /* protects everything below and the slabs' freelist/inuse */
	struct page *partial; /* slabs with free and used objects (head pages) */
	struct page *empty;   /* slabs with every object free */
	u32 nr_empty;
	u64 nr_slabs;  /* all slabs of this node: partial, empty and full */
	u64 free_objs; /* on the free lists of this node's slabs */
} __cacheline_aligned;

struct kmem_cache {
	char name[KMEM_CACHE_NAME_MAX];
	unsigned size, align, stride;
	unsigned obj_offset, free_offset, meta_offset;
	unsigned order, objects; /* per slab: a block of 2^order pages holding `objects` */
	unsigned batch;		 /* objects moved between a CPU array and the slabs at once */
	unsigned flags;
	bool poison; /* DEBUG: poison free objects (not with ctor or RCU) */
	void (*ctor)(void *obj);
	struct slab_cpu *cpu; /* boot_info.nr_cpus entries, from the buddy */
	unsigned cpu_order;
	struct slab_node nodes[MAX_NODES];
	struct list_head all_node; /* on slab_caches, under slab_caches_lock */
};

/* Set up c in place (static caches and created ones alike). 0 or -EINVAL / -ENOMEM. */
int kmem_cache_setup(struct kmem_cache *c, const char *name, size_t size, size_t align,
		     unsigned flags, void (*ctor)(void *));
void *slab_alloc(struct kmem_cache *c, int node, uintptr_t caller);
void slab_free(struct kmem_cache *c, void *obj, uintptr_t caller);
/* The cache owning obj's slab, or NULL when obj is not in a slab. */
struct kmem_cache *slab_cache_of(const void *obj);

static inline void **slab_free_ptr(const struct kmem_cache *c, void *obj)
{
	return (void **)((char *)obj - c->obj_offset + c->free_offset);
}

/* mm/slab_debug.c; no-ops unless GRACE_DEBUG. */
void slab_debug_init_slot(struct kmem_cache *c, void *obj);
void slab_debug_on_alloc(struct kmem_cache *c, void *obj, uintptr_t caller);
bool slab_debug_on_free(struct kmem_cache *c, void *obj, uintptr_t caller); /* false: refuse */
void slab_report(enum slab_debug_kind kind, struct kmem_cache *c, const void *obj, uintptr_t caller,
		 uintptr_t alloc_caller);
void slab_debug_layout(struct kmem_cache *c);

void kmalloc_init(void);

#endif
