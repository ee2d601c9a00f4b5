/*
 * The per-VMA lookup under RCU (vma_read_lock_rcu(), mm/vma_lock.c) held inside its
 * lockless window by a race point while a writer changes the table on another
 * CPU: each test needs one recheck, or one grace period, every time it runs.
 *
 * The writers here wait for nothing the parked lookup holds: it has not taken
 * the VMA's lock yet, and no CPU has these mms loaded, so unmap sends no
 * shootdown; what they free goes through call_rcu.
 */
#include <grace/page.h>
#include "as_test.h"
#include "race_test_util.h"

/* Pages taken while the old table would be free; its block, freed, is this CPU's next. */
#define REUSE_MAPS 4 /* maps that take a freed VMA's memory back, one of them v's */
#define TABLE_REUSE_PAGES 8

struct lookup_race {
	struct mm *mm;
	uintptr_t addr; /* the racer looks this up */
	uintptr_t vma_start, vma_len;
	int change_err;
	/* The racer's lookup returned a VMA, with this range. */
	bool found;
	uintptr_t found_start, found_end;
};

/* The racer: one lockless lookup, and what it returned (released at once). */
static void lookup_racer(void *arg)
{
	struct lookup_race *r = arg;
	struct vma *v = vma_read_lock_rcu(r->mm, r->addr);

	if (!v)
		return;
	r->found = true;
	r->found_start = READ_ONCE(v->start);
	r->found_end = READ_ONCE(v->end);
	vma_read_unlock(v);
}

/* A lookup returns NULL (the caller looks again under vma_lock) or a VMA holding addr. */
static void expect_lookup_sound(struct lookup_race *r)
{
	if (r->found) {
		EXPECT_LE(r->found_start, r->addr);
		EXPECT_GT(r->found_end, r->addr);
	}
}

/* Unmap the upper half of the VMA: the lower half stays, unlocked again, without addr. */
static void trim_change(void *arg)
{
	struct lookup_race *r = arg;
	r->change_err = vma_unmap(r->mm, r->vma_start + r->vma_len / 2, r->vma_len / 2);
}

/*
 * The lookup found the VMA holding addr; parked before its try, it sees unmap trim
 * that VMA and let it go. Its try then succeeds on a VMA that no longer holds
 * addr, and only the check after the try says so.
 */
TEST(vma_race, lookup_fails_when_unmap_trims_its_vma)
{
	struct lookup_race r = {.vma_start = as_slot(0), .vma_len = 4 * PAGE_SIZE};
	r.addr = r.vma_start + 3 * PAGE_SIZE;
	r.mm = mm_create_modes(PTLOCK_SPLIT, VMA_LOOKUP_RCU);
	ASSERT_TRUE(r.mm != NULL);
	ASSERT_EQ(vma_map(r.mm, r.vma_start, r.vma_len, PROT_READ | PROT_WRITE, VMA_NOHUGE), 0);

	struct race race = {.point = "vma.lookup_try",
			    .key = r.mm,
			    .racer = lookup_racer,
			    .change = trim_change,
			    .arg = &r};
	if (race_run(&race)) {
		EXPECT_EQ(r.change_err, 0);
		expect_lookup_sound(&r);
		/* Nothing holds addr after the unmap: a sound lookup found nothing. */
		EXPECT_FALSE(r.found);
		struct vma left;
		EXPECT_TRUE(vma_lookup(r.mm, r.vma_start, &left));
		EXPECT_EQ(left.end, r.vma_start + r.vma_len / 2);
	}
	mm_destroy(r.mm);
}

struct reuse_race {
	struct lookup_race l;
	struct vma *v; /* the VMA the racer finds; unmap frees it at once */
	/*
	 * Each maps a page at the racer's address after the unmap, and one of these
	 * maps takes v's memory: so only v's mm tells the racer it is not its VMA.
	 */
	struct mm *other[REUSE_MAPS];
	bool reuse;	  /* the change maps in the others after the unmap */
	int map_err;	  /* those maps' */
	struct mm *taker; /* the other whose new VMA is v's memory, if one is */
};

