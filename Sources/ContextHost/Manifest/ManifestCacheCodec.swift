import ContextProviderKit

/// The registry cache's binary encoding: little-endian, LEB128 varints, and strings as indexes
/// into a table of distinct strings (field paths, folders, library names… repeat across
/// manifests, so each is stored and decoded once). Small and fast to read back (no JSON trees, no
/// Codable); see `ManifestCache`.
struct CacheEncoder {
    var bytes: [UInt8] = []
    /// Distinct strings in first-use order, and each one's index.
    private(set) var table: [String] = []
    private var indexes: [String: Int] = [:]

    init() {
        bytes.reserveCapacity(64 * 1024)
    }

    /// The string table followed by the bytes: what `CacheDecoder(tableAndBody:)` reads.
    var tableAndBody: [UInt8] {
        var result = CacheEncoder()
        result.varint(UInt64(table.count))
        for text in table { result.rawString(text) }
        result.bytes.append(contentsOf: bytes)
        return result.bytes
    }

    mutating func byte(_ value: UInt8) { bytes.append(value) }

    mutating func varint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            bytes.append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        bytes.append(UInt8(value))
    }

    /// Signed integers, zigzag-encoded so small negative numbers stay short.
    mutating func int(_ value: Int64) { varint(UInt64(bitPattern: (value << 1) ^ (value >> 63))) }
    mutating func int(_ value: Int) { int(Int64(value)) }

    mutating func fixed64(_ value: UInt64) {
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }

    /// A string, as its index in the table.
    mutating func string(_ value: String) {
        if let index = indexes[value] {
            varint(UInt64(index))
        } else {
            indexes[value] = table.count
            varint(UInt64(table.count))
            table.append(value)
        }
    }

    /// A string's length and UTF-8 bytes.
    mutating func rawString(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            varint(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func optionalString(_ value: String?) {
        bool(value != nil)
        if let value { string(value) }
    }

    mutating func strings(_ values: [String]) {
        list(values) { $0.string($1) }
    }

    /// A count, then each element as `write` puts it: the one shape of every list in the cache
    /// (`CacheDecoder.list` reads it back).
    mutating func list<C: Collection>(_ elements: C, _ write: (inout CacheEncoder, C.Element) -> Void) {
        varint(UInt64(elements.count))
        for element in elements { write(&self, element) }
    }

    /// A presence flag, then the value as `write` puts it when there is one (`CacheDecoder.optional`).
    mutating func optional<T>(_ value: T?, _ write: (inout CacheEncoder, T) -> Void) {
        bool(value != nil)
        if let value { write(&self, value) }
    }

    mutating func json(_ value: JSONValue) {
        switch value {
        case .null: byte(0)
        case .bool(let flag): byte(flag ? 2 : 1)
        case .number(let number):
            byte(3)
            fixed64(number.bitPattern)
        case .string(let text):
            byte(4)
            string(text)
        case .array(let elements):
            byte(5)
            varint(UInt64(elements.count))
            for element in elements { json(element) }
        case .object(let object):
            byte(6)
            varint(UInt64(object.count))
            for (key, member) in object {
                string(key)
                json(member)
            }
        }
    }
}

/// Why a registry cache could not be read or written.
package struct CacheFormatError: Error, Sendable {
    package var reason: String
}

/// Reads what `CacheEncoder` wrote, checking every length against the bytes that are left.
struct CacheDecoder {
    let bytes: UnsafeRawBufferPointer
    var position: Int
    /// The string table, read first.
    private var table: [String] = []

    init(_ bytes: UnsafeRawBufferPointer, position: Int = 0) {
        self.bytes = bytes
        self.position = position
    }

    /// A decoder for `CacheEncoder.tableAndBody`: reads the string table, then stands at the body.
    init(tableAndBody bytes: UnsafeRawBufferPointer) throws(CacheFormatError) {
        self.init(bytes)
        let count = try count()
        table.reserveCapacity(count)
        for _ in 0..<count { table.append(try rawString()) }
    }

    var isAtEnd: Bool { position == bytes.count }

    static let truncated = CacheFormatError(reason: "it ends in the middle of an entry (truncated)")

    mutating func byte() throws(CacheFormatError) -> UInt8 {
        guard position < bytes.count else { throw Self.truncated }
        defer { position += 1 }
        return bytes[position]
    }

    @inline(__always)
    mutating func varint() throws(CacheFormatError) -> UInt64 {
        // Most numbers in a cache (string indexes, counts, lines, columns) fit in one byte.
        if position < bytes.count {
            let first = bytes[position]
            if first < 0x80 {
                position += 1
                return UInt64(first)
            }
        }
        return try longVarint()
    }

    private mutating func longVarint() throws(CacheFormatError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let next = try byte()
            guard shift < 64 else { throw CacheFormatError(reason: "a number is too long") }
            result |= UInt64(next & 0x7F) << shift
            if next & 0x80 == 0 { return result }
            shift += 7
        }
    }

    mutating func int64() throws(CacheFormatError) -> Int64 {
        let raw = try varint()
        return Int64(bitPattern: (raw >> 1) ^ (0 &- (raw & 1)))
    }

    mutating func int() throws(CacheFormatError) -> Int {
        let value = try int64()
        guard let result = Int(exactly: value) else { throw CacheFormatError(reason: "a number is out of range") }
        return result
    }

    /// A count of things that each take at least one byte (so a corrupt count cannot ask for
    /// more memory than the file has bytes).
    mutating func count() throws(CacheFormatError) -> Int {
        let value = try varint()
        guard value <= UInt64(bytes.count - position) else { throw Self.truncated }
        return Int(value)
    }

    mutating func fixed64() throws(CacheFormatError) -> UInt64 {
        guard bytes.count - position >= 8 else { throw Self.truncated }
        defer { position += 8 }
        return bytes.loadUnaligned(fromByteOffset: position, as: UInt64.self).littleEndian
    }

    mutating func bool() throws(CacheFormatError) -> Bool {
        switch try byte() {
        case 0: return false
        case 1: return true
        default: throw CacheFormatError(reason: "a flag is neither 0 nor 1")
        }
    }

    /// A string from the table.
    mutating func string() throws(CacheFormatError) -> String {
        let index = try varint()
        guard index < UInt64(table.count) else { throw CacheFormatError(reason: "a string index is out of range") }
        return table[Int(index)]
    }

    mutating func rawString() throws(CacheFormatError) -> String {
        let length = try count()
        defer { position += length }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[position..<(position + length)]), as: UTF8.self)
    }

    mutating func optionalString() throws(CacheFormatError) -> String? {
        try bool() ? try string() : nil
    }

    mutating func strings() throws(CacheFormatError) -> [String] {
        try list { decoder throws(CacheFormatError) in try decoder.string() }
    }

    /// What `CacheEncoder.list` wrote: a count, then that many elements, each read by `read`.
    mutating func list<T>(_ read: (inout CacheDecoder) throws(CacheFormatError) -> T) throws(CacheFormatError) -> [T] {
        let count = try count()
        var result: [T] = []
        result.reserveCapacity(count)
        for _ in 0..<count { result.append(try read(&self)) }
        return result
    }

    /// What `CacheEncoder.optional` wrote: nil after a clear flag, else the value `read` reads.
    mutating func optional<T>(_ read: (inout CacheDecoder) throws(CacheFormatError) -> T) throws(CacheFormatError) -> T? {
        try bool() ? try read(&self) : nil
    }

    mutating func json(depth: Int = 0) throws(CacheFormatError) -> JSONValue {
        guard depth < JSONReader.maximumDepth else { throw CacheFormatError(reason: "a value is nested too deeply") }
        switch try byte() {
        case 0: return .null
        case 1: return .bool(false)
        case 2: return .bool(true)
        case 3: return .number(Double(bitPattern: try fixed64()))
        case 4: return .string(try string())
        case 5:
            let count = try count()
            var elements: [JSONValue] = []
            elements.reserveCapacity(count)
            for _ in 0..<count { elements.append(try json(depth: depth + 1)) }
            return .array(elements)
        case 6:
            let count = try count()
            var object = JSONObject()
            for _ in 0..<count {
                let key = try string()
                object[key] = try json(depth: depth + 1)
            }
            return .object(object)
        case let tag:
            throw CacheFormatError(reason: "unknown value tag \(tag)")
        }
    }

    /// One of an enum's raw values.
    mutating func member<T: RawRepresentable>(_: T.Type) throws(CacheFormatError) -> T where T.RawValue == String {
        let raw = try string()
        guard let value = T(rawValue: raw) else { throw CacheFormatError(reason: "unknown \(T.self) '\(raw)'") }
        return value
    }
}

