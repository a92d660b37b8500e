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

@main
enum Main {
    static func main() { FuzzMain.start(fuzzOne) }
}
