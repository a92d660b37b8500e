// A provider built against a future ABI version the host does not know: the host must refuse it
// with a message naming both versions.
#include <stddef.h>
#include <stdint.h>

struct future_table {
    uint32_t abi_version;
    uint32_t struct_size;
    void *open;
    void *call;
    void *close;
};

static const struct future_table table = {99u, sizeof(struct future_table), NULL, NULL, NULL};

const struct future_table *context_provider_entry_v1(void) { return &table; }
