import ProviderSupport
import ContextProviderKit
import Synchronization

/// The Location provider: places from an offline GeoNames gazetteer, found by name (prefix and
/// diacritic-insensitive search) or by coordinates in the common notations, and "current
/// location" from settings.
///
/// Items have type `location`; see `LocationContent` for the content and
/// `docs/providers/location.md` for every shape.
public struct LocationProvider: ContextProvider {
    public static let metadata = ProviderMetadata(
        id: "com.contexthost.location", title: "Location", version: "1.0.0", iconName: "mappin.and.ellipse")

    /// Chips, descriptions and encodings are computed from the item alone: run them inline.
    /// (`item/detail` reads the gazetteer and a zone file, so it runs in a task.)
    public static var immediateMethods: ProviderMethods { [.preview, .describe, .encode] }

    /// The error code for "cannot do this now" (current location not configured, no gazetteer).
    /// Application-defined error code for "current location is not available" (outside the
    /// JSON-RPC and host ranges, so a client never mistakes it for the host's -32011).
    static let unavailableCode = 1001
    /// The most search results on one page.
    static let maximumPageSize = 50
    /// The number of nearby places listed in the detail view.
    static let nearbyCount = 5
    /// The most results any search reaches, over all its pages (pages past it are empty): a
    /// page number is a client's, and page 2^53 must not become a 2^53-place answer, nor page
    /// 10,000 a ranking of every match.
    static let maximumSearchResults = 1000

    let context: ProviderContext
    let store: GazetteerStore
    let pageSize: Int
    let currentLocation: CurrentLocationSource?

    /// Reads the settings; the gazetteer itself is loaded on first use.
    public init(context: ProviderContext) throws {
        self.context = context
        let settings = context.settings
        guard let gazetteer = settings.path("gazetteer"), !gazetteer.isEmpty else {
            throw ProviderError(
                "The Location provider needs a `gazetteer` setting",
                hint: "Set gazetteer to a GeoNames cities*.txt file or to data/location/cities15000.tsv.")
        }
        let minimumPopulation = settings.int("minimumPopulation") ?? 0
        guard minimumPopulation >= 0 else {
            throw ProviderError("Setting minimumPopulation must not be negative (got \(minimumPopulation))", hint: "Use 0 to keep every place.")
        }
        let pageSize = settings.int("searchPageSize") ?? 10
        guard (1...Self.maximumPageSize).contains(pageSize) else {
            throw ProviderError("Setting searchPageSize must be from 1 to \(Self.maximumPageSize) (got \(pageSize))", hint: "The default is 10.")
        }
        self.pageSize = pageSize
        store = GazetteerStore(
            path: gazetteer, countryInfo: settings.path("countryInfo"), admin1Codes: settings.path("admin1Codes"),
            minimumPopulation: minimumPopulation)
        currentLocation = CurrentLocationSource(settings: settings)
    }

    // MARK: Availability

    /// Unavailable when the gazetteer file is missing or holds no valid place; once loaded, the
    /// reason also reports skipped malformed rows.
    public func availability() async throws -> Availability {
        if let loaded = store.loadedResult {
            switch loaded {
            case .failure(let error): return .unavailable(error.message)
            case .success(let gazetteer):
                guard gazetteer.skippedRows > 0 || !gazetteer.diagnostics.isEmpty else { return .available }
                return Availability(available: true, reason: GazetteerStore.summary(gazetteer))
            }
        }
        // Not loaded yet: a cheap check, so `initialize` stays fast.
        if FileIO.info(store.path) == nil {
            return .unavailable("Gazetteer \(store.path): file not found. Set the `gazetteer` setting to a GeoNames cities*.txt or allCountries.txt file, or restore data/location/cities15000.tsv.")
        }
        return .available
    }

    // MARK: Collector

