import ContextProviderKit
import ProviderSupport
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why a gazetteer could not be used at all (missing or unreadable file, no valid rows).
struct GazetteerError: Error, Sendable, CustomStringConvertible {
    /// What went wrong, where, and how to fix it.
    var message: String
    var description: String { message }
}

/// An offline list of named places, indexed for prefix search and nearest-place lookup.
///
/// Reads two formats (detected per file):
/// - GeoNames `cities*.txt` / `allCountries.txt`: 19 tab-separated columns; only populated places
///   (feature class `P`) are kept;
/// - the bundled compact format (first line `# contexthost-gazetteer 1`): `geonameid, name,
///   asciiname, latitude, longitude, country code, admin1 code, population, time zone`.
///
/// Malformed rows are skipped and reported (`file:line: …`) in `diagnostics`.
final class Gazetteer: Sendable {
    /// The file the places came from.
    let path: String
    /// Which format the file was read as.
    let format: String
    /// GeoNames ids (or the file's own ids).
    let ids: [Int64]
    let names: [String]
    let asciiNames: [String]
    let latitudes: [Double]
    let longitudes: [Double]
    let countryCodes: [String]
    let admin1Codes: [String]
    let populations: [Int]
    let timeZones: [String]
    /// ISO code → country name.
    let countryNames: [String: String]
    /// `CC.admin1` → region name.
    let regionNames: [String: String]
    /// Rows skipped as malformed.
    let skippedRows: Int
    /// The first problems found (`file:line: message`), at most `maximumDiagnostics`.
    let diagnostics: [String]
    let search: SearchIndex
    let spatial: KDTree

    /// The most problems kept in `diagnostics`.
    static let maximumDiagnostics = 20
    /// The longest name or ASCII name kept, in UTF-8 bytes (GeoNames names are at most 200
    /// characters); a longer one is a malformed row. Search keys are made of names, so this also
    /// bounds the index a single row can make.
    static let maximumNameBytes = 1000
    /// The most places kept (all of GeoNames' populated places are about 5 million); rows past it
    /// are reported and skipped. Keeps place numbers within the index's 32-bit fields.
    static let maximumPlaces = 20_000_000
    /// The largest gazetteer file read (allCountries.txt is about 1.6 GB).
    static let maximumFileBytes = 4 << 30

    /// The number of places.
    var count: Int { ids.count }

    /// Loads a gazetteer file and optional GeoNames name tables (`countryInfo.txt`,
    /// `admin1CodesASCII.txt`). Throws when the file is missing, unreadable, or holds no valid place.
    convenience init(path: String, countryInfoPath: String?, admin1Path: String?, minimumPopulation: Int = 0) throws(GazetteerError) {
        let started = Profile.now()
        let bytes: [UInt8]
        do {
            bytes = try FileIO.readChecked(path, limit: Gazetteer.maximumFileBytes)
        } catch {
            throw GazetteerError(message: "Gazetteer \(path): \(error.message). Set the `gazetteer` setting to a GeoNames cities*.txt or allCountries.txt file, or restore data/location/cities15000.tsv.")
        }
        var tableDiagnostics: [String] = []
        let countryNames = countryInfoPath.map { NameTables.countries($0, diagnostics: &tableDiagnostics) } ?? [:]
        let regionNames = admin1Path.map { NameTables.admin1($0, diagnostics: &tableDiagnostics) } ?? [:]
        try self.init(
            bytes: bytes, path: path, countryNames: countryNames, regionNames: regionNames,
            tableDiagnostics: tableDiagnostics, minimumPopulation: minimumPopulation, started: started)
    }