/// The cache file's checksum: a 64-bit multiply-xorshift hash over 8-byte words (fast; not for
/// security: it catches torn and corrupted files).
enum CacheChecksum {
    static func of(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var hash: UInt64 = 0x9E37_79B9_7F4A_7C15 ^ UInt64(bytes.count)
        var offset = 0
        while offset + 8 <= bytes.count {
            hash = (hash ^ bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian) &* 0xFF51_AFD7_ED55_8CCD
            hash ^= hash >> 32
            offset += 8
        }
        while offset < bytes.count {
            hash = (hash ^ UInt64(bytes[offset])) &* 0xC4CE_B9FE_1A85_EC53
            hash ^= hash >> 29
            offset += 1
        }
        return hash
    }

    static func of(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { of($0) } }
}

/// 64-bit FNV-1a, for the folder-set hash in the cache's file name.
enum FNV1a {
    static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0xcbf2_9ce4_8422_2325) -> UInt64 {
        var hash = seed
        for byte in bytes {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01B3
        }
        return hash
    }

    static func hash(_ bytes: [UInt8]) -> UInt64 {
        bytes.withUnsafeBytes { hash($0) }
    }
}

// MARK: Manifests

extension CacheEncoder {
    mutating func manifest(_ manifest: Manifest) {
        int(manifest.manifestVersion)
        string(manifest.id)
        localizedText(manifest.title)
        if let summary = manifest.summary {
            byte(1)
            localizedText(summary)
        } else {
            byte(0)
        }
        string(manifest.iconName)
        version(manifest.version)
        string(manifest.library)
        optionalString(manifest.sha256)
        list(manifest.libraries) {
            $0.string($1.platform)
            $0.string($1.path)
        }
        string(manifest.runtime?.text ?? "")
        int(manifest.priority)
        int(manifest.maximumAttachmentCount)
        bool(manifest.usesContainerPanel)
        string(manifest.collection.rawValue)
        string(manifest.isolation.rawValue)
        strings(manifest.availability.platforms.map(\.rawValue))
        optional(manifest.availability.host) { encoder, range in
            encoder.list(range.comparators) {
                $0.string($1.op.rawValue)
                $0.version($1.version)
            }
        }
        strings(manifest.availability.permissions.map(\.rawValue))
        list(manifest.settings) { encoder, setting in
            encoder.string(setting.name)
            encoder.string(setting.type.rawValue)
            encoder.optional(setting.defaultValue) { $0.json($1) }
            encoder.optionalString(setting.description)
            encoder.bool(setting.isRequired)
            encoder.bool(setting.isWritable)
            encoder.optional(setting.inject) { $0.json($1.json) }
        }
        optional(manifest.network) { $0.json($1.json) }
        for timeout in [manifest.timeouts.collect, manifest.timeouts.preview, manifest.timeouts.detail, manifest.timeouts.encode] {
            int(timeout.components.seconds)
            int(timeout.components.attoseconds)
        }
        string(manifest.manifestPath)
        string(manifest.directory)
        optionalString(manifest.schemaReference)
        let sourceLocations = manifest.sourceLocations
        list(sourceLocations.fields.indices) {
            $0.string(sourceLocations.fields[$1])
            $0.int(sourceLocations.locations[$1].line)
            $0.int(sourceLocations.locations[$1].column)
        }
    }