    static let form = ContextForm(
        stepId: "location", title: "Location", submitLabel: "Attach",
        fields: [
            .choice(
                id: "place", label: "Place", search: ChoiceSearch(minQueryLength: 2),
                placeholder: "Search places, e.g. Zürich or sao paulo",
                help: "Accents and case do not matter; the biggest matches come first."),
            .text(
                id: "coordinates", label: "Coordinates", maxLength: 100, placeholder: "47.37, 8.54",
                help: "Or enter latitude and longitude: 47.37, 8.54 · 47.37N 8.54E · 47°22'12\"N 8°32'24\"E"),
        ],
        fallbackText: "Location: search a place by name, or enter coordinates such as 47.37, 8.54 or 47°22'12\"N 8°32'24\"E.")

    public func startCollection(sessionId: String) async throws -> ContextForm {
        store.warmUp()
        return Self.form
    }

    /// Places for the `place` field: `query` matched against names (prefix, accents ignored),
    /// best match first, then by population; or, when `query` is a coordinate, the nearest places.
    /// `values.placePage` (1-based) picks the page.
    public func query(_ query: String, fieldId: String, stepId: String, sessionId: String, values: FormValues)
        async throws -> [FormOption]
    {
        guard fieldId == "place" else { return [] }
        var page = 1
        if let requested = values["placePage"] {
            guard let number = requested.intValue, number >= 1 else {
                throw ProviderError.invalidParams("params.values.placePage: expected a whole number ≥ 1, got \(Quote.prefix(requested.jsonString))")
            }
            page = number
        }
        // Pages past the first `maximumSearchResults` results are empty (checked before any
        // multiplication: `page` may be as large as 2^53).
        guard page <= Self.maximumSearchResults / pageSize + 1 else { return [] }
        let offset = (page - 1) * pageSize
        let limit = min(pageSize, Self.maximumSearchResults - offset)
        guard limit > 0 else { return [] }
        let gazetteer = try store.gazetteer()
        // Coordinates typed into the search field: the nearest places, nearest first.
        if query.contains(where: \.isNumber), let point = try? CoordinateParser.parse(query) {
            let nearest = gazetteer.nearest(to: point.latitude, point.longitude, count: offset + limit)
            return nearest.dropFirst(offset).map { index, kilometres in
                let there = Coordinate(latitude: gazetteer.latitudes[index], longitude: gazetteer.longitudes[index])
                return FormOption(
                    value: String(gazetteer.ids[index]), label: gazetteer.names[index],
                    detail: "\(Geo.distanceLabel(kilometres)) \(Geo.compass(from: point, to: there)) · \(Self.optionDetail(gazetteer, index))")
            }
        }
        let (results, _) = gazetteer.search.search(
            query, offset: offset, limit: limit, populations: gazetteer.populations,
            names: gazetteer.names)
        return results.map { result in
            FormOption(
                value: String(gazetteer.ids[result.place]), label: gazetteer.names[result.place],
                detail: Self.optionDetail(gazetteer, result.place))
        }
    }

    public func submit(stepId: String, values: FormValues, sessionId: String) async throws -> SubmitOutcome {
        guard stepId == Self.form.stepId else {
            throw ProviderError.invalidParams("params.stepId: unknown step \(Quote.short(stepId)); expected location")
        }
        let place = values.string("place")?.trimmingWhitespace() ?? ""
        let coordinates = values.string("coordinates")?.trimmingWhitespace() ?? ""
        switch (place.isEmpty, coordinates.isEmpty) {
        case (true, true):
            return .invalid(
                fieldErrors: ["place": "Choose a place or enter coordinates."],
                formError: "Choose a place or enter coordinates.")
        case (false, false):
            return .invalid(
                fieldErrors: ["coordinates": "Clear the coordinates to attach the chosen place, or clear the place."],
                formError: "Choose a place or enter coordinates, not both.")
        case (false, true):
            let gazetteer = try store.gazetteer()
            guard let id = Int64(place), let index = gazetteer.index(ofID: id) else {
                return .invalid(fieldErrors: ["place": "Place \(Quote.short(place)) is not in the gazetteer; search again and pick a result."])
            }
            let content = LocationContent(place: index, in: gazetteer)
            return .item(context.makeItem(type: "location", displayName: content.displayName, content: content.json))
        case (true, false):
            let point: Coordinate
            do {
                point = try CoordinateParser.parse(coordinates)
            } catch {
                return .invalid(fieldErrors: ["coordinates": "Coordinates: \(error.message)"])
            }
            let content = LocationContent(point: point, source: .coordinates, gazetteer: try? store.gazetteer())
            return .item(context.makeItem(type: "location", displayName: content.displayName, content: content.json))
        }
    }

