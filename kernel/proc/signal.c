/* Signal names for the console (grace/signal.h). */
#include <grace/signal.h>

static const char *const signal_names[] = {
    [SIGHUP] = "SIGHUP",       [SIGINT] = "SIGINT",	  [SIGQUIT] = "SIGQUIT",
    [SIGILL] = "SIGILL",       [SIGTRAP] = "SIGTRAP",	  [SIGABRT] = "SIGABRT",
    [SIGBUS] = "SIGBUS",       [SIGFPE] = "SIGFPE",	  [SIGKILL] = "SIGKILL",
    [SIGUSR1] = "SIGUSR1",     [SIGSEGV] = "SIGSEGV",	  [SIGUSR2] = "SIGUSR2",
    [SIGPIPE] = "SIGPIPE",     [SIGALRM] = "SIGALRM",	  [SIGTERM] = "SIGTERM",
    [SIGSTKFLT] = "SIGSTKFLT", [SIGCHLD] = "SIGCHLD",	  [SIGCONT] = "SIGCONT",
    [SIGSTOP] = "SIGSTOP",     [SIGTSTP] = "SIGTSTP",	  [SIGTTIN] = "SIGTTIN",
    [SIGTTOU] = "SIGTTOU",     [SIGURG] = "SIGURG",	  [SIGXCPU] = "SIGXCPU",
    [SIGXFSZ] = "SIGXFSZ",     [SIGVTALRM] = "SIGVTALRM", [SIGPROF] = "SIGPROF",
    [SIGWINCH] = "SIGWINCH",   [SIGIO] = "SIGIO",	  [SIGPWR] = "SIGPWR",
    [SIGSYS] = "SIGSYS",
};

const char *signal_name(int sig)
{
	if (sig > 0 && sig < (int)(sizeof(signal_names) / sizeof(signal_names[0])))
		return signal_names[sig];
	return "SIG?";
}
