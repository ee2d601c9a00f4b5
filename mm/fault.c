/*
 * Page faults on user addresses: demand-zero 4 KiB pages, and 2 MiB pages for
 * anonymous VMAs that cover the whole aligned 2 MiB around the fault.
 *
 * A fault holds its VMA from the lookup to the end of the walk, so the VMA and
 * every table it walks stay put: by the VMA's own lock, taken under RCU, when
 * the mm looks VMAs up that way (VMA_LOOKUP_RCU) and the lookup succeeds, else
 * by mm->vma_lock for reading (mm/vma_lock.c says why either keeps unmap out). Only
 * to allocate and clear a 2 MiB block does it let go and then start over. Memory
 * for a new page or table is allocated with no page-table lock held; then the
 * lock of the one table whose entry changes is taken, the entry rechecked, and
 * either filled or, if a racing CPU filled it first, our allocation freed. So of two CPUs faulting
 * the same address, one installs and the other finds the mapping and returns.
 *
 * Which lock that is (split PMD locks, the point of "split page table lock for
 * PMD tables", Kirill A. Shutemov, 2013): a 2 MiB leaf or a PTE table goes into
 * a PMD table under that PMD table's own ptl, a 4 KiB leaf into a PTE table
 * under the PTE table's ptl; with PTLOCK_MM both are mm->page_table_lock. A new
 * PMD table goes into its PUD entry by cmpxchg, or under mm->page_table_lock with
 * PTLOCK_MM; the levels above take no lock (mm/pagewalk.c).
 *
 * Lock order: docs/locking.md.
 */
#include <grace/errno.h>
#include <grace/rcupdate.h>
#include <grace/fault.h>
#include <grace/huge.h>
#include <grace/pagewalk.h>
#include <grace/percpu_counter.h>
#include <grace/printk.h>
#include <grace/race_point.h>
#include <grace/sched.h>
#include <grace/smp.h>
#include <grace/time.h>
#include <grace/vma.h>
#include "address_space_internal.h"

DEFINE_PER_CPU(struct fault_stats, fault_stats);

/* At most this many reports per second, so a faulting loop cannot flood the console. */
#define FAULT_REPORTS_PER_SEC 10
static u64 report_window; /* racy by design: a heuristic limiter */
static atomic_t report_count;

static void fault_report(uintptr_t addr, unsigned access, const struct vma *v, const char *why)
{
	/*
	 * A user program's bad access is its own business: the process layer prints
	 * Linux's "segfault at" line when it ends the program, and a system call given
	 * a bad pointer just returns -EFAULT, as on Linux.
	 */
	if (current->proc)
		return;
	u64 now = arch_clock_ns();
	if (now - READ_ONCE(report_window) > NSEC_PER_SEC) {
		int last = atomic_xchg_relaxed(&report_count, 0);
		WRITE_ONCE(report_window, now);
		if (last > FAULT_REPORTS_PER_SEC)
			pr_warn("fault: %d reports suppressed\n", last - FAULT_REPORTS_PER_SEC);
	}
	if (atomic_fetch_add_relaxed(&report_count, 1) >= FAULT_REPORTS_PER_SEC)
		return;
	const char *kind = access & FAULT_EXEC ? "exec" : access & FAULT_WRITE ? "write" : "read";
	if (v)
		pr_warn("fault: CPU %u %s at %lx: %s (VMA [%lx, %lx) %c%c%c)\n", smp_processor_id(),
			kind, addr, why, v->start, v->end, v->prot & PROT_READ ? 'r' : '-',
			v->prot & PROT_WRITE ? 'w' : '-', v->prot & PROT_EXEC ? 'x' : '-');
	else
		pr_warn("fault: CPU %u %s at %lx: %s\n", smp_processor_id(), kind, addr, why);
}

static unsigned access_prot(unsigned access)
{
	unsigned prot = PROT_USER;
	if (access & FAULT_READ)
		prot |= PROT_READ;
	if (access & FAULT_WRITE)
		prot |= PROT_WRITE;
	if (access & FAULT_EXEC)
		prot |= PROT_EXEC;
	return prot;
}

/* What v lets an access do. Every leaf is readable, so any access at all includes reading. */
static unsigned vma_allows(const struct vma *v)
{
	return v->prot ? v->prot | PROT_READ | PROT_USER : 0;
}

