#!/usr/bin/env bash
# Regenerates Sources/context-host/New/EmbeddedHeaders.swift from the C headers the C scaffold
# vendors (context_provider.h and ctxp_json.h). ScaffoldTests fails when they drift apart.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 - <<'PY'
h = open('Sources/CContextProvider/include/context_provider.h').read()
j = open('Providers/DeviceInfo/ctxp_json.h').read()
for text in (h, j):
    assert '"""#' not in text and '\\#' not in text, 'a header contains a raw-string delimiter'
out = '''// The C headers the C scaffold vendors, embedded so the `context-host` binary is self-contained.
// Kept byte for byte in sync with Sources/CContextProvider/include/context_provider.h and
// Providers/DeviceInfo/ctxp_json.h by ScaffoldTests ("embedded headers match their sources");
// regenerate with scripts/embed-scaffold-headers.sh after changing either file.

extension ScaffoldTemplates {
    /// `context_provider.h`, the ABI header.
    static let contextProviderHeader = #"""
''' + h + '''
"""#

    /// `ctxp_json.h`, the small JSON reader/writer C providers may copy.
    static let jsonHelperHeader = #"""
''' + j + '''
"""#
}
'''
open('Sources/context-host/New/EmbeddedHeaders.swift', 'w').write(out)
PY
