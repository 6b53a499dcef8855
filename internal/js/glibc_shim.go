//go:build linux && cgo

package js

// The prebuilt V8 archive of tommie/v8go was compiled against glibc 2.38,
// whose headers redirect strtol, sscanf and friends to the C23 variants
// __isoc23_*. Older glibc (Debian 12 has 2.36) lacks those symbols, so the
// link fails. The C23 variants differ only in accepting a "0b" prefix,
// which V8 never relies on, so forwarding to the classic functions is
// safe. On a newer glibc the executable's definitions simply take
// precedence over the shared library's.

/*
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

long __isoc23_strtol(const char *s, char **end, int base) { return strtol(s, end, base); }
long long __isoc23_strtoll(const char *s, char **end, int base) { return strtoll(s, end, base); }
unsigned long __isoc23_strtoul(const char *s, char **end, int base) { return strtoul(s, end, base); }
unsigned long long __isoc23_strtoull(const char *s, char **end, int base) { return strtoull(s, end, base); }

int __isoc23_sscanf(const char *s, const char *format, ...) {
	va_list ap;
	va_start(ap, format);
	int n = vsscanf(s, format, ap);
	va_end(ap);
	return n;
}

int __isoc23_fscanf(FILE *f, const char *format, ...) {
	va_list ap;
	va_start(ap, format);
	int n = vfscanf(f, format, ap);
	va_end(ap);
	return n;
}
*/
import "C"
