/*
 * NUMA topology: which node each CPU and each range of RAM belongs to, and how far
 * apart nodes are. Built once at boot (numa_init) from boot_info (DT numa-node-id
 * and /distance-map, or ACPI SRAT/SLIT); read-only afterwards, so no locks.
 * A machine the firmware describes no NUMA for is one node, node 0.
 */
#ifndef GRACE_NUMA_H
#define GRACE_NUMA_H

#include <grace/boot_info.h>
#include <grace/types.h>

#define NUMA_NO_NODE (-1)
#define LOCAL_DISTANCE 10  /* the ACPI SLIT / DT distance-map convention */
#define REMOTE_DISTANCE 20 /* the default between two different nodes */

extern unsigned nr_nodes; /* nodes 0..nr_nodes-1 exist (some may have no memory or no CPUs) */
extern bool numa_distance_from_firmware; /* false: the 10/20 default */

/* The node of logical CPU cpu (0 for an unknown cpu). */
int cpu_to_node(unsigned cpu);
/* The node of the calling CPU. Stable only with preemption off, but a stale answer is harmless. */
int numa_this_node(void);
/* Distance from node a to node b (LOCAL_DISTANCE when a == b). */
unsigned node_distance(int a, int b);
/*
 * Nodes in the order an allocation for `node` should try them: node itself first,
 * then the others by increasing distance (ties by node id). Returns the count.
 */
unsigned numa_fallback_order(int node, int order[MAX_NODES]);

void numa_init(void);
void numa_print(void);

#endif
