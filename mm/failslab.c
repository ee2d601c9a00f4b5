/*
 * Failure injection for slab allocations (grace/failslab.h). The probability is
 * one global word, read on every call and written only by failslab_set_ppm(); it
 * is 0 unless someone asked, so the common call is one load of a line that never
 * changes. With a probability set, each CPU steps its own xorshift64 generator
 * (Marsaglia, "Xorshift RNGs", 2003: shifts 13, 7, 17) and counts the failures it
 * injected: only that CPU writes them, with preemption off, so no allocation
 * writes a line another CPU reads except the summing of the counts.
 */
#include <grace/arch.h>
#include <grace/cmdline.h>
#include <grace/errno.h>
#include <grace/failslab.h>
#include <grace/percpu.h>
#include <grace/preempt.h>
#include <grace/printk.h>
#include <grace/sched.h>
#include <grace/shell.h>
#include <grace/smp.h>

#define FAILSLAB_PPM_DIGITS 6 /* decimal places a probability may have: parts per million */

/* Mixes a CPU's number into its seed (the 64-bit golden ratio, as in Fibonacci hashing). */
#define FAILSLAB_SEED_MIX 0x9e3779b97f4a7c15ULL

struct failslab_cpu {
	u64 state;    /* xorshift64 state; 0 until the first draw seeds it */
	u64 injected; /* failures injected on this CPU; written by it only */
};

static u32 failslab_ppm; /* 0: off; at most FAILSLAB_PPM_ALWAYS */
static DEFINE_PER_CPU(struct failslab_cpu, failslab_cpu);

/*
 * Thread context, where the caller can be handed an error: not a hard interrupt
 * handler, not softirqd (TASK_URGENT, the only urgent threads) running a handler,
 * not the idle thread, nor the boot context that becomes the boot CPU's.
 */
static bool failslab_context_ok(void)
{
	if (in_interrupt())
		return false;
	struct task *t = current;
	return t != &boot_task && !(t->flags & (TASK_IDLE | TASK_URGENT));
}

static u64 failslab_next(struct failslab_cpu *fc, unsigned cpu)
{
	u64 x = fc->state;
	if (unlikely(!x))
		x = (arch_clock_ns() ^ ((u64)(cpu + 1) * FAILSLAB_SEED_MIX)) | 1; /* never 0 */
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	fc->state = x;
	return x;
}

bool should_failslab(void)
{
	u32 ppm = READ_ONCE(failslab_ppm);
	if (likely(ppm == 0) || !failslab_context_ok())
		return false;
	preempt_disable(); /* this CPU's generator and count, from start to end */
	unsigned cpu = smp_processor_id();
	struct failslab_cpu *fc = this_cpu_ptr(&failslab_cpu);
	/* The top 32 bits scaled to [0, 10^6): multiply and shift, no division. */
	u64 draw = ((failslab_next(fc, cpu) >> 32) * FAILSLAB_PPM_ALWAYS) >> 32;
	bool fail = draw < ppm;
	if (fail)
		WRITE_ONCE(fc->injected, fc->injected + 1);
	preempt_enable();
	return fail;
}

void failslab_set_ppm(u32 ppm)
{
	WRITE_ONCE(failslab_ppm, ppm > FAILSLAB_PPM_ALWAYS ? FAILSLAB_PPM_ALWAYS : ppm);
}

u32 failslab_get_ppm(void)
{
	return READ_ONCE(failslab_ppm);
}

u64 failslab_injected(void)
{
	u64 sum = 0;
	unsigned cpu;
	for_each_online_cpu(cpu)
		sum += READ_ONCE(per_cpu(failslab_cpu, cpu).injected);
	return sum;
}

int failslab_parse(const char *s, u32 *ppm)
{
	if (!s || (s[0] != '0' && s[0] != '1'))
		return -EINVAL;
	u32 v = (u32)(s[0] - '0') * FAILSLAB_PPM_ALWAYS;
	const char *p = s + 1;
	if (*p == '.') {
		u32 scale = FAILSLAB_PPM_ALWAYS;
		unsigned places = 0;
		for (p++; *p >= '0' && *p <= '9'; p++) {
			if (++places > FAILSLAB_PPM_DIGITS)
				return -EINVAL;
			scale /= 10;
			v += (u32)(*p - '0') * scale;
		}
		if (places == 0)
			return -EINVAL; /* "0." */
	}
	if (*p || v > FAILSLAB_PPM_ALWAYS)
		return -EINVAL;
	*ppm = v;
	return 0;
}

/* "0.010000": the probability as the parser reads it. */
static void failslab_format(char *buf, size_t size, u32 ppm)
{
	snprintf(buf, size, "%u.%06u", ppm / FAILSLAB_PPM_ALWAYS, ppm % FAILSLAB_PPM_ALWAYS);
}

void failslab_init(void)
{
	const char *v = cmdline_get("failslab");
	u32 ppm;
	if (!v)
		return;
	if (failslab_parse(v, &ppm)) {
		pr_warn("failslab: '%s' is not a probability (a decimal in [0, 1], at most %u "
			"places, like 0.01); failure injection stays off\n",
			v, FAILSLAB_PPM_DIGITS);
		return;
	}
	char buf[16];
	failslab_format(buf, sizeof(buf), ppm);
	failslab_set_ppm(ppm);
	printk("failslab: failing allocations from SLAB_FAILSLAB caches and k*alloc_failable() "
	       "with probability %s\n",
	       buf);
}

SHELL_CMD(failslab, "[<probability>]",
	  "slab failure injection: show, or set the probability (0 to 1, 0 is off)")
{
	if (argc > 2)
		return SHELL_USAGE;
	if (argc == 2) {
		u32 ppm;
		if (failslab_parse(argv[1], &ppm)) {
			printk("failslab: %s: not a probability (a decimal in [0, 1], at most %u "
			       "places)\n",
			       argv[1], FAILSLAB_PPM_DIGITS);
			return -EINVAL;
		}
		failslab_set_ppm(ppm);
	}
	char buf[16];
	failslab_format(buf, sizeof(buf), failslab_get_ppm());
	printk("failslab: probability=%s injected=%llu\n", buf,
	       (unsigned long long)failslab_injected());
	return 0;
}
