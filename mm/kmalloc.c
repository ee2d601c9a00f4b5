/*
 * kmalloc: general-purpose allocations from a fixed set of slab caches, 8 bytes
 * to a page, and whole buddy blocks above that. The sizes are powers of two plus
 * 96 and 192 (as in Linux), so no request wastes more than a third of its object;
 * a power-of-two size is aligned to itself. kfree() finds the cache from the page
 * descriptor: a slab page names its cache, a large block's head page its order.
 * kmalloc_failable() and kzalloc_failable() are the same behind failslab's check.
 */
#include <grace/failslab.h>
#include <grace/page_alloc.h>
#include <grace/page.h>
#include <grace/printk.h>
#include <grace/string.h>
#include "page_alloc_internal.h"
#include "slab_internal.h"

static const unsigned kmalloc_sizes[] = {8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096};
#define KMALLOC_CACHES ARRAY_SIZE(kmalloc_sizes)
static struct kmem_cache kmalloc_caches[KMALLOC_CACHES];
static const char *const kmalloc_names[KMALLOC_CACHES] = {
    "kmalloc-8",   "kmalloc-16",  "kmalloc-32",	 "kmalloc-64", "kmalloc-96", "kmalloc-128",
    "kmalloc-192", "kmalloc-256", "kmalloc-512", "kmalloc-1k", "kmalloc-2k", "kmalloc-4k",
};

BUILD_BUG_ON(KMALLOC_MAX_CACHE_SIZE != PAGE_SIZE);

void kmalloc_init(void)
{
	for (unsigned i = 0; i < KMALLOC_CACHES; i++) {
		unsigned size = kmalloc_sizes[i];
		/* Powers of two are aligned to their size (up to a page); 96 and 192 to 32 and 64.
		 */
		unsigned align = size & (size - 1) ? size & -size : size;
		if (kmem_cache_setup(&kmalloc_caches[i], kmalloc_names[i], size, align, 0, NULL))
			panic("slab: cannot set up %s", kmalloc_names[i]);
	}
}

static struct kmem_cache *kmalloc_cache(size_t size)
{
	for (unsigned i = 0; i < KMALLOC_CACHES; i++)
		if (size <= kmalloc_sizes[i])
			return &kmalloc_caches[i];
	return NULL;
}

static void *kmalloc_large(size_t size)
{
	unsigned order = pages_order(size);
	if (order > MAX_ORDER)
		return NULL;
	return alloc_pages_flags(NUMA_NO_NODE, order, ALLOC_NOZERO);
}

/* caller: who asked, for slab debugging's reports. */
static void *kmalloc_caller(size_t size, uintptr_t caller)
{
	struct kmem_cache *c = kmalloc_cache(size ? size : 1);
	if (!c)
		return kmalloc_large(size);
	return slab_alloc(c, NUMA_NO_NODE, caller);
}

static void *kzalloc_caller(size_t size, uintptr_t caller)
{
	void *p = kmalloc_caller(size, caller);
	if (p)
		memset(p, 0, size);
	return p;
}

void *kmalloc(size_t size)
{
	return kmalloc_caller(size, (uintptr_t)__builtin_return_address(0));
}

void *kzalloc(size_t size)
{
	return kzalloc_caller(size, (uintptr_t)__builtin_return_address(0));
}

void *kmalloc_failable(size_t size)
{
	if (should_failslab())
		return NULL;
	return kmalloc_caller(size, (uintptr_t)__builtin_return_address(0));
}

void *kzalloc_failable(size_t size)
{
	if (should_failslab())
		return NULL;
	return kzalloc_caller(size, (uintptr_t)__builtin_return_address(0));
}

void kfree(const void *obj)
{
	if (!obj)
		return;
	uintptr_t caller = (uintptr_t)__builtin_return_address(0);
	struct kmem_cache *c = slab_cache_of(obj);
	if (c) {
		slab_free(c, (void *)obj, caller);
		return;
	}
	struct page *page = virt_to_page(obj);
	if (page && (page->flags & PG_HEAD) && IS_ALIGNED((uintptr_t)obj, PAGE_SIZE)) {
		free_pages((void *)obj, page->order);
		return;
	}
	pr_err("kfree: %p is neither a kmalloc object nor a large block\n", obj);
}

size_t ksize(const void *obj)
{
	struct kmem_cache *c = slab_cache_of(obj);
	if (c)
		return c->size;
	struct page *page = obj ? virt_to_page(obj) : NULL;
	return page && (page->flags & PG_HEAD) ? PAGE_SIZE << page->order : 0;
}
