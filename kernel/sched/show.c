/*
 * What the console shows of the scheduler. `top`: each CPU's load since the
 * previous report, and the threads that used CPU time in that interval (all of
 * them would be four lines per CPU at 64 CPUs); `top on` prints it every
 * SHOW_PERIOD_S seconds from the "top" thread. `ps`: the whole thread table.
 */
#include <grace/errno.h>
#include <grace/kthread.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/shell.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <grace/time.h>
#include <grace/wait.h>

#define SHOW_PERIOD_S 5
#define SHOW_MAX_THREADS 12

static const char state_letter[] = {[TASK_RUNNING] = 'R', [TASK_SLEEPING] = 'S', [TASK_DEAD] = 'D'};

struct show_pass {
	u64 now;
	unsigned shown, quiet;
};

static u64 last_show_ns;
static u64 last_idle_ns[MAX_CPUS];

static void show_task(struct task *p, void *arg)
{
	struct show_pass *s = arg;
	if (p->flags & TASK_IDLE)
		return;
	/* Under the table lock only: the run-queue locks are not taken here. */
	u64 total = READ_ONCE(p->runtime_ns);
	u64 delta = total - p->shown_runtime_ns;
	p->shown_runtime_ns = total;
	if (delta < NSEC_PER_MSEC || s->shown >= SHOW_MAX_THREADS) {
		s->quiet++;
		return;
	}
	s->shown++;
	printk("  %4u %-16s %c cpu%-2u %8llu ms (+%llu ms) %llu switches\n", p->id, p->name,
	       state_letter[READ_ONCE(p->state)], READ_ONCE(p->cpu),
	       (unsigned long long)(total / NSEC_PER_MSEC),
	       (unsigned long long)(delta / NSEC_PER_MSEC),
	       (unsigned long long)READ_ONCE(p->nr_switches));
}

void sched_show(void)
{
	struct show_pass s = {.now = arch_clock_ns()};
	u64 interval = s.now - last_show_ns;
	char line[160];
	size_t len = 0;
	unsigned cpu, col = 0;

	printk("sched: uptime %llu ms, %u CPUs, %u threads; CPU busy %% over the last %llu ms:\n",
	       (unsigned long long)(s.now / NSEC_PER_MSEC), num_online_cpus(), kthread_count(),
	       (unsigned long long)(interval / NSEC_PER_MSEC));
	for_each_online_cpu(cpu) {
		u64 idle = sched_idle_ns(cpu);
		u64 didle = idle - last_idle_ns[cpu];
		last_idle_ns[cpu] = idle;
		unsigned busy = interval && didle < interval
				    ? (unsigned)((interval - didle) * 100 / interval)
				    : 0;
		len += snprintf(line + len, sizeof(line) - len, " cpu%-2u %3u%% q%-2u", cpu, busy,
				sched_nr_running(cpu));
		if (++col == 6) {
			printk("%s\n", line);
			len = col = 0;
		}
	}
	if (col)
		printk("%s\n", line);
	printk("  %4s %-16s %c %-5s %11s\n", "id", "thread", 'S', "cpu", "CPU time");
	sched_for_each_task(show_task, &s);
	if (s.quiet)
		printk("  (%u more threads used under 1 ms since the last report)\n", s.quiet);
	last_show_ns = s.now;
}

/* The periodic report: off until `top on`; its thread is created the first time. */
static bool show_periodic;
static struct task *top_task;

static int top_thread(void *arg)
{
	(void)arg;
	for (;;) {
		msleep(SHOW_PERIOD_S * 1000);
		if (READ_ONCE(show_periodic))
			sched_show();
	}
	return 0;
}

/* Shell thread only, so top_task needs no lock. */
static int sched_show_periodic(bool on)
{
	if (on && !top_task) {
		top_task = kthread_run(top_thread, NULL, "top");
		if (!top_task) {
			printk("top: on: no memory for its thread\n");
			return -ENOMEM;
		}
	}
	WRITE_ONCE(show_periodic, on);
	printk("top: the report every %u s is %s\n", SHOW_PERIOD_S, on ? "on" : "off");
	return 0;
}

SHELL_CMD(top, "[on|off]", "CPU load and busy threads now; on/off: every 5 s")
{
	bool on;
	if (argc == 1) {
		sched_show();
		return 0;
	}
	if (argc != 2 || !shell_parse_on_off(argv[1], &on))
		return SHELL_USAGE;
	return sched_show_periodic(on);
}

static void ps_task(struct task *p, void *arg)
{
	char allowed[12];
	unsigned first = cpumask_next(&p->allowed, 0);
	if (cpumask_weight(&p->allowed) == 1)
		snprintf(allowed, sizeof(allowed), "cpu%u", first);
	else if (cpumask_weight(&p->allowed) >= num_online_cpus())
		snprintf(allowed, sizeof(allowed), "any");
	else
		snprintf(allowed, sizeof(allowed), "%u cpus", cpumask_weight(&p->allowed));
	/* Under the table lock only: the fields may be a switch old, never torn. */
	printk("  %4u %-16s %c cpu%-3u %-7s %10llu %10llu\n", p->id, p->name,
	       state_letter[READ_ONCE(p->state)], READ_ONCE(p->cpu), allowed,
	       (unsigned long long)(READ_ONCE(p->runtime_ns) / NSEC_PER_MSEC),
	       (unsigned long long)READ_ONCE(p->nr_switches));
}

SHELL_CMD(ps, "", "the thread table: id, name, state, CPU, affinity, CPU time, switches")
{
	if (argc != 1)
		return SHELL_USAGE;
	printk("%u threads (S: R running or queued, S sleeping, D dead)\n", kthread_count());
	printk("  %4s %-16s %c %-6s %-7s %10s %10s\n", "id", "thread", 'S', "cpu", "allowed",
	       "cpu ms", "switches");
	sched_for_each_task(ps_task, NULL);
	return 0;
}
