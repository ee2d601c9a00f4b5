/*
 * Paravirtual ticket-lock waits: under a hypervisor or an emulator a waiter that has
 * spun SPIN_PV_THRESHOLD loops halts its CPU, and the unlocker kicks the CPU whose
 * ticket is next. With 64 vCPUs on 2 host cores, a waiter spinning behind a vCPU the
 * host has descheduled burns the host time the holder needs; halted, it gives that
 * time away. The design is Linux 3.12's paravirtual ticket locks (KVM's
 * kvm_lock_spinning() and kvm_unlock_kick()), with the kick an NMI or IPI instead
 * of a hypercall (include/grace/arch.h: arch_spin_halt(), arch_spin_kick()).
 *
 * The wait table. A waiting CPU publishes (lock, ticket) in its per-CPU record,
 * sets its bit in the slot of spin_pv_table that the lock's address hashes to, and
 * sets SPIN_OWNER_HALTED in the lock's owner. An unlocker that has just made owner
 * = t, and found that bit in the owner it replaced, reads that slot's mask and, for
 * each CPU in it, the record; the one whose record says (lock, t) is kicked. Only
 * that one: the others wait for later tickets and are kicked in their turn. An
 * unlock that finds no bit reads nothing here, so the table's lines stay with the
 * CPUs that wait (Linux 4.0's TICKET_SLOWPATH_FLAG in the head; 3.12 kept it in
 * the tail and read it after the release, which could touch a freed lock). The
 * next holder that waited clears the bit when no ticket is out behind its own
 * (spin_owner_clear_halted()). A CPU waits for one lock at a time: its record is
 * live only with interrupts off, from publication to withdrawal, so no interrupt
 * handler on it can start a second wait.
 *
 * No kick is lost, and there is no timeout. The waiter publishes, sets the bit by
 * an atomic step on owner, and then reads owner; the unlocker releases by an
 * atomic step on owner that returns the bit. Both steps are full barriers on the
 * same word, so one comes first: the unlocker's, and the waiter then reads its
 * ticket served and does not halt; or the waiter's, and the unlocker sees the bit,
 * and with it the record published before, and kicks (a spurious kick only makes
 * a waiter look again). A kick that arrives after the waiter's last look but before it halts is
 * kept by the arch until the halt: the pending level of sip.SSIP on riscv64, a
 * flag the NMI sets and a restartable test-and-hlt on x86_64. A spurious or early
 * wake-up finds the lock not yet ours and halts again, still published; the
 * waiter's stores before each look are ordered by a barrier each round. Correctness
 * rests on these pairings alone: a waiter halted on x86_64 wakes for nothing but an
 * NMI, so a lost kick would hang it, and the mutant tests/mutants/pv_no_kick.patch
 * shows the selftests notice.
 *
 * The unlocker must not touch the lock after its release: the next holder may
 * free it. spin_unlock_kick() uses the address as a key only.
 *
 * Turning pv waits off while CPUs wait (spin_pv_set(false)) clears spinlock_pv
 * first and spinlock_pv_kick last, after kicking every CPU still in the table until
 * the table is empty; turning them on sets spinlock_pv_kick first and spinlock_pv
 * after every CPU has passed a barrier. An unlock that found kicks off releases
 * with a plain store, which a waiter's bit does not survive, and looks at the
 * kick flag again after it: still off, its release was visible before that
 * barrier, so before any waiter could halt; on, it reads the table as if it had
 * seen the bit (smp_mb() between, pairing with the waiter's fetch_or).
 *
 * Lock order: nothing here takes a lock; spin_unlock_kick() runs inside unlocks.
 */
#include <grace/arch.h>
#include <grace/cmdline.h>
#include <grace/hash.h>
#include <grace/percpu_counter.h>
#include <grace/printk.h>
#include <grace/smp.h>
#include <grace/spinlock.h>
#include <grace/string.h>
#include <asm/cpu.h>
#include <asm/irq.h>

#include "spinlock_internal.h"

bool spinlock_pv;
bool spinlock_pv_kick;

