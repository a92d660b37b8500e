/* The hostile fixture provider exports only context_provider_entry_v1 (context_provider.h). */
#ifndef FIXTURE_HOSTILE_H
#define FIXTURE_HOSTILE_H
#endif
