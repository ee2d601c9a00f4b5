/*
 * grace_profile: a QEMU TCG plugin (API version 1, QEMU 7.2) that profiles Grace.
 *
 * Instruction mode (mode=insns): counts executed instructions per kernel symbol
 * and per vCPU, and prints a readprofile-like table: count, symbol, share.
 *
 * Sharing mode (mode=sharing): also watches every memory access and counts cache
 * lines (64 bytes) that move between CPUs. The counting rule, per line, keeping
 * its last writer and the set of CPUs holding a copy:
 *   - a read by CPU c that holds no copy, of a line last written by another CPU,
 *     is one transfer (the line comes from that CPU's cache); c now holds a copy;
 *   - a write by CPU c while any other CPU holds a copy, or to a line last written
 *     by another CPU, is one transfer (the others' copies are invalidated); after
 *     it c is the only holder and the last writer.
 * Lines are told apart by physical address, so user memory counts as well as
 * the kernel's: the same user address in two processes is two lines.
 * Two CPUs passing a flag back and forth (each spins reading it, then writes it)
 * cost 4 transfers per round trip under this rule: per hand-over, one read miss
 * by the waiter and one invalidating write.
 * Transfers are charged to the code symbol of the accessing instruction and, when
 * the line belongs to a global or per-CPU variable, to that data symbol.
 *
 * An address no symbol covers is charged to a row named after the region it lies
 * in, as the kernel announces them ("region <kind> <base> <size>", the first match
 * winning): (firmware), (user), (heap) for the direct map (slab objects, pages),
 * (vmap) for kernel stacks, (image) for the kernel image between symbols; device
 * registers (QEMU's I/O memory) are (mmio), and what is in none of these
 * (unknown). Each table ends with a note on the region rows it shows.
 *
 * Precision: QEMU calls a memory callback after the access, on the vCPU's own
 * thread. With multi-threaded TCG, two vCPUs racing on one line can therefore be
 * recorded in another order than they happened, and a few transfers per hundred
 * are missed or added (the ping-pong check measured 3.77-3.99 instead of 4 per round
 * trip). -accel tcg,thread=single would make the record exact, but a spinning vCPU
 * then holds the only thread until QEMU's kick timer, too slow for ping-pong.
 *
 * The measurement window: the kernel's bench_phase_begin/end send short text
 * messages ("begin <phase> <cpus>", "end <ops>", "percpu <base> <size>") by
 * storing to bench_mark_channel[b] for each byte b, from inside bench_mark_send().
 * Only stores made by that function's instructions are decoded, so no other
 * access can look like a message. Counting happens only inside a window; the
 * firmware and boot are never counted.
 *
 * Inside a window a vCPU may pause itself: after its "pause" (bench_pause()) and
 * until its "resume" (bench_resume()) its instructions and accesses are not
 * counted, so a benchmark can leave a CPU's barriers, setup and teardown out of
 * the figures. A paused vCPU's accesses still go through the line table (holders
 * and last writer), uncounted, so that after the resume a line it wrote while
 * paused is its own and a line another CPU took meanwhile is not. A pause sent
 * before "begin" holds into the window (so a CPU can be paused from the start);
 * "end" reports whether or not some vCPU is paused, then clears every pause, so
 * no window inherits one from an earlier phase. Pauses do not nest. An instruction is counted when
 * its translation block starts to run, so the few instructions of bench_mark_send() that send
 * "pause" are counted and those that send "resume" are not.
 *
 * Arguments: elf=<kernel.elf> (required), mode=insns|sharing, out=<file>,
 * arch=<name>, percpu=on (per-CPU columns), top=<n> (table rows).
 */
#include "elf_syms.h"
#include "qemu_plugin_api.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = GRACE_QEMU_PLUGIN_VERSION;

#define MAX_VCPUS 64
#define LINE_SHIFT 6 /* 64-byte cache lines */
#define MSG_MAX 192
#define LINE_LOCKS 1024 /* stripes for the line table */
#define DEFAULT_TOP 25

