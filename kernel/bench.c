/* The benchmark runner and the result-line and phase-mark helpers (see include/grace/bench.h). */
#include <grace/arch.h>
#include <grace/bench.h>
#include <grace/boot_info.h>
#include <grace/chrdev.h>
#include <grace/cmdline.h>
#include <grace/errno.h>
#include <grace/lockdep.h>
#include <grace/page.h>
#include <grace/percpu.h>
#include <grace/pgtable.h>
#include <grace/preempt.h>
#include <grace/printk.h>
#include <grace/profile.h>
#include <grace/shell.h>
#include <grace/smp.h>
#include <grace/string.h>
#include <grace/uio.h>
#include <grace/time.h>

#define BENCH_PHASE_MS_DEFAULT 300 /* long enough for thousands of lock hand-offs under TCG */
/* bench_ms= at most one minute a phase: longer would outlast the runner's budget. */
#define BENCH_MS_MAX 60000
#define BENCH_LINE_MAX 400
#define BENCH_PROFILE_ROWS 20
#define BENCH_LOCKSTAT_ROWS 8 /* LOCKSTAT: lock classes printed after each phase */
#define NO_BENCHES_HERE "this image has no benchmarks (make qemu TESTS=1 boots the one that has)"

extern const struct bench_case __benches_start[], __benches_end[];
extern char _text[], _end[];

/*
 * The channel to the QEMU profiling plugin (tools/profile). QEMU's plugin API v1
 * shows a plugin the address of every store but not the value stored, so a byte
 * b is sent by storing to bench_mark_channel[b]. The plugin decodes only stores
 * made by bench_mark_send()'s own instructions, one NUL-terminated text message
 * at a time per CPU:
 *
 *   percpu <base> <size>     (hex) one per CPU: where its per-CPU copy lives
 *   region <kind> <base> <size>  (hex) where addresses no symbol names belong: firmware,
 *                            user, heap (the direct map), vmap, image; the first match wins
 *   begin <phase> <cpus>     start counting, on every CPU not paused
 *   pause                    stop counting the sending CPU's instructions and accesses
 *   resume                   count them again
 *   end <ops>                stop, report per-operation figures, unpause every CPU
 *
 * pause and resume (bench_pause/bench_resume) cut a CPU's untimed work out of a
 * phase, say a barrier or the setup between two measured loops; the CPU's
 * accesses while paused still update the plugin's record of who holds each line,
 * so nothing is miscounted after resume. Without the plugin this costs a few
 * stores per message.
 */
volatile u8 bench_mark_channel[256] __aligned(256);
static const char *bench_current = "none"; /* the running benchmark, for phase names */
static bool bench_percpu_sent;
/*
 * A message, NUL included, fits the plugin's MSG_MAX (192). "<bench>/<phase>", with
 * its NUL: the thp rows' names run to 126 bytes (thp_memscale/ptlock=split/vma=rcu/
 * vma_free=typesafe/pcp_huge=batch/pcp_high=fixed/pt_free=unmap/...), and
 * "begin <name> <cpus>", cpus up to 512, must stay inside one message.
 */
#define BENCH_MARK_MSG_MAX 192
#define BENCH_PHASE_NAME_MAX 160
#ifdef GRACE_LOCKSTAT
static char bench_phase_name[BENCH_PHASE_NAME_MAX]; /* the lock statistics' title */
#endif

/*
 * The plugin assembles each CPU's bytes separately, so a message is sent from one
 * CPU: a sender preempted and moved inside it would leave the plugin half a message
 * on each, two garbled messages (a program's "begin" from /dev/bench_mark lost, and
 * its phase with it).
 */
static void __noinline bench_mark_send(const char *msg)
{
	preempt_disable();
	for (const char *p = msg;; p++) {
		bench_mark_channel[(u8)*p] = 1;
		if (!*p)
			break;
	}
	preempt_enable();
}