    /// Reads a gazetteer file's bytes (`path` names it in messages).
    init(
        bytes: [UInt8], path: String, countryNames: [String: String] = [:], regionNames: [String: String] = [:],
        tableDiagnostics: [String] = [], minimumPopulation: Int = 0, started: Int = Profile.now()
    ) throws(GazetteerError) {
        self.path = path
        var rows = GazetteerRows(fileName: path, minimumPopulation: minimumPopulation)
        bytes.withUnsafeBufferPointer { buffer in
            rows.reserve(buffer.count / 64)
            var fields = [Range<Int>](repeating: 0..<0, count: 20)
            var lineNumber = 0
            // A UTF-8 byte order mark (written by some editors and Windows tools) is not data.
            var start = FileIO.byteOrderMarkLength(buffer)
            let end = buffer.count
            while start < end {
                lineNumber += 1
                var lineEnd = end
                if let newline = memchr(buffer.baseAddress! + start, 0x0A, end - start) {
                    lineEnd = buffer.baseAddress!.distance(to: newline.assumingMemoryBound(to: UInt8.self))
                }
                defer { start = lineEnd + 1 }
                var contentEnd = lineEnd
                if contentEnd > start, buffer[contentEnd - 1] == 0x0D { contentEnd -= 1 }
                if contentEnd == start { continue }
                rows.read(buffer, start..<contentEnd, line: lineNumber, fields: &fields)
            }
        }
        let (ids, names, asciiNames, latitudes, longitudes) = (rows.ids, rows.names, rows.asciiNames, rows.latitudes, rows.longitudes)
        let (diagnostics, skipped, compact) = (rows.diagnostics, rows.skipped, rows.compact)
        let (countryCodes, admin1Codes, populations, timeZones) = (rows.countryCodes, rows.admin1Codes, rows.populations, rows.timeZones)
        guard !ids.isEmpty else {
            let first = diagnostics.first.map { " First problem: \($0)." } ?? ""
            throw GazetteerError(message: "Gazetteer \(path) holds no valid places (\(skipped) malformed rows).\(first) Use a GeoNames cities*.txt file (19 tab-separated columns).")
        }
        self.format = compact ? "contexthost-gazetteer 1" : "GeoNames"
        self.ids = ids
        self.names = names
        self.asciiNames = asciiNames
        self.latitudes = latitudes
        self.longitudes = longitudes
        self.countryCodes = countryCodes
        self.admin1Codes = admin1Codes
        self.populations = populations
        self.timeZones = timeZones
        self.countryNames = countryNames
        self.regionNames = regionNames
        self.skippedRows = skipped
        self.diagnostics = diagnostics + tableDiagnostics
        let parsed = Profile.now()
        self.search = SearchIndex(names: names, asciiNames: asciiNames)
        let indexed = Profile.now()
        self.spatial = KDTree(latitudes: latitudes, longitudes: longitudes)
        Profile.report(
            "read+parse \(parsed - started) µs (\(ids.count) places), search index \(indexed - parsed) µs, k-d tree \(Profile.now() - indexed) µs")
    }

    /// The country name for a place, or its code when the name is unknown.
    func country(_ index: Int) -> String {
        let code = countryCodes[index]
        return countryNames[code] ?? code
    }

    /// The region (admin1) name for a place, or its code; `nil` when the place has none.
    func region(_ index: Int) -> String? {
        let code = admin1Codes[index]
        if code.isEmpty || code == "00" { return nil }
        return regionNames[countryCodes[index] + "." + code] ?? code
    }

    /// The index of the place with this id.
    func index(ofID id: Int64) -> Int? { ids.firstIndex(of: id) }

    /// The place nearest to a point and its distance in kilometres.
    func nearest(to latitude: Double, _ longitude: Double) -> (index: Int, kilometres: Double) {
        let (x, y, z) = Geo.unitVector(latitude: latitude, longitude: longitude)
        let found = spatial.nearest(x, y, z, count: 1)[0]
        return (Int(found.index), Geo.kilometres(chordSquared: found.chordSquared))
    }

    /// The `count` places nearest to a point, nearest first, with distances in kilometres.
    func nearest(to latitude: Double, _ longitude: Double, count: Int) -> [(index: Int, kilometres: Double)] {
        let (x, y, z) = Geo.unitVector(latitude: latitude, longitude: longitude)
        return spatial.nearest(x, y, z, count: count).map { (Int($0.index), Geo.kilometres(chordSquared: $0.chordSquared)) }
    }
}

/// The columns a gazetteer file is read into, one row at a time: what `Gazetteer.init(bytes:…)`
/// keeps, the rows it skipped and why.
private struct GazetteerRows {
    let fileName: String
    let minimumPopulation: Int
    var ids: [Int64] = [], names: [String] = [], asciiNames: [String] = []
    var latitudes: [Double] = [], longitudes: [Double] = []
    var countryCodes: [String] = [], admin1Codes: [String] = [], populations: [Int] = [], timeZones: [String] = []
    var diagnostics: [String] = []
    var skipped = 0
    /// The contexthost-gazetteer format (9 columns) rather than GeoNames (19).
    var compact = false
    private var formatDecided = false
    private var interned: [String: String] = [:]
    private var previousCountry: (range: Range<Int>, value: String)?
    private var previousAdmin1: (range: Range<Int>, value: String)?
    private var previousZone: (range: Range<Int>, value: String)?

