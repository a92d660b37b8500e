// libFuzzer target: the Location provider's coordinate parser (decimal, hemisphere letters, DMS, geo: URIs)
// and its reading of item content. The whole input is parsed as a coordinate: a parsed point must be
// finite and within ±90/±180, and its geo: URI must parse again to a point within 1e-6°. When the
// input is JSON, it is also read as a location item's content (a forged item) and every label the
// views make from it is made. See Fuzz/README.md.
//
// Built with `-sanitize=fuzzer -DFUZZING` by `Fuzz/run.sh`; a normal `swift build` makes a replay
// driver (`coordinate-fuzzer FILE|DIR…`).
import ContextProviderKit
import LocationProvider
import FuzzSupport

func fuzzOne(_ data: UnsafeRawBufferPointer) {
    let text = String(decoding: data, as: UTF8.self)
    if let point = LocationFuzzEntry.coordinate(text) {
        guard point.latitude.isFinite, point.longitude.isFinite, (-90...90).contains(point.latitude),
            (-180...180).contains(point.longitude)
        else { fatalError("parsed \(text.debugDescription) to \(point.latitude), \(point.longitude)") }
        guard let again = LocationFuzzEntry.coordinate(point.geoURI) else { fatalError("\(point.geoURI) does not parse again") }
        let sameLongitude = abs(again.longitude - point.longitude) <= 1e-6 || abs(point.latitude) == 90
        guard abs(again.latitude - point.latitude) <= 1e-6, sameLongitude else {
            fatalError("\(point.geoURI) parses to \(again.latitude), \(again.longitude), not \(point.latitude), \(point.longitude)")
        }
        _ = LocationFuzzEntry.coordinate(point.dms)
    }
    if let content = try? JSONValue(parsing: data) {
        _ = LocationFuzzEntry.itemContent(content)
    }
}

@main
enum Main {
    static func main() { FuzzMain.start(fuzzOne) }
}
