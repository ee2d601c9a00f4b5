/*
 * Lock statistics (LOCKSTAT=1, and LOCKDEP=1, which implies it): per lock class,
 * acquisitions, contended acquisitions (the ones that had to wait), the total and
 * longest wait and hold, and the sites that waited most. Counted per CPU, each CPU
 * writing only its own copy, so counting adds no shared cache line to a lock that
 * has one already; summed when printed. The hooks in lockdep.c time each lock:
 * the wait from lock_contended() to lock_acquired(), the hold from there to
 * lock_release(). The `locks` command prints them, and the benchmarks after each
 * phase (kernel/bench.c), reset before it.
 *
 * A normal build has only the `locks` command, which says the statistics are off.
 */
#include <grace/errno.h>
#include <grace/lockdep.h>
#include <grace/sched.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/shell.h>
#include <grace/smp.h>
#include <grace/string.h>

#include "lockdep_internal.h"

/* Rows the `locks` command prints. */
#define LOCKS_CMD_ROWS 30

#ifdef GRACE_LOCKSTAT

struct lockstat_cpu {
	u64 acquired, contended;
	u64 wait_ns, wait_max_ns;
	u64 hold_ns, hold_max_ns;
	struct lockstat_site sites[LOCKSTAT_SITES];
};

static DEFINE_PER_CPU(struct lockstat_cpu[LOCKDEP_MAX_CLASSES], lockstat_cpu);

/*
 * Until percpu_setup() the boot CPU's copy is the .percpu template, which every
 * CPU's copy then starts from: figures counted there would count once per CPU.
 */
static bool lockstat_percpu_ready(void)
{
	return arch_percpu_base() != (uintptr_t)__percpu_start;
}

/* Only this CPU writes its copy (interrupts are off in the hooks): plain increments. */
static void site_account(struct lockstat_cpu *s, uintptr_t ip, u64 wait)
{
	struct lockstat_site *least = &s->sites[0];
	for (unsigned i = 0; i < LOCKSTAT_SITES; i++) {
		struct lockstat_site *site = &s->sites[i];
		if (site->ip == ip || !site->ip) {
			WRITE_ONCE(site->ip, ip);
			WRITE_ONCE(site->count, site->count + 1);
			WRITE_ONCE(site->wait_ns, site->wait_ns + wait);
			return;
		}
		if (site->count < least->count)
			least = site;
	}
	/* Full: the site that waited least so far gives way (it may come back). */
	WRITE_ONCE(least->ip, ip);
	WRITE_ONCE(least->count, 1);
	WRITE_ONCE(least->wait_ns, wait);
}

void lockstat_account_acquired(const struct held_lock *hl, u64 now)
{
	if (!lockstat_percpu_ready())
		return;
	struct lockstat_cpu *s = &this_cpu(lockstat_cpu)[hl->class->index];
	WRITE_ONCE(s->acquired, s->acquired + 1);
	if (hl->flags & HELD_CONTENDED) {
		u64 wait = now - hl->time_ns;
		WRITE_ONCE(s->contended, s->contended + 1);
		WRITE_ONCE(s->wait_ns, s->wait_ns + wait);
		if (wait > s->wait_max_ns)
			WRITE_ONCE(s->wait_max_ns, wait);
		site_account(s, hl->ip, wait);
	}
}

void lockstat_account_released(const struct held_lock *hl, u64 now)
{
	if (!lockstat_percpu_ready() || !hl->time_ns)
		return;
	struct lockstat_cpu *s = &this_cpu(lockstat_cpu)[hl->class->index];
	u64 hold = now - hl->time_ns;
	WRITE_ONCE(s->hold_ns, s->hold_ns + hold);
	if (hold > s->hold_max_ns)
		WRITE_ONCE(s->hold_max_ns, hold);
}

/* Merge one CPU's site into the top LOCKSTAT_SITES of out, by count. */
static void site_merge(struct lockstat_figures *out, uintptr_t ip, u64 count, u64 wait)
{
	struct lockstat_site *least = &out->sites[0];
	for (unsigned i = 0; i < LOCKSTAT_SITES; i++) {
		struct lockstat_site *site = &out->sites[i];
		if (site->ip == ip || !site->ip) {
			site->ip = ip;
			site->count += count;
			site->wait_ns += wait;
			return;
		}
		if (site->count < least->count)
			least = site;
	}
	if (count > least->count)
		*least = (struct lockstat_site){ip, count, wait};
}

void lockstat_read(const struct lock_class *c, struct lockstat_figures *out)
{
	unsigned cpu;
	memset(out, 0, sizeof(*out));
	for_each_online_cpu(cpu) {
		const struct lockstat_cpu *s = &per_cpu(lockstat_cpu, cpu)[c->index];
		out->acquired += READ_ONCE(s->acquired);
		out->contended += READ_ONCE(s->contended);
		out->wait_ns += READ_ONCE(s->wait_ns);
		out->wait_max_ns = MAX(out->wait_max_ns, READ_ONCE(s->wait_max_ns));
		out->hold_ns += READ_ONCE(s->hold_ns);
		out->hold_max_ns = MAX(out->hold_max_ns, READ_ONCE(s->hold_max_ns));
		for (unsigned i = 0; i < LOCKSTAT_SITES; i++) {
			uintptr_t ip = READ_ONCE(s->sites[i].ip);
			if (ip)
				site_merge(out, ip, READ_ONCE(s->sites[i].count),
					   READ_ONCE(s->sites[i].wait_ns));
		}
	}
	/* Most waits first. */
	for (unsigned i = 1; i < LOCKSTAT_SITES; i++)
		for (unsigned j = i; j > 0 && out->sites[j].count > out->sites[j - 1].count; j--) {
			struct lockstat_site t = out->sites[j];
			out->sites[j] = out->sites[j - 1];
			out->sites[j - 1] = t;
		}
}

