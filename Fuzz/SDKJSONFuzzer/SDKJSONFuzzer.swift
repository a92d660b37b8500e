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

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzOne(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// SwiftPM links executables with `main` aliased to `<module>_main`; start libFuzzer from there.
@_cdecl("sdk_json_fuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzDriver.run(argc, argv) { data, size in LLVMFuzzerTestOneInput(data, size) }
}
#else
@main
enum Replay {
    static func main() {
        let count = FuzzReplay.run(CommandLine.arguments.dropFirst()) { fuzzOne($0) }
        print("sdk-json-fuzzer: replayed \(count) inputs without a crash")
    }
}
#endif