    /// "Current location" from the settings; throws `unavailableCode` (1001) with a reason when none is set or it
    /// cannot be read.
    public func makeContext() async throws -> ContextItem? {
        guard let currentLocation else {
            let message = "no current location is configured"
            throw ProviderError(
                code: Self.unavailableCode,
                message: "Current location is unavailable: \(message). Set currentLocation (e.g. \"47.37, 8.54\"), currentLocationFile or currentLocationCommand in the host configuration.",
                data: ["reason": ["code": "not-configured", "message": .string(message)]])
        }
        let point = try currentLocation.read()
        let content = LocationContent(point: point, source: .current, gazetteer: try? store.gazetteer())
        return context.makeItem(type: "location", displayName: content.displayName, content: content.json)
    }

    // MARK: Views

    public func preview(_ item: ContextItem) async throws -> ContextChip {
        let location = try LocationContent(item)
        let area = location.areaLabel
        switch location.source {
        case .search:
            let title = location.placeName ?? Geo.decimal(location.point)
            return ContextChip(
                icon: Self.metadata.iconName, title: title, subtitle: area,
                accessibilityLabel: "Location: \(title)\(area.map { ", \($0)" } ?? "")")
        case .coordinates, .current:
            let current = location.source == .current
            let title: String
            let subtitle: String
            if let placeName = location.placeName, current {
                title = "Current location"
                subtitle = "near \(placeName)" + (area.map { ", \($0)" } ?? "")
            } else if let placeName = location.placeName {
                title = "Near \(placeName)"
                let distance = location.distanceKilometres.map { " · \(Geo.distanceLabel($0))" } ?? ""
                subtitle = (area ?? Geo.decimal(location.point)) + distance
            } else {
                title = current ? "Current location" : Geo.decimal(location.point)
                subtitle = current ? Geo.decimal(location.point) : Geo.dms(location.point)
            }
            return ContextChip(
                icon: current ? "location.fill" : Self.metadata.iconName, title: title, subtitle: subtitle,
                accessibilityLabel: "Location: \(title), \(subtitle)")
        }
    }

