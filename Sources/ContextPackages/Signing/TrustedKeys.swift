import ContextHost
import ContextProviderKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The user's trusted signing keys: `trusted-keys.json` in the configuration folder. Each key may
/// sign only the provider ids its scopes match.
///
/// ```json
/// {
///   "format": 1,
///   "keys": [
///     {"id": "BCC2D9A305EDF90C", "publicKey": "RWQM+e0F…", "scopes": ["com.example.weather"], "comment": "Example Inc.", "expires": "2027-06-30"}
///   ]
/// }
/// ```
///
/// `expires` is optional: the last day (UTC) the key may sign what is installed; from the next day
/// it is refused (`key-expired`).
package struct TrustedKeys: Sendable, Equatable {
    /// One trusted key and what it may sign.
    package struct Key: Sendable, Equatable {
        /// The public key (with its id).
        package var publicKey: MinisignPublicKey
        /// What it may sign: `*`, `com.example.*` (ids starting `com.example.`) or an exact id.
        package var scopes: [String]
        /// Who the key belongs to, for the user (not used for decisions).
        package var comment: String
        /// The last day (`YYYY-MM-DD`, UTC) it is accepted; nil: no end.
        package var expires: String?

        /// A key entry.
        package init(publicKey: MinisignPublicKey, scopes: [String], comment: String, expires: String? = nil) {
            self.publicKey = publicKey
            self.scopes = scopes
            self.comment = comment
            self.expires = expires
        }
    }

    /// The trusted keys, in the order they were added.
    package var keys: [Key]

    /// The file's name in the configuration folder.
    package static let fileName = "trusted-keys.json"
    /// The format version this host reads and writes.
    static let format = 1
    /// The largest file accepted.
    static let maxFileBytes = 1 << 20
    /// The most keys, scopes per key, and comment bytes accepted.
    static let maxKeys = 1000, maxScopes = 100, maxCommentBytes = 1024

    /// No keys.
    package init(keys: [Key] = []) {
        self.keys = keys
    }

    // MARK: File

    /// Reads the file. Missing file → empty. Invalid (or writable by other users) → keyInvalid
    /// naming the file and what is wrong; unreadable → storeIO.
    package static func load(file path: String) throws(PackageError) -> TrustedKeys {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            if errno == ENOENT { return TrustedKeys() }
            throw ioError(path, "cannot open it")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw ioError(path, "cannot read its status") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw invalid(path, "it is not a regular file") }
        guard info.st_mode & 0o022 == 0, info.st_uid == geteuid() else {
            throw PackageError(
                .keyInvalid, "The trusted keys file '\(path)' is writable by other users or owned by another user, so it cannot be trusted.",
                fix: "Check its contents, then `chmod 600 '\(path)'` (and make it yours).")
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ioError(path, "cannot read it")
            }
            if count == 0 { break }
            bytes += chunk[0..<count]
            guard bytes.count <= maxFileBytes else { throw invalid(path, "it is over \(maxFileBytes) bytes") }
        }
        return try TrustedKeys(parsing: bytes, file: path)
    }

    /// Decodes the file's bytes (`file` names it in errors). keyInvalid saying what is wrong.
    package init(parsing bytes: [UInt8], file: String) throws(PackageError) {
        guard bytes.count <= Self.maxFileBytes else { throw Self.invalid(file, "it is over \(Self.maxFileBytes) bytes") }
        let json: JSONValue
        do {
            json = try JSONValue(parsing: bytes)
        } catch {
            throw Self.invalid(file, "it is not valid JSON (\(error))")
        }
        guard let root = json.objectValue else { throw Self.invalid(file, "it is not a JSON object") }
        guard let format = root["format"]?.intValue else { throw Self.invalid(file, "'format' is missing or not an integer") }
        guard format == Self.format else {
            throw Self.invalid(file, "its format \(format) is not one this host reads (\(Self.format))")
        }
        guard let entries = root["keys"]?.arrayValue else { throw Self.invalid(file, "'keys' is missing or not an array") }
        guard entries.count <= Self.maxKeys else { throw Self.invalid(file, "it lists over \(Self.maxKeys) keys") }
        var keys: [Key] = []
        for (index, entry) in entries.enumerated() {
            let at = "keys[\(index)]"
            guard let object = entry.objectValue else { throw Self.invalid(file, "\(at) is not an object") }
            guard let text = object["publicKey"]?.stringValue else { throw Self.invalid(file, "\(at).publicKey is missing or not a string") }
            let publicKey: MinisignPublicKey
            do {
                publicKey = try MinisignPublicKey(parsing: text)
            } catch {
                throw Self.invalid(file, "\(at).publicKey: \(error.message)")
            }
            guard let id = object["id"]?.stringValue else { throw Self.invalid(file, "\(at).id is missing or not a string") }
            guard MinisignFormat.keyID(parsing: id) == publicKey.keyID else {
                throw Self.invalid(file, "\(at).id '\(Self.shortened(id))' is not the id of its public key (\(publicKey.keyIDString))")
            }
            guard let scopeValues = object["scopes"]?.arrayValue else { throw Self.invalid(file, "\(at).scopes is missing or not an array") }
            var scopes: [String] = []
            for value in scopeValues {
                guard let scope = value.stringValue else { throw Self.invalid(file, "\(at).scopes holds a non-string") }
                scopes.append(scope)
            }
            if let problem = Self.scopesProblem(scopes) { throw Self.invalid(file, "\(at).scopes: \(problem)") }
            let comment: String
            switch object["comment"] {
            case nil: comment = ""
            case .string(let text)?:
                guard text.utf8.count <= Self.maxCommentBytes else {
                    throw Self.invalid(file, "\(at).comment is over \(Self.maxCommentBytes) bytes")
                }
                comment = MinisignFormat.oneLine(text, maxBytes: Self.maxCommentBytes)
            default: throw Self.invalid(file, "\(at).comment is not a string")
            }
            var expires: String?
            switch object["expires"] {
            case nil, .null?: expires = nil
            case .string(let text)?:
                guard Self.isDate(text) else {
                    throw Self.invalid(file, "\(at).expires '\(Self.shortened(text))' is not a date such as 2027-06-30")
                }
                expires = text
            default: throw Self.invalid(file, "\(at).expires is not a string")
            }
            guard !keys.contains(where: { $0.publicKey.keyID == publicKey.keyID }) else {
                throw Self.invalid(file, "key \(publicKey.keyIDString) is listed twice")
            }
            keys.append(Key(publicKey: publicKey, scopes: scopes, comment: comment, expires: expires))
        }
        self.keys = keys
    }

    /// The file's text: one key per line, stable order.
    package var jsonText: String {
        var output: [UInt8] = []
        output += "{\n  \"format\": \(Self.format),\n  \"keys\": [".utf8
        for (index, key) in keys.enumerated() {
            output += (index == 0 ? "\n    " : ",\n    ").utf8
            output += "{\"id\": ".utf8
            JSONWriter.appendString(key.publicKey.keyIDString, to: &output)
            output += ", \"publicKey\": ".utf8
            JSONWriter.appendString(key.publicKey.base64, to: &output)
            output += ", \"scopes\": [".utf8
            for (position, scope) in key.scopes.enumerated() {
                if position > 0 { output += ", ".utf8 }
                JSONWriter.appendString(scope, to: &output)
            }
            output += "], \"comment\": ".utf8
            JSONWriter.appendString(key.comment, to: &output)
            if let expires = key.expires {
                output += ", \"expires\": ".utf8
                JSONWriter.appendString(expires, to: &output)
            }
            output += "}".utf8
        }
        output += (keys.isEmpty ? "]\n}\n" : "\n  ]\n}\n").utf8
        return String(decoding: output, as: UTF8.self)
    }

    /// Writes the file atomically: a temporary file in the same folder (0600), fsync, rename over
    /// the old file, fsync of the folder. The folder is created 0700 if missing. storeIO on failure
    /// (the old file is then unchanged).
    package func save(file path: String) throws(PackageError) {
        let folder = Self.folder(of: path)
        if let failure = Directories.make(folder, mode: 0o700) {
            errno = failure.errno
            throw Self.ioError(path, "cannot create the folder '\(failure.folder)'")
        }
        if let reason = AtomicFile.write(Array(jsonText.utf8), to: path, mode: 0o600) {
            throw PackageError(
                .storeIO, "Cannot write the trusted keys file '\(path)': \(reason); it is unchanged.",
                fix: "Free disk space or fix the folder's permissions, then run the command again.")
        }
    }

    // MARK: Keys and scopes

    /// The trusted key with this id (up to 16 hex digits, either case: minisign prints ids
    /// without leading zeros), or nil.
    package func key(id keyIDString: String) -> Key? {
        guard let keyID = MinisignFormat.keyID(parsing: keyIDString) else { return nil }
        return keys.first { $0.publicKey.keyID == keyID }
    }

    /// Whether `scope` lets a key sign `providerID`: `*` matches every id, `com.example.*` the ids
    /// that start with `com.example.` (not `com.example` itself), any other scope only the id equal to it.
    package static func scope(_ scope: String, matches providerID: String) -> Bool {
        if scope == "*" { return true }
        if scope.hasSuffix(".*") {
            let prefix = scope.dropLast()  // keeps the dot
            return providerID.utf8.count > prefix.utf8.count && providerID.utf8.starts(with: prefix.utf8)
        }
        return scope == providerID
    }

    /// Why `scope` is not valid (nil when it is): `*`, `PREFIX.*` with PREFIX one or more
    /// reverse-DNS labels, or an exact provider id.
    package static func scopeProblem(_ scope: String) -> String? {
        if scope == "*" { return nil }
        if scope.hasSuffix(".*") {
            let prefix = String(scope.dropLast(2))
            // A prefix of one label ("com.*") is allowed; check it as an id by adding a label.
            if ManifestValidator.isValidID(prefix + ".x") { return nil }
            return "'\(shortened(scope))' is not a valid scope: the part before '.*' must be reverse-DNS labels (lowercase letters, digits, '-'), e.g. com.example.*"
        }
        if ManifestValidator.isValidID(scope) { return nil }
        return "'\(shortened(scope))' is not a valid scope: use '*', a prefix such as com.example.*, or an exact provider id such as com.example.weather"
    }

    /// Why a scope list is not valid, or nil.
    static func scopesProblem(_ scopes: [String]) -> String? {
        if scopes.isEmpty { return "a key needs at least one scope" }
        if scopes.count > maxScopes { return "over \(maxScopes) scopes" }
        for scope in scopes { if let problem = scopeProblem(scope) { return problem } }
        return nil
    }

    /// Trusts `key` for `scopes` (validated: keyInvalid otherwise) until the end of `expires`
    /// (a date not before `today`; nil: no end). A key already trusted gets these scopes, comment
    /// and expiry instead of its old ones; another key with the same id is refused.
    package mutating func trust(
        _ key: MinisignPublicKey, scopes: [String], comment: String, expires: String? = nil, today: String = TrustedKeys.today()
    ) throws(PackageError) {
        var unique: [String] = []
        for scope in scopes where !unique.contains(scope) { unique.append(scope) }
        if let problem = Self.scopesProblem(unique) {
            throw PackageError(.keyInvalid, "Cannot trust key \(key.keyIDString): \(problem).", fix: "Give scopes such as com.example.* or com.example.weather.")
        }
        if let expires {
            guard Self.isDate(expires) else {
                throw PackageError(
                    .keyInvalid, "Cannot trust key \(key.keyIDString): the expiry '\(Self.shortened(expires))' is not a date.",
                    fix: "Give the last day the key may be used as YYYY-MM-DD (UTC), e.g. 2027-06-30.")
            }
            guard expires >= today else {
                throw PackageError(
                    .keyInvalid, "Cannot trust key \(key.keyIDString) until \(expires): that day has passed (today is \(today), UTC).",
                    fix: "Give a date from today on, or leave the expiry out.")
            }
        }
        let comment = MinisignFormat.oneLine(comment, maxBytes: Self.maxCommentBytes)
        if let index = keys.firstIndex(where: { $0.publicKey.keyID == key.keyID }) {
            guard keys[index].publicKey == key else {
                throw PackageError(
                    .keyInvalid, "Another key with id \(key.keyIDString) is already trusted; two keys cannot share an id.",
                    fix: "Remove it first if you mean to replace it: `context-host keys remove \(key.keyIDString)`.")
            }
            keys[index].scopes = unique
            keys[index].comment = comment
            keys[index].expires = expires
        } else {
            guard keys.count < Self.maxKeys else {
                throw PackageError(.keyInvalid, "Cannot trust key \(key.keyIDString): over \(Self.maxKeys) keys are trusted.", fix: "Remove keys you no longer use.")
            }
            keys.append(Key(publicKey: key, scopes: unique, comment: comment, expires: expires))
        }
    }

    /// Stops trusting the key with this id; false if it was not trusted.
    package mutating func remove(id keyIDString: String) -> Bool {
        guard let keyID = MinisignFormat.keyID(parsing: keyIDString),
            let index = keys.firstIndex(where: { $0.publicKey.keyID == keyID })
        else { return false }
        keys.remove(at: index)
        return true
    }

    /// The trusted key that may sign `providerID` on `today`, given a verified signature's key id.
    /// keyUnknown (printing the key id to check with the author), keyOutOfScope (listing the
    /// key's scopes) or keyExpired.
    package func authorize(keyID: [UInt8], providerID: String, today: String = TrustedKeys.today()) throws(PackageError) -> Key {
        let id = MinisignFormat.keyIDString(keyID)
        guard let key = keys.first(where: { $0.publicKey.keyID == keyID }) else {
            throw PackageError(
                .keyUnknown,
                "'\(providerID)' is signed by key \(id), which is not among your trusted keys. Check with the provider's author that \(id) is their key before trusting it.",
                fix: "Get the author's public key (the `RW…` line of their .pub file) from a source you trust, check that its key id is \(id), and install with `--trust-key RW…` (and `--key-scope PATTERN` to choose the ids it may sign).")
        }
        guard key.scopes.contains(where: { Self.scope($0, matches: providerID) }) else {
            let owner = key.comment.isEmpty ? "" : " (\(key.comment))"
            throw PackageError(
                .keyOutOfScope,
                "Key \(id)\(owner) is trusted only for \(key.scopes.joined(separator: ", ")), not for '\(providerID)'.",
                fix: "If this author may publish '\(providerID)', give the key a scope that covers it: `context-host keys trust RW… --scope \(providerID)` (with its other scopes too).")
        }
        if let expires = key.expires, expires < today {
            let owner = key.comment.isEmpty ? "" : " (\(key.comment))"
            throw PackageError(
                .keyExpired,
                "Key \(id)\(owner) expired: it was trusted until \(expires) and today is \(today) (UTC); '\(providerID)' is not installed.",
                fix: "Check with the author that \(id) is still their key (or get their new one), then trust it again: `context-host keys trust RW… --scope \(providerID) --expires YYYY-MM-DD`.")
        }
        return key
    }

    // MARK: Dates

    /// Today's date in UTC, `YYYY-MM-DD`.
    package static func today() -> String {
        var now = time(nil)
        var parts = tm()
        guard gmtime_r(&now, &parts) != nil else { return "1970-01-01" }
        return date(year: Int(parts.tm_year) + 1900, month: Int(parts.tm_mon) + 1, day: Int(parts.tm_mday))
    }

    /// `YYYY-MM-DD` with zero padding (so dates compare as strings).
    static func date(year: Int, month: Int, day: Int) -> String {
        func padded(_ value: Int, _ width: Int) -> String {
            let text = String(value)
            return String(repeating: "0", count: max(0, width - text.count)) + text
        }
        return "\(padded(year, 4))-\(padded(month, 2))-\(padded(day, 2))"
    }

    /// Whether `text` is a calendar date `YYYY-MM-DD` (years 1970–9999).
    package static func isDate(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return false }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10), year >= 1970, (1...12).contains(month)
        else { return false }
        let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
        let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
        return (1...days).contains(day)
    }

    // MARK: Helpers

    /// The folder part of `path` ("." when none).
    private static func folder(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Text from a hostile file, cut short for a message.
    private static func shortened(_ text: String) -> String {
        let line = MinisignFormat.oneLine(text, maxBytes: 80)
        return line.utf8.count < text.utf8.count ? line + "…" : line
    }

    /// keyInvalid naming the file and what is wrong.
    private static func invalid(_ path: String, _ what: String) -> PackageError {
        PackageError(
            .keyInvalid, "The trusted keys file '\(path)' is invalid: \(what).",
            fix: "Correct or remove the file (then trust the keys again with `context-host install --trust-key RW…`).")
    }

    /// storeIO naming the file, the step and the system's reason.
    private static func ioError(_ path: String, _ what: String, errno code: Int32 = errno) -> PackageError {
        PackageError(
            .storeIO, "The trusted keys file '\(path)': \(what): \(String(cString: strerror(code))).",
            fix: "Check the permissions of the configuration folder and free disk space.")
    }
}
