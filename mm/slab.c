/*
 * Slab caches (see include/grace/slab.h for the interface and mm/slab_internal.h
 * for the slot layout). Each CPU has an array of free objects per cache; an
 * allocation pops from it and a free pushes onto it, under the array's own lock
 * (only ever contended by a shrink). An empty array is refilled with `batch`
 * objects from the slabs of the CPU's node, a full one gives `batch` back, in one
 * hold of the node's lock; a new slab is a block from the buddy allocator.
 *
 * A slab is described by its head page: private is the cache, freelist the first
 * free object, inuse the objects handed out (including those in CPU arrays). Its
 * tail pages carry PG_SLAB and the cache too, so kfree() finds the cache from any
 * object. A node keeps up to SLAB_KEEP_EMPTY empty slabs and gives the rest back
 * to the buddy. In SLAB_TYPESAFE_BY_RCU caches an empty slab goes back only
 * after a grace period (slab_release_rcu): a lockless reader may still be
 * looking at one of its objects. Until then it stays counted in nr_slabs and
 * free_objs, off every list, its struct rcu_head in the head page's list link.
 *
 * Lock order: docs/locking.md. Objects travel between CPU arrays and slabs
 * through a local array, so no path holds a slab_cpu lock while it takes a node
 * lock, and slabs are allocated and freed with no slab lock held.
 */
#include <grace/errno.h>
#include <grace/failslab.h>
#include <grace/page_alloc.h>
#include <grace/numa.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/rcupdate.h>
#include <grace/string.h>
#include "page_alloc_internal.h"
#include "slab_internal.h"

/* Empty slabs a node keeps for the next burst; more go back to the buddy. */
#define SLAB_KEEP_EMPTY 1
/* A slab is at most 2^3 pages; the order is the smallest wasting at most 1/8. */
#define SLAB_MAX_ORDER 3
#define SLAB_WASTE_DIVISOR 8

static struct kmem_cache cache_cache; /* where created caches' descriptors come from */
/* Every cache that is set up, for listings; never on an allocation path. */
static LIST_HEAD(slab_caches);
static DEFINE_SPINLOCK(slab_caches_lock); /* protects slab_caches (each cache's all_node) */

const char *kmem_cache_name(const struct kmem_cache *c)
{
	return c->name;
}

static unsigned slab_pick_order(unsigned stride)
{
	for (unsigned o = 0; o <= SLAB_MAX_ORDER; o++) {
		u64 bytes = PAGE_SIZE << o;
		if (bytes >= stride && (bytes % stride) * SLAB_WASTE_DIVISOR <= bytes)
			return o;
	}
	for (unsigned o = 0; o <= SLAB_MAX_ORDER; o++)
		if ((PAGE_SIZE << o) >= stride)
			return o;
	return SLAB_MAX_ORDER + 1;
}

static void slab_layout(struct kmem_cache *c)
{
	unsigned osize = (unsigned)ALIGN_UP(c->size, 8);
	c->obj_offset = 0;
	c->free_offset = 0;
	c->stride = osize;
	/* A constructed or RCU-readable object must keep its contents while free. */
	if (c->ctor || (c->flags & SLAB_TYPESAFE_BY_RCU)) {
		c->free_offset = osize;
		c->stride += sizeof(void *);
	}
	c->meta_offset = c->stride;
	slab_debug_layout(c); /* DEBUG: red zones and metadata around the object */
	c->stride = (unsigned)ALIGN_UP(c->stride, c->align);
}

