import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// The Location provider through its real `libLocationProvider.so`.
@Suite("Location provider")
struct LocationProviderTests {
    static let id = "com.contexthost.location"
    static let data = BuildProducts.packageRoot + "/data/location"

    /// Settings for the bundled data, plus overrides.
    static func settings(_ extra: JSONObject = [:]) -> JSONObject {
        var settings: JSONObject = [
            "gazetteer": .string(data + "/cities15000.tsv"),
            "countryInfo": .string(data + "/countryInfo.txt"),
            "admin1Codes": .string(data + "/admin1CodesASCII.txt"),
        ]
        for (key, value) in extra { settings[key] = value }
        return settings
    }

    static func provider(_ extra: JSONObject = [:]) throws -> ProviderHarness {
        try ProviderHarness(product: "LocationProvider", providerID: id, settings: settings(extra))
    }

    /// One GeoNames `cities*.txt` row (19 columns).
    static func geonamesRow(
        _ id: String, _ name: String, _ ascii: String, _ lat: String, _ lon: String, cc: String, admin1: String,
        population: String, zone: String, featureClass: String = "P"
    ) -> String {
        [id, name, ascii, "", lat, lon, featureClass, "PPL", cc, "", admin1, "", "", "", population, "", "400", zone, "2024-01-01"]
            .joined(separator: "\t")
    }

    static func query(_ provider: ProviderHarness, _ text: String, page: Int? = nil) async throws -> [JSONValue] {
        var values: JSONObject = [:]
        if let page { values["placePage"] = .number(Double(page)) }
        let result = try await provider.call(
            "collect/query",
            ["sessionId": "s", "stepId": "location", "fieldId": "place", "query": .string(text), "values": .object(values)])
        return result["options"]?.arrayValue ?? []
    }

    static func submit(_ provider: ProviderHarness, _ values: JSONObject) async throws -> JSONValue {
        try await provider.call("collect/submit", ["sessionId": "s", "stepId": "location", "values": .object(values)])
    }

    static func item(_ provider: ProviderHarness, _ values: JSONObject) async throws -> JSONValue {
        let outcome = try await submit(provider, values)
        #expect(outcome["outcome"] == "item", "\(outcome)")
        return try #require(outcome["item"])
    }

    /// What `method` (a view: `item/preview`, `item/detail`…) answers for the item made of `values`.
    static func view(_ provider: ProviderHarness, _ method: String, _ values: JSONObject) async throws -> JSONValue {
        try await provider.call(method, ["item": try await item(provider, values)])
    }

    /// The facts of a detail view, label → value.
    static func facts(_ detail: JSONValue) -> [String: String] {
        let facts = detail["blocks"]?.arrayValue?.first { $0["type"] == "facts" }?["facts"]?.arrayValue ?? []
        var values: [String: String] = [:]
        for fact in facts {
            if let label = fact["label"]?.stringValue, let value = fact["value"]?.stringValue { values[label] = value }
        }
        return values
    }

    static func decoded(_ encoded: JSONValue) throws -> [UInt8] {
        let text = try #require(encoded["data"]?.stringValue)
        let data = try #require(Data(base64Encoded: text))
        return Array(data)
    }

    // MARK: Search

    @Test("search folds diacritics and case: sao → São Paulo, zurich → Zürich")
    func diacriticInsensitiveSearch() async throws {
        let location = try Self.provider()
        let sao = try await Self.query(location, "sao")
        #expect(sao.first?["label"] == "São Paulo")
        #expect(sao.first?["value"] == "3448439")
        #expect(sao.first?["detail"]?.stringValue?.contains("Brazil") == true)
        let zurich = try await Self.query(location, "zurich")
        #expect(zurich.first?["label"] == "Zürich")
        #expect(zurich.first?["detail"]?.stringValue?.contains("Switzerland") == true)
        // The accented and upper-case spellings find the same place.
        #expect(try await Self.query(location, "ZÜRICH").first?["label"] == "Zürich")
        #expect(try await Self.query(location, "  São Pau ").first?["label"] == "São Paulo")
    }

