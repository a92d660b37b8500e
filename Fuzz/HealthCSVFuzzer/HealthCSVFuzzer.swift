// libFuzzer target for the Health Metric provider's CSV reader (input fed in chunks; the first byte picks the chunk size),
// compared with one whole read, then the item and its views. See Fuzz/README.md.
//
// Built with `-sanitize=fuzzer -DFUZZING` by `Fuzz/run.sh`; a normal `swift build` makes a replay
// driver (`health-csv-fuzzer FILE|DIR…`).
import HealthMetricProvider
import FuzzSupport

func fuzzOne(_ data: UnsafeRawBufferPointer) {
    if let violation = HealthFuzz.csv(data) { fatalError("health-csv-fuzzer: \(violation)") }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzOne(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// SwiftPM links executables with `main` aliased to `<module>_main`; start libFuzzer from there.
@_cdecl("health_csv_fuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzDriver.run(argc, argv) { data, size in LLVMFuzzerTestOneInput(data, size) }
}
#else
@main
enum Replay {
    static func main() {
        let count = FuzzReplay.run(CommandLine.arguments.dropFirst()) { fuzzOne($0) }
        print("health-csv-fuzzer: replayed \(count) inputs without a crash")
    }
}
#endif