/* One translation block's instructions, split by the symbol each falls in. */
struct tb_part {
	int sym; /* index into symtab, -1 for outside any symbol */
	unsigned n;
	uint64_t pc; /* of the first instruction: its region when sym is -1 */
};

/*
 * Rows after the symbols' slots, for addresses no symbol covers. The kernel names
 * the regions after the bench_mark channel is open (translation comes earlier), so
 * an address is placed in its region when it is counted, not when translated.
 */
enum region_kind {
	REGION_FIRMWARE,
	REGION_USER,
	REGION_HEAP,
	REGION_VMAP,
	REGION_IMAGE,
	REGION_MMIO,
	REGION_UNKNOWN,
	NR_REGION_KINDS
};

static const struct {
	const char *kind, *row, *note;
} region_kinds[NR_REGION_KINDS] = {
    {"firmware", "(firmware)", "reserved below the kernel by the boot: OpenSBI (riscv64)"},
    {"user", "(user)", "user-mode code and data"},
    {"heap", "(heap)", "the direct map: slab objects, pages, page tables"},
    {"vmap", "(vmap)", "vmap space: kernel stacks"},
    {"image", "(image)", "the kernel image outside any sized symbol"},
    {"mmio", "(mmio)", "device registers (uncached on hardware, counted as lines here)"},
    {"unknown", "(unknown)", "in no region the kernel announced"},
};

#define MAX_REGIONS 64

struct region {
	uint64_t start, end;
	enum region_kind kind;
};

struct tb_info {
	unsigned nparts;
	struct tb_part parts[];
};

struct line {
	uint64_t tag;	  /* line address + 1; 0 = empty slot */
	uint64_t holders; /* CPUs with a copy */
	int last_writer;  /* -1 before any write */
};

struct stripe {
	pthread_mutex_t lock;
	struct line *slots; /* open addressing, grows */
	size_t cap, used;
} __attribute__((aligned(64)));

static struct {
	struct symtab syms;
	const char *elf, *out, *arch;
	int sharing, percpu, top;
	int nvcpus;
	uint64_t channel, channel_end; /* bench_mark_channel */
	uint64_t sender, sender_end;   /* bench_mark_send */
	uint64_t percpu_start;	       /* __percpu_start of the template */
	uint64_t percpu_base[MAX_VCPUS], percpu_size;
	int npercpu;
	struct region regions[MAX_REGIONS]; /* announced before the first window */
	int nregions;

	volatile int counting;	      /* inside a window */
	int paused[MAX_VCPUS];	      /* inside a window, this vCPU is not counted */
	char msg[MAX_VCPUS][MSG_MAX]; /* message being received, per vCPU */
	unsigned msg_len[MAX_VCPUS];

	/* Counters, per vCPU so the hot path needs no lock. Reset at each window. */
	uint64_t *insns[MAX_VCPUS];	/* [nslots()]: per symbol, then per region kind */
	uint64_t *xfer_code[MAX_VCPUS]; /* transfers by accessing code symbol */
	uint64_t *xfer_data[MAX_VCPUS]; /* transfers by data symbol */
	uint64_t total_insns[MAX_VCPUS], total_xfers[MAX_VCPUS];

	struct stripe stripes[LINE_LOCKS];
	char phase[MSG_MAX];
	int phase_cpus;
	FILE *outf;
	pthread_mutex_t out_lock;
} P;

static void say(const char *fmt, ...)
{
	char buf[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	qemu_plugin_outs(buf);
}

/* ---- the line table ---- */

static uint64_t hash64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	return x;
}

static struct line *stripe_lookup(struct stripe *s, uint64_t tag)
{
	if (s->used * 2 >= s->cap) {
		size_t ncap = s->cap ? s->cap * 2 : 1024;
		struct line *n = calloc(ncap, sizeof(*n));
		for (size_t i = 0; i < s->cap; i++) {
			if (!s->slots[i].tag)
				continue;
			size_t j = hash64(s->slots[i].tag) & (ncap - 1);
			while (n[j].tag)
				j = (j + 1) & (ncap - 1);
			n[j] = s->slots[i];
		}
		free(s->slots);
		s->slots = n;
		s->cap = ncap;
	}
	size_t j = hash64(tag) & (s->cap - 1);
	while (s->slots[j].tag && s->slots[j].tag != tag)
		j = (j + 1) & (s->cap - 1);
	if (!s->slots[j].tag) {
		s->slots[j] = (struct line){tag, 0, -1};
		s->used++;
	}
	return &s->slots[j];
}