/* The VMA object holding addr in mm (a pointer to compare, not to use), or NULL. */
static struct vma *vma_pointer(struct mm *mm, uintptr_t addr)
{
	read_lock(&mm->vma_lock);
	struct vma *v = vma_find_locked(mm, addr);
	read_unlock(&mm->vma_lock);
	return v;
}

/* Unmap the racer's VMA (typesafe: freed into this CPU's array) and, maybe, map again. */
static void free_and_reuse_change(void *arg)
{
	struct reuse_race *t = container_of(arg, struct reuse_race, l);

	t->l.change_err = vma_unmap(t->l.mm, t->l.vma_start, t->l.vma_len);
	if (!t->reuse)
		return;
	/* The unmap freed its spare VMAs after v: take those too. */
	for (unsigned i = 0; i < REUSE_MAPS && !t->taker; i++) {
		t->map_err |= vma_map(t->other[i], t->l.addr, PAGE_SIZE, PROT_READ, VMA_NOHUGE);
		if (vma_pointer(t->other[i], t->l.addr) == t->v)
			t->taker = t->other[i];
	}
}

/*
 * The lookup found its VMA; parked before its try, it sees unmap free the VMA
 * (vma_free=typesafe: at once), and, with reuse, another mm's map take the same
 * memory for a VMA at the same address. A free VMA stays write-locked, so the try
 * fails and leaves the lock as it was; a reused one is unlocked, so the try
 * succeeds on another mm's VMA around addr, and the check after the try must
 * refuse it for its mm and give its count back.
 */
static void typesafe_reuse_run(bool reuse)
{
	static struct reuse_race t;
	enum vma_free_mode was = vma_get_free_mode();

	if (!race_cpus_available())
		return;
	vma_set_free_mode(VMA_FREE_TYPESAFE);
	t = (struct reuse_race){.l = {.vma_start = as_slot(0), .vma_len = PAGE_SIZE},
				.reuse = reuse};
	t.l.addr = t.l.vma_start;
	t.l.mm = mm_create_modes(PTLOCK_SPLIT, VMA_LOOKUP_RCU);
	if (!t.l.mm)
		goto out;
	/* Made before the race: the change then allocates only its maps' VMAs. */
	for (unsigned i = 0; i < REUSE_MAPS; i++)
		if (!(t.other[i] = mm_create_modes(PTLOCK_SPLIT, VMA_LOOKUP_RCU)))
			goto out;
	EXPECT_EQ(vma_map(t.l.mm, t.l.vma_start, t.l.vma_len, PROT_READ, VMA_NOHUGE), 0);
	t.v = vma_pointer(t.l.mm, t.l.addr);

	struct race race = {.point = "vma.lookup_try",
			    .key = t.l.mm,
			    .racer = lookup_racer,
			    .change = free_and_reuse_change,
			    .arg = &t.l};
	if (race_run(&race)) {
		EXPECT_EQ(t.l.change_err, 0);
		EXPECT_FALSE(t.l.found);
		if (reuse) {
			EXPECT_EQ(t.map_err, 0);
			/* The allocator gave v's memory back: the race is real. */
			EXPECT_TRUE(t.taker != NULL);
			EXPECT_EQ(READ_ONCE(t.v->lock), 0);
			struct vma got;
			EXPECT_TRUE(t.taker && vma_lookup(t.taker, t.l.addr, &got));
		} else {
			EXPECT_EQ(READ_ONCE(t.v->lock), VMA_LOCK_WRITER);
		}
	}
out:
	if (t.l.mm)
		mm_destroy(t.l.mm);
	for (unsigned i = 0; i < REUSE_MAPS; i++)
		if (t.other[i])
			mm_destroy(t.other[i]);
	vma_set_free_mode(was);
}

TEST(vma_race, lookup_cannot_lock_a_freed_vma)
{
	typesafe_reuse_run(false);
}

TEST(vma_race, lookup_refuses_its_vma_reused_by_another_mm)
{
	typesafe_reuse_run(true);
}

