// libFuzzer target: the Location provider's file readers. The first byte picks the reader (modulo 6): the
// gazetteer (GeoNames 19-column or compact 9-column TSV, then search and nearest-place lookups on
// what loaded), the same with a minimum population, countryInfo.txt, admin1CodesASCII.txt, a TZif
// zone file, or a POSIX TZ rule; the rest of the input is the file. See Fuzz/README.md.
//
// Built with `-sanitize=fuzzer -DFUZZING` by `Fuzz/run.sh`; a normal `swift build` makes a replay
// driver (`gazetteer-fuzzer FILE|DIR…`).
import LocationProvider
import FuzzSupport

func fuzzOne(_ data: UnsafeRawBufferPointer) {
    guard let selector = data.first else { return }
    let rest = Array(data.dropFirst())
    switch selector % 6 {
    case 0: _ = LocationFuzzEntry.gazetteer(rest)
    case 1: _ = LocationFuzzEntry.gazetteer(rest, minimumPopulation: 1000)
    case 2: _ = LocationFuzzEntry.nameTable(rest, admin1: false)
    case 3: _ = LocationFuzzEntry.nameTable(rest, admin1: true)
    case 4: LocationFuzzEntry.zoneFile(rest)
    default: LocationFuzzEntry.posixRule(String(decoding: rest, as: UTF8.self))
    }
}

@main
enum Main {
    static func main() { FuzzMain.start(fuzzOne) }
}