/* Written only by its CPU, with interrupts off; read by unlockers anywhere. */
struct spin_pv_waiter {
	const spinlock_t *lock; /* the lock this CPU waits for, NULL when none */
	u32 ticket;		/* and its ticket there */
};

/* The CPUs whose record names a lock of this slot; each sets and clears its own bit. */
struct spin_pv_slot {
	struct cpumask waiting;
} __cacheline_aligned;

static struct spin_pv_slot spin_pv_table[SPIN_PV_SLOTS];
static DEFINE_PER_CPU_ALIGNED(struct spin_pv_waiter, spin_pv_waiter);
/*
 * Each CPU's own counts, bumped with interrupts off inside the lock paths (a plain
 * WRITE_ONCE suffices there, and pcpu_counter_add()'s preemption toggle has no
 * place in them); read as per-CPU counters (grace/percpu_counter.h).
 */
static DEFINE_PER_CPU(struct spin_pv_stats, spin_pv_stats);
static const char *boot_reason = "";

/*
 * Loops between two rounds of kicks while turning pv waits off: a kicked vCPU may
 * need a host time slice before it runs and leaves the table.
 */
#define SPIN_PV_SWEEP_LOOPS 10000

unsigned spin_pv_slot(const spinlock_t *lock)
{
	/* The backoff table's hash (spin_delay_slot()), with more bits. */
	return hash_32((u32)(uintptr_t)lock, SPIN_PV_HASH_SHIFT);
}

bool spin_pv_wait(spinlock_t *lock, u32 ticket)
{
	if (!READ_ONCE(spinlock_pv))
		return false;

	/* Preemption is off (spin_lock disabled it); interrupts go off for the record's life. */
	unsigned long flags = arch_irq_save();
	unsigned cpu = smp_processor_id();
	struct spin_pv_waiter *w = this_cpu_ptr(&spin_pv_waiter);
	struct spin_pv_stats *st = this_cpu_ptr(&spin_pv_stats);
	struct cpumask *waiting = &spin_pv_table[spin_pv_slot(lock)].waiting;
	bool mine = false, halted = false;

	WRITE_ONCE(st->waits, st->waits + 1);
	WRITE_ONCE(w->lock, lock);
	WRITE_ONCE(w->ticket, ticket);
	cpumask_set_cpu(waiting, cpu);
	for (;;) {
		arch_spin_halt_prepare();
		/*
		 * Our record and bit, then the owner's bit, then owner. Pairs with the
		 * release in spin_release_owner(): it sees the bit (and our record), or we
		 * see our ticket served. A full barrier: pairs with the smp_mb() in
		 * spin_pv_set(false) too, which sees us and kicks, or we see spinlock_pv
		 * off and do not halt.
		 */
		fetch_or(&lock->owner, SPIN_OWNER_HALTED);
		/* Acquire: this may be the load that takes the lock. Pairs with spin_unlock(). */
		if (spin_owner_ticket(smp_load_acquire(&lock->owner)) == ticket) {
			mine = true;
			break;
		}
		if (!READ_ONCE(spinlock_pv))
			break;
		WRITE_ONCE(st->halts, st->halts + 1);
		halted = true;
		arch_spin_halt();
	}
	if (halted && mine)
		WRITE_ONCE(st->wakes, st->wakes + 1);
	/* A stale bit or record costs an unlocker a look, or a waiter a spurious kick. */
	cpumask_clear_cpu(waiting, cpu);
	WRITE_ONCE(w->lock, NULL);
	arch_spin_halt_end();
	arch_irq_restore(flags);
	return mine;
}

