/*
 * Slab debugging for DEBUG=1 builds (GRACE_DEBUG): red zones around every object,
 * poison in free objects, and a state word per object, so that a double free, a
 * write past either end of an object and a write to a freed object are caught
 * and reported with the cache's name, the caller and the object's last allocator.
 *
 * Red zones are checked when the object is freed and when it is handed out; poison
 * when it is handed out. Without GRACE_DEBUG the layout has no extra bytes and
 * these hooks are empty; only a free of a pointer that is no object of the cache
 * is still caught (it costs one page lookup) and reported.
 *
 * Reports are counted per kind and the last one is kept, so selftests can check
 * them. The counters are atomics; the last report is a plain copy under report_lock.
 */
#include <grace/ksyms.h>
#include <grace/printk.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include "slab_internal.h"

#define SLAB_RED 0xbb		       /* red zone bytes */
#define SLAB_POISON 0x6b	       /* free object bytes (Linux's POISON_FREE) */
#define SLAB_POISON_END 0xa5	       /* last byte of a free object */
#define SLAB_STATE_FREE 0x46524545ULL  /* "FREE" */
#define SLAB_STATE_ALLOC 0x414c4c4fULL /* "ALLO" */
#define SLAB_RED_LEFT 8		       /* left red zone when the alignment asks no more */

static atomic64_t report_count[SLAB_BUG_KINDS];
static struct slab_debug_report last_report; /* under report_lock */
static bool have_report;		     /* under report_lock */
static DEFINE_SPINLOCK(report_lock);	     /* protects last_report and have_report */

static const char *const kind_name[SLAB_BUG_KINDS] = {
    [SLAB_BUG_DOUBLE_FREE] = "double free",
    [SLAB_BUG_REDZONE] = "red zone overwritten (overflow or underflow)",
    [SLAB_BUG_POISON] = "free object written (use after free)",
    [SLAB_BUG_BAD_FREE] = "free of a pointer that is no object of this cache",
};

bool slab_debug_enabled(void)
{
#ifdef GRACE_DEBUG
	return true;
#else
	return false;
#endif
}

u64 slab_debug_count(enum slab_debug_kind kind)
{
	return kind < SLAB_BUG_KINDS ? atomic64_read(&report_count[kind]) : 0;
}

bool slab_debug_last(struct slab_debug_report *out)
{
	unsigned long flags = spin_lock_irqsave(&report_lock);
	bool have = have_report;
	*out = last_report;
	spin_unlock_irqrestore(&report_lock, flags);
	return have;
}

static void print_caller(const char *what, uintptr_t addr)
{
	char sym[KSYM_FORMAT_MAX];
	if (addr)
		pr_err("slab:   %s %s\n", what, ksym_format(sym, sizeof(sym), addr));
}

void slab_report(enum slab_debug_kind kind, struct kmem_cache *c, const void *obj, uintptr_t caller,
		 uintptr_t alloc_caller)
{
	atomic64_inc(&report_count[kind]);
	unsigned long flags = spin_lock_irqsave(&report_lock);
	last_report = (struct slab_debug_report){
	    .kind = kind, .obj = obj, .caller = caller, .alloc_caller = alloc_caller};
	strlcpy(last_report.cache, c->name, sizeof(last_report.cache));
	have_report = true;
	spin_unlock_irqrestore(&report_lock, flags);
	pr_err("slab: %s: %s, object %p\n", c->name, kind_name[kind], obj);
	print_caller(kind == SLAB_BUG_POISON ? "allocated by" : "freed by", caller);
	if (kind != SLAB_BUG_POISON)
		print_caller("last allocated by", alloc_caller);
}

#ifdef GRACE_DEBUG

struct slab_meta {
	u64 state;
	uintptr_t alloc_caller, free_caller;
};

static struct slab_meta *meta_of(struct kmem_cache *c, void *obj)
{
	return (struct slab_meta *)((char *)obj - c->obj_offset + c->meta_offset);
}

