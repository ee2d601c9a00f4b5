/*
 * make bench BENCH=rcu: RCU's costs at cpus = 1, 2, 4, ... up to the CPUs online,
 * in one boot (rcuscale's shape plus the call_rcu measurement of "tree rcu:
 * call_rcu scalability problem?", Nick Piggin, 2009):
 *
 *   bench: rcu arch=riscv64 online=8 cpus=4 op=call_rcu ns_per_op=...
 *   bench: rcu arch=riscv64 online=8 cpus=4 op=gp_latency mode=normal p50_us=... p99_us=...
 *   bench: rcu arch=riscv64 online=8 cpus=4 op=read kind=rcu ns_per_op=...
 *
 * call_rcu: every CPU takes an object from its own pool and hands it to
 * call_rcu() in a tight loop; the callback puts it back (that thread's
 * close(open()) loop, minus the file: with kmalloc/kfree in the loop, the
 * slab's node-lock convoy under QEMU is what would be measured).
 * gp_latency: synchronize_rcu() and synchronize_rcu_expedited() timed on one CPU
 * while the other cpus - 1 run RCU readers. read: every CPU reads a shared
 * record under rcu_read_lock, one shared spinlock, or one shared rwlock.
 * The phases (call_rcu, read_rcu, read_spinlock, read_rwlock) are marked for the
 * profiler: under make profile MODE=sharing, call_rcu's instructions and
 * cache-line transfers per call should stay flat with cpus, and RCU reads should
 * move no line while rwlock reads do.
 */
#include <grace/bench.h>
#include <grace/page_alloc.h>
#include <grace/printk.h>
#include <grace/rcupdate.h>
#include <grace/rwlock.h>
#include <grace/sched.h>
#include <grace/slab.h>
#include <grace/smp.h>
#include <grace/smp_sync.h>
#include <grace/spinlock.h>
#include <grace/time.h>
#include <asm/cpu.h>

#define RCU_BENCH_CLOCK_EVERY 64 /* read the clock every this many operations */
/*
 * Objects per CPU for the call_rcu phase, allocated before it: 2 MiB a CPU, enough
 * for a few grace periods' worth of calls; when they run out the CPU sleeps until
 * callbacks give some back, and that sleep is not counted as call_rcu time.
 */
#define RCU_BENCH_POOL (2 * 1024 * 1024 / sizeof(struct rcu_bench_obj))
#define RCU_BENCH_GP_SAMPLES 12
#define RCU_BENCH_EXP_SAMPLES 24

struct rcu_bench_obj {
	struct rcu_head rh;
	struct rcu_bench_obj *next; /* on its CPU's free list */
	u64 payload[3];
};

struct shared_record {
	u64 a, b;
} __cacheline_aligned;

enum read_kind { READ_RCU, READ_SPINLOCK, READ_RWLOCK };

static struct rcu_bench {
	u64 deadline;
	u32 stop;
	struct smp_sync start;
	unsigned ncpus;
	enum read_kind kind;
	unsigned timer_cpu;
	u64 ops[MAX_CPUS] __cacheline_aligned; /* each CPU its own slot */
	struct rcu_bench_cpu {
		struct rcu_bench_obj *free;   /* this CPU's free list */
		u64 slept_ns;		      /* time it waited for objects */
	} __cacheline_aligned cpu[MAX_CPUS];  /* a line each: nothing shared in the loop */
	struct rcu_bench_obj *pool[MAX_CPUS]; /* each CPU's block */
	struct shared_record *rec;	      /* readers: rcu_dereference */
	struct shared_record recs[1];
	spinlock_t lock __cacheline_aligned;
	rwlock_t rwlock __cacheline_aligned;
	u64 sink[MAX_CPUS] __cacheline_aligned;
} rb;

/*
 * The callback frees the object to its CPU's free list: a per-CPU cache like the
 * slab's, without the slab's node lock, which under TCG would make the phase a
 * ticket-lock benchmark. Callbacks run on the CPU that queued them, in its
 * soft-interrupt thread, which cannot run inside the worker's preempt-off pop.
 */
