/*
 * What the console shows of the scheduler: each CPU's load since the previous
 * report, and the threads that used CPU time in that interval (all of them
 * would be four lines per CPU at 64 CPUs). `make qemu` prints this every
 * SHOW_PERIOD_S seconds from the "top" thread; the t key prints it at once.
 */
#include <grace/kthread.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <grace/time.h>
#include <grace/wait.h>

#define SHOW_PERIOD_S 5
#define SHOW_MAX_THREADS 12

static const char state_letter[] = { [TASK_RUNNING] = 'R', [TASK_SLEEPING] = 'S', [TASK_DEAD] = 'D' };

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
	       (unsigned long long)(total / NSEC_PER_MSEC), (unsigned long long)(delta / NSEC_PER_MSEC),
	       (unsigned long long)READ_ONCE(p->nr_switches));
}

void sched_show(void)
{
	struct show_pass s = { .now = arch_clock_ns() };
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
		unsigned busy = interval && didle < interval ? (unsigned)((interval - didle) * 100 / interval) : 0;
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

static bool show_enabled = true;

void sched_show_toggle(void)
{
	WRITE_ONCE(show_enabled, !show_enabled);
	printk("sched: periodic report %s\n", show_enabled ? "on" : "off (t turns it back on)");
}

static int top_thread(void *arg)
{
	(void)arg;
	for (;;) {
		msleep(SHOW_PERIOD_S * 1000);
		if (READ_ONCE(show_enabled))
			sched_show();
	}
	return 0;
}

void sched_start_top(void)
{
	struct task *t = kthread_run(top_thread, NULL, "top");
	if (t)
		kthread_detach(t);
}
