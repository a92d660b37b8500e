import ContextProviderKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// What the provider keeps of a CalDAV account in its data folder (`caldav-cache.json`): the
/// calendar home, each calendar's name, sync token and resources (href, ETag, iCalendar data),
/// and when each was last read from the server. Never the password or any header.
struct CalDAVCache: Sendable, Equatable {
    struct Resource: Sendable, Equatable {
        var etag: String?
        var data: [UInt8]
    }

    struct Calendar: Sendable, Equatable {
        var href: String
        var name: String
        var syncToken: String?
        /// The server has no `sync-collection`: the calendar is read with `calendar-query` over
        /// the window each time.
        var usesQuery = false
        /// When it was last read from the server (UTC seconds).
        var syncedAt: Int
        var resources: [String: Resource] = [:]
    }

    /// `url|user`: a cache made for another account is not used.
    var account: String
    var home: String?
    var calendars: [Calendar] = []
    /// The last complete sync (UTC seconds).
    var syncedAt: Int?

    static let fileName = "caldav-cache.json"
    /// The most a cache file may hold (a 5,000-event calendar is about 3 MB).
    static let maximumBytes = 256 << 20
    static let formatVersion = 1

    var json: JSONValue {
        var object: JSONObject = [
            "version": .number(Double(Self.formatVersion)), "account": .string(account),
            "calendars": .array(
                calendars.map { calendar in
                    var entry: JSONObject = [
                        "href": .string(calendar.href), "name": .string(calendar.name),
                        "usesQuery": .bool(calendar.usesQuery), "syncedAt": .number(Double(calendar.syncedAt)),
                        "resources": .array(
                            calendar.resources.sorted { $0.key < $1.key }.map { href, resource in
                                var item: JSONObject = [
                                    "href": .string(href), "data": .string(String(decoding: resource.data, as: UTF8.self)),
                                ]
                                if let etag = resource.etag { item["etag"] = .string(etag) }
                                return .object(item)
                            }),
                    ]
                    if let token = calendar.syncToken { entry["syncToken"] = .string(token) }
                    return .object(entry)
                }),
        ]
        if let home { object["home"] = .string(home) }
        if let syncedAt { object["syncedAt"] = .number(Double(syncedAt)) }
        return .object(object)
    }

    init(account: String) {
        self.account = account
    }

    /// Reads a cache file's JSON; nil when it is not one this version wrote (then the account
    /// is read afresh).
    init?(json: JSONValue) {
        guard json["version"]?.intValue == Self.formatVersion, let account = json["account"]?.stringValue else {
            return nil
        }
        self.account = account
        home = json["home"]?.stringValue
        syncedAt = json["syncedAt"]?.intValue
        for entry in json["calendars"]?.arrayValue ?? [] {
            guard let href = entry["href"]?.stringValue, let name = entry["name"]?.stringValue,
                let syncedAt = entry["syncedAt"]?.intValue
            else { return nil }
            var calendar = Calendar(
                href: href, name: name, syncToken: entry["syncToken"]?.stringValue,
                usesQuery: entry["usesQuery"]?.boolValue ?? false, syncedAt: syncedAt)
            for item in entry["resources"]?.arrayValue ?? [] {
                guard let itemHref = item["href"]?.stringValue, let data = item["data"]?.stringValue else { return nil }
                calendar.resources[itemHref] = Resource(etag: item["etag"]?.stringValue, data: Array(data.utf8))
            }
            calendars.append(calendar)
        }
    }

    /// The cache in `folder`, or nil when there is none or it cannot be read.
    static func load(folder: String) -> CalDAVCache? {
        guard let bytes = FileIO.read(folder + "/" + fileName, limit: maximumBytes),
            let json = try? JSONValue(parsing: bytes)
        else { return nil }
        return CalDAVCache(json: json)
    }

    /// Writes the cache to `folder` (a temporary file renamed over the old one, mode 0600).
    func save(folder: String) throws(CalDAVError) {
        let path = folder + "/" + Self.fileName
        guard FileIO.writeAtomically(path, json.jsonBytes) else {
            throw .transport(
                "cannot write the CalDAV cache \(path): \(String(cString: strerror(errno)))",
                hint: "check that the provider's data folder is writable")
        }
    }

    /// How many bytes of calendar data it holds.
    var dataBytes: Int { calendars.reduce(0) { $0 + $1.resources.values.reduce(0) { $0 + $1.data.count } } }
}

extension FileIO {
    /// Writes `bytes` to `path` through a temporary file in the same folder, renamed over it:
    /// readers see the old or the new file, never half of one. Mode 0600.
    static func writeAtomically(_ path: String, _ bytes: [UInt8]) -> Bool {
        let temporary = path + ".tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return false }
        var written = 0
        let ok = bytes.withUnsafeBytes { buffer -> Bool in
            while written < buffer.count {
                let count = write(fd, buffer.baseAddress! + written, buffer.count - written)
                if count < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                written += count
            }
            return true
        }
        let synced = ok && fsync(fd) == 0
        let closed = close(fd) == 0
        guard synced, closed else {
            unlink(temporary)
            return false
        }
        guard rename(temporary, path) == 0 else {
            unlink(temporary)
            return false
        }
        return true
    }
}