int kmem_cache_setup(struct kmem_cache *c, const char *name, size_t size, size_t align,
		     unsigned flags, void (*ctor)(void *))
{
	if (!name || size == 0 || size > PAGE_SIZE || (align & (align - 1)) || align > PAGE_SIZE)
		return -EINVAL;
	memset(c, 0, sizeof(*c));
	strlcpy(c->name, name, sizeof(c->name));
	c->size = (unsigned)size;
	c->align = align < 8 ? 8 : (unsigned)align;
	if ((flags & SLAB_HWCACHE_ALIGN) && c->align < CACHE_LINE_SIZE)
		c->align = CACHE_LINE_SIZE;
	c->flags = flags;
	c->ctor = ctor;
	slab_layout(c);
	c->order = slab_pick_order(c->stride);
	if (c->order > SLAB_MAX_ORDER)
		return -EINVAL;
	c->objects = (unsigned)((PAGE_SIZE << c->order) / c->stride);

	unsigned limit = c->size <= 256 ? SLAB_CPU_CAP : c->size <= 1024 ? 16 : 8;
	c->batch = (limit + 1) / 2;
	size_t bytes = boot_info.nr_cpus * sizeof(struct slab_cpu);
	c->cpu_order = pages_order(bytes);
	c->cpu = alloc_pages(c->cpu_order);
	if (!c->cpu)
		return -ENOMEM;
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++) {
		spin_lock_init(&c->cpu[cpu].lock);
		c->cpu[cpu].limit = limit;
	}
	for (unsigned n = 0; n < MAX_NODES; n++)
		spin_lock_init(&c->nodes[n].lock);
	unsigned long irq = spin_lock_irqsave(&slab_caches_lock);
	list_add_tail(&c->all_node, &slab_caches);
	spin_unlock_irqrestore(&slab_caches_lock, irq);
	return 0;
}

void kmem_cache_for_each(void (*fn)(struct kmem_cache *c, void *arg), void *arg)
{
	unsigned long flags = spin_lock_irqsave(&slab_caches_lock);
	struct kmem_cache *c;
	list_for_each_entry(c, &slab_caches, all_node)
		fn(c, arg);
	spin_unlock_irqrestore(&slab_caches_lock, flags);
}

/* The head page of obj's slab, or NULL if obj is in no slab. */
static struct page *slab_head(const void *obj)
{
	struct page *page = virt_to_page(obj);
	if (!page || !(page->flags & PG_SLAB))
		return NULL;
	const struct kmem_cache *c = (const struct kmem_cache *)page->private;
	return pfn_to_page(page_to_pfn(page) & ~((1ULL << c->order) - 1));
}

struct kmem_cache *slab_cache_of(const void *obj)
{
	struct page *page = virt_to_page(obj);
	return page && (page->flags & PG_SLAB) ? (struct kmem_cache *)page->private : NULL;
}

/* A new slab of free (constructed) objects; no lock held. */
static struct page *slab_new(struct kmem_cache *c, int node)
{
	struct page *head = alloc_page_block(node, c->order, ALLOC_NOZERO);
	if (!head)
		return NULL;
	for (unsigned i = 0; i < 1u << c->order; i++) {
		head[i].flags |= PG_SLAB;
		head[i].private = (uintptr_t)c;
	}
	char *base = page_address(head);
	head->freelist = NULL;
	head->inuse = 0;
	for (unsigned i = c->objects; i-- > 0;) {
		void *obj = base + (size_t)i * c->stride + c->obj_offset;
		slab_debug_init_slot(c, obj);
		if (c->ctor)
			c->ctor(obj);
		*slab_free_ptr(c, obj) = head->freelist;
		head->freelist = obj;
	}
	return head;
}

static void slab_release(struct kmem_cache *c, struct page *head)
{
	for (unsigned i = 1; i < 1u << c->order; i++) {
		head[i].flags &= ~PG_SLAB;
		head[i].private = 0;
	}
	head->flags &= ~PG_SLAB;
	head->private = 0;
	free_page_block(head, c->order);
}

/*
 * SLAB_TYPESAFE_BY_RCU: the slab's pages go back to the buddy after a grace
 * period. The head page is on no list meanwhile, so its next/prev link words
 * hold the struct rcu_head.
 */
BUILD_BUG_ON(sizeof(struct rcu_head) > 2 * sizeof(struct page *));

static void slab_release_rcu_cb(struct rcu_head *rh)
{
	struct page *head = container_of((void *)rh, struct page, next);
	struct kmem_cache *c = (struct kmem_cache *)head->private;
	struct slab_node *n = &c->nodes[head->node];
	unsigned long flags = spin_lock_irqsave(&n->lock);
	n->nr_slabs--;
	n->free_objs -= c->objects;
	spin_unlock_irqrestore(&n->lock, flags);
	slab_release(c, head);
}

