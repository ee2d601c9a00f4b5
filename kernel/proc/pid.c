/*
 * Pids and thread ids: one counter for both, as on Linux (a process's pid is
 * its first thread's tid), and two hash tables that find a process by pid and
 * a thread by tid under RCU, so that kill, tgkill and the calls that name a
 * process by pid take no global lock to find it.
 *
 * Numbers count up from 1 and are not reused while the kernel runs: 2^31
 * threads is far beyond a test run. An entry is hashed once its struct is
 * ready and unhashed before the struct is freed, which waits a grace period
 * (kfree_rcu): a reader that found it under rcu_read_lock() may still take its
 * locks and then check whether it is still alive.
 */
#include <grace/hash.h>
#include <grace/process.h>
#include <grace/rculist.h>
#include <grace/spinlock.h>
#include "proc_internal.h"

#define PID_HASH_BITS 8

static DEFINE_SPINLOCK(pid_lock); /* the counter and every bucket's writers */
static int next_pid = 1;
static struct hlist_head process_hash[1 << PID_HASH_BITS];
static struct hlist_head thread_hash[1 << PID_HASH_BITS];

int pid_alloc(void)
{
	spin_lock(&pid_lock);
	int pid = next_pid++;
	spin_unlock(&pid_lock);
	return pid;
}

void pid_hash_process(struct process *p)
{
	spin_lock(&pid_lock);
	hlist_add_head_rcu(&p->pid_node, &process_hash[hash_32(p->pid, PID_HASH_BITS)]);
	spin_unlock(&pid_lock);
}

void pid_unhash_process(struct process *p)
{
	spin_lock(&pid_lock);
	if (!hlist_unhashed(&p->pid_node))
		hlist_del_init_rcu(&p->pid_node);
	spin_unlock(&pid_lock);
}

void pid_hash_thread(struct thread *t)
{
	spin_lock(&pid_lock);
	hlist_add_head_rcu(&t->tid_node, &thread_hash[hash_32(t->tid, PID_HASH_BITS)]);
	spin_unlock(&pid_lock);
}

void pid_unhash_thread(struct thread *t)
{
	spin_lock(&pid_lock);
	if (!hlist_unhashed(&t->tid_node))
		hlist_del_init_rcu(&t->tid_node);
	spin_unlock(&pid_lock);
}

struct process *pid_find_process(int pid)
{
	struct process *p;
	if (pid <= 0)
		return NULL;
	hlist_for_each_entry_rcu(p, &process_hash[hash_32(pid, PID_HASH_BITS)], pid_node)
		if (p->pid == pid)
			return p;
	return NULL;
}

struct thread *pid_find_thread(int tid)
{
	struct thread *t;
	if (tid <= 0)
		return NULL;
	hlist_for_each_entry_rcu(t, &thread_hash[hash_32(tid, PID_HASH_BITS)], tid_node)
		if (READ_ONCE(t->tid) == tid)
			return t;
	return NULL;
}