void spin_unlock_kick(const spinlock_t *lock, u32 ticket)
{
	const struct cpumask *waiting = &spin_pv_table[spin_pv_slot(lock)].waiting;
	struct spin_pv_stats *st;
	unsigned cpu;

	/* Interrupts off: an interrupt's unlock on this CPU may count too. */
	unsigned long flags = arch_irq_save();
	st = this_cpu_ptr(&spin_pv_stats);
	WRITE_ONCE(st->looks, st->looks + 1);
	arch_irq_restore(flags);
	/* Our release and a full barrier came first: the records are in view. */
	if (cpumask_empty(waiting))
		return;
	for_each_cpu(cpu, waiting) {
		const struct spin_pv_waiter *w = &per_cpu(spin_pv_waiter, cpu);
		if (READ_ONCE(w->lock) != lock || READ_ONCE(w->ticket) != ticket)
			continue;
		flags = arch_irq_save();
		st = this_cpu_ptr(&spin_pv_stats);
		WRITE_ONCE(st->kicks, st->kicks + 1);
		arch_irq_restore(flags);
		arch_spin_kick(cpu);
		return; /* one CPU holds a ticket */
	}
}

static void spin_pv_barrier(void *arg)
{
	(void)arg;
	/* Pairs with the smp_mb() in spin_pv_set(true), through the cross-call's wait. */
	smp_mb();
}

void spin_pv_set(bool on)
{
	if (on) {
		if (READ_ONCE(spinlock_pv))
			return;
		WRITE_ONCE(spinlock_pv_kick, true);
		smp_mb();
		/*
		 * Every other CPU runs a barrier after it can see the kick flag: an unlock
		 * there that still read it clear made its release before that barrier, and
		 * so before any waiter can read spinlock_pv set and halt.
		 */
		smp_call_others(spin_pv_barrier, NULL, true);
		smp_mb();
		WRITE_ONCE(spinlock_pv, true);
		return;
	}
	if (!READ_ONCE(spinlock_pv_kick))
		return;
	WRITE_ONCE(spinlock_pv, false);
	/* Pairs with the smp_mb() in spin_pv_wait(): we see the waiter, or it sees pv off. */
	smp_mb();
	for (;;) {
		unsigned long left[CPUMASK_WORDS] = {0};
		bool any = false;
		unsigned cpu;
		for (unsigned i = 0; i < SPIN_PV_SLOTS; i++)
			for (unsigned j = 0; j < CPUMASK_WORDS; j++)
				left[j] |= READ_ONCE(spin_pv_table[i].waiting.bits[j]);
		for (cpu = 0; cpu < MAX_CPUS; cpu++)
			if (left[cpu / BITS_PER_LONG] & (1UL << (cpu % BITS_PER_LONG))) {
				any = true;
				arch_spin_kick(cpu);
			}
		if (!any)
			break;
		for (int i = 0; i < SPIN_PV_SWEEP_LOOPS; i++)
			cpu_relax();
	}
	WRITE_ONCE(spinlock_pv_kick, false);
}

void spin_pv_init(const char *arg)
{
	const char *why;
	bool virt = arch_is_virtual(&why);
	bool on = virt;
	static char reason[128];

	if (arg && !strcmp(arg, "on")) {
		on = true;
		snprintf(reason, sizeof(reason), "spinlock_pv=on; %s", why);
	} else if (arg && !strcmp(arg, "off")) {
		on = false;
		snprintf(reason, sizeof(reason), "spinlock_pv=off; %s", why);
	} else {
		if (arg)
			pr_warn(
			    "spinlock: unknown spinlock_pv=%s (on|off); following the machine\n",
			    arg);
		snprintf(reason, sizeof(reason), "%s: %s", virt ? "virtual" : "hardware", why);
	}
	boot_reason = reason;
	/* Before any other CPU runs: no unlock or wait can be in flight. */
	spinlock_pv_kick = on;
	spinlock_pv = on;
	printk("spinlock: paravirtual waits %s (%s)\n", on ? "on" : "off", reason);
}

const char *spin_pv_boot_reason(void)
{
	return boot_reason;
}

void spin_pv_stats_of_cpu(unsigned cpu, struct spin_pv_stats *out)
{
	pcpu_counters_read_cpu(out, &spin_pv_stats, sizeof(*out), cpu);
}

void spin_pv_stats_sum(struct spin_pv_stats *out)
{
	pcpu_counters_sum(out, &spin_pv_stats, sizeof(*out));
}

const spinlock_t *spin_pv_waiting_on(unsigned cpu)
{
	return READ_ONCE(per_cpu(spin_pv_waiter, cpu).lock);
}