    mutating func localizedText(_ text: LocalizedText) {
        list(text.entries) {
            $0.string($1.locale)
            $0.string($1.text)
        }
    }

    mutating func version(_ version: Version) {
        int(version.major)
        int(version.minor)
        int(version.patch)
        strings(version.prerelease)
        strings(version.build)
    }

    mutating func rejection(_ rejection: ManifestRejection) {
        string(rejection.path)
        optionalString(rejection.id)
        list(rejection.diagnostics) {
            $0.string($1.file)
            $0.int($1.line)
            $0.int($1.column)
            $0.string($1.fieldPath)
            $0.string($1.code.rawValue)
            $0.string($1.message)
            $0.string($1.hint)
        }
    }
}

extension CacheDecoder {
    mutating func manifest() throws(CacheFormatError) -> Manifest {
        let manifestVersion = try int()
        let id = try string()
        let title = try localizedText()
        let summary: LocalizedText?
        switch try byte() {
        case 0: summary = nil
        case 1: summary = try localizedText()
        default: throw CacheFormatError(reason: "a description flag is not 0 or 1")
        }
        let iconName = try string()
        let version = try version()
        let library = try string()
        let sha256 = try optionalString()
        let libraries = try list { decoder throws(CacheFormatError) in PlatformLibrary(platform: try decoder.string(), path: try decoder.string()) }
        let runtimeText = try string()
        var runtime: ProviderRuntime?
        if !runtimeText.isEmpty {
            guard let parsed = ProviderRuntime(text: runtimeText) else { throw CacheFormatError(reason: "an unknown runtime") }
            runtime = parsed
        }
        let priority = try int()
        let maximumAttachmentCount = try int()
        let usesContainerPanel = try bool()
        let collection = try member(CollectionMode.self)
        let isolation = try member(IsolationMode.self)
        let platforms = try list { decoder throws(CacheFormatError) in try decoder.member(ManifestPlatform.self) }
        let host = try optional { decoder throws(CacheFormatError) in
            VersionRange(
                try decoder.list { decoder throws(CacheFormatError) in
                    let op = try decoder.member(VersionRange.Operator.self)
                    return VersionRange.Comparator(op, try decoder.version())
                })
        }
        let permissions = try strings().map(ManifestPermission.init(rawValue:))
        let settings = try list { decoder throws(CacheFormatError) in
            let name = try decoder.string()
            let type = try decoder.member(SettingType.self)
            // `optional` answers `JSONValue?`: absent is nil, not `.null` (JSONValue is ExpressibleByNilLiteral).
            let defaultValue = try decoder.optional { decoder throws(CacheFormatError) in try decoder.json() }
            let description = try decoder.optionalString()
            var setting = ManifestSetting(
                name: name, type: type, defaultValue: defaultValue, description: description, isRequired: try decoder.bool())
            setting.isWritable = try decoder.bool()
            setting.inject = try decoder.optional { decoder throws(CacheFormatError) in
                guard let inject = SecretInjection(json: try decoder.json()) else { throw CacheFormatError(reason: "an unreadable inject") }
                return inject
            }
            return setting
        }
        let network = try optional { decoder throws(CacheFormatError) in
            guard let policy = NetworkPolicy(json: try decoder.json()) else { throw CacheFormatError(reason: "an unreadable network policy") }
            return policy
        }
        var durations: [Duration] = []
        for _ in 0..<4 { durations.append(Duration(secondsComponent: try int64(), attosecondsComponent: try int64())) }
        let manifestPath = try string()
        let directory = try string()
        let schemaReference = try optionalString()
        let locationCount = try count()
        var fields: [String] = []
        var positions: [Manifest.SourceLocation] = []
        fields.reserveCapacity(locationCount)
        positions.reserveCapacity(locationCount)
        for _ in 0..<locationCount {
            fields.append(try string())
            positions.append(Manifest.SourceLocation(line: try int(), column: try int()))
        }
        guard let locations = Manifest.SourceLocations(sortedFields: fields, locations: positions) else {
            throw CacheFormatError(reason: "source locations are not in order")
        }
        var manifest = Manifest(
            manifestVersion: manifestVersion, id: id, title: title, iconName: iconName, version: version,
            library: library, sha256: sha256, priority: priority, maximumAttachmentCount: maximumAttachmentCount,
            usesContainerPanel: usesContainerPanel, collection: collection, isolation: isolation,
            availability: Availability(platforms: platforms, host: host, permissions: permissions), settings: settings,
            timeouts: Timeouts(collect: durations[0], preview: durations[1], detail: durations[2], encode: durations[3]),
            manifestPath: manifestPath, directory: directory, schemaReference: schemaReference,
            sourceLocations: locations)
        manifest.libraries = libraries
        manifest.runtime = runtime
        manifest.summary = summary
        manifest.network = network
        return manifest
    }

    mutating func localizedText() throws(CacheFormatError) -> LocalizedText {
        let entries = try list { decoder throws(CacheFormatError) in LocalizedText.Entry(locale: try decoder.string(), text: try decoder.string()) }
        guard !entries.isEmpty else { throw CacheFormatError(reason: "a title has no text") }
        return LocalizedText(entries: entries)
    }

    mutating func version() throws(CacheFormatError) -> Version {
        Version(try int(), try int(), try int(), prerelease: try strings(), build: try strings())
    }

    mutating func rejection() throws(CacheFormatError) -> ManifestRejection {
        let path = try string()
        let id = try optionalString()
        let diagnostics = try list { decoder throws(CacheFormatError) in
            ManifestDiagnostic(
                file: try decoder.string(), line: try decoder.int(), column: try decoder.int(), fieldPath: try decoder.string(),
                code: ManifestErrorCode(rawValue: try decoder.string()), message: try decoder.string(), hint: try decoder.string())
        }
        return ManifestRejection(path: path, id: id, diagnostics: diagnostics)
    }
}