    public func detail(_ item: ContextItem) async throws -> ContextDetail {
        let location = try LocationContent(item)
        let point = location.point
        var markers = [MapMarker(latitude: point.latitude, longitude: point.longitude, title: location.markerTitle)]
        if location.source != .search, let placeName = location.placeName, let placePoint = location.placePoint {
            markers.append(MapMarker(latitude: placePoint.latitude, longitude: placePoint.longitude, title: placeName))
        }
        let geoURI = Geo.geoURI(point)
        let map = DetailBlock.map(MapBlock(
            center: point, zoom: location.zoom, markers: markers, link: geoURI,
            fallback: "Map: \(Geo.decimal(point)) — \(geoURI)"))

        var facts = [
            Fact(label: "Coordinates", value: Geo.decimal(point)),
            Fact(label: "DMS", value: Geo.dms(point)),
        ]
        if location.source != .search, let placeName = location.placeName {
            var value = placeName
            if let distance = location.distanceKilometres, let placePoint = location.placePoint {
                value += " (\(Geo.distanceLabel(distance)) \(Geo.compass(from: placePoint, to: point)) of its center)"
            }
            facts.append(Fact(label: "Nearest place", value: value))
        }
        if let region = location.region { facts.append(Fact(label: "Region", value: region)) }
        if let country = location.country {
            let code = location.countryCode.map { $0 == country ? "" : " (\($0))" } ?? ""
            facts.append(Fact(label: "Country", value: country + code))
        }
        if let population = location.population, population > 0 {
            facts.append(Fact(label: "Population", value: Geo.grouped(population)))
        }
        if let zone = location.timeZone, !zone.isEmpty {
            facts.append(Fact(label: "Time zone", value: zone))
            do {
                let offset = try ZoneInfo.load(zone).offset(at: Int64(ItemIdentity.nowSecondsSince1970()))
                let abbreviation = offset.abbreviation.isEmpty || offset.abbreviation.hasPrefix("+") || offset.abbreviation.hasPrefix("-")
                    ? "" : " (\(offset.abbreviation)\(offset.isDaylightSaving ? ", daylight saving" : ""))"
                facts.append(Fact(label: "UTC offset now", value: offset.label + abbreviation))
            } catch {
                facts.append(Fact(label: "UTC offset now", value: "unknown: \(error.message)", tone: .warning))
            }
        }
        if let id = location.geonameId { facts.append(Fact(label: "GeoNames ID", value: String(id))) }

        var blocks: [DetailBlock] = [map, .facts(facts)]
        switch store.result() {
        case .success(let gazetteer):
            let excluded = location.geonameId.flatMap { id in location.source == .search ? id : nil }
            var nearby: [String] = []
            for (index, kilometres) in gazetteer.nearest(to: point.latitude, point.longitude, count: Self.nearbyCount + 1) {
                if let excluded, gazetteer.ids[index] == excluded { continue }
                if nearby.count == Self.nearbyCount { break }
                let there = Coordinate(latitude: gazetteer.latitudes[index], longitude: gazetteer.longitudes[index])
                let direction = kilometres < 0.05 ? "" : " \(Geo.compass(from: point, to: there))"
                nearby.append("\(Self.placeLabel(gazetteer, index)) — \(Geo.distanceLabel(kilometres))\(direction)")
            }
            blocks.append(.text("Nearby places", style: .heading))
            blocks.append(.list(nearby))
        case .failure(let error):
            blocks.append(.text("Nearby places are unavailable: \(error.message)", style: .caption))
        }
        blocks.append(.link(url: geoURI, title: "Open in a map app"))
        return ContextDetail(title: location.title, blocks: blocks)
    }

    public func describe(_ item: ContextItem) async throws -> String {
        let location = try LocationContent(item)
        let area = location.areaLabel.map { ", \($0)" } ?? ""
        switch location.source {
        case .search:
            return "Location \(location.placeName ?? Geo.decimal(location.point))\(area) (\(Geo.decimal(location.point)))"
        case .coordinates, .current:
            let near = location.placeName.map { place in
                " near \(place)\(area)" + (location.distanceKilometres.map { " (\(Geo.distanceLabel($0)))" } ?? "")
            } ?? ""
            return "\(location.source == .current ? "Current location" : "Location") \(Geo.decimal(location.point))\(near)"
        }
    }

    public func encode(_ item: ContextItem, representation: String?) async throws -> EncodedItem {
        let location = try LocationContent(item)
        let geoURI = Geo.geoURI(location.point)
        var metadata = ["geoURI": geoURI]
        if let placeName = location.placeName { metadata["placeName"] = placeName }
        if let countryCode = location.countryCode { metadata["countryCode"] = countryCode }
        switch representation ?? "json" {
        case "json":
            var json = location.json.objectValue ?? JSONObject()
            json["geoURI"] = .string(geoURI)
            return .json(.object(json), metadata: metadata)
        case "text", "geo":
            return .text(geoURI, metadata: metadata)
        default:
            throw ProviderError.unknownRepresentation(representation ?? "", allowed: ["json", "text", "geo"])
        }
    }

    // MARK: Helpers

