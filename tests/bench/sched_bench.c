/*
 * make bench BENCH=sched: context switches per second between two threads that
 * ping-pong through wait queues, both on one CPU and on two CPUs, then the
 * wake-up latency from wake_up() on one CPU to the sleeper running on another
 * (which has gone idle in between, as a real sleeper would):
 *
 *   bench: sched arch=riscv64 online=8 cpus=1 case=same-cpu switches_per_sec=...
 *   bench: sched arch=riscv64 online=8 cpus=2 case=cross-cpu switches_per_sec=...
 *   bench: sched arch=riscv64 online=8 cpus=2 case=wakeup p50_us=... p99_us=...
 *
 * On one CPU every hand-off is a context switch; across two, each side switches
 * between its thread and its idle thread, so a round trip is four switches and
 * two IPIs. Wall-clock figures under QEMU depend on the host; compare cases of
 * the same run.
 */
#include <grace/bench.h>
#include <grace/kthread.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/smp.h>
#include <grace/time.h>
#include <grace/wait.h>

#define WAKEUP_SAMPLES 200
#define WAKEUP_GAP_MS 1 /* let the sleeper's CPU go idle between samples */

static struct pingpong {
	struct wait_queue_head wq[2];
	u32 turn; /* whose turn: 0 or 1 */
	u32 stop;
	u64 handoffs[2];
} pp;

static int pingpong_thread(void *arg)
{
	unsigned me = (unsigned)(uintptr_t)arg, other = !me;
	u64 n = 0;
	for (;;) {
		wait_event(pp.wq[me], READ_ONCE(pp.turn) == me || READ_ONCE(pp.stop));
		if (READ_ONCE(pp.stop))
			break;
		n++;
		smp_store_release(&pp.turn, other);
		wake_up(&pp.wq[other]);
	}
	pp.handoffs[me] = n;
	/* Let the other side see stop too. */
	wake_up(&pp.wq[other]);
	return 0;
}

static void pingpong_case(const char *name, unsigned cpu_a, unsigned cpu_b, unsigned cpus)
{
	struct task *t[2];
	wait_queue_init(&pp.wq[0]);
	wait_queue_init(&pp.wq[1]);
	pp.turn = 1; /* nobody starts until both exist */
	pp.stop = 0;
	for (unsigned i = 0; i < 2; i++) {
		t[i] = kthread_create(pingpong_thread, (void *)(uintptr_t)i, "pingpong%u", i);
		if (!t[i]) {
			bench_error("sched", "case=%s: no memory for a thread", name);
			if (i) { /* the first one waits for its turn: let it see stop */
				WRITE_ONCE(pp.stop, 1);
				wake_up(&pp.wq[0]);
				kthread_join(t[0]);
			}
			return;
		}
		kthread_bind(t[i], i ? cpu_b : cpu_a);
		wake_up_process(t[i]);
	}
	msleep(10);
	bench_phase_begin(name, cpus);
	u64 start = arch_clock_ns();
	smp_store_release(&pp.turn, 0);
	wake_up(&pp.wq[0]);
	msleep(bench_phase_ns() / NSEC_PER_MSEC);
	WRITE_ONCE(pp.stop, 1);
	wake_up(&pp.wq[0]);
	wake_up(&pp.wq[1]);
	kthread_join(t[0]);
	kthread_join(t[1]);
	u64 elapsed = arch_clock_ns() - start;
	u64 handoffs = pp.handoffs[0] + pp.handoffs[1];
	bench_phase_end(handoffs);
	/* One hand-off = one switch from the giver to the taker on its CPU. */
	bench_report("sched", cpus, "case=%s switches_per_sec=%llu", name,
		     (unsigned long long)(handoffs * NSEC_PER_SEC / elapsed));
}

static struct wakeup_test {
	struct wait_queue_head wq, ack_wq;
	u64 stamp; /* when the waker called wake_up() */
	u32 seq, acked;
	u64 latency_ns[WAKEUP_SAMPLES];
} wl;

static int wakeup_sleeper(void *arg)
{
	(void)arg;
	for (u32 i = 1; i <= WAKEUP_SAMPLES; i++) {
		wait_event(wl.wq, smp_load_acquire(&wl.seq) >= i);
		wl.latency_ns[i - 1] = arch_clock_ns() - READ_ONCE(wl.stamp);
		smp_store_release(&wl.acked, i);
		wake_up(&wl.ack_wq);
	}
	return 0;
}

static void sort_u64(u64 *v, unsigned n)
{
	for (unsigned i = 1; i < n; i++) {
		u64 x = v[i];
		unsigned j = i;
		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

static void wakeup_case(unsigned cpu_waker, unsigned cpu_sleeper, unsigned cpus)
{
	wait_queue_init(&wl.wq);
	wait_queue_init(&wl.ack_wq);
	wl.seq = wl.acked = 0;
	struct task *s = kthread_create(wakeup_sleeper, NULL, "sleeper");
	if (!s) {
		bench_error("sched", "case=wakeup: no memory for a thread");
		return;
	}
	kthread_bind(s, cpu_sleeper);
	wake_up_process(s);
	kthread_bind(current, cpu_waker);

	bench_phase_begin("wakeup", cpus);
	for (u32 i = 1; i <= WAKEUP_SAMPLES; i++) {
		msleep(WAKEUP_GAP_MS);
		WRITE_ONCE(wl.stamp, arch_clock_ns());
		smp_store_release(&wl.seq, i);
		wake_up(&wl.wq);
		wait_event(wl.ack_wq, smp_load_acquire(&wl.acked) >= i);
	}
	bench_phase_end(WAKEUP_SAMPLES);
	kthread_join(s);
	sort_u64(wl.latency_ns, WAKEUP_SAMPLES);
	/* In ns: a wake-up to an idle CPU takes a few microseconds, 0 in whole us. */
	bench_report("sched", cpus, "case=wakeup p50_ns=%llu p99_ns=%llu",
		     (unsigned long long)wl.latency_ns[WAKEUP_SAMPLES / 2],
		     (unsigned long long)wl.latency_ns[WAKEUP_SAMPLES * 99 / 100]);
}

BENCH(sched)
{
	struct cpumask saved = current->allowed;
	unsigned a = smp_processor_id(), b = a, cpu;
	for_each_online_cpu(cpu)
		if (cpu != a) {
			b = cpu;
			break;
		}

	pingpong_case("same-cpu", a, a, 1);
	if (b == a) {
		printk("bench: sched: one CPU online: no cross-CPU switches; wake-up latency on "
		       "one CPU\n");
		wakeup_case(a, a, 1);
		return;
	}
	pingpong_case("cross-cpu", a, b, 2);
	wakeup_case(a, b, 2);
	set_cpus_allowed(current, &saved);
}
