// libFuzzer target for the Stock Quote provider's price CSV reader and symbols file reader (the first byte picks which),
// then every range's snapshot, its JSON read back, and the views' text. See Fuzz/README.md.
//
// Built with `-sanitize=fuzzer -DFUZZING` by `Fuzz/run.sh`; a normal `swift build` makes a replay
// driver (`price-csv-fuzzer FILE|DIR…`).
import StockQuoteProvider
import FuzzSupport

func fuzzOne(_ data: UnsafeRawBufferPointer) {
    if let violation = PriceFuzz.run(data) { fatalError("price-csv-fuzzer: \(violation)") }
}

#if FUZZING
@_cdecl("LLVMFuzzerTestOneInput")
public func LLVMFuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    fuzzOne(UnsafeRawBufferPointer(start: data, count: size))
    return 0
}

/// SwiftPM links executables with `main` aliased to `<module>_main`; start libFuzzer from there.
@_cdecl("price_csv_fuzzer_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    FuzzDriver.run(argc, argv) { data, size in LLVMFuzzerTestOneInput(data, size) }
}
#else
@main
enum Replay {
    static func main() {
        let count = FuzzReplay.run(CommandLine.arguments.dropFirst()) { fuzzOne($0) }
        print("price-csv-fuzzer: replayed \(count) inputs without a crash")
    }
}
#endif
