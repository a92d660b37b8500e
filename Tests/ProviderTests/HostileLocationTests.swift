import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// Hostile files (through the settings) and forged client requests for the Location provider,
/// through the real `context-host` and the real `libLocationProvider.so` (in-process, as the
/// bundled manifest says: a trap here ends the host). Every case checks that the host still
/// answers `ping`, that the request got a result or a documented error within its timeout, that
/// the host's peak VmHWM stayed below 512 MiB, and that no file of the data folder other than the
/// configured ones was opened. The comment on each case names the fix it covers (issue 24).
@Suite("Hostile inputs: Location through the real host")
struct HostileLocationTests {
    static let id = "com.contexthost.location"
    static let data = BuildProducts.packageRoot + "/data/location"

    /// Three good GeoNames rows.
    static let goodRows = [
        LocationProviderTests.geonamesRow("2657896", "Zürich", "Zurich", "47.36667", "8.55", cc: "CH", admin1: "ZH", population: "341730", zone: "Europe/Zurich"),
        LocationProviderTests.geonamesRow("2661604", "Basel", "Basel", "47.55839", "7.57327", cc: "CH", admin1: "BS", population: "164488", zone: "Europe/Zurich"),
        LocationProviderTests.geonamesRow("2658822", "Winterthur", "Winterthur", "47.50564", "8.72413", cc: "CH", admin1: "ZH", population: "91908", zone: "Europe/Zurich"),
    ]

    /// A folder with a decoy file no setting names (it must never be opened).
    static func folder() throws -> TemporaryDirectory {
        let folder = try TemporaryDirectory()
        try folder.write("decoy.txt", "47.37, 8.54\n")
        return folder
    }

    /// A host whose Location provider has `settings` (the bundled data unless overridden), watching
    /// `folder`.
    static func host(_ settings: JSONObject, watching folder: TemporaryDirectory? = nil) throws -> HostileSettingsHost {
        var values: JSONObject = [
            "gazetteer": .string(data + "/cities15000.tsv"),
            "countryInfo": .string(data + "/countryInfo.txt"),
            "admin1Codes": .string(data + "/admin1CodesASCII.txt"),
        ]
        for (key, value) in settings { values[key] = value }
        return try HostileSettingsHost(settings: [id: values], watching: folder?.path)
    }

    /// A collector session.
    static func session(_ host: HostileSettingsHost) throws -> String {
        let start = try host.request("collect/start", ["providerId": .string(id)])
        return try #require(start["result"]?["sessionId"]?.stringValue)
    }

    static func query(_ host: HostileSettingsHost, _ session: String, _ text: String, page: JSONValue? = nil, timeout: Double = 10) throws -> JSONValue {
        var values: JSONObject = [:]
        if let page { values["placePage"] = page }
        return try host.request(
            "collect/query", ["sessionId": .string(session), "fieldId": "place", "query": .string(text), "values": .object(values)],
            timeout: timeout)
    }

    /// What the provider logged about loading its gazetteer (the summary and the problems, on
    /// the host's stderr), waiting up to 5 s for it.
    static func loadLog(_ host: HostileSettingsHost) -> String {
        let deadline = Date().addingTimeInterval(5)
        while Date() < deadline {
            let text = host.client.host.standardError
            if text.contains("[com.contexthost.location] Loaded") || text.contains("holds no valid places") { return text }
            usleep(10_000)
        }
        return host.client.host.standardError
    }

    /// A forged item of this provider with `content`.
    static func item(_ content: JSONValue) -> JSONValue {
        ["id": "forged", "providerId": .string(id), "type": "location", "displayName": "Forged", "content": content]
    }

    static func expectDocumented(_ response: JSONValue, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(HostileSettingsHost.isResultOrDocumentedError(response), "\(response.jsonString.prefix(400))", sourceLocation: sourceLocation)
    }

    // MARK: Files through the settings