    init(fileName: String, minimumPopulation: Int) {
        self.fileName = fileName
        self.minimumPopulation = minimumPopulation
    }

    mutating func reserve(_ estimate: Int) {
        ids.reserveCapacity(estimate); names.reserveCapacity(estimate); asciiNames.reserveCapacity(estimate)
        latitudes.reserveCapacity(estimate); longitudes.reserveCapacity(estimate)
        countryCodes.reserveCapacity(estimate); admin1Codes.reserveCapacity(estimate)
        populations.reserveCapacity(estimate); timeZones.reserveCapacity(estimate)
    }

    private mutating func report(_ line: Int, _ message: String) {
        skipped += 1
        if diagnostics.count < Gazetteer.maximumDiagnostics {
            diagnostics.append("\(fileName):\(line): \(message); row skipped")
        }
    }

    /// The text of `field`; neighbouring rows mostly share country, region and zone, so the
    /// previous row's string is reused when the bytes are the same, and equal strings are stored once.
    private static func shared(
        _ buffer: UnsafeBufferPointer<UInt8>, _ field: Range<Int>, _ previous: inout (range: Range<Int>, value: String)?,
        interned: inout [String: String]
    ) -> String {
        if let previous, ByteText.equal(buffer, field, previous.range) { return previous.value }
        var value = ByteText.string(buffer, field)
        if let existing = interned[value] { value = existing } else { interned[value] = value }
        previous = (field, value)
        return value
    }

    /// Splits `line` on tabs into `fields` (as many as fit); the number of fields in the line.
    private static func split(_ buffer: UnsafeBufferPointer<UInt8>, _ line: Range<Int>, into fields: inout [Range<Int>]) -> Int {
        var fieldCount = 0
        var fieldStart = line.lowerBound
        let contentEnd = line.upperBound
        while true {
            var fieldEnd = contentEnd
            if fieldStart < contentEnd, let tab = memchr(buffer.baseAddress! + fieldStart, 0x09, contentEnd - fieldStart) {
                fieldEnd = buffer.baseAddress!.distance(to: tab.assumingMemoryBound(to: UInt8.self))
            }
            if fieldCount < fields.count { fields[fieldCount] = fieldStart..<fieldEnd }
            fieldCount += 1
            if fieldEnd >= contentEnd { return fieldCount }
            fieldStart = fieldEnd + 1
        }
    }

    /// Reads one non-empty line (without its line break): a comment, a place, or a skipped row.
    mutating func read(_ buffer: UnsafeBufferPointer<UInt8>, _ content: Range<Int>, line lineNumber: Int, fields: inout [Range<Int>]) {
        if buffer[content.lowerBound] == UInt8(ascii: "#") {
            if lineNumber == 1, ByteText.hasPrefix(buffer, content, "# contexthost-gazetteer 1") {
                compact = true
                formatDecided = true
            }
            return
        }
        let fieldCount = Self.split(buffer, content, into: &fields)
        if !formatDecided {
            compact = fieldCount == 9
            formatDecided = true
        }
        let expected = compact ? 9 : 19
        guard fieldCount == expected else {
            report(lineNumber, "expected \(expected) tab-separated columns (\(compact ? "contexthost-gazetteer" : "GeoNames") format), found \(fieldCount)")
            return
        }
        if !compact {
            let featureClass = fields[6]
            // allCountries.txt holds every feature; keep populated places only.
            if !(featureClass.isEmpty || (featureClass.count == 1 && buffer[featureClass.lowerBound] == UInt8(ascii: "P"))) {
                return
            }
        }
        readPlace(buffer, fields, line: lineNumber)
    }