/* head is empty and on no list; node lock not held. */
static void slab_release_rcu(struct page *head)
{
	call_rcu((struct rcu_head *)(void *)&head->next, slab_release_rcu_cb);
}

/* Up to want objects from node n's slabs into out. */
static unsigned slab_take_locked(struct kmem_cache *c, struct slab_node *n, void **out,
				 unsigned want)
{
	lockdep_assert_held(&n->lock);
	unsigned got = 0;
	while (got < want) {
		struct page *s = n->partial;
		if (!s && (s = n->empty)) {
			page_list_del(&n->empty, s);
			n->nr_empty--;
			page_list_add(&n->partial, s);
		}
		if (!s)
			break;
		while (got < want && s->freelist) {
			void *obj = s->freelist;
			s->freelist = *slab_free_ptr(c, obj);
			s->inuse++;
			out[got++] = obj;
		}
		if (!s->freelist)
			page_list_del(&n->partial, s); /* full: on no list */
	}
	n->free_objs -= got;
	return got;
}

/* Give obj back to its slab; returns the slab when it became empty and should go to the buddy. */
static struct page *slab_put_locked(struct kmem_cache *c, struct slab_node *n, struct page *s,
				    void *obj)
{
	lockdep_assert_held(&n->lock);
	bool was_full = !s->freelist;
	*slab_free_ptr(c, obj) = s->freelist;
	s->freelist = obj;
	s->inuse--;
	n->free_objs++;
	if (s->inuse == 0) {
		if (!was_full)
			page_list_del(&n->partial, s);
		if (n->nr_empty >= SLAB_KEEP_EMPTY) {
			if (!(c->flags & SLAB_TYPESAFE_BY_RCU)) {
				n->nr_slabs--;
				n->free_objs -= c->objects;
			}
			return s; /* an RCU slab stays counted until slab_release_rcu_cb */
		}
		page_list_add(&n->empty, s);
		n->nr_empty++;
	} else if (was_full) {
		page_list_add(&n->partial, s);
	}
	return NULL;
}

/* Objects back to their slabs, a node lock per run of one node; empty slabs to the buddy. */
static void slab_put_many(struct kmem_cache *c, void **objs, unsigned count)
{
	struct page *release = NULL;
	struct slab_node *locked = NULL;
	unsigned long flags = 0;
	for (unsigned i = 0; i < count; i++) {
		struct page *s = slab_head(objs[i]);
		struct slab_node *n = &c->nodes[s->node];
		if (n != locked) {
			if (locked)
				spin_unlock_irqrestore(&locked->lock, flags);
			flags = spin_lock_irqsave(&n->lock);
			locked = n;
		}
		struct page *empty = slab_put_locked(c, n, s, objs[i]);
		if (empty) {
			empty->next = release;
			release = empty;
		}
	}
	if (locked)
		spin_unlock_irqrestore(&locked->lock, flags);
	while (release) {
		struct page *next = release->next;
		if (c->flags & SLAB_TYPESAFE_BY_RCU)
			slab_release_rcu(release);
		else
			slab_release(c, release);
		release = next;
	}
}

/* Refill path: `want` objects from node's slabs, or a new slab. Returns how many. */
static unsigned slab_refill(struct kmem_cache *c, int node, void **out, unsigned want)
{
	struct slab_node *n = &c->nodes[node];
	unsigned long flags = spin_lock_irqsave(&n->lock);
	unsigned got = slab_take_locked(c, n, out, want);
	spin_unlock_irqrestore(&n->lock, flags);
	if (got)
		return got;

	struct page *s = slab_new(c, node);
	if (!s)
		return 0;
	/* The buddy may have given another node's memory: the slab lives on that node. */
	n = &c->nodes[s->node];
	flags = spin_lock_irqsave(&n->lock);
	n->nr_slabs++;
	n->free_objs += c->objects;
	page_list_add(&n->empty, s);
	n->nr_empty++;
	got = slab_take_locked(c, n, out, want);
	spin_unlock_irqrestore(&n->lock, flags);
	return got;
}