    @Test("a 19-column row whose fields are megabytes long: reported, quoted at most 80 bytes, the rest used")
    func hugeFields() throws {
        // Fix: Gazetteer.swift quotes fields with Quote.short (was the whole field, in every
        // diagnostic and in the availability reason).
        let folder = try Self.folder()
        let huge = String(repeating: "9x", count: 2 << 20)
        let bad = LocationProviderTests.geonamesRow(huge, "Bad", "Bad", "1", "1", cc: "CH", admin1: "", population: "1", zone: "")
        let path = try folder.write("cities.txt", ([bad] + Self.goodRows).joined(separator: "\n") + "\n")
        let host = try Self.host(["gazetteer": .string(path)], watching: folder)
        let session = try Self.session(host)
        let found = try Self.query(host, session, "zur")
        #expect(found["result"]?["options"]?.arrayValue?.first?["label"] == "Zürich")
        let log = Self.loadLog(host)
        #expect(log.utf8.count < 64 << 10, "the load log is \(log.utf8.count) bytes")
        #expect(log.contains("cities.txt:1: geonameid \"9x9x9x"), "\(log.prefix(2000))")
        #expect(host.openedFiles().isSubset(of: ["cities.txt"]))
    }

    @Test("a row whose name is 60 KB of one-letter words is skipped, not indexed word by word")
    func wordBombName() throws {
        // Fix: Gazetteer.maximumNameBytes (1,000) and SearchIndex word keys pointing into the name
        // (each word used to copy the rest of the name: 30,000 words × 30 KB).
        let folder = try Self.folder()
        let name = Array(repeating: "a", count: 30_000).joined(separator: " ")
        let bad = LocationProviderTests.geonamesRow("1", name, name, "1", "1", cc: "CH", admin1: "", population: "1", zone: "")
        let path = try folder.write("cities.txt", ([bad] + Self.goodRows).joined(separator: "\n") + "\n")
        let host = try Self.host(["gazetteer": .string(path)], watching: folder)
        let session = try Self.session(host)
        let found = try Self.query(host, session, "a")
        Self.expectDocumented(found)
        #expect(Self.loadLog(host).contains("cities.txt:1: the name is longer than 1000 bytes; row skipped"))
        #expect(host.openedFiles().isSubset(of: ["cities.txt"]))
    }

    @Test("NaN, infinite, hexadecimal and 400-digit coordinates and populations in rows are skipped")
    func nonNumbers() throws {
        // Fix: ByteText.double's fallback takes decimal spellings only (hexadecimal `0x10` was
        // read as 16) and fields of at most 32 bytes (a long field went whole to Double(_:)).
        let folder = try Self.folder()
        let row = LocationProviderTests.geonamesRow
        let rows = [
            row("1", "Nan", "Nan", "nan", "1", "CH", "", "1", "", "P"),
            row("2", "Inf", "Inf", "1", "-inf", "CH", "", "1", "", "P"),
            row("3", "Hex", "Hex", "1", "0x10", "CH", "", "1", "", "P"),
            row("4", "Long", "Long", "1" + String(repeating: "0", count: 400), "1", "CH", "", "1", "", "P"),
            row("5", "Pop", "Pop", "1", "1", "CH", "", "99999999999999999999", "", "P"),
        ] + Self.goodRows
        let path = try folder.write("cities.txt", rows.joined(separator: "\n") + "\n")
        let host = try Self.host(["gazetteer": .string(path)], watching: folder)
        let session = try Self.session(host)
        #expect(try Self.query(host, session, "hex")["result"]?["options"]?.arrayValue?.isEmpty == true)
        #expect(try Self.query(host, session, "basel")["result"]?["options"]?.arrayValue?.count == 1)
        let log = Self.loadLog(host)
        #expect(log.contains("Loaded 3 places"), "\(log)")
        #expect(log.contains("skipped 5 malformed rows"))
        #expect(host.openedFiles().isSubset(of: ["cities.txt"]))
    }

