import ContextProviderKit
import ProviderSupport

/// What the fuzz targets (`Fuzz/GazetteerFuzzer`, `Fuzz/CoordinateFuzzer`) call: the readers of
/// this provider on bytes, with no files involved. `package`, not public: nothing outside this
/// package sees it, and the provider's ABI is unchanged.
package enum LocationFuzzEntry {
    /// Reads `bytes` as a gazetteer file; on success searches it for its first place's name (and
    /// a two-letter prefix of it) and finds the places nearest to that place and to the poles.
    /// Answers the number of places, or nil when the file holds none.
    package static func gazetteer(_ bytes: [UInt8], minimumPopulation: Int = 0) -> Int? {
        let gazetteer: Gazetteer
        do {
            gazetteer = try Gazetteer(bytes: bytes, path: "fuzz.tsv", minimumPopulation: minimumPopulation)
        } catch {
            precondition(!error.message.isEmpty, "a gazetteer refused without a reason")
            return nil
        }
        precondition(gazetteer.count > 0)
        precondition(gazetteer.diagnostics.count <= Gazetteer.maximumDiagnostics)
        for line in gazetteer.diagnostics {
            // Quoted fields are cut, so a message stays short whatever the row.
            precondition(line.utf8.count < 600, "a diagnostic of \(line.utf8.count) bytes")
        }
        let name = gazetteer.names[0]
        for query in [name, String(name.prefix(2)), "a"] {
            let (results, total) = gazetteer.search.search(
                query, offset: 0, limit: 10, populations: gazetteer.populations, names: gazetteer.names)
            precondition(results.count <= min(10, total))
            for result in results { _ = LocationProvider.optionDetail(gazetteer, result.place) }
        }
        for (latitude, longitude) in [(gazetteer.latitudes[0], gazetteer.longitudes[0]), (90, 0), (-90, 180), (0, -180)] {
            let nearest = gazetteer.nearest(to: latitude, longitude, count: 6)
            precondition(!nearest.isEmpty && nearest.count <= 6)
            for (index, kilometres) in nearest {
                precondition(kilometres.isFinite && kilometres >= 0 && kilometres <= LocationContent.maximumDistanceKilometres)
                _ = LocationProvider.placeLabel(gazetteer, index)
            }
            let content = LocationContent(point: Coordinate(latitude: latitude, longitude: longitude), source: .coordinates, gazetteer: gazetteer)
            _ = content.json.jsonBytes
            _ = content.displayName
        }
        _ = GazetteerStore.summary(gazetteer)
        return gazetteer.count
    }

    /// Reads `bytes` as `countryInfo.txt` (or, with `admin1`, `admin1CodesASCII.txt`).
    package static func nameTable(_ bytes: [UInt8], admin1: Bool) -> Int {
        var diagnostics: [String] = []
        let table = admin1
            ? NameTables.admin1(bytes: bytes, path: "fuzz.txt", diagnostics: &diagnostics)
            : NameTables.countries(bytes: bytes, path: "fuzz.txt", diagnostics: &diagnostics)
        precondition(diagnostics.count <= Gazetteer.maximumDiagnostics)
        return table.count
    }

    /// Reads `bytes` as a TZif zone file and asks its offset at a few instants.
    package static func zoneFile(_ bytes: [UInt8]) {
        guard let zone = try? TZifFile(bytes: bytes, name: "Fuzz/Zone") else { return }
        for time: Int64 in [-2_000_000_000, 0, 1_700_000_000, 4_000_000_000] { _ = zone.offset(at: time).label }
    }

    /// Reads `text` as a POSIX TZ rule and asks its offset at a few instants.
    package static func posixRule(_ text: String) {
        guard let rule = PosixTZ(text) else { return }
        for time: Int64 in [-2_000_000_000, 0, 1_700_000_000, 4_000_000_000] { _ = rule.offset(at: time).label }
    }

    /// Parses a coordinate; nil when the text is refused (the message must not be empty).
    package static func coordinate(_ text: String) -> (latitude: Double, longitude: Double, geoURI: String, dms: String)? {
        do {
            let point = try CoordinateParser.parse(text)
            return (point.latitude, point.longitude, Geo.geoURI(point), Geo.dms(point))
        } catch {
            precondition(!error.message.isEmpty, "a coordinate refused without a reason")
            precondition(error.message.utf8.count < 1000, "a coordinate message of \(error.message.utf8.count) bytes")
            return nil
        }
    }

    /// Reads `content` as a location item's content (a forged item) and makes every text the
    /// views make from it: the display name, the chip's and detail's labels, the `geo:` URI.
    /// Answers whether it was accepted.
    package static func itemContent(_ content: JSONValue) -> Bool {
        let item = ContextItem(id: "fuzz", providerId: LocationProvider.metadata.id, type: "location", displayName: "Fuzz", content: content)
        guard let location = try? LocationContent(item) else { return false }
        let point = location.point
        precondition((-90...90).contains(point.latitude) && (-180...180).contains(point.longitude))
        _ = location.displayName
        _ = location.title
        _ = location.markerTitle
        _ = location.areaLabel
        _ = location.zoom
        _ = Geo.decimal(point)
        _ = Geo.dms(point)
        _ = Geo.geoURI(point)
        if let distance = location.distanceKilometres { _ = Geo.distanceLabel(distance) }
        if let place = location.placePoint {
            _ = Geo.compass(from: place, to: point)
            _ = Geo.distance(place, point)
        }
        if let population = location.population { _ = Geo.grouped(population) }
        _ = location.json.jsonBytes
        return true
    }
}
