/*
 * The `mem` shell command: what the page allocator and the slab caches hold
 * now. Each figure is read under the lock that makes it exact (a zone's lock,
 * a slab node's lock) but not all at once, so a listing taken while the kernel
 * allocates is a set of snapshots, not one.
 */
#include <grace/page_alloc.h>
#include <grace/numa.h>
#include <grace/printk.h>
#include <grace/shell.h>
#include <grace/slab.h>
#include <grace/string.h>
#include "page_alloc_internal.h"

static void mem_show_node(int node)
{
	u64 counts[MAX_ORDER + 1];
	/* Room for every order's " o:count" at a u64's 20 digits: the line is never cut. */
	char line[sizeof("  free blocks by order:") +
		  (MAX_ORDER + 1) * sizeof(" 99:18446744073709551615")];
	size_t len;
	u64 buddy = 0;

	/* The buddy total from the same snapshot as the per-order counts, not a second lock hold.
	 */
	node_free_area_counts(node, counts);
	for (unsigned o = 0; o <= MAX_ORDER; o++)
		buddy += counts[o] << o;
	u64 managed = node_managed_pages(node), pcp = pcp_pages(node);
	printk("node %d: %llu KiB free of %llu KiB (buddy %llu KiB, per-CPU lists %llu KiB)\n",
	       node, (unsigned long long)((buddy + pcp) << PAGE_SHIFT >> 10),
	       (unsigned long long)(managed << PAGE_SHIFT >> 10),
	       (unsigned long long)(buddy << PAGE_SHIFT >> 10),
	       (unsigned long long)(pcp << PAGE_SHIFT >> 10));
	len = scnprintf(line, sizeof(line), "  free blocks by order:");
	for (unsigned o = 0; o <= MAX_ORDER; o++)
		len += scnprintf(line + len, sizeof(line) - len, " %u:%llu", o,
				 (unsigned long long)counts[o]);
	printk("%s\n", line);
}

static void mem_show_cache(struct kmem_cache *c, void *arg)
{
	struct kmem_cache_stats s;
	kmem_cache_stats(c, &s);
	/* The per-CPU counts are read without their locks: a snapshot can overshoot. */
	u64 idle = s.free_objects + s.cpu_objects;
	u64 in_use = s.objects > idle ? s.objects - idle : 0;
	printk("  %-24s %6u %6u %8llu %8llu %8llu %8llu\n", kmem_cache_name(c), s.object_size,
	       s.stride, (unsigned long long)s.slabs, (unsigned long long)s.objects,
	       (unsigned long long)in_use, (unsigned long long)s.cpu_objects);
	(*(unsigned *)arg)++;
}

SHELL_CMD(mem, "", "free memory per node and order, slab caches with object counts")
{
	if (argc != 1)
		return SHELL_USAGE;
	printk("memory: %llu KiB free in %u node%s; pages of %lu bytes, orders 0-%u\n",
	       (unsigned long long)(mm_free_bytes() >> 10), nr_nodes, nr_nodes == 1 ? "" : "s",
	       (unsigned long)PAGE_SIZE, MAX_ORDER);
	for (unsigned n = 0; n < nr_nodes; n++)
		mem_show_node((int)n);
	unsigned caches = 0;
	printk("slab caches (objects in use = allocated, not free in slabs or per-CPU arrays):\n");
	printk("  %-24s %6s %6s %8s %8s %8s %8s\n", "cache", "size", "stride", "slabs", "objects",
	       "in use", "percpu");
	kmem_cache_for_each(mem_show_cache, &caches);
	printk("  %u caches\n", caches);
	if (mm_bad_free_count())
		printk("  %llu refused frees (double or bad free_pages) since boot\n",
		       (unsigned long long)mm_bad_free_count());
	return 0;
}
