/* Constants shared by C and assembly: _UL(x) is x with a UL suffix in C only. */
#ifndef ASM_CONST_H
#define ASM_CONST_H

#ifdef __ASSEMBLY__
#define _UL(x) x
#else
#define _UL(x) x##UL
#endif

#endif