static void rcu_bench_free(struct rcu_head *rh)
{
	struct rcu_bench_obj *o = container_of(rh, struct rcu_bench_obj, rh);
	unsigned cpu = smp_processor_id();
	o->next = rb.cpu[cpu].free;
	WRITE_ONCE(rb.cpu[cpu].free, o);
}

static void call_rcu_worker(void *arg)
{
	unsigned cpu = smp_processor_id();
	u64 n = 0;
	struct rcu_bench_cpu *me = &rb.cpu[cpu];
	smp_sync_wait(&rb.start, rb.ncpus);
	for (;;) {
		preempt_disable();
		struct rcu_bench_obj *o = me->free;
		if (o) {
			me->free = o->next;
			preempt_enable();
			call_rcu(&o->rh, rcu_bench_free);
			n++;
		} else {
			preempt_enable();
			u64 t0 = arch_clock_ns();
			msleep(1); /* all in flight: let a grace period end */
			me->slept_ns += arch_clock_ns() - t0;
			if (arch_clock_ns() >= READ_ONCE(rb.deadline))
				break;
		}
		if (n % RCU_BENCH_CLOCK_EVERY == 0 && arch_clock_ns() >= READ_ONCE(rb.deadline))
			break;
	}
	rb.ops[cpu] = n;
}

static void rcu_bench_call_rcu(unsigned k)
{
	unsigned cpu;
	rb.start = (struct smp_sync){0};
	rb.ncpus = k;
	for_each_online_cpu(cpu) {
		rb.ops[cpu] = 0;
		rb.cpu[cpu].slept_ns = 0;
		rb.cpu[cpu].free = NULL;
		if (!rb.pool[cpu] &&
		    !(rb.pool[cpu] = kmalloc(RCU_BENCH_POOL * sizeof(struct rcu_bench_obj)))) {
			bench_error("rcu", "no memory for CPU %u's objects", cpu);
			return;
		}
		for (unsigned i = 0; i < RCU_BENCH_POOL; i++) {
			rb.pool[cpu][i].next = rb.cpu[cpu].free;
			rb.cpu[cpu].free = &rb.pool[cpu][i];
		}
	}
	u64 start = arch_clock_ns();
	rb.deadline = start + bench_phase_ns();
	bench_phase_begin("call_rcu", k);
	smp_run_on(k, call_rcu_worker, NULL);
	u64 elapsed = arch_clock_ns() - start;
	u64 total = 0, busy = 0;
	for_each_online_cpu(cpu) {
		total += rb.ops[cpu];
		if (rb.ops[cpu])
			busy += elapsed - MIN(elapsed, rb.cpu[cpu].slept_ns);
	}
	bench_phase_end(total);
	/* CPU time per call: the k CPUs' time, less their waits for objects, over the calls. */
	bench_report("rcu", k, "op=call_rcu ns_per_op=%llu",
		     total ? (unsigned long long)(busy / total) : 0ULL);
	rcu_barrier(); /* every object back before the next phase */
}

static void reader_loop(unsigned cpu)
{
	u64 n = 0, sum = 0;
	for (;;) {
		switch (rb.kind) {
		case READ_RCU: {
			rcu_read_lock();
			struct shared_record *r = rcu_dereference(rb.rec);
			sum += r->a + r->b;
			rcu_read_unlock();
			break;
		}
		case READ_SPINLOCK:
			spin_lock(&rb.lock);
			sum += rb.recs[0].a + rb.recs[0].b;
			spin_unlock(&rb.lock);
			break;
		case READ_RWLOCK:
			read_lock(&rb.rwlock);
			sum += rb.recs[0].a + rb.recs[0].b;
			read_unlock(&rb.rwlock);
			break;
		}
		n++;
		if (n % RCU_BENCH_CLOCK_EVERY == 0 &&
		    (READ_ONCE(rb.stop) || arch_clock_ns() >= READ_ONCE(rb.deadline)))
			break;
	}
	rb.sink[cpu] = sum;
	rb.ops[cpu] = n;
}

