// libFuzzer target for the Health Metric provider's Apple Health export.xml scanner (input fed in chunks; the first byte picks
// the chunk size and partial reads), compared with one whole read, then the item and its views. See Fuzz/README.md.
//
// Built with `-sanitize=fuzzer -DFUZZING` by `Fuzz/run.sh`; a normal `swift build` makes a replay
// driver (`health-export-fuzzer FILE|DIR…`).
import HealthMetricProvider
import FuzzSupport

func fuzzOne(_ data: UnsafeRawBufferPointer) {
    if let violation = HealthFuzz.export(data) { fatalError("health-export-fuzzer: \(violation)") }
}

@main
enum Main {
    static func main() { FuzzMain.start(fuzzOne) }
}