void lockstat_reset(void)
{
	unsigned cpu;
	/* Races with counting on the other CPUs: a figure may keep an increment. */
	for_each_online_cpu(cpu) {
		struct lockstat_cpu *s = per_cpu(lockstat_cpu, cpu);
		for (unsigned i = 0; i < LOCKDEP_MAX_CLASSES; i++) {
			WRITE_ONCE(s[i].acquired, 0);
			WRITE_ONCE(s[i].contended, 0);
			WRITE_ONCE(s[i].wait_ns, 0);
			WRITE_ONCE(s[i].wait_max_ns, 0);
			WRITE_ONCE(s[i].hold_ns, 0);
			WRITE_ONCE(s[i].hold_max_ns, 0);
			for (unsigned j = 0; j < LOCKSTAT_SITES; j++) {
				WRITE_ONCE(s[i].sites[j].ip, 0);
				WRITE_ONCE(s[i].sites[j].count, 0);
				WRITE_ONCE(s[i].sites[j].wait_ns, 0);
			}
		}
	}
}

/*
 * The sort's scratch, one printer at a time (thread context: the bench runner, the
 * shell). A flag, not a lock, so that the table does not count its own printing.
 */
static u32 lockstat_printing;
static struct {
	u16 index;
	u64 contended, acquired;
} print_order[LOCKDEP_MAX_CLASSES];

/* Sites printed per class. */
#define LOCKSTAT_PRINT_SITES 3

void lockstat_print(const char *title, unsigned rows)
{
	/* Acquire: pairs with the release below, by the last printer. */
	while (xchg_acquire(&lockstat_printing, 1))
		msleep(1);
	u32 nr = smp_load_acquire(&nr_lock_classes), n = 0;
	for (u32 i = 0; i < nr; i++) {
		struct lockstat_figures f;
		lockstat_read(&lock_classes[i], &f);
		if (!f.acquired)
			continue;
		/* Insertion sort: most contended first, then most acquired. */
		unsigned j = n++;
		for (; j > 0 && (print_order[j - 1].contended < f.contended ||
				 (print_order[j - 1].contended == f.contended &&
				  print_order[j - 1].acquired < f.acquired));
		     j--)
			print_order[j] = print_order[j - 1];
		print_order[j].index = (u16)i;
		print_order[j].contended = f.contended;
		print_order[j].acquired = f.acquired;
	}
	printk_raw("lockstat: %s: %u lock classes taken, the %u most contended (times in ns):",
		   title, n, MIN(n, rows));
	printk_raw("lockstat: %-36s %10s %10s %12s %10s %12s %10s", "class", "acquired",
		   "contended", "wait_total", "wait_max", "hold_total", "hold_max");
	for (unsigned r = 0; r < n && r < rows; r++) {
		const struct lock_class *c = &lock_classes[print_order[r].index];
		struct lockstat_figures f;
		char name[37]; /* the column's width: a longer name is cut */
		lockstat_read(c, &f);
		if (c->subclass)
			snprintf(name, sizeof(name), "%s/%u", lock_class_name(c), c->subclass);
		else
			snprintf(name, sizeof(name), "%s", lock_class_name(c));
		printk_raw("lockstat: %-36s %10llu %10llu %12llu %10llu %12llu %10llu", name,
			   (unsigned long long)f.acquired, (unsigned long long)f.contended,
			   (unsigned long long)f.wait_ns, (unsigned long long)f.wait_max_ns,
			   (unsigned long long)f.hold_ns, (unsigned long long)f.hold_max_ns);
		for (unsigned s = 0; s < LOCKSTAT_PRINT_SITES && f.sites[s].ip; s++) {
			char where[64];
			lockdep_snprint_ip(where, sizeof(where), f.sites[s].ip);
			printk_raw("lockstat:     waited at %s: %llu times, %llu ns", where,
				   (unsigned long long)f.sites[s].count,
				   (unsigned long long)f.sites[s].wait_ns);
		}
	}
	smp_store_release(&lockstat_printing, 0);
}

#endif /* GRACE_LOCKSTAT */

SHELL_CMD(locks, "[reset]",
	  "lock statistics per class, the most contended first; reset zeroes them")
{
	if (argc > 2 || (argc == 2 && strcmp(argv[1], "reset")))
		return SHELL_USAGE;
#ifdef GRACE_LOCKSTAT
	if (argc == 2) {
		lockstat_reset();
		printk("locks: statistics reset\n");
		return 0;
	}
	lockstat_print("since boot or the last reset", LOCKS_CMD_ROWS);
#ifdef GRACE_LOCKDEP
	u64 problems = 0;
	for (unsigned k = 0; k < NR_LOCKDEP_PROBLEMS; k++)
		problems += lockdep_problem_count((enum lockdep_problem_kind)k);
	printk("locks: validator: %u classes, %u dependencies, %llu problems reported\n",
	       smp_load_acquire(&nr_lock_classes), lockdep_nr_deps(), (unsigned long long)problems);
#endif
	return 0;
#else
	printk("locks: statistics: off in this build (make LOCKSTAT=1 or LOCKDEP=1)\n");
	return -ENOENT;
#endif
}
