/* The kernel command line (boot_info.cmdline), parsed once at boot. */
#ifndef GRACE_CMDLINE_H
#define GRACE_CMDLINE_H

void cmdline_parse(const char *cmdline);
/* The value of key=value, "" for a bare `key`, NULL when absent. */
const char *cmdline_get(const char *key);

#endif