    /// Checks and keeps one place row, whose `fields` are split.
    private mutating func readPlace(_ buffer: UnsafeBufferPointer<UInt8>, _ fields: [Range<Int>], line lineNumber: Int) {
        let idField = fields[0]
        let nameField = fields[1], asciiField = fields[2]
        let latitudeField = compact ? fields[3] : fields[4]
        let longitudeField = compact ? fields[4] : fields[5]
        let populationField = compact ? fields[7] : fields[14]
        // Fields are quoted at most `Quote.limit` bytes long in messages.
        guard let id = ByteText.integer(buffer, idField) else {
            report(lineNumber, "geonameid \(Quote.short(bytes: buffer, idField)) is not a whole number")
            return
        }
        guard !nameField.isEmpty else {
            report(lineNumber, "the name is empty")
            return
        }
        guard nameField.count <= Gazetteer.maximumNameBytes, asciiField.count <= Gazetteer.maximumNameBytes else {
            report(lineNumber, "the name is longer than \(Gazetteer.maximumNameBytes) bytes")
            return
        }
        guard let latitude = ByteText.double(buffer, latitudeField), (-90...90).contains(latitude) else {
            report(lineNumber, "latitude \(Quote.short(bytes: buffer, latitudeField)) is not a number from -90 to 90")
            return
        }
        guard let longitude = ByteText.double(buffer, longitudeField), (-180...180).contains(longitude) else {
            report(lineNumber, "longitude \(Quote.short(bytes: buffer, longitudeField)) is not a number from -180 to 180")
            return
        }
        var population = 0
        if !populationField.isEmpty {
            guard let value = ByteText.integer(buffer, populationField), value >= 0 else {
                report(lineNumber, "population \(Quote.short(bytes: buffer, populationField)) is not a whole number")
                return
            }
            population = Int(value)
        }
        if population < minimumPopulation { return }
        guard ids.count < Gazetteer.maximumPlaces else {
            report(lineNumber, "more than \(Gazetteer.maximumPlaces) places")
            return
        }
        ids.append(id)
        let name = ByteText.string(buffer, nameField)
        names.append(name)
        asciiNames.append(
            asciiField.isEmpty || ByteText.equal(buffer, asciiField, nameField) ? name : ByteText.string(buffer, asciiField))
        latitudes.append(latitude)
        longitudes.append(longitude)
        let country = Self.shared(buffer, compact ? fields[5] : fields[8], &previousCountry, interned: &interned)
        let admin1 = Self.shared(buffer, compact ? fields[6] : fields[10], &previousAdmin1, interned: &interned)
        let zone = Self.shared(buffer, compact ? fields[8] : fields[17], &previousZone, interned: &interned)
        countryCodes.append(country)
        admin1Codes.append(admin1)
        populations.append(population)
        timeZones.append(zone)
    }
}

/// GeoNames name tables.
enum NameTables {
    /// `countryInfo.txt`: ISO code (column 1) → country name (column 5); `#` lines are comments.
    static func countries(_ path: String, diagnostics: inout [String]) -> [String: String] {
        table(path, keyColumn: 0, nameColumn: 4, minimumColumns: 5, diagnostics: &diagnostics)
    }

    /// `admin1CodesASCII.txt`: `CC.code` → name.
    static func admin1(_ path: String, diagnostics: inout [String]) -> [String: String] {
        table(path, keyColumn: 0, nameColumn: 1, minimumColumns: 2, diagnostics: &diagnostics)
    }

    /// The largest name table read (GeoNames' countryInfo.txt is 31 KB, admin1CodesASCII.txt 150 KB).
    static let maximumFileBytes = 64 << 20

    private static func table(
        _ path: String, keyColumn: Int, nameColumn: Int, minimumColumns: Int, diagnostics: inout [String]
    ) -> [String: String] {
        let bytes: [UInt8]
        do {
            bytes = try FileIO.readChecked(path, limit: maximumFileBytes)
        } catch {
            diagnostics.append("\(path): \(error.message); names are shown as codes")
            return [:]
        }
        return table(bytes: bytes, path: path, keyColumn: keyColumn, nameColumn: nameColumn, minimumColumns: minimumColumns, diagnostics: &diagnostics)
    }

    /// `countryInfo.txt` from its bytes.
    static func countries(bytes: [UInt8], path: String, diagnostics: inout [String]) -> [String: String] {
        table(bytes: bytes, path: path, keyColumn: 0, nameColumn: 4, minimumColumns: 5, diagnostics: &diagnostics)
    }

    /// `admin1CodesASCII.txt` from its bytes.
    static func admin1(bytes: [UInt8], path: String, diagnostics: inout [String]) -> [String: String] {
        table(bytes: bytes, path: path, keyColumn: 0, nameColumn: 1, minimumColumns: 2, diagnostics: &diagnostics)
    }

