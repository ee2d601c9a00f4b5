/* uname()'s record (uapi/linux/utsname.h: struct new_utsname). */
#ifndef GRACE_UAPI_UTSNAME_H
#define GRACE_UAPI_UTSNAME_H

#define UTS_LEN 65 /* each field's bytes, NUL included */

struct utsname {
	char sysname[UTS_LEN], nodename[UTS_LEN], release[UTS_LEN];
	char version[UTS_LEN], machine[UTS_LEN], domainname[UTS_LEN];
};

#endif