struct table_race {
	struct lookup_race l;
	uintptr_t next;	       /* where the change maps the VMA that grows the table */
	struct vma_table *old; /* the full table the racer read */
	unsigned old_nr, old_order;
	struct vma *old_first, *old_last;
	bool replaced;	 /* the map put a bigger table in old's place */
	bool old_free;	 /* the allocator held old's block after the map */
	bool old_reused; /* and handed it out again */
	bool old_intact; /* old read as before, after pages were taken */
	void *pages[TABLE_REUSE_PAGES];
};

/*
 * One map more than the table holds: vma_map() puts a bigger copy in its place and
 * lets the old one go. The racer still reads the old one, so its memory must not
 * be free yet: take pages as any allocation on this CPU would (zeroed, so a racer
 * reading one finds an empty table, not wild pointers) and look at the old table.
 */
static void table_grow_change(void *arg)
{
	struct table_race *t = container_of(arg, struct table_race, l);

	t->l.change_err = vma_map(t->l.mm, t->next, PAGE_SIZE, PROT_READ, VMA_NOHUGE);
	t->replaced = READ_ONCE(t->l.mm->vmat) != t->old;
	t->old_free = virt_to_page(t->old)->flags & (PG_BUDDY | PG_PCP);
	for (unsigned i = 0; i < TABLE_REUSE_PAGES; i++) {
		t->pages[i] = alloc_pages_flags(NUMA_NO_NODE, t->old_order, 0);
		t->old_reused |= t->pages[i] == t->old;
	}
	t->old_intact = READ_ONCE(t->old->nr) == t->old_nr &&
			READ_ONCE(t->old->slot[0]) == t->old_first &&
			READ_ONCE(t->old->slot[t->old_nr - 1]) == t->old_last;
}

/*
 * The lookup read the table pointer and parks before it searches; a map grows the
 * table. The old table must stay as it was until the lookup leaves its read side:
 * freed at once, its block is the next this CPU allocates.
 */
TEST(vma_race, replaced_table_intact_until_lookup_leaves)
{
	struct table_race t;
	uintptr_t base = as_slot(0);
	unsigned bad = 0;

	if (!race_cpus_available())
		return;
	t = (struct table_race){.l = {.addr = base, .vma_start = base, .vma_len = PAGE_SIZE}};
	t.l.mm = mm_create_modes(PTLOCK_SPLIT, VMA_LOOKUP_RCU);
	ASSERT_TRUE(t.l.mm != NULL);
	/* Fill the first table: one page VMAs with a hole between each two. */
	ASSERT_EQ(vma_map(t.l.mm, base, PAGE_SIZE, PROT_READ, VMA_NOHUGE), 0);
	unsigned cap = t.l.mm->vmat->cap;
	for (unsigned i = 1; i < cap; i++)
		bad += vma_map(t.l.mm, base + (uintptr_t)i * 2 * PAGE_SIZE, PAGE_SIZE, PROT_READ,
			       VMA_NOHUGE) != 0;
	ASSERT_EQ(bad, 0);
	t.old = t.l.mm->vmat;
	ASSERT_EQ(t.old->nr, cap);
	t.old_nr = t.old->nr;
	t.old_order = t.old->order;
	t.old_first = t.old->slot[0];
	t.old_last = t.old->slot[cap - 1];
	t.next = base + (uintptr_t)cap * 2 * PAGE_SIZE;

	struct race race = {.point = "vma.lookup_table",
			    .key = t.l.mm,
			    .racer = lookup_racer,
			    .change = table_grow_change,
			    .arg = &t.l};
	if (race_run(&race)) {
		EXPECT_EQ(t.l.change_err, 0);
		EXPECT_TRUE(t.replaced);
		EXPECT_FALSE(t.old_free);
		EXPECT_FALSE(t.old_reused);
		EXPECT_TRUE(t.old_intact);
		expect_lookup_sound(&t.l);
		EXPECT_EQ(vma_count(t.l.mm), cap + 1);
	}
	for (unsigned i = 0; i < TABLE_REUSE_PAGES; i++)
		if (t.pages[i])
			free_pages(t.pages[i], t.old_order);
	mm_destroy(t.l.mm);
}