void *slab_alloc(struct kmem_cache *c, int node, uintptr_t caller)
{
	void *obj = NULL;
	if (node == NUMA_NO_NODE) {
		unsigned long flags = arch_irq_save();
		struct slab_cpu *sc = &c->cpu[smp_processor_id()];
		spin_lock(&sc->lock);
		if (sc->avail)
			obj = sc->objs[--sc->avail];
		spin_unlock(&sc->lock);
		arch_irq_restore(flags);
	}
	if (!obj) {
		void *got[SLAB_CPU_CAP];
		bool local = node == NUMA_NO_NODE;
		unsigned n =
		    slab_refill(c, local ? numa_this_node() : node, got, local ? c->batch : 1);
		if (!n)
			return NULL;
		obj = got[--n];
		if (n) {
			/* Keep the rest in this CPU's array; what does not fit goes back. */
			unsigned long flags = arch_irq_save();
			struct slab_cpu *sc = &c->cpu[smp_processor_id()];
			spin_lock(&sc->lock);
			while (n && sc->avail < sc->limit)
				sc->objs[sc->avail++] = got[--n];
			spin_unlock(&sc->lock);
			arch_irq_restore(flags);
			slab_put_many(c, got, n);
		}
	}
	slab_debug_on_alloc(c, obj, caller);
	return obj;
}

void slab_free(struct kmem_cache *c, void *obj, uintptr_t caller)
{
	struct page *s = slab_head(obj);
	uintptr_t off = s ? (uintptr_t)obj - (uintptr_t)page_address(s) : 0;
	if (!s || (struct kmem_cache *)s->private != c || off < c->obj_offset ||
	    (off - c->obj_offset) % c->stride || (off - c->obj_offset) / c->stride >= c->objects) {
		slab_report(SLAB_BUG_BAD_FREE, c, obj, caller, 0);
		return;
	}
	if (!slab_debug_on_free(c, obj, caller))
		return;

	void *spill[SLAB_CPU_CAP];
	unsigned nspill = 0;
	unsigned long flags = arch_irq_save();
	struct slab_cpu *sc = &c->cpu[smp_processor_id()];
	spin_lock(&sc->lock);
	if (sc->avail >= sc->limit) {
		/* Give back the coldest batch, keep the recently freed (cache-hot) ones. */
		nspill = c->batch;
		memcpy(spill, sc->objs, nspill * sizeof(void *));
		memmove(sc->objs, sc->objs + nspill, (sc->avail - nspill) * sizeof(void *));
		sc->avail -= nspill;
	}
	sc->objs[sc->avail++] = obj;
	spin_unlock(&sc->lock);
	arch_irq_restore(flags);
	if (nspill)
		slab_put_many(c, spill, nspill);
}

/* An injected failure (grace/failslab.h) comes before the cache is touched: nothing leaks. */
static bool slab_should_fail(const struct kmem_cache *c)
{
	return (c->flags & SLAB_FAILSLAB) && should_failslab();
}

void *kmem_cache_alloc(struct kmem_cache *c)
{
	if (slab_should_fail(c))
		return NULL;
	return slab_alloc(c, NUMA_NO_NODE, (uintptr_t)__builtin_return_address(0));
}

void *kmem_cache_alloc_node(struct kmem_cache *c, int node)
{
	if (node != NUMA_NO_NODE && (node < 0 || (unsigned)node >= nr_nodes))
		return NULL;
	if (slab_should_fail(c))
		return NULL;
	return slab_alloc(c, node, (uintptr_t)__builtin_return_address(0));
}

void kmem_cache_free(struct kmem_cache *c, void *obj)
{
	if (obj)
		slab_free(c, obj, (uintptr_t)__builtin_return_address(0));
}

/* Every CPU array back into the slabs. */
static void slab_drain_cpus(struct kmem_cache *c)
{
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++) {
		void *objs[SLAB_CPU_CAP];
		struct slab_cpu *sc = &c->cpu[cpu];
		unsigned long flags = spin_lock_irqsave(&sc->lock);
		unsigned n = sc->avail;
		memcpy(objs, sc->objs, n * sizeof(void *));
		sc->avail = 0;
		spin_unlock_irqrestore(&sc->lock, flags);
		slab_put_many(c, objs, n);
	}
}

