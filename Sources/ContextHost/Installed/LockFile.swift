import ContextProviderKit

/// `providers.lock`: which version of each installed provider is active, the one before it, who
/// signed each, which runtime it carries and the SHA-256 of every file that matters, for every
/// platform (docs/packages.md §4). Written atomically; the host loads exactly what it says and
/// checks the hashes at load. `install --locked` reproduces it on another machine.
package struct LockFile: Sendable, Equatable {
    /// The lock format this host reads and writes.
    package static let formatVersion = 1
    /// Largest lock file read (a lock of thousands of providers is far smaller).
    static let maximumBytes = 16 << 20

    /// One installed version.
    package struct Installed: Sendable, Equatable {
        package var version: String
        /// The signing key's id (16 hex digits; minisign prints it without leading zeros); nil for an unsigned bundle.
        package var signer: String?
        /// The signing key itself (minisign base64), so `install --locked` and upgrades can check it.
        package var signerKey: String?
        /// `native`, `swift-static` or `swift-dynamic 6.3.1`.
        package var runtime: String
        /// SHA-256 of the bundle's `ctxp-bundle.json`, which lists every file's hash.
        package var indexSHA256: String
        /// SHA-256 of `manifest.yaml`, checked when the host reads it.
        package var manifestSHA256: String
        /// The library of every platform in the bundle, with its SHA-256.
        package var libraries: [Library]

        package struct Library: Sendable, Equatable {
            package var platform: String
            package var path: String
            package var sha256: String
            package init(platform: String, path: String, sha256: String) {
                self.platform = platform
                self.path = path
                self.sha256 = sha256
            }
        }

        package init(
            version: String, signer: String?, signerKey: String?, runtime: String, indexSHA256: String,
            manifestSHA256: String, libraries: [Library]
        ) {
            self.version = version
            self.signer = signer
            self.signerKey = signerKey
            self.runtime = runtime
            self.indexSHA256 = indexSHA256
            self.manifestSHA256 = manifestSHA256
            self.libraries = libraries
        }
    }

    /// One installed provider: the active version and the one it replaced.
    package struct Entry: Sendable, Equatable {
        package var id: String
        package var current: Installed
        package var previous: Installed?
        package init(id: String, current: Installed, previous: Installed? = nil) {
            self.id = id
            self.current = current
            self.previous = previous
        }
    }

    /// Sorted by id.
    package private(set) var providers: [Entry] = []

    package init(providers: [Entry] = []) {
        self.providers = providers.sorted { $0.id < $1.id }
    }

    package func entry(id: String) -> Entry? { providers.first { $0.id == id } }

    /// Adds or replaces the entry of `entry.id`.
    package mutating func set(_ entry: Entry) {
        providers.removeAll { $0.id == entry.id }
        providers.append(entry)
        providers.sort { $0.id < $1.id }
    }

    /// Removes `id`; true if it was there.
    @discardableResult
    package mutating func remove(id: String) -> Bool {
        let count = providers.count
        providers.removeAll { $0.id == id }
        return providers.count != count
    }

    // MARK: Reading and writing

    /// The lock at `path`; an empty lock when the file does not exist.
    package static func load(file path: String) throws(PackageError) -> LockFile {
        let bytes: [UInt8]
        switch ManifestFileSystem.kind(of: path) {
        case .missing: return LockFile()
        default:
            do {
                bytes = try FileBytes.read(path)
            } catch {
                throw PackageError(
                    .lockInvalid, "cannot read the lock file \(path): \(error.reason)",
                    fix: "check the file's permissions; it belongs to the user who installs providers")
            }
        }
        return try decode(bytes, file: path)
    }

    /// Parses lock file bytes; every problem names the file and the entry.
    package static func decode(_ bytes: [UInt8], file: String) throws(PackageError) -> LockFile {
        func invalid(_ what: String) -> PackageError {
            PackageError(
                .lockInvalid, "the lock file \(file) is not valid: \(what)",
                fix: "restore it from a backup, or fix the entry by hand (docs/packages.md §4); "
                    + "`context-host list --installed` reads it")
        }
        guard bytes.count <= maximumBytes else { throw invalid("it is over \(maximumBytes >> 20) MB") }
        let root: JSONValue
        do { root = try JSONValue(parsing: bytes) } catch { throw invalid("not JSON (\(error))") }
        guard let format = root["format"]?.intValue else { throw invalid("no 'format' number") }
        guard format == formatVersion else {
            throw PackageError(
                .lockInvalid, "the lock file \(file) has format \(format); this host reads format \(formatVersion)",
                fix: format > formatVersion ? "upgrade context-host" : "reinstall the providers")
        }
        guard let list = root["providers"]?.arrayValue else { throw invalid("no 'providers' list") }
        var entries: [Entry] = []
        var seen: Set<String> = []
        for (index, item) in list.enumerated() {
            guard let id = item["id"]?.stringValue, ManifestValidator.isValidID(id) else {
                throw invalid("providers[\(index)] has no valid 'id'")
            }
            guard seen.insert(id).inserted else { throw invalid("'\(id)' is listed twice") }
            guard let current = item["current"].flatMap({ installed($0) }) else {
                throw invalid("'\(id)': 'current' is missing or incomplete")
            }
            var previous: Installed?
            if let value = item["previous"], !value.isNull {
                guard let parsed = installed(value) else { throw invalid("'\(id)': 'previous' is incomplete") }
                previous = parsed
            }
            entries.append(Entry(id: id, current: current, previous: previous))
        }
        return LockFile(providers: entries)
    }

    private static func installed(_ value: JSONValue) -> Installed? {
        guard let version = value["version"]?.stringValue, Version(version) != nil,
            let runtime = value["runtime"]?.stringValue,
            let index = value["indexSHA256"]?.stringValue, isSHA256(index),
            let manifest = value["manifestSHA256"]?.stringValue, isSHA256(manifest),
            let libraries = value["libraries"]?.arrayValue
        else { return nil }
        var result: [Installed.Library] = []
        for library in libraries {
            guard let platform = library["platform"]?.stringValue, let path = library["path"]?.stringValue,
                isSafeRelativePath(path), let sha256 = library["sha256"]?.stringValue, isSHA256(sha256)
            else { return nil }
            result.append(Installed.Library(platform: platform, path: path, sha256: sha256))
        }
        let signer = value["signer"]?.stringValue
        let signerKey = value["signerKey"]?.stringValue
        return Installed(
            version: version, signer: signer, signerKey: signerKey, runtime: runtime, indexSHA256: index,
            manifestSHA256: manifest, libraries: result)
    }

    /// Relative, no `.`, `..` or empty components, no NUL or backslash.
    static func isSafeRelativePath(_ path: String) -> Bool {
        guard !path.isEmpty, path.utf8.count <= 1024, !path.hasPrefix("/"), !path.contains("\0"), !path.contains("\\")
        else { return false }
        return path.split(separator: "/", omittingEmptySubsequences: false).allSatisfy { $0 != "" && $0 != "." && $0 != ".." }
    }

    static func isSHA256(_ text: String) -> Bool {
        text.utf8.count == 64 && text.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}