    @Test("a byte order mark, CRLF line ends and comment lines: every row is read")
    func bomAndCRLF() throws {
        // Fix: FileBytes.byteOrderMarkLength (the BOM made row 1's id "not a whole number").
        let folder = try Self.folder()
        let text = "\u{FEFF}# exported on Windows\r\n" + Self.goodRows.joined(separator: "\r\n") + "\r\n"
        let path = try folder.write("cities.txt", text)
        let countries = try folder.write(
            "countryInfo.txt", "\u{FEFF}# comment\r\n#ISO\tISO3\tISO-Numeric\tfips\tCountry\r\nCH\tCHE\t756\tSZ\tSwitzerland\r\n")
        let admin1 = try folder.write("admin1.txt", "\u{FEFF}CH.ZH\tZurich\tZurich\t2657895\r\n")
        let host = try Self.host(["gazetteer": .string(path), "countryInfo": .string(countries), "admin1Codes": .string(admin1)], watching: folder)
        let session = try Self.session(host)
        let options = try Self.query(host, session, "winterthur")["result"]?["options"]?.arrayValue ?? []
        #expect(options.first?["detail"] == "Zurich, Switzerland · pop. 91,908")
        #expect(!host.client.host.standardError.contains("skipped"), "\(host.client.host.standardError)")
        #expect(host.openedFiles().isSubset(of: ["cities.txt", "countryInfo.txt", "admin1.txt"]))
    }

    @Test("a gazetteer that is a FIFO: unavailable at once, not a load that waits forever")
    func fifoGazetteer() throws {
        // Fix: FileBytes.read opens with O_NONBLOCK (open(2) of a FIFO without a writer blocked).
        let folder = try Self.folder()
        try makeFIFO(folder.path + "/cities.txt")
        let host = try Self.host(["gazetteer": .string(folder.path + "/cities.txt")], watching: folder)
        let session = try Self.session(host)
        let answer = try Self.query(host, session, "zur", timeout: 5)
        #expect(answer["error"]?["code"] == -32013, "\(answer)")
        #expect(answer["error"]?["message"]?.stringValue?.contains("not a regular file") == true)
        #expect(host.openedFiles().isSubset(of: ["cities.txt"]))
    }

    @Test("countryInfo.txt and admin1 codes with megabyte lines and missing columns: names still shown")
    func hostileNameTables() throws {
        // Fix: NameTables refuses codes and names over 1,000 bytes (reported), BOM and CRLF.
        let folder = try Self.folder()
        let path = try folder.write("cities.txt", Self.goodRows.joined(separator: "\n") + "\n")
        let longLine = String(repeating: "x", count: 8 << 20)
        let countries = try folder.write("countryInfo.txt", "\(longLine)\nCH\tCHE\t756\tSZ\t\(longLine)\nonly\ttwo\nCH\tCHE\t756\tSZ\tSwitzerland\n")
        let host = try Self.host(["gazetteer": .string(path), "countryInfo": .string(countries)], watching: folder)
        let session = try Self.session(host)
        let options = try Self.query(host, session, "basel")["result"]?["options"]?.arrayValue ?? []
        #expect(options.first?["detail"]?.stringValue?.hasSuffix("Switzerland · pop. 164,488") == true, "\(options)")
        let log = Self.loadLog(host)
        #expect(log.utf8.count < 64 << 10, "the load log is \(log.utf8.count) bytes")
        #expect(log.contains("countryInfo.txt:1: expected at least 5 tab-separated columns, found 1; row skipped"))
        #expect(log.contains("countryInfo.txt:2: a code or name longer than 1000 bytes; row skipped"))
        #expect(host.openedFiles().isSubset(of: ["cities.txt", "countryInfo.txt"]))
    }

    @Test("currentLocationFile with a 16 MB first line: refused quickly, the message quotes 80 bytes")
    func hugeCurrentLocationFile() throws {
        // Fix: CurrentLocationSource reads 64 KiB, CoordinateParser.maximumLength (200 bytes) and
        // Quote.short (the line went whole into the parser and four times into the error).
        let folder = try Self.folder()
        let file = try folder.write("here.txt", String(repeating: "4", count: 16 << 20) + "\n47.37, 8.54\n")
        let host = try Self.host(["currentLocationFile": .string(file)], watching: folder)
        let answer = try host.request("collect/make", ["providerId": .string(Self.id)], timeout: 5)
        let message = try #require(answer["error"]?["message"]?.stringValue, "\(answer.jsonString.prefix(300))")
        #expect(message.contains("too long for a coordinate"))
        #expect(answer.jsonString.utf8.count < 4096, "an error of \(answer.jsonString.utf8.count) bytes")
        #expect(host.openedFiles().isSubset(of: ["here.txt"]))
    }

