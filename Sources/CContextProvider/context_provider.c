// The C ABI is header-only; this file gives the target a translation unit.
#include "context_provider.h"
