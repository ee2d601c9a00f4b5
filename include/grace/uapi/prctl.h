/* arch_prctl()'s codes: x86_64's alone (arch/x86/include/uapi/asm/prctl.h). */
#ifndef GRACE_UAPI_PRCTL_H
#define GRACE_UAPI_PRCTL_H

#define ARCH_SET_FS 0x1002

#endif
