/*
 * The sampling profiler (see include/grace/profile.h). Each CPU's histogram is a
 * counter per symbol of the embedded symbol table plus one for "outside the
 * kernel text", allocated at start; only the sampled CPU writes its histogram.
 */
#include <grace/cmdline.h>
#include <grace/errno.h>
#include <grace/ksyms.h>
#include <grace/page_alloc.h>
#include <grace/percpu.h>
#include <grace/printk.h>
#include <grace/profile.h>
#include <grace/shell.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <grace/time.h>

/*
 * 1 kHz per CPU: under TCG with 64 vCPUs on 2 host cores that is 64,000 interrupts
 * a second in all, affordable for a benchmark phase; 300 ms phases give a few
 * hundred samples per CPU.
 */
#define PROFILE_PERIOD_NS (NSEC_PER_SEC / 1000)

struct histogram {
	u32 *counts;	/* [ksym_count() + 1] */
	unsigned order; /* of the allocation */
};

static DEFINE_PER_CPU(struct histogram, histogram);
static DEFINE_PER_CPU(bool, sampling);

bool profile_enabled(void)
{
	const char *v = cmdline_get("profile");
	return v && !strcmp(v, "on");
}

void profile_sample(struct regs *regs)
{
	if (!this_cpu(sampling))
		return;
	long i = ksym_index(regs_pc(regs));
	u32 *counts = this_cpu(histogram).counts;
	counts[i < 0 ? (long)ksym_count() : i]++;
}

static void profile_cpu_start(void *arg)
{
	struct histogram *h = &this_cpu(histogram);
	memset(h->counts, 0, (ksym_count() + 1) * sizeof(u32));
	this_cpu(sampling) = true;
	timer_sampling(PROFILE_PERIOD_NS);
}

static void profile_cpu_stop(void *arg)
{
	timer_sampling(0);
	this_cpu(sampling) = false;
}

static struct cpumask profile_mask; /* CPUs sampled in the last run */
static bool profile_running;	    /* between profile_start() and profile_stop() */
static bool profile_has_run;	    /* there is a table to print */

bool profile_active(void)
{
	return READ_ONCE(profile_running);
}

int profile_start(unsigned ncpus)
{
	size_t bytes = (ksym_count() + 1) * sizeof(u32);
	unsigned order = pages_order(bytes), cpu;

	struct cpumask mask;
	smp_pick_cpus(ncpus, &mask);
	for_each_cpu(cpu, &mask) {
		struct histogram *h = &per_cpu(histogram, cpu);
		if (!h->counts && !(h->counts = alloc_pages(order)))
			return -ENOMEM;
		h->order = order;
	}
	profile_mask = mask;
	/* Start each CPU from its IPI handler, so no sample lands before its reset. */
	for_each_cpu(cpu, &profile_mask)
		smp_call(cpu, profile_cpu_start, NULL, true);
	WRITE_ONCE(profile_running, true);
	profile_has_run = true;
	return 0;
}

void profile_stop(void)
{
	unsigned cpu;
	for_each_cpu(cpu, &profile_mask)
		smp_call(cpu, profile_cpu_stop, NULL, true);
	WRITE_ONCE(profile_running, false);
}

static u64 profile_sum(unsigned long sym)
{
	unsigned cpu;
	u64 sum = 0;
	for_each_cpu(cpu, &profile_mask)
		sum += per_cpu(histogram, cpu).counts[sym];
	return sum;
}

u64 profile_samples_of(const char *name, u64 *total)
{
	u64 found = 0;
	*total = 0;
	for (unsigned long i = 0; i <= ksym_count(); i++) {
		u64 s = profile_sum(i);
		*total += s;
		if (i < ksym_count() && !strcmp(ksym_name(i), name))
			found = s;
	}
	return found;
}

struct profile_row {
	u64 count;
	unsigned long sym;
};

void profile_print(const char *title, unsigned top)
{
	unsigned long nsyms = ksym_count() + 1, nrows = 0;
	unsigned order = pages_order(nsyms * sizeof(struct profile_row));
	u64 total = 0;

	struct profile_row *rows = alloc_pages(order);
	if (!rows) {
		pr_err("profile: no memory to sort %lu symbols\n", nsyms);
		return;
	}
	for (unsigned long i = 0; i < nsyms; i++) {
		u64 s = profile_sum(i);
		total += s;
		if (s)
			rows[nrows++] = (struct profile_row){s, i};
	}
	printk_raw("%s: %llu samples on %u CPUs", title, total, cpumask_weight(&profile_mask));
	printk_raw("%14s  %-40s %7s", "count", "symbol", "share");
	/* Selection of the top rows: top is small and this runs once per benchmark. */
	for (unsigned long r = 0; r < nrows && r < top; r++) {
		unsigned long best = r;
		for (unsigned long i = r + 1; i < nrows; i++)
			if (rows[i].count > rows[best].count)
				best = i;
		struct profile_row tmp = rows[r];
		rows[r] = rows[best];
		rows[best] = tmp;
		const char *name =
		    rows[r].sym < nsyms - 1 ? ksym_name(rows[r].sym) : "(outside kernel text)";
		printk_raw("%14llu  %-40s %4llu.%02llu%%", rows[r].count, name,
			   rows[r].count * 100 / total, rows[r].count * 10000 / total % 100);
	}
	printk_raw("%14llu  %-40s %7s", total, "total", "100.00%");
	free_pages(rows, order);
}

#define PROFILE_SHELL_ROWS 20

SHELL_CMD(profile, "on|off|show",
	  "the sampling profiler on every CPU: start, stop, print the table")
{
	if (argc != 2)
		return SHELL_USAGE;
	if (!strcmp(argv[1], "show")) {
		if (!profile_has_run) {
			printk("profile: show: nothing sampled yet ('profile on' first)\n");
			return -ENOENT;
		}
		/* While sampling, the counts move under the sum: a table, not a snapshot. */
		profile_print(profile_active() ? "profile so far" : "profile", PROFILE_SHELL_ROWS);
		return 0;
	}
	bool on;
	if (!shell_parse_on_off(argv[1], &on))
		return SHELL_USAGE;
	if (on == profile_active()) {
		printk("profile: %s: already %s\n", argv[1], on ? "sampling" : "stopped");
		return -EBUSY;
	}
	if (!on) {
		profile_stop();
		printk("profile: stopped; 'profile show' prints the table\n");
		return 0;
	}
	int err = profile_start(num_online_cpus());
	if (err) {
		printk("profile: on: %s\n", errno_name(err));
		return err;
	}
	printk("profile: sampling every CPU's timer interrupt at 1 kHz\n");
	return 0;
}