/* May addr be backed by a 2 MiB page? Anonymous, allowed, and the aligned 2 MiB inside v. */
static bool vma_huge_ok(const struct vma *v, uintptr_t addr)
{
	uintptr_t base = ALIGN_DOWN(addr, HUGE_SIZE);
	if ((v->flags & VMA_NOHUGE) || !(v->flags & VMA_ANON))
		return false;
	return base >= v->start && base + HUGE_SIZE <= v->end;
}

/*
 * What fault_install() found: the mapping is there, made by us (FAULT_INSTALLED)
 * or by another CPU (FAULT_PRESENT), or it wants a 2 MiB block first
 * (FAULT_NEED_BLOCK: the caller allocates one with the VMA lock dropped and retries).
 */
enum { FAULT_INSTALLED = 0, FAULT_PRESENT = 1, FAULT_NEED_BLOCK = 2 };

/* The state of one fault across its retries. */
struct fault_ctx {
	void *block;   /* a cleared 2 MiB block to install, or NULL */
	bool no_block; /* no node had one: use 4 KiB pages */
};

/*
 * Put ctx->block as a 2 MiB leaf in *pmd if that entry is still empty (then the
 * block is consumed). FAULT_INSTALLED, or FAULT_PRESENT when a racing CPU filled
 * the entry first (the caller frees the block).
 */
static int fault_huge(struct mm *mm, pte_t *pmd_table, pte_t *pmd, unsigned prot,
		      struct fault_ctx *ctx)
{
	/* The caller saw *pmd empty with no lock held: another CPU may fill it now. */
	race_point_key("fault.huge_install", mm);
	spinlock_t *ptl = pt_lock(mm, pmd_table);
	if (!pte_present(*pmd)) {
		pt_entry_write(pmd, pte_mk_leaf(virt_to_phys(ctx->block), prot, PT_LEVEL_PMD));
		spin_unlock(ptl);
		ctx->block = NULL;
		mm_rss_add(mm, PT_LEVEL_PMD, 1);
		fault_stat_inc(mapped_huge);
		return FAULT_INSTALLED;
	}
	spin_unlock(ptl);
	fault_stat_inc(lost_race);
	return FAULT_PRESENT;
}

/* The PTE table under *pmd, made if the entry is empty; NULL with *ret set otherwise. */
static pte_t *fault_pte_table(struct mm *mm, pte_t *pmd_table, pte_t *pmd, int *ret)
{
	pte_t e = pt_entry_read(pmd);
	if (!pte_present(e)) {
		pte_t *table = pt_table_alloc();
		if (!table) {
			*ret = -ENOMEM;
			return NULL;
		}
		race_point_key("fault.pte_table_install", mm);
		spinlock_t *ptl = pt_lock(mm, pmd_table);
		e = *pmd;
		if (!pte_present(e)) {
			e = pte_mk_table(virt_to_phys(table));
			pt_entry_write(pmd, e);
			table = NULL;
		}
		spin_unlock(ptl);
		if (table)
			pt_table_free(table); /* another CPU made one (or a 2 MiB leaf) first */
	}
	if (pte_is_leaf(e)) {
		*ret = FAULT_PRESENT;
		return NULL;
	}
	return pt_table_of(e);
}

/* A 4 KiB page in *pte. FAULT_INSTALLED, FAULT_PRESENT or -ENOMEM. */
static int fault_small(struct mm *mm, pte_t *pte_table, pte_t *pte, unsigned prot)
{
	if (pte_present(pt_entry_read(pte)))
		return FAULT_PRESENT;
	void *page = mm_alloc_pages(NUMA_NO_NODE, 0, ALLOC_NOZERO);
	if (!page)
		return -ENOMEM;
	mm_clear_block(page, PAGE_SIZE);
	race_point_key("fault.small_install", mm);
	spinlock_t *ptl = pt_lock(mm, pte_table);
	if (!pte_present(*pte)) {
		/* Release: the zeroed page before the entry that maps it. */
		pt_entry_write(pte, pte_mk_leaf(virt_to_phys(page), prot, PT_LEVEL_PTE));
		spin_unlock(ptl);
		mm_rss_add(mm, PT_LEVEL_PTE, 1);
		fault_stat_inc(mapped_4k);
		return FAULT_INSTALLED;
	}
	spin_unlock(ptl);
	free_pages(page, 0);
	fault_stat_inc(lost_race);
	return FAULT_PRESENT;
}

