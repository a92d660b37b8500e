// libFuzzer target: the SDK's JSON reader (`JSONReader`, Sources/ContextProviderKit/JSON). What parses must be
// written back (`JSONWriter`) as JSON that parses to an equal value; strict skipping accepts exactly
// what parsing accepts; the request scanner accepts every object the parser reads. See Fuzz/README.md.
//
// Built with `-sanitize=fuzzer -DFUZZING` by `Fuzz/run.sh`; a normal `swift build` makes a replay
// driver (`sdk-json-fuzzer FILE|DIR…`).
import ContextProviderKit
import FuzzSupport

func fuzzOne(_ data: UnsafeRawBufferPointer) {
    SDKFuzzEntry.json(data)
}

@main
enum Main {
    static func main() { FuzzMain.start(fuzzOne) }
}