static void __printf(1, 2) bench_mark(const char *fmt, ...)
{
	char msg[BENCH_MARK_MSG_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	bench_mark_send(msg);
}

/*
 * The address ranges the plugin names rows after when no symbol covers an address
 * (slab objects, stacks, user pages, the firmware's code): otherwise a third of a
 * phase's cache-line transfers land in one "(unknown)" row. The firmware is what
 * the boot loader reserved below the kernel's image (OpenSBI on riscv64, the first
 * MiB on x86_64), sent before user, whose range holds it on riscv64: the firmware
 * runs with the MMU off, at its physical addresses.
 */
static void bench_mark_regions(void)
{
	for (unsigned i = 0; i < boot_info.nr_reserved; i++)
		if (boot_info.reserved[i].base + boot_info.reserved[i].size <=
		    boot_info.kernel_start)
			bench_mark("region firmware %llx %llx",
				   (unsigned long long)boot_info.reserved[i].base,
				   (unsigned long long)boot_info.reserved[i].size);
	bench_mark("region user 0 %lx", (unsigned long)USER_VA_END);
	for (unsigned i = 0; i < boot_info.nr_mem; i++)
		bench_mark("region heap %lx %llx",
			   (unsigned long)phys_to_virt(boot_info.mem[i].base),
			   (unsigned long long)boot_info.mem[i].size);
	bench_mark("region vmap %lx %lx", (unsigned long)VMAP_BASE, (unsigned long)VMAP_SIZE);
	bench_mark("region image %lx %lx", (unsigned long)_text, (unsigned long)(_end - _text));
}

/* Open the phase called name (no spaces) on the plugin's channel. */
static void bench_phase_begin_named(const char *name, unsigned cpus)
{
	if (!bench_percpu_sent) {
		unsigned cpu;
		for_each_online_cpu(cpu)
			bench_mark("percpu %lx %lx", percpu_base(cpu),
				   (unsigned long)(__percpu_end - __percpu_start));
		bench_mark_regions();
		bench_percpu_sent = true;
	}
	bench_mark("begin %s %u", name, cpus);
#ifdef GRACE_LOCKSTAT
	strlcpy(bench_phase_name, name, sizeof(bench_phase_name));
#endif
	lockstat_reset(); /* LOCKSTAT: the phase's own figures */
}

void bench_phase_begin(const char *phase, unsigned cpus)
{
	char name[BENCH_PHASE_NAME_MAX];
	snprintf(name, sizeof(name), "%s/%s", bench_current, phase);
	bench_phase_begin_named(name, cpus);
}

/*
 * /dev/bench_mark: a program's phases for the profiler. A write is one message,
 * "begin <phase> <cpus>" or "end <ops>" (a newline after it is allowed), passed
 * on as the kernel's own benchmarks send theirs; anything else is -EINVAL, so a
 * program cannot send the plugin the messages only the kernel knows (percpu).
 */
static long bench_mark_write(struct kiocb *iocb, struct iov_iter *from)
{
	char msg[BENCH_PHASE_NAME_MAX + 16];
	size_t count = iov_iter_count(from);
	u64 n;
	if (!count || count >= sizeof(msg))
		return -EINVAL;
	if (copy_from_iter(msg, count, from) != count)
		return -EFAULT;
	msg[count] = '\0';
	if (msg[count - 1] == '\n')
		msg[count - 1] = '\0';
	if (!strncmp(msg, "end ", 4)) {
		if (parse_u64(msg + 4, &n))
			return -EINVAL;
		bench_phase_end(n);
		return (long)count;
	}
	char *space = strncmp(msg, "begin ", 6) ? NULL : strchr(msg + 6, ' ');
	if (!space || space == msg + 6 || (size_t)(space - msg - 6) >= BENCH_PHASE_NAME_MAX ||
	    parse_u64(space + 1, &n) || !n || n > num_online_cpus())
		return -EINVAL;
	*space = '\0'; /* msg + 6 is the phase's name */
	bench_phase_begin_named(msg + 6, (unsigned)n);
	return (long)count;
}

const struct file_operations bench_mark_ops = {.write_iter = bench_mark_write};

void bench_phase_end(u64 ops)
{
	bench_mark("end %llu", ops);
	lockstat_print(bench_phase_name, BENCH_LOCKSTAT_ROWS);
}

void bench_pause(void)
{
	bench_mark_send("pause");
}

void bench_resume(void)
{
	bench_mark_send("resume");
}

u64 bench_phase_ns_default(u64 default_ns)
{
	/* Absent or bad: default_ns itself, which need not be whole milliseconds. */
	u64 ms = cmdline_get_uint("bench_ms", 0, 1, BENCH_MS_MAX);
	return ms ? ms * NSEC_PER_MSEC : default_ns;
}

u64 bench_phase_ns(void)
{
	return bench_phase_ns_default(BENCH_PHASE_MS_DEFAULT * NSEC_PER_MSEC);
}

void bench_report(const char *name, unsigned cpus, const char *fmt, ...)
{
	char rest[BENCH_LINE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(rest, sizeof(rest), fmt, ap);
	va_end(ap);
	printk_raw("bench: %s arch=%s online=%u cpus=%u %s", name, arch_name, num_online_cpus(),
		   cpus, rest);
}

static bool bench_selected(const struct bench_case *b, const char *globs)
{
	return glob_list_match(globs, b->name) || !strcmp(globs, "all");
}

void bench_error(const char *name, const char *fmt, ...)
{
	char why[BENCH_LINE_MAX];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	printk_raw("bench: error %s arch=%s online=%u %s", name, arch_name, num_online_cpus(), why);
}

int bench_run(const char *globs)
{
	unsigned ran = 0;
	for (const struct bench_case *b = __benches_start; b < __benches_end; b++) {
		if (!bench_selected(b, globs))
			continue;
		if (shell_interrupted())
			break; /* ^C at the shell: between benchmarks */
		printk_raw("bench: running %s on %u CPUs", b->name, num_online_cpus());
		bench_current = b->name;
		bool profiling = profile_enabled() && profile_start(MAX_CPUS) == 0;
		b->fn();
		if (profiling) {
			profile_stop();
			char title[64];
			snprintf(title, sizeof(title), "profile of bench %s", b->name);
			profile_print(title, BENCH_PROFILE_ROWS);
		}
		ran++;
	}
	if (__benches_end - __benches_start == 0)
		pr_err("bench: " NO_BENCHES_HERE "\n");
	else if (!ran && !shell_interrupted())
		pr_err("bench: no benchmark matches '%s'\n", globs);
	printk_raw("benchmarks: done");
	return ran ? 0 : 1;
}

SHELL_CMD(bench, "glob[,glob...]|all", "run the matching benchmarks, printing bench: lines")
{
	if (argc != 2)
		return SHELL_USAGE;
	if (__benches_end - __benches_start == 0) {
		printk("bench: %s: " NO_BENCHES_HERE "\n", argv[1]);
		return -ENOENT;
	}
	unsigned matches = 0;
	for (const struct bench_case *b = __benches_start; b < __benches_end; b++)
		matches += bench_selected(b, argv[1]);
	if (!matches) {
		printk("bench: %s: no benchmark matches\n", argv[1]);
		return -ENOENT;
	}
	if (profile_active()) {
		printk("bench: %s: the sampling profiler is on ('profile off' first)\n", argv[1]);
		return -EBUSY;
	}
	bench_run(argv[1]);
	return 0;
}