    /// `Zürich, Zurich, Switzerland`.
    static func placeLabel(_ gazetteer: Gazetteer, _ index: Int) -> String {
        var parts = [gazetteer.names[index]]
        if let region = gazetteer.region(index), region != gazetteer.names[index] { parts.append(region) }
        parts.append(gazetteer.country(index))
        return parts.joined(separator: ", ")
    }

    /// `Zurich, Switzerland · pop. 415,367`.
    static func optionDetail(_ gazetteer: Gazetteer, _ index: Int) -> String {
        var parts: [String] = []
        if let region = gazetteer.region(index) { parts.append(region) }
        parts.append(gazetteer.country(index))
        var text = parts.joined(separator: ", ")
        if gazetteer.asciiNames[index] != gazetteer.names[index] { text = "\(gazetteer.asciiNames[index]) · " + text }
        if gazetteer.populations[index] > 0 { text += " · pop. \(Geo.grouped(gazetteer.populations[index]))" }
        return text
    }
}

/// Loads the gazetteer once, on first use, and keeps it (or the reason it could not be loaded).
final class GazetteerStore: Sendable {
    let path: String
    let countryInfo: String?
    let admin1Codes: String?
    let minimumPopulation: Int
    private let state = Mutex<Result<Gazetteer, GazetteerError>?>(nil)

    init(path: String, countryInfo: String?, admin1Codes: String?, minimumPopulation: Int) {
        self.path = path
        self.countryInfo = countryInfo
        self.admin1Codes = admin1Codes
        self.minimumPopulation = minimumPopulation
    }

    /// The load result if loading has finished, else `nil` (never blocks on a load).
    var loadedResult: Result<Gazetteer, GazetteerError>? { state.withLock { $0 } }

    /// Loads (once) and answers the gazetteer or the reason it is unavailable.
    func result() -> Result<Gazetteer, GazetteerError> {
        state.withLock { state in
            if let state { return state }
            let loaded: Result<Gazetteer, GazetteerError>
            do throws(GazetteerError) {
                let gazetteer = try Gazetteer(
                    path: path, countryInfoPath: countryInfo, admin1Path: admin1Codes,
                    minimumPopulation: minimumPopulation)
                if gazetteer.skippedRows > 0 || !gazetteer.diagnostics.isEmpty {
                    Self.log(Self.summary(gazetteer) + "\n" + gazetteer.diagnostics.map { "  \($0)" }.joined(separator: "\n"))
                }
                loaded = .success(gazetteer)
            } catch {
                Self.log(error.message)
                loaded = .failure(error)
            }
            state = loaded
            return loaded
        }
    }

    /// The gazetteer, or an `unavailableCode` error with the reason.
    func gazetteer() throws(ProviderError) -> Gazetteer {
        switch result() {
        case .success(let gazetteer): return gazetteer
        case .failure(let error):
            throw ProviderError(
                code: LocationProvider.unavailableCode, message: error.message,
                data: ["reason": ["code": "gazetteer-unavailable", "message": .string(error.message)]])
        }
    }

    /// Starts loading in the background (when a collector opens), so the first search is fast.
    func warmUp() {
        guard loadedResult == nil else { return }
        Task.detached(priority: .userInitiated) { [self] in _ = self.result() }
    }

    /// `Loaded 33961 places from …; skipped 2 malformed rows (first: …)`.
    static func summary(_ gazetteer: Gazetteer) -> String {
        var text = "Loaded \(gazetteer.count) places from \(gazetteer.path) (\(gazetteer.format) format)"
        if gazetteer.skippedRows > 0 {
            text += "; skipped \(gazetteer.skippedRows) malformed row\(gazetteer.skippedRows == 1 ? "" : "s")"
        }
        if !gazetteer.diagnostics.isEmpty { text += ": " + gazetteer.diagnostics.prefix(3).joined(separator: "; ") }
        return text
    }

    private static func log(_ message: String) {
        writeStandardError("[com.contexthost.location] \(message)")
    }
}