/* Take every empty slab off the node lists and give it to the buddy. */
static void slab_release_empty(struct kmem_cache *c)
{
	for (unsigned node = 0; node < nr_nodes; node++) {
		struct slab_node *n = &c->nodes[node];
		unsigned long flags = spin_lock_irqsave(&n->lock);
		struct page *list = n->empty;
		bool rcu = c->flags & SLAB_TYPESAFE_BY_RCU;
		if (!rcu) {
			n->nr_slabs -= n->nr_empty;
			n->free_objs -= (u64)n->nr_empty * c->objects;
		}
		n->empty = NULL;
		n->nr_empty = 0;
		spin_unlock_irqrestore(&n->lock, flags);
		while (list) {
			struct page *next = list->next;
			if (rcu)
				slab_release_rcu(list);
			else
				slab_release(c, list);
			list = next;
		}
	}
}

void kmem_cache_shrink(struct kmem_cache *c)
{
	slab_drain_cpus(c);
	slab_release_empty(c); /* an RCU cache's after a grace period */
}

void kmem_cache_stats(struct kmem_cache *c, struct kmem_cache_stats *s)
{
	*s = (struct kmem_cache_stats){
	    .object_size = c->size, .stride = c->stride, .order = c->order};
	for (unsigned node = 0; node < nr_nodes; node++) {
		struct slab_node *n = &c->nodes[node];
		unsigned long flags = spin_lock_irqsave(&n->lock);
		s->slabs += n->nr_slabs;
		s->free_objects += n->free_objs;
		spin_unlock_irqrestore(&n->lock, flags);
	}
	s->objects = s->slabs * c->objects;
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++)
		s->cpu_objects += READ_ONCE(c->cpu[cpu].avail);
}

struct kmem_cache *kmem_cache_create(const char *name, size_t size, size_t align, unsigned flags,
				     void (*ctor)(void *obj))
{
	struct kmem_cache *c =
	    slab_alloc(&cache_cache, NUMA_NO_NODE, (uintptr_t)__builtin_return_address(0));
	if (!c)
		return NULL;
	int err = kmem_cache_setup(c, name, size, align, flags, ctor);
	if (err) {
		if (err != -EINVAL)
			pr_warn("slab: cannot create cache %s: %s\n", name, errno_name(err));
		slab_free(&cache_cache, c, 0);
		return NULL;
	}
	return c;
}

int kmem_cache_destroy(struct kmem_cache *c)
{
	if (!c)
		return 0;
	slab_drain_cpus(c);
	u64 in_use = 0;
	for (unsigned node = 0; node < nr_nodes; node++) {
		struct slab_node *n = &c->nodes[node];
		unsigned long flags = spin_lock_irqsave(&n->lock);
		in_use += n->nr_slabs * c->objects - n->free_objs;
		spin_unlock_irqrestore(&n->lock, flags);
	}
	if (in_use) {
		pr_err("slab: destroying cache %s with %llu objects still allocated; kept\n",
		       c->name, (unsigned long long)in_use);
		return -EBUSY;
	}
	if (c->flags & SLAB_TYPESAFE_BY_RCU) {
		/* Its empty slabs go through grace periods; they must be gone before c is. */
		slab_release_empty(c);
		rcu_barrier();
	} else {
		slab_release_empty(c);
	}
	unsigned long flags = spin_lock_irqsave(&slab_caches_lock);
	list_del_init(&c->all_node);
	spin_unlock_irqrestore(&slab_caches_lock, flags);
	free_pages(c->cpu, c->cpu_order);
	slab_free(&cache_cache, c, (uintptr_t)__builtin_return_address(0));
	return 0;
}

void slab_init(void)
{
	if (kmem_cache_setup(&cache_cache, "kmem_cache", sizeof(struct kmem_cache), CACHE_LINE_SIZE,
			     0, NULL))
		panic("slab: cannot set up the cache of caches");
	kmalloc_init();
	failslab_init();
}