    private static func table(
        bytes: [UInt8], path: String, keyColumn: Int, nameColumn: Int, minimumColumns: Int, diagnostics: inout [String]
    ) -> [String: String] {
        var table: [String: String] = [:]
        var lineNumber = 0
        var body = bytes[...]
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { body = bytes.dropFirst(3) }
        for var line in body.split(separator: 0x0A, omittingEmptySubsequences: false) {
            lineNumber += 1
            if line.last == 0x0D { line = line.dropLast() }  // CRLF
            guard let first = line.first, first != UInt8(ascii: "#") else { continue }
            let columns = line.split(separator: 0x09, maxSplits: minimumColumns, omittingEmptySubsequences: false)
            guard columns.count >= minimumColumns, !columns[keyColumn].isEmpty,
                columns[keyColumn].count <= Gazetteer.maximumNameBytes, columns[nameColumn].count <= Gazetteer.maximumNameBytes
            else {
                if diagnostics.count < Gazetteer.maximumDiagnostics {
                    let problem = columns.count >= minimumColumns && !columns[keyColumn].isEmpty
                        ? "a code or name longer than \(Gazetteer.maximumNameBytes) bytes"
                        : "expected at least \(minimumColumns) tab-separated columns, found \(columns.count)"
                    diagnostics.append("\(path):\(lineNumber): \(problem); row skipped")
                }
                continue
            }
            table[String(decoding: columns[keyColumn], as: UTF8.self)] = String(decoding: columns[nameColumn], as: UTF8.self)
        }
        return table
    }
}

/// Byte-level field conversions for the hot loading loop.
enum ByteText {
    static func string(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        String(decoding: UnsafeBufferPointer(rebasing: buffer[range]), as: UTF8.self)
    }

    /// Whether two ranges hold the same bytes.
    static func equal(_ buffer: UnsafeBufferPointer<UInt8>, _ a: Range<Int>, _ b: Range<Int>) -> Bool {
        guard a.count == b.count else { return false }
        return memcmp(buffer.baseAddress! + a.lowerBound, buffer.baseAddress! + b.lowerBound, a.count) == 0
    }

    static func hasPrefix(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ prefix: String) -> Bool {
        let bytes = Array(prefix.utf8)
        guard range.count >= bytes.count else { return false }
        for (offset, byte) in bytes.enumerated() where buffer[range.lowerBound + offset] != byte { return false }
        return true
    }

    static func integer(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Int64? {
        guard !range.isEmpty, range.count <= 18 else { return nil }
        var value: Int64 = 0
        var index = range.lowerBound
        var negative = false
        if buffer[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
            guard index < range.upperBound else { return nil }
        }
        while index < range.upperBound {
            let digit = buffer[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value * 10 + Int64(digit)
            index += 1
        }
        return negative ? -value : value
    }

    private static let powers: [Double] = [1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15]

    /// Other decimal spellings (more than 15 digits, an exponent) through the standard library's
    /// parser; never `nan`, `inf` or hexadecimal.
    private static func fallbackDouble(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Double? {
        for index in range {
            switch buffer[index] {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "+"),
                UInt8(ascii: "e"), UInt8(ascii: "E"):
                continue
            default: return nil
            }
        }
        guard let value = Double(string(buffer, range)), value.isFinite else { return nil }
        return value
    }

    /// A plain decimal (`-12.345`), at most 32 bytes; other spellings fall back to the standard
    /// library parser.
    static func double(_ buffer: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Double? {
        guard !range.isEmpty, range.count <= 32 else { return nil }
        var index = range.lowerBound
        var negative = false
        if buffer[index] == UInt8(ascii: "-") || buffer[index] == UInt8(ascii: "+") {
            negative = buffer[index] == UInt8(ascii: "-")
            index += 1
        }
        var mantissa: UInt64 = 0
        var digits = 0
        var fractionDigits = 0
        var seenPoint = false
        while index < range.upperBound {
            let byte = buffer[index]
            if byte == UInt8(ascii: ".") {
                if seenPoint { return nil }
                seenPoint = true
            } else {
                let digit = byte &- UInt8(ascii: "0")
                guard digit < 10 else { return fallbackDouble(buffer, range) }
                mantissa = mantissa * 10 + UInt64(digit)
                digits += 1
                if seenPoint { fractionDigits += 1 }
                if digits > 15 { return fallbackDouble(buffer, range) }
            }
            index += 1
        }
        guard digits > 0 else { return nil }
        let value = Double(mantissa) / powers[fractionDigits]
        return negative ? -value : value
    }
}

/// Load-phase timings on stderr when `CONTEXTHOST_LOCATION_PROFILE` is set (for the benchmark).
enum Profile {
    static let enabled = getenv("CONTEXTHOST_LOCATION_PROFILE") != nil

    /// Monotonic microseconds.
    static func now() -> Int {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Int(time.tv_sec) * 1_000_000 + Int(time.tv_nsec) / 1000
    }

    static func report(_ message: String) {
        guard enabled else { return }
        writeStandardError("[com.contexthost.location] load: \(message)")
    }
}