static void read_worker(void *arg)
{
	smp_sync_wait(&rb.start, rb.ncpus);
	reader_loop(smp_processor_id());
}

static void rcu_bench_read(unsigned k, enum read_kind kind)
{
	static const char *const names[] = {"rcu", "spinlock", "rwlock"};
	char phase[24];
	unsigned cpu;
	rb.start = (struct smp_sync){0};
	rb.ncpus = k;
	rb.kind = kind;
	rb.stop = 0;
	for (cpu = 0; cpu < MAX_CPUS; cpu++)
		rb.ops[cpu] = 0;
	snprintf(phase, sizeof(phase), "read_%s", names[kind]);
	u64 start = arch_clock_ns();
	rb.deadline = start + bench_phase_ns();
	bench_phase_begin(phase, k);
	smp_run_on(k, read_worker, NULL);
	u64 elapsed = arch_clock_ns() - start;
	u64 total = 0;
	for (cpu = 0; cpu < MAX_CPUS; cpu++)
		total += rb.ops[cpu];
	bench_phase_end(total);
	bench_report("rcu", k, "op=read kind=%s ns_per_op=%llu", names[kind],
		     total ? (unsigned long long)(elapsed * k / total) : 0ULL);
}

static u64 gp_samples[RCU_BENCH_EXP_SAMPLES];

static void sort_u64(u64 *v, unsigned n)
{
	for (unsigned i = 1; i < n; i++)
		for (unsigned j = i; j > 0 && v[j - 1] > v[j]; j--) {
			u64 t = v[j];
			v[j] = v[j - 1];
			v[j - 1] = t;
		}
}

static void gp_latency_worker(void *arg)
{
	unsigned cpu = smp_processor_id();
	smp_sync_wait(&rb.start, rb.ncpus);
	if (cpu != rb.timer_cpu) {
		reader_loop(cpu);
		return;
	}
	for (unsigned mode = 0; mode < 2; mode++) {
		unsigned n = mode ? RCU_BENCH_EXP_SAMPLES : RCU_BENCH_GP_SAMPLES;
		for (unsigned i = 0; i < n; i++) {
			u64 t0 = arch_clock_ns();
			if (mode)
				synchronize_rcu_expedited();
			else
				synchronize_rcu();
			gp_samples[i] = arch_clock_ns() - t0;
		}
		sort_u64(gp_samples, n);
		u64 p50 = gp_samples[n / 2], p99 = gp_samples[(n * 99) / 100];
		/* In ns: an expedited grace period at 1 CPU is under a microsecond. */
		bench_report("rcu", rb.ncpus, "op=gp_latency mode=%s p50_ns=%llu p99_ns=%llu",
			     mode ? "expedited" : "normal", (unsigned long long)p50,
			     (unsigned long long)p99);
	}
	WRITE_ONCE(rb.stop, 1);
}

static void rcu_bench_gp_latency(unsigned k)
{
	rb.start = (struct smp_sync){0};
	rb.ncpus = k;
	rb.kind = READ_RCU;
	rb.stop = 0;
	rb.deadline = UINT64_MAX; /* the readers stop when the timing CPU is done */
	preempt_disable();
	rb.timer_cpu = smp_processor_id();
	preempt_enable();
	smp_run_on(k, gp_latency_worker, NULL);
}

BENCH(rcu)
{
	unsigned online = num_online_cpus();
	spin_lock_init(&rb.lock);
	rb.rwlock = (rwlock_t)RWLOCK_INIT;
	rb.recs[0] = (struct shared_record){1, 2};
	rcu_assign_pointer(rb.rec, &rb.recs[0]);
	for (unsigned k = 1; k; k = bench_cpus_next(k, online)) {
		rcu_bench_call_rcu(k);
		rcu_bench_gp_latency(k);
		rcu_bench_read(k, READ_RCU);
		rcu_bench_read(k, READ_SPINLOCK);
		rcu_bench_read(k, READ_RWLOCK);
	}
}
