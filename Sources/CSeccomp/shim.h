/* libseccomp (apt: libseccomp-dev), used by CHostSupport's worker sandbox (sandbox.c). */
#include <seccomp.h>