/* The right red zone: from the object's end to the next 8 bytes, plus 8. */
static size_t right_red_len(const struct kmem_cache *c)
{
	return ALIGN_UP(c->size, 8) + 8 - c->size;
}

void slab_debug_layout(struct kmem_cache *c)
{
	unsigned left = c->align > SLAB_RED_LEFT ? c->align : SLAB_RED_LEFT;
	unsigned osize = (unsigned)ALIGN_UP(c->size, 8);
	c->poison = !c->ctor && !(c->flags & SLAB_TYPESAFE_BY_RCU);
	c->obj_offset = left;
	c->free_offset = left + osize + 8;
	c->meta_offset = c->free_offset + sizeof(void *);
	c->stride = c->meta_offset + sizeof(struct slab_meta);
}

static bool red_intact(struct kmem_cache *c, void *obj)
{
	const u8 *left = (const u8 *)obj - c->obj_offset, *right = (const u8 *)obj + c->size;
	for (unsigned i = 0; i < c->obj_offset; i++)
		if (left[i] != SLAB_RED)
			return false;
	for (size_t i = 0; i < right_red_len(c); i++)
		if (right[i] != SLAB_RED)
			return false;
	return true;
}

static void red_fill(struct kmem_cache *c, void *obj)
{
	memset((u8 *)obj - c->obj_offset, SLAB_RED, c->obj_offset);
	memset((u8 *)obj + c->size, SLAB_RED, right_red_len(c));
}

static void poison_fill(struct kmem_cache *c, void *obj)
{
	memset(obj, SLAB_POISON, c->size - 1);
	((u8 *)obj)[c->size - 1] = SLAB_POISON_END;
}

static bool poison_intact(struct kmem_cache *c, const void *obj)
{
	const u8 *p = obj;
	for (unsigned i = 0; i + 1 < c->size; i++)
		if (p[i] != SLAB_POISON)
			return false;
	return p[c->size - 1] == SLAB_POISON_END;
}

void slab_debug_init_slot(struct kmem_cache *c, void *obj)
{
	red_fill(c, obj);
	if (c->poison)
		poison_fill(c, obj);
	*meta_of(c, obj) = (struct slab_meta){SLAB_STATE_FREE, 0, 0};
}

void slab_debug_on_alloc(struct kmem_cache *c, void *obj, uintptr_t caller)
{
	struct slab_meta *m = meta_of(c, obj);
	if (c->poison && !poison_intact(c, obj)) {
		slab_report(SLAB_BUG_POISON, c, obj, caller, m->free_caller);
		print_caller("last freed by", m->free_caller);
	}
	if (!red_intact(c, obj)) {
		slab_report(SLAB_BUG_REDZONE, c, obj, caller, m->alloc_caller);
		red_fill(c, obj);
	}
	m->state = SLAB_STATE_ALLOC;
	m->alloc_caller = caller;
}

bool slab_debug_on_free(struct kmem_cache *c, void *obj, uintptr_t caller)
{
	struct slab_meta *m = meta_of(c, obj);
	if (m->state == SLAB_STATE_FREE) {
		slab_report(SLAB_BUG_DOUBLE_FREE, c, obj, caller, m->alloc_caller);
		print_caller("first freed by", m->free_caller);
		return false;
	}
	if (m->state != SLAB_STATE_ALLOC) {
		slab_report(SLAB_BUG_BAD_FREE, c, obj, caller, 0);
		return false;
	}
	if (!red_intact(c, obj)) {
		slab_report(SLAB_BUG_REDZONE, c, obj, caller, m->alloc_caller);
		red_fill(c, obj);
	}
	if (c->poison)
		poison_fill(c, obj);
	m->state = SLAB_STATE_FREE;
	m->free_caller = caller;
	return true;
}

#else

void slab_debug_layout(struct kmem_cache *c) {}

void slab_debug_init_slot(struct kmem_cache *c, void *obj) {}

void slab_debug_on_alloc(struct kmem_cache *c, void *obj, uintptr_t caller) {}

bool slab_debug_on_free(struct kmem_cache *c, void *obj, uintptr_t caller)
{
	return true;
}

#endif