static void lines_reset(void)
{
	for (int i = 0; i < LINE_LOCKS; i++) {
		pthread_mutex_lock(&P.stripes[i].lock);
		free(P.stripes[i].slots);
		P.stripes[i].slots = NULL;
		P.stripes[i].cap = P.stripes[i].used = 0;
		pthread_mutex_unlock(&P.stripes[i].lock);
	}
}

/* Apply the counting rule (file header) to one access; returns 1 for a transfer. */
static int line_access(unsigned cpu, uint64_t addr, int store)
{
	uint64_t tag = (addr >> LINE_SHIFT) + 1;
	struct stripe *s = &P.stripes[hash64(tag) % LINE_LOCKS];
	uint64_t me = 1ULL << cpu;
	int xfer = 0;

	pthread_mutex_lock(&s->lock);
	struct line *l = stripe_lookup(s, tag);
	if (store) {
		xfer = (l->holders & ~me) || (l->last_writer >= 0 && l->last_writer != (int)cpu);
		l->holders = me;
		l->last_writer = (int)cpu;
	} else {
		xfer = !(l->holders & me) && l->last_writer >= 0 && l->last_writer != (int)cpu;
		l->holders |= me;
	}
	pthread_mutex_unlock(&s->lock);
	return xfer;
}

/* ---- symbols ---- */

static int sym_index(uint64_t addr)
{
	const struct sym *s = symtab_find(&P.syms, addr);
	return s ? (int)(s - P.syms.syms) : -1;
}

/* The data symbol a line belongs to: a global, or a per-CPU variable in some CPU's copy. */
static int data_sym_index(uint64_t addr)
{
	for (int i = 0; i < P.npercpu; i++)
		if (addr >= P.percpu_base[i] && addr < P.percpu_base[i] + P.percpu_size) {
			addr = P.percpu_start + (addr - P.percpu_base[i]);
			break;
		}
	const struct sym *s = symtab_find(&P.syms, addr);
	return s && !s->is_func && s->size ? (int)(s - P.syms.syms) : -1;
}

static size_t nslots(void)
{
	return P.syms.n + NR_REGION_KINDS;
}

static size_t region_slot(uint64_t addr)
{
	for (int i = 0; i < P.nregions; i++)
		if (addr >= P.regions[i].start && addr < P.regions[i].end)
			return P.syms.n + P.regions[i].kind;
	return P.syms.n + REGION_UNKNOWN;
}

static size_t code_slot(const struct tb_part *part)
{
	return part->sym < 0 ? region_slot(part->pc) : (size_t)part->sym;
}

static size_t data_slot(struct qemu_plugin_hwaddr *hw, uint64_t vaddr)
{
	int sym = data_sym_index(vaddr);
	if (sym >= 0)
		return (size_t)sym;
	if (hw && qemu_plugin_hwaddr_is_io(hw))
		return P.syms.n + REGION_MMIO;
	return region_slot(vaddr);
}

/* ---- messages from the kernel ---- */

static void counters_reset(void)
{
	for (int c = 0; c < P.nvcpus; c++) {
		memset(P.insns[c], 0, nslots() * sizeof(uint64_t));
		memset(P.xfer_code[c], 0, nslots() * sizeof(uint64_t));
		memset(P.xfer_data[c], 0, nslots() * sizeof(uint64_t));
		P.total_insns[c] = P.total_xfers[c] = 0;
	}
	if (P.sharing)
		lines_reset();
}

struct row {
	uint64_t count;
	size_t sym;
};