    @Test("currentLocationFile that is a FIFO: an error at once")
    func fifoCurrentLocationFile() throws {
        // Fix: FileBytes.read opens with O_NONBLOCK.
        let folder = try Self.folder()
        try makeFIFO(folder.path + "/here.txt")
        let host = try Self.host(["currentLocationFile": .string(folder.path + "/here.txt")], watching: folder)
        let answer = try host.request("collect/make", ["providerId": .string(Self.id)], timeout: 5)
        #expect(answer["error"]?["message"]?.stringValue?.contains("not a regular file") == true, "\(answer)")
        #expect(host.openedFiles().isSubset(of: ["here.txt"]))
    }

    @Test("currentLocationCommand that closes its output and keeps running: ends at the 5 s limit")
    func commandClosingOutput() throws {
        // Fix: CommandRunner waits for the command within the deadline and kills its process
        // group (after EOF it waited for the command without a limit).
        let host = try Self.host(["currentLocationCommand": "exec >&-; sleep 60"])
        let answer = try host.request("collect/make", ["providerId": .string(Self.id)], timeout: 9)
        #expect(answer["error"]?["message"]?.stringValue?.contains("did not finish within 5 s") == true, "\(answer)")
    }

    @Test("currentLocation settings geo:nan,0 and a 20-digit latitude: an error, not a trap",
          arguments: ["geo:nan,0", "99999999999999999999, 1", "geo:1e300,0"])
    func trappingCurrentLocation(_ text: String) throws {
        // Fix: Geo.fixed (UInt64 of NaN / 1e23 when the out-of-range message was written) and
        // CoordinateParser.decimal (geo: took nan, inf and exponents).
        let host = try Self.host(["currentLocation": .string(text)])
        let answer = try host.request("collect/make", ["providerId": .string(Self.id)])
        #expect(answer["error"]?["code"] == -32013, "\(answer)")
        #expect(answer["error"]?["data"]?["providerCode"] == 1001)
    }

    // MARK: Client requests

    @Test("placePage 2^53 with a coordinate query: an empty page, not a 2^53-place allocation")
    func hugePage() throws {
        // Fix: LocationProvider.maximumSearchResults bounds pages before any multiplication.
        let host = try Self.host([:])
        let session = try Self.session(host)
        for query in ["47.37, 8.54", "zur"] {
            let answer = try Self.query(host, session, query, page: 9_007_199_254_740_992)
            #expect(answer["result"]?["options"] == [], "\(answer)")
        }
    }

    @Test("placePage 14,000 of nearest places: answered at once (was a ranking of 140,000 places)")
    func deepPage() throws {
        // Fix: LocationProvider.maximumSearchResults (page × size nearest places were ranked by
        // insertion, quadratic in the count).
        let host = try Self.host([:])
        let session = try Self.session(host)
        // (Without the bound this took seconds even in a release build: 140,000 places ranked.)
        let answer = try Self.query(host, session, "47.37, 8.54", page: 14_000, timeout: 5)
        #expect(answer["result"]?["options"] == [], "\(answer)")
        let last = try Self.query(host, session, "a", page: 100, timeout: 5)
        #expect(last["result"]?["options"]?.arrayValue?.count == 10)
    }

    @Test("coordinates that trapped on submit: geo:1e300,0, geo:inf,0, 20-digit degrees",
          arguments: ["geo:1e300,0", "geo:inf,0", "geo:nan,nan", "99999999999999999999°0'N 1°E", "20000000000000000000, 0"])
    func trappingCoordinates(_ text: String) throws {
        // Fix: Geo.fixed, CoordinateParser.decimal.
        let host = try Self.host([:])
        let session = try Self.session(host)
        let answer = try host.request("collect/submit", ["sessionId": .string(session), "values": ["coordinates": .string(text)]])
        #expect(answer["result"]?["outcome"] == "invalid", "\(answer)")
        // The same text typed into the search field.
        Self.expectDocumented(try Self.query(host, session, text))
    }