/// How an item's point was chosen.
enum LocationSource: String, Sendable {
    /// A gazetteer place picked from search results.
    case search
    /// Coordinates the user typed.
    case coordinates
    /// The configured current location.
    case current
}

/// An item's content: `{"latitude","longitude","source","placeName"?,"asciiName"?,"region"?,
/// "country"?,"countryCode"?,"population"?,"timeZone"?,"geonameId"?,"placeLatitude"?,
/// "placeLongitude"?,"distanceKilometres"?}`. For `coordinates` and `current` items the place
/// fields describe the nearest gazetteer place.
struct LocationContent: Sendable {
    var point: Coordinate
    var source: LocationSource
    var placeName: String?
    var asciiName: String?
    var region: String?
    var country: String?
    var countryCode: String?
    var population: Int?
    var timeZone: String?
    var geonameId: Int64?
    var placePoint: Coordinate?
    var distanceKilometres: Double?

    /// A gazetteer place.
    init(place index: Int, in gazetteer: Gazetteer) {
        point = Coordinate(latitude: gazetteer.latitudes[index], longitude: gazetteer.longitudes[index])
        source = .search
        fill(from: index, in: gazetteer)
    }

    /// A point, described by its nearest place when a gazetteer is at hand.
    init(point: Coordinate, source: LocationSource, gazetteer: Gazetteer?) {
        self.point = point
        self.source = source
        if let gazetteer {
            let (index, kilometres) = gazetteer.nearest(to: point.latitude, point.longitude)
            fill(from: index, in: gazetteer)
            placePoint = Coordinate(latitude: gazetteer.latitudes[index], longitude: gazetteer.longitudes[index])
            distanceKilometres = (kilometres * 1000).rounded() / 1000
        }
    }

    private mutating func fill(from index: Int, in gazetteer: Gazetteer) {
        placeName = gazetteer.names[index]
        asciiName = gazetteer.asciiNames[index]
        region = gazetteer.region(index)
        country = gazetteer.country(index)
        countryCode = gazetteer.countryCodes[index].isEmpty ? nil : gazetteer.countryCodes[index]
        population = gazetteer.populations[index]
        timeZone = gazetteer.timeZones[index].isEmpty ? nil : gazetteer.timeZones[index]
        geonameId = gazetteer.ids[index]
    }

    /// Reads an item's content, checking the coordinate ranges.
    init(_ item: ContextItem) throws {
        let path = "params.item.content"
        let reader = try JSONObjectReader(item.content, path: path)
        point = try Coordinate(json: item.content, path: path)
        let sourceText = try reader.optionalString("source") ?? "search"
        guard let source = LocationSource(rawValue: sourceText) else {
            throw ProviderError.invalidParams("\(path).source: expected one of search, coordinates, current, got \"\(sourceText)\"")
        }
        self.source = source
        placeName = try reader.optionalString("placeName")
        asciiName = try reader.optionalString("asciiName")
        region = try reader.optionalString("region")
        country = try reader.optionalString("country")
        countryCode = try reader.optionalString("countryCode")
        population = try reader.optionalInt("population")
        timeZone = try reader.optionalString("timeZone")
        geonameId = try reader.optionalInt("geonameId").map(Int64.init)
        // Names are at most `Gazetteer.maximumNameBytes` long in any gazetteer: a forged item's
        // megabyte name would only make a chip or detail over the host's size caps.
        for (key, value) in [("placeName", placeName), ("asciiName", asciiName), ("region", region), ("country", country),
                             ("countryCode", countryCode), ("timeZone", timeZone)] {
            if let value, value.utf8.count > Gazetteer.maximumNameBytes {
                throw ProviderError.invalidParams("\(path).\(key): longer than \(Gazetteer.maximumNameBytes) bytes (\(value.utf8.count))")
            }
        }
        if let population, population < 0 {
            throw ProviderError.invalidParams("\(path).population: expected a whole number ≥ 0, got \(population)")
        }
        // The nearest place's point and distance are checked like the point itself: a forged item
        // must not reach the distance and bearing arithmetic with values no gazetteer gives.
        let placeLatitude = try reader.optionalDouble("placeLatitude")
        let placeLongitude = try reader.optionalDouble("placeLongitude")
        if let latitude = placeLatitude, let longitude = placeLongitude {
            guard (-90...90).contains(latitude) else {
                throw ProviderError.invalidParams("\(path).placeLatitude: expected a number from -90 to 90, got \(Geo.trimmed(latitude, digits: 6))")
            }
            guard (-180...180).contains(longitude) else {
                throw ProviderError.invalidParams("\(path).placeLongitude: expected a number from -180 to 180, got \(Geo.trimmed(longitude, digits: 6))")
            }
            placePoint = Coordinate(latitude: latitude, longitude: longitude)
        }
        distanceKilometres = try reader.optionalDouble("distanceKilometres")
        if let distance = distanceKilometres, !(0...Self.maximumDistanceKilometres).contains(distance) {
            throw ProviderError.invalidParams(
                "\(path).distanceKilometres: expected a number from 0 to \(Int(Self.maximumDistanceKilometres)) (half the Earth's circumference), got \(Geo.trimmed(distance, digits: 3))")
        }
    }

