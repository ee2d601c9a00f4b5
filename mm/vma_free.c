/*
 * Making and freeing VMAs. Every VMA not in a table is write-locked: its slab's
 * constructor makes it so and a VMA leaves a table write-locked, so a lookup that
 * still found one fails its try (mm/vma_lock.c). How a removed VMA's memory goes is
 * vma_free= (vma_set_free_mode()): typesafe (the default) frees it at once into a
 * SLAB_TYPESAFE_BY_RCU cache, so a lookup may find it reused as another VMA, of this
 * mm or another; the check after the try refuses it unless it is now this mm's VMA
 * around the address. This is Linux 6.15's VMA cache. rcu frees it after a grace
 * period, so a lookup touches only the VMA it found. Typesafe makes munmap queue no
 * RCU callback, and so start no grace period: a map/unmap loop on every CPU sends no
 * IPI. A VMA goes the way of the cache it came from, so the mode may change with VMAs
 * mapped. Nothing here is called under mm->vma_lock but vma_alloc() and vma_free() of
 * VMAs no table holds: writers allocate before taking it and retire after dropping it.
 */
#include <grace/cmdline.h>
#include <grace/printk.h>
#include <grace/slab.h>
#include "slab_internal.h"
#include "vma_internal.h"

/* Read by every map and unmap: on a line of its own. */
static struct kmem_cache *vma_cache[2] __cacheline_aligned; /* by enum vma_free_mode */
static enum vma_free_mode free_mode = VMA_FREE_TYPESAFE;

/*
 * Every VMA not in a table is write-locked: so it comes from its slab, and so a
 * freed one stays, which keeps a lookup that found it before from taking its lock.
 */
static void vma_ctor(void *obj)
{
	((struct vma *)obj)->lock = VMA_LOCK_WRITER;
}

void vma_init(void)
{
	static const char *const modes[] = {
	    [VMA_FREE_TYPESAFE] = "typesafe", [VMA_FREE_RCU] = "rcu"};
	vma_cache[VMA_FREE_TYPESAFE] = kmem_cache_create(
	    "vma", sizeof(struct vma), 0, SLAB_HWCACHE_ALIGN | SLAB_TYPESAFE_BY_RCU, vma_ctor);
	vma_cache[VMA_FREE_RCU] =
	    kmem_cache_create("vma_rcu", sizeof(struct vma), 0, SLAB_HWCACHE_ALIGN, vma_ctor);
	if (!vma_cache[VMA_FREE_TYPESAFE] || !vma_cache[VMA_FREE_RCU])
		panic("mm: no memory for the VMA caches");
	vma_set_free_mode(
	    cmdline_get_choice("vma_free", modes, ARRAY_SIZE(modes), VMA_FREE_TYPESAFE));
}

void vma_set_free_mode(enum vma_free_mode mode)
{
	WRITE_ONCE(free_mode, mode);
}

enum vma_free_mode vma_get_free_mode(void)
{
	return READ_ONCE(free_mode);
}

const char *vma_free_mode_name(enum vma_free_mode mode)
{
	return mode == VMA_FREE_RCU ? "rcu" : "typesafe";
}

struct vma *vma_alloc(uintptr_t start, uintptr_t end, unsigned prot, unsigned flags)
{
	struct vma *v = kmem_cache_alloc(vma_cache[vma_get_free_mode()]);
	if (!v)
		return NULL;
	/*
	 * The lock word is not written: a lookup that found this memory in an earlier
	 * life may be reading it.
	 */
	BUG_ON(READ_ONCE(v->lock) != VMA_LOCK_WRITER);
	v->start = start;
	v->end = end;
	v->prot = prot;
	v->flags = flags;
	return v;
}

void vma_free(struct vma *v)
{
	kmem_cache_free(slab_cache_of(v), v);
}

static void vma_free_rcu(struct rcu_head *head)
{
	vma_free(container_of(head, struct vma, rcu));
}

/*
 * v has left the table, write-locked: a typesafe VMA may go at once (a lookup that
 * still holds it fails its try now, or its check after the try once v is reused); an
 * rcu one once no lookup can still hold it.
 */
static void vma_retire(struct vma *v)
{
	if (slab_cache_of(v) == vma_cache[VMA_FREE_TYPESAFE])
		vma_free(v);
	else
		call_rcu(&v->rcu, vma_free_rcu);
}

void vma_retire_all(struct rcu_head *retired)
{
	while (retired) {
		struct rcu_head *next = retired->next; /* before call_rcu() reuses the head */
		vma_retire(container_of(retired, struct vma, rcu));
		retired = next;
	}
}

void vma_quiesce(void)
{
	rcu_barrier();
	kmem_cache_shrink(vma_cache[VMA_FREE_TYPESAFE]);
	kmem_cache_shrink(vma_cache[VMA_FREE_RCU]);
	rcu_barrier(); /* the typesafe cache's empty slabs go after a grace period */
}
