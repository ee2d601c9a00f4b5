/* Names for error numbers, so messages say ENOMEM rather than -12. */
#include <grace/errno.h>

const char *errno_name(int err)
{
	switch (err < 0 ? -err : err) {
	case EPERM:
		return "EPERM";
	case ENOENT:
		return "ENOENT";
	case EIO:
		return "EIO";
	case E2BIG:
		return "E2BIG";
	case EAGAIN:
		return "EAGAIN";
	case ENOMEM:
		return "ENOMEM";
	case EFAULT:
		return "EFAULT";
	case EBUSY:
		return "EBUSY";
	case EEXIST:
		return "EEXIST";
	case ENODEV:
		return "ENODEV";
	case EINVAL:
		return "EINVAL";
	case ENOSPC:
		return "ENOSPC";
	case ERANGE:
		return "ERANGE";
	case ENAMETOOLONG:
		return "ENAMETOOLONG";
	case ENOSYS:
		return "ENOSYS";
	case ENODATA:
		return "ENODATA";
	case EOVERFLOW:
		return "EOVERFLOW";
	case EILSEQ:
		return "EILSEQ";
	case ETIMEDOUT:
		return "ETIMEDOUT";
	default:
		return "E?";
	}
}