    @Test("a megabyte query: answered, the coordinate parser refuses it before any work")
    func megabyteQuery() throws {
        // Fix: CoordinateParser.maximumLength.
        let host = try Self.host([:])
        let session = try Self.session(host)
        let answer = try Self.query(host, session, String(repeating: "1 ", count: 500_000), timeout: 5)
        Self.expectDocumented(answer)
    }

    @Test("forged items: infinite-looking place points and distances, negative populations",
          arguments: [
            #"{"latitude":47.37,"longitude":8.54,"source":"coordinates","placeName":"Zürich","placeLatitude":1e300,"placeLongitude":0,"distanceKilometres":1.5}"#,
            #"{"latitude":47.37,"longitude":8.54,"source":"coordinates","placeName":"Zürich","placeLatitude":47,"placeLongitude":8,"distanceKilometres":1e300}"#,
            #"{"latitude":47.37,"longitude":8.54,"source":"coordinates","placeName":"Zürich","distanceKilometres":-1e300}"#,
            #"{"latitude":47.37,"longitude":8.54,"source":"search","population":-9007199254740992}"#,
            #"{"latitude":1e999,"longitude":0}"#,
            #"{"latitude":-0,"longitude":-180,"source":"current","geonameId":9007199254740992,"timeZone":"Etc/GMT+12"}"#,
          ])
    func forgedItems(_ content: String) throws {
        // Fix: LocationContent checks placeLatitude/placeLongitude, distanceKilometres and
        // population (Geo.distanceLabel did Int(1e300), Geo.compass Int(NaN)); Geo.distanceLabel
        // and Geo.compass refuse non-finite values themselves too. (1e999 is refused by the JSON
        // reader: numbers beyond ±1.8e308.)
        let host = try Self.host([:])
        let value = (try? JSONValue(parsing: content)) ?? .string(content)
        for method in ["items/preview", "items/detail", "items/describe", "items/encode"] {
            if case .string = value {
                // Not JSON the test can build: send the text as it is.
                let id = host.client.send("ping")  // keep ids apart
                _ = try host.client.response(to: id)
                host.client.sendRaw(#"{"jsonrpc":"2.0","id":"raw","method":"\#(method)","params":{"item":{"id":"f","providerId":"\#(Self.id)","type":"location","displayName":"F","content":\#(content)}}}"#)
                let answer = try host.client.response(to: "raw")
                Self.expectDocumented(answer)
                try host.checkHealthy()
            } else {
                Self.expectDocumented(try host.request(method, ["item": Self.item(value)]))
            }
        }
    }

    @Test("forged items whose time zone names a file outside zoneinfo: not opened")
    func zoneEscape() throws {
        let folder = try Self.folder()
        let host = try Self.host([:], watching: folder)
        for zone in ["../../../../../../..\(folder.path)/decoy.txt", "\(folder.path)/decoy.txt", "Europe/../../../..\(folder.path)/decoy.txt"] {
            let content: JSONValue = ["latitude": 47.37, "longitude": 8.54, "source": "search", "placeName": "Z", "timeZone": .string(zone)]
            let answer = try host.request("items/detail", ["item": Self.item(content)])
            Self.expectDocumented(answer)
            #expect(answer.jsonString.contains("is not an IANA time zone name"))
        }
        #expect(host.openedFiles().isEmpty, "\(host.openedFiles())")
    }

    @Test("a forged item 250 levels deep: answered; one with a megabyte place name: -32602, not an oversized chip")
    func deepAndLongItems() throws {
        let host = try Self.host([:])
        var deep: JSONValue = 1
        for _ in 0..<240 { deep = ["x": deep] }
        Self.expectDocumented(try host.request("items/detail", ["item": Self.item(["latitude": 1, "longitude": 2, "extra": deep])]))
        // Fix: LocationContent refuses names over 1,000 bytes (the chip was 4 MB: -32014).
        let long = String(repeating: "Zü ", count: 350_000)
        for method in ["items/preview", "items/detail", "items/encode"] {
            let answer = try host.request(method, ["item": Self.item(["latitude": 1, "longitude": 2, "placeName": .string(long), "region": .string(long)])])
            #expect(answer["error"]?["code"] == -32602, "\(answer.jsonString.prefix(300))")
        }
    }
}
