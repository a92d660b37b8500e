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

@main
enum Main {
    static func main() { FuzzMain.start(fuzzOne) }
}