static int by_count(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

static const char *slot_name(size_t i)
{
	return i < P.syms.n ? P.syms.syms[i].name : region_kinds[i - P.syms.n].row;
}

/* Print one table, count symbol share%, sorted, from the per-vCPU arrays. */
static void table_print(FILE *f, const char *title, uint64_t **per_cpu, uint64_t total)
{
	size_t n = nslots(), nrows = 0;
	int shown[NR_REGION_KINDS] = {0};
	struct row *rows = calloc(n, sizeof(*rows));
	for (size_t i = 0; i < n; i++) {
		uint64_t sum = 0;
		for (int c = 0; c < P.nvcpus; c++)
			sum += per_cpu[c][i];
		if (sum)
			rows[nrows++] = (struct row){sum, i};
	}
	qsort(rows, nrows, sizeof(*rows), by_count);
	fprintf(f, "%s\n%14s  %-40s %7s", title, "count", "symbol", "share");
	if (P.percpu)
		for (int c = 0; c < P.nvcpus; c++)
			fprintf(f, " %10s%-2d", "cpu", c);
	fprintf(f, "\n");
	for (size_t r = 0; r < nrows && r < (size_t)P.top; r++) {
		if (rows[r].sym >= P.syms.n)
			shown[rows[r].sym - P.syms.n] = 1;
		fprintf(f, "%14llu  %-40s %6.2f%%", (unsigned long long)rows[r].count,
			slot_name(rows[r].sym),
			total ? 100.0 * (double)rows[r].count / (double)total : 0.0);
		if (P.percpu)
			for (int c = 0; c < P.nvcpus; c++)
				fprintf(f, " %12llu", (unsigned long long)per_cpu[c][rows[r].sym]);
		fprintf(f, "\n");
	}
	fprintf(f, "%14llu  %-40s %6.2f%%\n", (unsigned long long)total, "total", 100.0);
	/* The region rows say where they are, not what: say it under the table. */
	for (int k = 0; k < NR_REGION_KINDS; k++)
		if (shown[k])
			fprintf(f, "  %s %s\n", region_kinds[k].row, region_kinds[k].note);
	fprintf(f, "\n");
	free(rows);
}

static void phase_report(uint64_t ops)
{
	uint64_t insns = 0, xfers = 0;
	for (int c = 0; c < P.nvcpus; c++) {
		insns += P.total_insns[c];
		xfers += P.total_xfers[c];
	}
	char line[512];
	int n =
	    snprintf(line, sizeof(line),
		     "bench: profile arch=%s online=%d cpus=%d phase=%s ops=%llu insns_per_op=%.1f",
		     P.arch, P.nvcpus, P.phase_cpus, P.phase, (unsigned long long)ops,
		     ops ? (double)insns / (double)ops : 0.0);
	if (n < 0 || n >= (int)sizeof(line))
		n = sizeof(line) - 1; /* a long arch= argument: truncate, never write past line */
	if (P.sharing)
		snprintf(line + n, sizeof(line) - n, " transfers_per_op=%.3f",
			 ops ? (double)xfers / (double)ops : 0.0);

	pthread_mutex_lock(&P.out_lock);
	say("%s\n", line);
	if (P.outf) {
		fprintf(P.outf, "%s\n\n", line);
		table_print(P.outf, "instructions by symbol:", P.insns, insns);
		if (P.sharing) {
			table_print(P.outf, "cache-line transfers by code:", P.xfer_code, xfers);
			table_print(P.outf, "cache-line transfers by data:", P.xfer_data, xfers);
		}
		fflush(P.outf);
	}
	pthread_mutex_unlock(&P.out_lock);
}

static void message(unsigned cpu, const char *m)
{
	char name[MSG_MAX];
	int cpus;
	unsigned long long a, b;

	if (sscanf(m, "begin %191s %d", name, &cpus) == 2) {
		__atomic_store_n(&P.counting, 0, __ATOMIC_SEQ_CST);
		counters_reset();
		snprintf(P.phase, sizeof(P.phase), "%s", name);
		P.phase_cpus = cpus;
		__atomic_store_n(&P.counting, 1, __ATOMIC_SEQ_CST);
	} else if (sscanf(m, "end %llu", &a) == 1) {
		__atomic_store_n(&P.counting, 0, __ATOMIC_SEQ_CST);
		phase_report(a);
		for (int c = 0; c < MAX_VCPUS; c++)
			__atomic_store_n(&P.paused[c], 0, __ATOMIC_RELAXED);
	} else if (!strcmp(m, "pause") || !strcmp(m, "resume")) {
		/* Only this vCPU's own thread reads its flag on the hot path. */
		__atomic_store_n(&P.paused[cpu], m[0] == 'p', __ATOMIC_RELAXED);
	} else if (sscanf(m, "region %15s %llx %llx", name, &a, &b) == 3) {
		int k = 0;
		while (k < REGION_MMIO && strcmp(name, region_kinds[k].kind))
			k++;
		if (k < REGION_MMIO && P.nregions < MAX_REGIONS)
			P.regions[P.nregions++] = (struct region){a, a + b, (enum region_kind)k};
		else if (k == REGION_MMIO)
			say("grace_profile: cpu%u sent an unknown region '%s'\n", cpu, name);
	} else if (sscanf(m, "percpu %llx %llx", &a, &b) == 2) {
		if (P.npercpu < MAX_VCPUS) {
			P.percpu_base[P.npercpu++] = a;
			P.percpu_size = b;
		}
	} else {
		say("grace_profile: cpu%u sent an unknown message '%s'\n", cpu, m);
	}
}

/* A store by bench_mark_send(): its address within the channel is one byte of the message. */
static void on_channel_store(unsigned cpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *ud)
{
	if (!qemu_plugin_mem_is_store(info) || vaddr < P.channel || vaddr >= P.channel_end ||
	    cpu >= MAX_VCPUS)
		return;
	char ch = (char)(vaddr - P.channel);
	if (ch == '\0') {
		P.msg[cpu][P.msg_len[cpu]] = '\0';
		message(cpu, P.msg[cpu]);
		P.msg_len[cpu] = 0;
	} else if (P.msg_len[cpu] < MSG_MAX - 1) {
		P.msg[cpu][P.msg_len[cpu]++] = ch;
	}
}

/* ---- counting ---- */

static void on_tb_exec(unsigned cpu, void *ud)
{
	if (!__atomic_load_n(&P.counting, __ATOMIC_RELAXED) || cpu >= MAX_VCPUS ||
	    __atomic_load_n(&P.paused[cpu], __ATOMIC_RELAXED))
		return;
	struct tb_info *tb = ud;
	for (unsigned i = 0; i < tb->nparts; i++) {
		P.insns[cpu][code_slot(&tb->parts[i])] += tb->parts[i].n;
		P.total_insns[cpu] += tb->parts[i].n;
	}
}

/*
 * A line is known by its physical address: processes map different pages at
 * the same user addresses (two programs' stacks are not one line), and one
 * page may be mapped at two addresses (shared after fork until written).
 */
static uint64_t line_addr(struct qemu_plugin_hwaddr *hw, uint64_t vaddr)
{
	return hw ? qemu_plugin_hwaddr_phys_addr(hw) : vaddr;
}

/* ud: the tb_part of the accessing instruction. */
static void on_mem(unsigned cpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *ud)
{
	if (!__atomic_load_n(&P.counting, __ATOMIC_RELAXED) || cpu >= MAX_VCPUS)
		return;
	struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
	/* Paused: the line table still follows the access (file header), uncounted. */
	if (line_access(cpu, line_addr(hw, vaddr), qemu_plugin_mem_is_store(info)) &&
	    !__atomic_load_n(&P.paused[cpu], __ATOMIC_RELAXED)) {
		P.xfer_code[cpu][code_slot(ud)]++;
		P.xfer_data[cpu][data_slot(hw, vaddr)]++;
		P.total_xfers[cpu]++;
	}
}

static void on_tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	struct tb_info *info = calloc(1, sizeof(*info) + n * sizeof(struct tb_part));
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t pc = qemu_plugin_insn_vaddr(insn);
		int sym = sym_index(pc);
		if (info->nparts && info->parts[info->nparts - 1].sym == sym)
			info->parts[info->nparts - 1].n++;
		else
			info->parts[info->nparts++] = (struct tb_part){sym, 1, pc};
		/* Lives as long as info: parts never move once made. */
		struct tb_part *part = &info->parts[info->nparts - 1];
		if (pc >= P.sender && pc < P.sender_end)
			qemu_plugin_register_vcpu_mem_cb(insn, on_channel_store,
							 QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_MEM_W,
							 NULL);
		else if (P.sharing)
			qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS,
							 QEMU_PLUGIN_MEM_RW, part);
	}
	/* The TB info lives as long as QEMU may run the block: for the whole run. */
	qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb_exec, QEMU_PLUGIN_CB_NO_REGS, info);
}

