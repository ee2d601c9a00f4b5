/*
 * The `rcu` shell command: the grace-period number, the rcu_node tree with the
 * children each node still waits for (qsmask) out of those it has (qsmaskinit),
 * and per CPU the callbacks queued and invoked, the IPIs RCU sent it, and the
 * events it reported (passes through the scheduler, idle entries, ticks). Each
 * node is read under its own lock; the whole is a walk, not a snapshot, like the
 * kernel's own force-quiescent scan.
 */
#include <grace/errno.h>
#include <grace/printk.h>
#include <grace/shell.h>
#include "rcu_internal.h"

static void rcu_show_node(const struct rcu_node *rnp)
{
	struct rcu_node *n = (struct rcu_node *)rnp;
	unsigned long flags = spin_lock_irqsave(&n->lock);
	u64 gp = n->gp_seq;
	unsigned long qsmask = n->qsmask, init = n->qsmaskinit;
	spin_unlock_irqrestore(&n->lock, flags);

	printk("  %*snode %-3ld level %u cpus %u-%u qsmask 0x%lx of 0x%lx gp_seq %llu\n",
	       (int)(2 * rnp->level), "", (long)(rnp - rcu_state.nodes), rnp->level, rnp->grplo,
	       rnp->grphi, qsmask, init, (unsigned long long)gp);
	for (unsigned i = 0; i < rcu_state.nr_nodes; i++)
		if (rcu_state.nodes[i].parent == rnp)
			rcu_show_node(&rcu_state.nodes[i]);
}

SHELL_CMD(rcu, "", "grace periods, the rcu_node tree with each qsmask; callbacks, events per CPU")
{
	unsigned cpu;
	if (argc != 1)
		return SHELL_USAGE;
	if (!READ_ONCE(rcu_ready)) {
		printk("rcu: not started yet\n");
		return -EAGAIN;
	}
	u64 gp = rcu_gp_seq();
	printk("rcu: gp_seq %llu (%llu grace periods completed, %s); %u nodes in %u levels, "
	       "fanout_leaf %u, fanout %u; %llu stall warnings\n",
	       (unsigned long long)gp, (unsigned long long)rcu_gp_completed(),
	       gp & 1 ? "one in progress" : "idle", rcu_state.nr_nodes, rcu_state.nr_levels,
	       rcu_state.fanout_leaf, rcu_state.fanout, (unsigned long long)rcu_stall_warnings());
	rcu_show_node(&rcu_state.nodes[0]);
	printk("  %-5s %10s %12s %10s %10s %10s %10s %8s %10s\n", "cpu", "queued", "invoked",
	       "fqs_ipis", "cb_ipis", "exp_ipis", "ctxsw", "idle", "ticks");
	for_each_online_cpu(cpu) {
		struct rcu_cpu_stats s;
		rcu_cpu_stats(cpu, &s);
		printk("  cpu%-2u %10llu %12llu %10llu %10llu %10llu %10llu %8llu %10llu\n", cpu,
		       (unsigned long long)s.qlen, (unsigned long long)s.invoked,
		       (unsigned long long)s.fqs_ipis, (unsigned long long)s.cb_ipis,
		       (unsigned long long)s.exp_ipis, (unsigned long long)s.ctxsw,
		       (unsigned long long)s.idle_enters, (unsigned long long)s.ticks);
	}
	return 0;
}