/* Make a leaf for addr inside v. Caller holds v (its lock, or mm->vma_lock) for reading. */
static int fault_install(struct mm *mm, const struct vma *v, uintptr_t addr, struct fault_ctx *ctx)
{
	unsigned prot = v->prot | PROT_USER;
	int ret = 0;

	pte_t *pmd_table = pt_pmd_table(mm, addr, &ret);
	if (!pmd_table)
		return ret;
	pte_t *pmd = &pmd_table[pt_index(addr, PT_LEVEL_PMD)];
	if (!pte_present(pt_entry_read(pmd)) && vma_huge_ok(v, addr) && !ctx->no_block) {
		if (!ctx->block)
			return FAULT_NEED_BLOCK;
		if (fault_huge(mm, pmd_table, pmd, prot, ctx) == FAULT_INSTALLED)
			return FAULT_INSTALLED;
		/*
		 * Lost the race: the entry is now a 2 MiB leaf, or a PTE table that a CPU
		 * without a 2 MiB block put there. The 4 KiB path below handles both.
		 */
	}
	pte_t *pte_table = fault_pte_table(mm, pmd_table, pmd, &ret);
	if (!pte_table)
		return ret;
	return fault_small(mm, pte_table, &pte_table[pt_index(addr, PT_LEVEL_PTE)], prot);
}

/*
 * Is the mapping that exists now enough for this access? Then the fault was
 * spurious: another CPU installed the entry while we faulted, or this CPU's TLB
 * held a stale "not present" (RISC-V may cache that): flush the one address and
 * let the access retry.
 */
static int fault_present(struct mm *mm, const struct vma *v, uintptr_t addr, unsigned access)
{
	pte_t pte;
	int level;

	if (pt_lookup(mm, addr, &pte, &level) || !pte_allows(pte, access_prot(access))) {
		fault_report(addr, access, v, "mapping present but does not allow the access");
		return -EFAULT;
	}
	fault_stat_inc(spurious);
	arch_flush_tlb_page(addr);
	return FAULT_PRESENT;
}

/* fault_install's result for addr in v (NULL: no VMA there), or -EFAULT. Caller holds v. */
static int fault_in_vma(struct mm *mm, const struct vma *v, uintptr_t addr, unsigned access,
			struct fault_ctx *ctx)
{
	if (!v) {
		fault_report(addr, access, NULL, "outside any VMA");
		return -EFAULT;
	}
	if (access_prot(access) & ~vma_allows(v)) {
		fault_report(addr, access, v, "not allowed by the VMA");
		return -EFAULT;
	}
	int ret = fault_install(mm, v, addr, ctx);
	if (ret == FAULT_PRESENT && (access & FAULT_WRITE) &&
	    fault_cow(mm, addr, v->prot | PROT_USER) == FAULT_COW_DONE)
		return FAULT_INSTALLED;
	if (ret == FAULT_PRESENT)
		ret = fault_present(mm, v, addr, access);
	return ret;
}

/* One attempt holding the VMA: under its own lock when the lockless lookup finds it. */
static int fault_attempt(struct mm *mm, uintptr_t addr, unsigned access, struct fault_ctx *ctx)
{
	int ret;

	if (mm->vma_lookup == VMA_LOOKUP_RCU) {
		struct vma *v = vma_read_lock_rcu(mm, addr);
		if (v) {
			fault_stat_inc(lookup_rcu);
			ret = fault_in_vma(mm, v, addr, access, ctx);
			vma_read_unlock(v);
			return ret;
		}
	}
	fault_stat_inc(lookup_locked);
	read_lock(&mm->vma_lock);
	ret = fault_in_vma(mm, vma_find_locked(mm, addr), addr, access, ctx);
	read_unlock(&mm->vma_lock);
	return ret;
}

/*
 * FAULT_INSTALLED, FAULT_PRESENT (the mapping was there, allowing the access), or
 * an error. A 2 MiB block is allocated and cleared with the VMA lock dropped:
 * clearing 2 MiB takes long enough that a CPU mapping or unmapping meanwhile would
 * otherwise wait for it (and, the rwlock being fair to writers, so would every
 * other fault behind that writer). The retry looks the VMA up again, so a VMA
 * unmapped meanwhile fails the fault and the block goes back.
 */