static void on_plugin_exit(qemu_plugin_id_t id, void *ud)
{
	if (P.outf)
		fclose(P.outf);
}

static int need_symbol(const char *name, uint64_t *start, uint64_t *end)
{
	const struct sym *s = symtab_by_name(&P.syms, name);
	if (!s || !s->size) {
		say("grace_profile: %s has no symbol '%s' with a size; is it a Grace kernel?\n",
		    P.elf, name);
		return -1;
	}
	*start = s->addr;
	if (end)
		*end = s->addr + s->size;
	return 0;
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
					   char **argv)
{
	if (info->version.cur < GRACE_QEMU_PLUGIN_VERSION ||
	    info->version.min > GRACE_QEMU_PLUGIN_VERSION) {
		say("grace_profile: written for plugin API version %d; this QEMU offers %d..%d\n",
		    GRACE_QEMU_PLUGIN_VERSION, info->version.min, info->version.cur);
		return -1;
	}
	if (!info->system_emulation) {
		say("grace_profile: needs system emulation (qemu-system-*)\n");
		return -1;
	}
	P.arch = "unknown";
	P.top = DEFAULT_TOP;
	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];
		if (!strncmp(a, "elf=", 4))
			P.elf = a + 4;
		else if (!strncmp(a, "out=", 4))
			P.out = a + 4;
		else if (!strncmp(a, "arch=", 5))
			P.arch = a + 5;
		else if (!strcmp(a, "mode=sharing"))
			P.sharing = 1;
		else if (!strcmp(a, "mode=insns"))
			P.sharing = 0;
		else if (!strcmp(a, "percpu=on"))
			P.percpu = 1;
		else if (!strncmp(a, "top=", 4) && atoi(a + 4) > 0)
			P.top = atoi(a + 4);
		else {
			say("grace_profile: unknown argument '%s' (elf= out= arch= "
			    "mode=insns|sharing percpu=on top=N)\n",
			    a);
			return -1;
		}
	}
	if (!P.elf) {
		say("grace_profile: elf=<kernel.elf> is required\n");
		return -1;
	}
	char err[256];
	if (symtab_load(P.elf, &P.syms, err, sizeof(err))) {
		say("grace_profile: %s\n", err);
		return -1;
	}
	uint64_t unused;
	if (need_symbol("bench_mark_channel", &P.channel, &P.channel_end) ||
	    need_symbol("bench_mark_send", &P.sender, &P.sender_end) ||
	    need_symbol("percpu_self", &P.percpu_start, &unused))
		return -1;

	P.nvcpus = info->system.smp_vcpus;
	if (P.nvcpus > MAX_VCPUS) {
		say("grace_profile: %d vCPUs; at most %d\n", P.nvcpus, MAX_VCPUS);
		return -1;
	}
	for (int c = 0; c < P.nvcpus; c++) {
		P.insns[c] = calloc(nslots(), sizeof(uint64_t));
		P.xfer_code[c] = calloc(nslots(), sizeof(uint64_t));
		P.xfer_data[c] = calloc(nslots(), sizeof(uint64_t));
	}
	for (int i = 0; i < LINE_LOCKS; i++)
		pthread_mutex_init(&P.stripes[i].lock, NULL);
	pthread_mutex_init(&P.out_lock, NULL);
	if (P.out && !(P.outf = fopen(P.out, "w"))) {
		say("grace_profile: cannot write %s\n", P.out);
		return -1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_trans);
	qemu_plugin_register_atexit_cb(id, on_plugin_exit, NULL);
	return 0;
}