    /// Half the Earth's circumference on the mean sphere (20,015 km), rounded up.
    static let maximumDistanceKilometres = 20_016.0

    var json: JSONValue {
        var object = JSONObject()
        object["latitude"] = .number(point.latitude)
        object["longitude"] = .number(point.longitude)
        object["source"] = .string(source.rawValue)
        if let placeName { object["placeName"] = .string(placeName) }
        if let asciiName { object["asciiName"] = .string(asciiName) }
        if let region { object["region"] = .string(region) }
        if let country { object["country"] = .string(country) }
        if let countryCode { object["countryCode"] = .string(countryCode) }
        if let population { object["population"] = .number(Double(population)) }
        if let timeZone { object["timeZone"] = .string(timeZone) }
        if let geonameId { object["geonameId"] = .number(Double(geonameId)) }
        if let placePoint {
            object["placeLatitude"] = .number(placePoint.latitude)
            object["placeLongitude"] = .number(placePoint.longitude)
        }
        if let distanceKilometres { object["distanceKilometres"] = .number(distanceKilometres) }
        return .object(object)
    }

    /// `Zurich, Switzerland` (region omitted when it repeats the place name).
    var areaLabel: String? {
        var parts: [String] = []
        if let region, region != placeName { parts.append(region) }
        if let country { parts.append(country) }
        return parts.isEmpty ? nil : parts.joined(separator: ", ")
    }

    var displayName: String {
        switch source {
        case .search:
            return [placeName, country].compactMap { $0 }.joined(separator: ", ")
        case .coordinates:
            return Geo.decimal(point) + (placeName.map { " (near \($0))" } ?? "")
        case .current:
            return "Current location" + (placeName.map { " (near \($0))" } ?? "")
        }
    }

    var title: String {
        source == .search ? (placeName ?? Geo.decimal(point)) : (source == .current ? "Current location" : Geo.decimal(point))
    }

    var markerTitle: String {
        switch source {
        case .search: placeName ?? "Location"
        case .coordinates: Geo.decimal(point)
        case .current: "Current location"
        }
    }

    /// Closer for smaller places; street level for typed points.
    var zoom: Double {
        guard source == .search else { return 14 }
        let population = population ?? 0
        return population >= 1_000_000 ? 10 : population >= 100_000 ? 11 : 12
    }
}

extension JSONValue {
    var jsonString: String { String(decoding: jsonBytes, as: UTF8.self) }
}

/// The library's entry point (`context_provider.h`).
@_cdecl("context_provider_entry_v1")
public func contextProviderEntry() -> UnsafeRawPointer {
    ContextProviderExport.entry(for: LocationProvider.self)
}