static int fault_resolve(struct mm *mm, uintptr_t addr, unsigned access)
{
	struct fault_ctx ctx = {NULL, false};
	int ret;

	fault_stat_inc(faults);
	/* Faults run preemptible, outside any read-side section: tell RCU, and spare it an IPI. */
	rcu_quiescent_point();
	if (!mm || addr >= USER_VA_END || !access ||
	    (access & ~(FAULT_READ | FAULT_WRITE | FAULT_EXEC))) {
		fault_stat_inc(efault);
		return -EFAULT;
	}
	while ((ret = fault_attempt(mm, addr, access, &ctx)) == FAULT_NEED_BLOCK) {
		ctx.block = huge_alloc(NUMA_NO_NODE);
		if (!ctx.block) {
			/* No 2 MiB block on any node: 4 KiB pages it is. */
			ctx.no_block = true;
			fault_stat_inc(huge_fallback);
		}
	}
	if (ctx.block)
		huge_free(ctx.block); /* a racing CPU mapped the 2 MiB first, or the VMA went */

	if (ret == FAULT_INSTALLED) {
		/* RISC-V wants an sfence.vma before relying on a new entry; harmless on x86. */
		arch_flush_tlb_page(addr);
	} else if (ret == -ENOMEM) {
		fault_stat_inc(enomem);
	} else if (ret == -EFAULT) {
		fault_stat_inc(efault);
	}
	return ret;
}

int mm_fault(struct mm *mm, uintptr_t addr, unsigned access)
{
	int ret = fault_resolve(mm, addr, access);
	return ret == FAULT_PRESENT ? 0 : ret;
}

/*
 * A fault that keeps coming back with a valid mapping is an access the hardware
 * will never allow whatever the tables say (on RISC-V: the kernel touching a user
 * page outside a user-access window, or executing one), and retrying it would
 * loop forever. The same instruction at the same address, spurious this many
 * times in a row, each within SPURIOUS_WINDOW_NS of the last, is failed instead.
 * A real race or stale TLB entry resolves on the first retry.
 */
#define SPURIOUS_REPEAT_MAX 4
#define SPURIOUS_WINDOW_NS (100 * NSEC_PER_MSEC)

struct spurious_track {
	uintptr_t addr, pc;
	u64 when;
	unsigned repeats;
};
static DEFINE_PER_CPU(struct spurious_track, spurious_track);

static int spurious_check(struct regs *regs, uintptr_t addr, unsigned access)
{
	uintptr_t pc = regs ? regs_pc(regs) : 0;
	u64 now = arch_clock_ns();

	/* Faults run preemptible: stay on this CPU's record while updating it. */
	preempt_disable();
	struct spurious_track *t = this_cpu_ptr(&spurious_track);
	if (t->addr == addr && t->pc == pc && now - t->when < SPURIOUS_WINDOW_NS)
		t->repeats++;
	else
		t->repeats = 1;
	t->addr = addr;
	t->pc = pc;
	t->when = now;
	bool stuck = t->repeats >= SPURIOUS_REPEAT_MAX;
	if (stuck)
		t->repeats = 0;
	preempt_enable();
	if (!stuck)
		return 0;
	fault_report(addr, access, NULL,
		     "keeps faulting with a valid mapping (no user-access window?)");
	return -EFAULT;
}

void fault_forget_spurious(void)
{
	this_cpu(spurious_track).repeats = 0;
}

int handle_page_fault(struct regs *regs, uintptr_t addr, unsigned access)
{
	/* Kernel addresses, and user addresses with no mm to resolve them, are the trap path's. */
	if (addr >= USER_VA_END || !current_mm())
		return -EFAULT;
	int ret = fault_resolve(current_mm(), addr, access);
	if (ret == FAULT_PRESENT)
		return spurious_check(regs, addr, access);
	fault_forget_spurious();
	return ret;
}

void fault_stats_cpu(unsigned cpu, struct fault_stats *out)
{
	pcpu_counters_read_cpu(out, &fault_stats, sizeof(*out), cpu);
}

void fault_stats_sum(struct fault_stats *out)
{
	pcpu_counters_sum(out, &fault_stats, sizeof(*out));
}