    @Test("search ranks exact names, then prefixes, then words inside names; population breaks ties")
    func ranking() async throws {
        let location = try Self.provider()
        // "paris": the exact name Paris (France) first, bigger before smaller.
        let paris = try await Self.query(location, "paris")
        #expect(paris.first?["label"] == "Paris")
        #expect(paris.first?["detail"]?.stringValue?.contains("France") == true)
        // "paulo" is a word inside "São Paulo": found, after whole-name matches.
        let paulo = try await Self.query(location, "paulo")
        #expect(paulo.contains { $0["label"] == "São Paulo" })
        // Prefix: every result starts with the query (whole name or a word).
        for option in try await Self.query(location, "ber") {
            let folded = (option["label"]?.stringValue ?? "").lowercased()
            let words = folded.split(whereSeparator: { !$0.isLetter })
            #expect(words.contains { $0.hasPrefix("ber") } || folded.hasPrefix("ber")
                || (option["detail"]?.stringValue ?? "").lowercased().hasPrefix("ber"), "\(option)")
        }
        // Population order within the same quality: "london" exact matches, biggest first.
        let london = try await Self.query(location, "london")
        #expect(london.first?["detail"]?.stringValue?.contains("United Kingdom") == true)
    }

    @Test("search results are paged with values.placePage")
    func paging() async throws {
        let location = try Self.provider(["searchPageSize": 5])
        let first = try await Self.query(location, "san")
        let second = try await Self.query(location, "san", page: 2)
        #expect(first.count == 5)
        #expect(second.count == 5)
        let firstValues = Set(first.compactMap { $0["value"]?.stringValue })
        #expect(second.allSatisfy { !firstValues.contains($0["value"]?.stringValue ?? "") })
        #expect(try await Self.query(location, "san", page: 10_000).isEmpty)
        await #expect(throws: ProviderHarness.CallError.self) { try await Self.query(location, "san", page: 0) }
        #expect(try await Self.query(location, "qqqqzz").isEmpty)
        #expect(try await Self.query(location, "").isEmpty)
    }

    // MARK: Submit

    @Test("a searched place becomes an item with name, region, country, population and time zone")
    func placeItem() async throws {
        let location = try Self.provider()
        let item = try await Self.item(location, ["place": "2657896"])
        #expect(item["type"] == "location")
        #expect(item["displayName"] == "Zürich, Switzerland")
        let content = try #require(item["content"])
        #expect(content["placeName"] == "Zürich")
        #expect(content["asciiName"] == "Zurich")
        #expect(content["region"] == "Zurich")
        #expect(content["countryCode"] == "CH")
        #expect(content["timeZone"] == "Europe/Zurich")
        #expect(content["source"] == "search")
        #expect(content["latitude"]?.numberValue.map { abs($0 - 47.36667) < 1e-9 } == true)
        #expect((content["population"]?.intValue ?? 0) > 300_000)

        let unknown = try await Self.submit(location, ["place": "999999999"])
        #expect(unknown["outcome"] == "invalid")
        #expect(unknown["fieldErrors"]?["place"]?.stringValue?.contains("not in the gazetteer") == true)
    }

    @Test("coordinates in decimal, N/S/E/W, DMS and geo: notations")
    func coordinateNotations() async throws {
        let location = try Self.provider()
        let cases: [(String, Double, Double)] = [
            ("47.37, 8.54", 47.37, 8.54),
            ("47.37 8.54", 47.37, 8.54),
            ("-33.8688, 151.2093", -33.8688, 151.2093),
            ("47.37N 8.54E", 47.37, 8.54),
            ("47.37° N, 8.54° E", 47.37, 8.54),
            ("N 47.37 E 8.54", 47.37, 8.54),
            ("8.54E 47.37N", 47.37, 8.54),
            ("33.8688S 151.2093E", -33.8688, 151.2093),
            ("40.7128 N 74.0060 W", 40.7128, -74.006),
            ("47°22'12\"N 8°32'24\"E", 47.37, 8.54),
            ("47°22′12″N 8°32′24″E", 47.37, 8.54),
            ("47 22 12 N 8 32 24 E", 47.37, 8.54),
            ("47°22.2'N 8°32.4'E", 47.37, 8.54),
            ("geo:47.37,8.54", 47.37, 8.54),
            ("90, 180", 90, 180),
        ]
        for (text, latitude, longitude) in cases {
            let outcome = try await Self.submit(location, ["coordinates": .string(text)])
            #expect(outcome["outcome"] == "item", "\(text): \(outcome)")
            let content = outcome["item"]?["content"]
            #expect(content?["latitude"]?.numberValue.map { abs($0 - latitude) < 1e-6 } == true, "\(text)")
            #expect(content?["longitude"]?.numberValue.map { abs($0 - longitude) < 1e-6 } == true, "\(text)")
            #expect(content?["source"] == "coordinates")
        }
    }

    @Test("bad coordinates get a clear per-field error", arguments: [
        ("91, 8.54", "Latitude 91 is out of range"),
        ("47.37, 181", "Longitude 181 is out of range"),
        ("-90.5, 0", "Latitude -90.5 is out of range"),
        ("95N 8E", "Latitude 95 is out of range"),
        ("hello world", "Unexpected text \"hello\""),
        ("47.37", "both a latitude and a longitude"),
        ("47.37N, 8.54", "Mixed notations"),
        ("47°22'12\"N 8.54E", "Mixed notations"),
        ("-47.37N 8.54E", "Mixed notations"),
        ("N 47.37 8.54E", "Mixed notations"),
        ("47.37N 8.54S", "Both coordinates are latitudes"),
        ("47°61'N 8°32'E", "Minutes must be less than 60"),
        ("47.5°22'N 8°32'E", "Only the last number"),
        ("1, 2, 3", "Too many separators"),
        ("47 22 12 8 32 24", "Cannot tell where the latitude ends"),
        ("47.3.7, 8", "is not a number"),
        ("geo:abc", "is not a geo: URI"),
    ])
    func badCoordinates(text: String, expected: String) async throws {
        let location = try Self.provider()
        let outcome = try await Self.submit(location, ["coordinates": .string(text)])
        #expect(outcome["outcome"] == "invalid", "\(text)")
        let message = try #require(outcome["fieldErrors"]?["coordinates"]?.stringValue)
        #expect(message.hasPrefix("Coordinates: "))
        #expect(message.contains(expected), "\(text): \(message)")
        #expect(outcome["fieldErrors"]?["place"] == nil)
    }

    @Test("neither or both of place and coordinates is invalid")
    func placeOrCoordinates() async throws {
        let location = try Self.provider()
        let neither = try await Self.submit(location, [:])
        #expect(neither["outcome"] == "invalid")
        #expect(neither["formError"] == "Choose a place or enter coordinates.")
        let both = try await Self.submit(location, ["place": "2657896", "coordinates": "1, 2"])
        #expect(both["outcome"] == "invalid")
        #expect(both["formError"]?.stringValue?.contains("not both") == true)
    }

    // MARK: Reverse lookup

    @Test("coordinates resolve to the nearest named place with its distance")
    func reverseLookup() async throws {
        let location = try Self.provider()
        // Zürich main station, about 0.9 km from GeoNames' Zürich point.
        let item = try await Self.item(location, ["coordinates": "47.3779, 8.5403"])
        let content = try #require(item["content"])
        // The nearest GeoNames place is the city district (PPLX) around the station.
        #expect(content["placeName"] == "Zürich (Kreis 4) / Aussersihl")
        let distance = try #require(content["distanceKilometres"]?.numberValue)
        #expect(distance > 0.1 && distance < 2)
        #expect(item["displayName"] == "47.37790, 8.54030 (near Zürich (Kreis 4) / Aussersihl)")
        let lake = try await Self.item(location, ["coordinates": "47.36667, 8.55"])
        #expect(lake["content"]?["placeName"] == "Zürich")
        #expect(lake["content"]?["distanceKilometres"] == 0)
        // Across the antimeridian: a point just east of 180° finds Fiji/Pacific places by true distance.
        let sydney = try await Self.item(location, ["coordinates": "33.8688S 151.2093E"])
        #expect(sydney["content"]?["placeName"] == "Sydney")
        let near0 = try await Self.item(location, ["coordinates": "51.4779N 0.0015W"])
        #expect(near0["content"]?["countryCode"] == "GB")
    }

    @Test("the k-d tree agrees with a brute-force haversine oracle on 150 random points")
    func reverseLookupOracle() async throws {
        let location = try Self.provider()
        let oracle = try String(contentsOfFile: Self.data + "/reverse-oracle.tsv", encoding: .utf8)
        var checked = 0
        for line in oracle.split(separator: "\n") where !line.hasPrefix("#") {
            let columns = line.split(separator: "\t").map(String.init)
            let item = try await Self.item(location, ["coordinates": .string("\(columns[0]), \(columns[1])")])
            #expect(item["content"]?["geonameId"]?.intValue == Int(columns[2]), "\(line)")
            let distance = item["content"]?["distanceKilometres"]?.numberValue ?? -1
            #expect(abs(distance - (Double(columns[3]) ?? 0)) < 0.01, "\(line): \(distance)")
            checked += 1
        }
        #expect(checked == 150)
    }

    @Test("coordinates typed into the search field list the nearest places")
    func coordinateSearch() async throws {
        let location = try Self.provider()
        let options = try await Self.query(location, "47.37, 8.54")
        #expect(options.count == 10)
        #expect(options.first?["label"] == "Zürich")
        #expect(options.first?["detail"]?.stringValue?.hasPrefix("839 m ") == true)
        let second = try await Self.query(location, "47.37, 8.54", page: 2)
        #expect(second.count == 10)
        #expect(Set(second.compactMap(\.["value"])).isDisjoint(with: Set(options.compactMap(\.["value"]))))
    }

    // MARK: Views

    @Test("chip shows place name, region and country")
    func chip() async throws {
        let location = try Self.provider()
        let chip = try await Self.view(location, "item/preview", ["place": "2657896"])
        #expect(chip["title"] == "Zürich")
        #expect(chip["subtitle"] == "Zurich, Switzerland")
        #expect(chip["icon"] == "mappin.and.ellipse")
        let pointChip = try await Self.view(location, "item/preview", ["coordinates": "47.37, 8.54"])
        #expect(pointChip["title"] == "Near Zürich")
        #expect(pointChip["subtitle"]?.stringValue?.hasPrefix("Zurich, Switzerland · ") == true)
        #expect(pointChip["subtitle"] == "Zurich, Switzerland · 839 m")
        let describe = try await Self.view(location, "item/describe", ["place": "2657896"])
        #expect(describe["text"]?.stringValue?.contains("Zürich, Zurich, Switzerland") == true)
    }

    @Test("detail: map with marker and geo: link, facts in decimal and DMS, time zone offset, nearby places")
    func detail() async throws {
        let location = try Self.provider()
        let detail = try await Self.view(location, "item/detail", ["place": "2657896"])
        #expect(detail["title"] == "Zürich")
        let blocks = detail["blocks"]?.arrayValue ?? []
        let map = try #require(blocks.first { $0["type"] == "map" })
        #expect(map["center"]?["latitude"]?.numberValue.map { abs($0 - 47.36667) < 1e-9 } == true)
        #expect(map["zoom"] == 11)
        #expect(map["markers"]?.arrayValue?.first?["title"] == "Zürich")
        #expect(map["link"] == "geo:47.36667,8.55")
        let facts = Self.facts(detail)
        #expect(facts["Coordinates"] == "47.36667, 8.55000")
        #expect(facts["DMS"] == "47°22′00.0″N 8°33′00.0″E")
        #expect(facts["Country"] == "Switzerland (CH)")
        #expect(facts["Region"] == "Zurich")
        #expect(facts["Time zone"] == "Europe/Zurich")
        let offset = try #require(facts["UTC offset now"])
        #expect(offset == "UTC+01:00 (CET)" || offset == "UTC+02:00 (CEST, daylight saving)", "\(offset)")
        #expect(facts["Population"]?.contains(",") == true)
        let list = try #require(blocks.first { $0["type"] == "list" }?["items"]?.arrayValue)
        #expect(list.count == 5)
        #expect(!list.contains { $0.stringValue?.hasPrefix("Zürich,") == true }, "the place itself is not 'nearby'")
        #expect(list.allSatisfy { $0.stringValue?.contains(" km") == true })
        #expect(blocks.contains { $0["type"] == "link" && $0["url"] == "geo:47.36667,8.55" })

        // A zone without daylight saving: India is always UTC+05:30.
        let delhiFacts = Self.facts(try await Self.view(location, "item/detail", ["coordinates": "28.6139, 77.2090"]))
        #expect(delhiFacts["UTC offset now"] == "UTC+05:30 (IST)")
        #expect(delhiFacts["Nearest place"]?.contains("of its center") == true)
        // Buenos Aires.
        let southernFacts = Self.facts(try await Self.view(location, "item/detail", ["coordinates": "-34.6037, -58.3816"]))
        #expect(southernFacts["UTC offset now"]?.hasPrefix("UTC−03:00") == true)
        #expect(southernFacts["DMS"] == "34°36′13.3″S 58°22′53.8″W")
        // Southern-hemisphere daylight saving (October to April) in Sydney.
        let sydneyOffset = Self.facts(try await Self.view(location, "item/detail", ["coordinates": "-33.8688, 151.2093"]))["UTC offset now"] ?? ""
        #expect(sydneyOffset == "UTC+10:00 (AEST)" || sydneyOffset == "UTC+11:00 (AEDT, daylight saving)", "\(sydneyOffset)")
    }

    @Test("encode: JSON with latitude, longitude, placeName…, and geo: URI text")
    func encode() async throws {
        let location = try Self.provider()
        let item = try await Self.item(location, ["place": "3448439"])
        let json = try await location.call("item/encode", ["item": item])
        #expect(json["representation"] == "json")
        #expect(json["contentType"] == "application/json")
        let value = try JSONValue(parsing: try Self.decoded(json))
        #expect(value["placeName"] == "São Paulo")
        #expect(value["latitude"] == -23.5475)
        #expect(value["longitude"] == -46.63611)
        #expect(value["country"] == "Brazil")
        #expect(value["timeZone"] == "America/Sao_Paulo")
        #expect(value["geoURI"] == "geo:-23.5475,-46.63611")
        for representation in ["text", "geo"] {
            let text = try await location.call("item/encode", ["item": item, "representation": .string(representation)])
            #expect(text["representation"] == "text")
            #expect(String(decoding: try Self.decoded(text), as: UTF8.self) == "geo:-23.5475,-46.63611")
        }
        let pole = try await Self.item(location, ["coordinates": "90N 120E"])
        let poleText = try await location.call("item/encode", ["item": pole, "representation": "geo"])
        #expect(String(decoding: try Self.decoded(poleText), as: UTF8.self) == "geo:90,0")
        await #expect(throws: ProviderHarness.CallError.self) {
            try await location.call("item/encode", ["item": item, "representation": "kml"])
        }
    }

    @Test("items with bad content are rejected with the member path; a bad time zone name is not opened")
    func badItems() async throws {
        let location = try Self.provider()
        for zone in ["../../../etc/passwd", "/etc/passwd", "Mars/Olympus_Mons"] {
            let item: JSONValue = [
                "id": "00000000-0000-0000-0000-000000000000", "providerId": .string(Self.id), "type": "location",
                "displayName": "x", "content": ["latitude": 1, "longitude": 2, "timeZone": .string(zone)],
            ]
            let detail = try await location.call("item/detail", ["item": item])
            let facts = detail["blocks"]?.arrayValue?.first { $0["type"] == "facts" }?["facts"]?.arrayValue ?? []
            let offset = try #require(facts.first { $0["label"] == "UTC offset now" })
            #expect(offset["tone"] == "warning")
            #expect(offset["value"]?.stringValue?.hasPrefix("unknown: ") == true)
            if zone.contains("etc") {
                #expect(offset["value"]?.stringValue?.contains("is not an IANA time zone name") == true, "\(offset)")
            } else {
                #expect(offset["value"]?.stringValue?.contains("file not found") == true, "\(offset)")
            }
        }
        let bad: JSONValue = [
            "id": "00000000-0000-0000-0000-000000000000", "providerId": .string(Self.id), "type": "location",
            "displayName": "x", "content": ["latitude": 123, "longitude": 0],
        ]
        let error = try await location.callError("item/preview", ["item": bad])
        #expect(error.code == -32602)
        #expect(error.message.contains("latitude"))
    }

    // MARK: Current location

    @Test("makeContext: a fixed point, a file, a command; unavailable with a reason when unset")
    func currentLocation() async throws {
        let fixed = try Self.provider(["currentLocation": "47°22'12\"N 8°32'24\"E"])
        let made = try await fixed.call("provider/makeContext")
        let item = try #require(made["item"])
        #expect(item["content"]?["source"] == "current")
        #expect(item["content"]?["placeName"] == "Zürich")
        #expect(item["displayName"] == "Current location (near Zürich)")
        let chip = try await fixed.call("item/preview", ["item": item])
        #expect(chip["title"] == "Current location")
        #expect(chip["subtitle"] == "near Zürich, Zurich, Switzerland")
        #expect(chip["icon"] == "location.fill")

        let folder = try TemporaryDirectory()
        let file = try folder.write("here.txt", "# my position\n-33.8688, 151.2093\n")
        let fromFile = try Self.provider(["currentLocationFile": .string(file)])
        #expect(try await fromFile.call("provider/makeContext")["item"]?["content"]?["placeName"] == "Sydney")

        let fromCommand = try Self.provider(["currentLocationCommand": "echo '40.7128N 74.0060W'"])
        #expect(try await fromCommand.call("provider/makeContext")["item"]?["content"]?["countryCode"] == "US")

        let unset = try Self.provider()
        do {
            _ = try await unset.call("provider/makeContext")
            Issue.record("expected unavailable")
        } catch let error as ProviderHarness.CallError {
            #expect(error.code == 1001)
            #expect(error.message.contains("no current location is configured"))
            #expect(error.data?["reason"]?["code"] == "not-configured")
        }

        for (settings, expected) in [
            (["currentLocation": "somewhere"] as JSONObject, "is not a coordinate"),
            (["currentLocationFile": .string(folder.path + "/missing.txt")], "file not found"),
            (["currentLocationFile": .string(try folder.write("empty.txt", "# nothing here\n\n"))], "empty.txt holds no coordinates; write one line such as 47.37, 8.54"),
            (["currentLocationFile": .string(try folder.write("words.txt", "nowhere\n"))], "words.txt: \"nowhere\" is not a coordinate: "),
            (["currentLocationCommand": "exit 3"], "exited with status 3"),
            (["currentLocationCommand": "true"], "currentLocationCommand `true` printed no coordinates; it must print a line such as 47.37, 8.54"),
            (["currentLocationCommand": "echo 91,0"], "printed \"91,0\", which is not a coordinate: Latitude 91 is out of range"),
        ] {
            let provider = try Self.provider(settings)
            do {
                _ = try await provider.call("provider/makeContext")
                Issue.record("expected an error for \(settings)")
            } catch let error as ProviderHarness.CallError {
                #expect(error.code == 1001)
                #expect(error.message.contains(expected), "\(error.message)")
            }
        }
    }

    // MARK: Gazetteer files

    @Test("reads real GeoNames cities*.txt rows; malformed rows are reported with file:line and skipped")
    func geonamesFile() async throws {
        let folder = try TemporaryDirectory()
        let rows = [
            Self.geonamesRow("2657896", "Zürich", "Zurich", "47.36667", "8.55", cc: "CH", admin1: "ZH", population: "341730", zone: "Europe/Zurich"),
            Self.geonamesRow("2661604", "Basel", "Basel", "47.55839", "7.57327", cc: "CH", admin1: "BS", population: "164488", zone: "Europe/Zurich"),
            "2660646\tGenève\tGeneve\ttoo few columns",  // line 3: 4 columns
            Self.geonamesRow("2661552", "Bern", "Bern", "ninety", "7.44744", cc: "CH", admin1: "BE", population: "121631", zone: "Europe/Zurich"),
            Self.geonamesRow("x2658434", "Lausanne", "Lausanne", "46.516", "6.63282", cc: "CH", admin1: "VD", population: "116751", zone: "Europe/Zurich"),
            Self.geonamesRow("2659811", "Lugano", "Lugano", "46.01008", "200.5", cc: "CH", admin1: "TI", population: "63185", zone: "Europe/Zurich"),
            Self.geonamesRow("2659994", "Luzern", "Luzern", "47.05048", "8.30635", cc: "CH", admin1: "LU", population: "many", zone: "Europe/Zurich"),
            Self.geonamesRow("2658000", "Sihl", "Sihl", "47.3", "8.5", cc: "CH", admin1: "ZH", population: "0", zone: "Europe/Zurich", featureClass: "H"),
            "",
            Self.geonamesRow("2658822", "Winterthur", "Winterthur", "47.50564", "8.72413", cc: "CH", admin1: "ZH", population: "91908", zone: "Europe/Zurich"),
        ]
        let path = try folder.write("cities15000.txt", rows.joined(separator: "\n") + "\n")
        let admin1 = try folder.write("admin1CodesASCII.txt", "CH.ZH\tZurich\tZurich\t2657895\nCH.BS\tBasel-City\tBasel-City\t2661602\n")
        let location = try ProviderHarness(
            product: "LocationProvider", providerID: Self.id,
            settings: ["gazetteer": .string(path), "admin1Codes": .string(admin1), "countryInfo": .string(Self.data + "/countryInfo.txt")])
        let zurich = try await Self.query(location, "zur")
        #expect(zurich.map(\.["label"]) == ["Zürich"])
        #expect(zurich.first?["detail"]?.stringValue?.contains("Zurich, Switzerland") == true)
        #expect(try await Self.query(location, "winter").first?["label"] == "Winterthur")
        for skipped in ["gen", "bern", "laus", "lug", "luz", "sihl"] {
            #expect(try await Self.query(location, skipped).isEmpty, "\(skipped)")
        }
        let availability = try await location.call("provider/availability")
        #expect(availability["available"] == true)
        let reason = try #require(availability["reason"]?.stringValue)
        #expect(reason.contains("Loaded 3 places"))
        #expect(reason.contains("GeoNames format"))
        #expect(reason.contains("skipped 5 malformed rows"))
        #expect(reason.contains("\(path):3: expected 19 tab-separated columns (GeoNames format), found 4; row skipped"))
        #expect(reason.contains("\(path):4: latitude \"ninety\" is not a number from -90 to 90"))
        #expect(reason.contains("\(path):5: geonameid \"x2658434\" is not a whole number"))
        // Reverse lookup works on the file's places.
        let item = try await Self.item(location, ["coordinates": "47.5, 8.7"])
        #expect(item["content"]?["placeName"] == "Winterthur")
    }

    @Test("minimumPopulation filters places")
    func minimumPopulation() async throws {
        let location = try Self.provider(["minimumPopulation": 1_000_000])
        #expect(try await Self.query(location, "zurich").isEmpty)
        #expect(try await Self.query(location, "sao").first?["label"] == "São Paulo")
    }

    @Test("a missing gazetteer makes the provider unavailable with the reason")
    func missingGazetteer() async throws {
        let location = try Self.provider(["gazetteer": "/nonexistent/cities15000.txt"])
        let availability = try await location.call("provider/availability")
        #expect(availability["available"] == false)
        #expect(availability["reason"]?.stringValue?.contains("/nonexistent/cities15000.txt: file not found") == true)
        do {
            _ = try await Self.query(location, "zurich")
            Issue.record("expected unavailable")
        } catch let error as ProviderHarness.CallError {
            #expect(error.code == 1001)
            #expect(error.message.contains("file not found"))
        }
        // After the failed load, availability still says why.
        let again = try await location.call("provider/availability")
        #expect(again["available"] == false)
        #expect(again["reason"]?.stringValue?.contains("Set the `gazetteer` setting") == true)
    }

    @Test("a gazetteer with no valid rows is unavailable, naming the first problem")
    func emptyGazetteer() async throws {
        let folder = try TemporaryDirectory()
        let path = try folder.write("bad.txt", "1\tonly\tthree\n2\tbad\n")
        let location = try Self.provider(["gazetteer": .string(path)])
        #expect(try await location.call("provider/availability")["available"] == true)  // exists; not read yet
        await #expect(throws: ProviderHarness.CallError.self) { try await Self.query(location, "on") }
        let availability = try await location.call("provider/availability")
        #expect(availability["available"] == false)
        #expect(availability["reason"]?.stringValue?.contains("holds no valid places (2 malformed rows)") == true)
        #expect(availability["reason"]?.stringValue?.contains("\(path):1:") == true)
    }

    @Test("bad settings are refused at open with a hint")
    func badSettings() throws {
        #expect(throws: (any Error).self) { try Self.provider(["searchPageSize": 0]) }
        #expect(throws: (any Error).self) { try Self.provider(["minimumPopulation": -1]) }
        #expect(throws: (any Error).self) {
            try ProviderHarness(product: "LocationProvider", providerID: Self.id, settings: [:])
        }
    }
}
