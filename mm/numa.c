/*
 * NUMA topology from boot_info: the node of every CPU, the distance between every
 * two nodes, and for every node the order in which an allocation for it tries the
 * nodes (itself, then the others nearest first). Everything here is written once
 * by numa_init() on the boot CPU before any other CPU starts, then only read, so
 * it needs no lock.
 *
 * Firmware data is checked, not trusted: a node id past nr_nodes is folded into
 * node 0, and a distance table that breaks the rules of the DT binding and ACPI
 * SLIT (local 10, remote above 10) is replaced by the default 10/20.
 */
#include <grace/boot_info.h>
#include <grace/page_alloc.h>
#include <grace/numa.h>
#include <grace/percpu.h>
#include <grace/printk.h>

unsigned nr_nodes = 1;
static u8 cpu_node[MAX_CPUS];
static u8 distance[MAX_NODES][MAX_NODES];
static u8 fallback[MAX_NODES][MAX_NODES]; /* fallback[n][0] == n */
bool numa_distance_from_firmware;

int cpu_to_node(unsigned cpu)
{
	return cpu < MAX_CPUS ? cpu_node[cpu] : 0;
}

int numa_this_node(void)
{
	return cpu_node[smp_processor_id()];
}

unsigned node_distance(int a, int b)
{
	if ((unsigned)a >= nr_nodes || (unsigned)b >= nr_nodes)
		return 255; /* the SLIT's "unreachable" */
	return distance[a][b];
}

unsigned numa_fallback_order(int node, int order[MAX_NODES])
{
	if ((unsigned)node >= nr_nodes)
		node = 0;
	for (unsigned i = 0; i < nr_nodes; i++)
		order[i] = fallback[node][i];
	return nr_nodes;
}

/* Does the firmware's table follow the rules? Every entry given, local 10, remote above. */
static bool firmware_distances_valid(void)
{
	for (unsigned a = 0; a < nr_nodes; a++)
		for (unsigned b = 0; b < nr_nodes; b++) {
			u8 d = boot_info.node_distance[a][b];
			if (a == b ? d != LOCAL_DISTANCE : d <= LOCAL_DISTANCE)
				return false;
		}
	return true;
}

static void numa_init_distances(void)
{
	bool given = false;
	for (unsigned a = 0; a < nr_nodes; a++)
		for (unsigned b = 0; b < nr_nodes; b++)
			given |= boot_info.node_distance[a][b] != 0;
	numa_distance_from_firmware = given && firmware_distances_valid();
	if (given && !numa_distance_from_firmware)
		pr_warn("numa: firmware distance table is incomplete or invalid; using %u/%u\n",
			LOCAL_DISTANCE, REMOTE_DISTANCE);
	for (unsigned a = 0; a < nr_nodes; a++)
		for (unsigned b = 0; b < nr_nodes; b++) {
			if (numa_distance_from_firmware)
				distance[a][b] = boot_info.node_distance[a][b];
			else
				distance[a][b] = a == b ? LOCAL_DISTANCE : REMOTE_DISTANCE;
		}
}

/* Insertion sort of the other nodes by distance from n, then by id: stable and tiny. */
static void numa_init_fallback(unsigned n)
{
	unsigned count = 0;
	fallback[n][count++] = (u8)n;
	for (unsigned m = 0; m < nr_nodes; m++) {
		if (m == n)
			continue;
		unsigned i = count++;
		while (i > 1 && distance[n][fallback[n][i - 1]] > distance[n][m]) {
			fallback[n][i] = fallback[n][i - 1];
			i--;
		}
		fallback[n][i] = (u8)m;
	}
}

void numa_init(void)
{
	nr_nodes = boot_info.nr_nodes;
	if (nr_nodes == 0 || nr_nodes > MAX_NODES) {
		pr_warn("numa: %u nodes from the firmware; using one\n", boot_info.nr_nodes);
		nr_nodes = 1;
	}
	for (unsigned cpu = 0; cpu < boot_info.nr_cpus && cpu < MAX_CPUS; cpu++) {
		int node = boot_info.cpus[cpu].node;
		if (node < 0 || (unsigned)node >= nr_nodes) {
			pr_warn("numa: CPU %u on node %d of %u; using node 0\n", cpu, node,
				nr_nodes);
			node = 0;
		}
		cpu_node[cpu] = (u8)node;
	}
	numa_init_distances();
	for (unsigned n = 0; n < nr_nodes; n++)
		numa_init_fallback(n);
}

/* One line per node: CPUs, memory, distances. After the buddy is up (it knows the memory). */
void numa_print(void)
{
	if (nr_nodes == 1)
		return;
	for (unsigned n = 0; n < nr_nodes; n++) {
		unsigned cpus = 0;
		for (unsigned cpu = 0; cpu < boot_info.nr_cpus; cpu++)
			cpus += cpu_node[cpu] == n;
		char dist[4 * MAX_NODES + 1];
		unsigned len = 0;
		for (unsigned m = 0; m < nr_nodes; m++)
			len += snprintf(dist + len, sizeof(dist) - len, " %u", distance[n][m]);
		printk("numa: node %u: %u CPUs, %llu MiB; distances%s%s\n", n, cpus,
		       (unsigned long long)(node_managed_pages((int)n) >> (20 - PAGE_SHIFT)), dist,
		       numa_distance_from_firmware ? "" : " (default)");
	}
}
