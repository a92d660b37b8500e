import ContextHost
import ContextProviderKit

/// A bundle's index, `ctxp-bundle.json`: the format version, the provider's id and version, and
/// every other file's size and SHA-256. Its canonical bytes (`encoded()`) are what the minisign
/// signature `ctxp-bundle.json.minisig` covers, so verifying the index against the archive
/// (`verify`) extends the signature to every file.
///
/// ```json
/// {"format":1,"id":"com.example.weather","version":"1.2.0","files":[
/// {"path":"context-provider.yaml","size":412,"sha256":"…"}
/// ]}
/// ```
package struct BundleIndex: Sendable, Equatable {
    /// The index's path in the archive.
    package static let fileName = "ctxp-bundle.json"
    /// The signature's path in the archive.
    package static let signatureFileName = "ctxp-bundle.json.minisig"
    /// The format this host writes (and the only one it reads).
    package static let formatVersion = 1
    /// The largest index `decode` reads.
    static let maximumBytes = 1 << 20

    /// One listed file.
    package struct File: Sendable, Equatable {
        /// Its path in the archive.
        package var path: String
        /// Its size in bytes.
        package var size: Int
        /// Its SHA-256, 64 lowercase hex digits.
        package var sha256: String
    }

    /// The index format version.
    package var format: Int
    /// The provider's reverse-DNS id.
    package var id: String
    /// The provider's semantic version.
    package var version: String
    /// Every file but the index and its signature, sorted by path in byte order.
    package var files: [File]

    /// An index of the current format; `files` are sorted by path.
    package init(id: String, version: String, files: [File]) {
        self.format = Self.formatVersion
        self.id = id
        self.version = version
        self.files = files.sorted { ArchivePath.precedes($0.path, $1.path) }
    }

    /// Whether `path` is the index or its signature (never listed in the index).
    static func isIndexOrSignature(_ path: String) -> Bool {
        path == fileName || path == signatureFileName
    }

    /// The index of these entries (the index and signature entries, if present, are skipped).
    package static func describing(id: String, version: String, entries: [ArchiveEntry]) -> BundleIndex {
        let files = entries.filter { !isIndexOrSignature($0.path) }.map {
            File(path: $0.path, size: $0.bytes.count, sha256: SHA256.hex(of: $0.bytes))
        }
        return BundleIndex(id: id, version: version, files: files)
    }

    /// The canonical JSON: keys `format`, `id`, `version`, `files` in that order, one file per
    /// line (`path`, `size`, `sha256`), a final newline. These bytes are what gets signed.
    package func encoded() -> [UInt8] {
        var output: [UInt8] = []
        output += Array("{\"format\":".utf8)
        JSONWriter.appendInteger(Int64(format), to: &output)
        output += Array(",\"id\":".utf8)
        JSONWriter.appendString(id, to: &output)
        output += Array(",\"version\":".utf8)
        JSONWriter.appendString(version, to: &output)
        output += Array(",\"files\":[".utf8)
        for (index, file) in files.enumerated() {
            output += Array((index == 0 ? "\n" : ",\n").utf8)
            output += Array("{\"path\":".utf8)
            JSONWriter.appendString(file.path, to: &output)
            output += Array(",\"size\":".utf8)
            JSONWriter.appendInteger(Int64(file.size), to: &output)
            output += Array(",\"sha256\":".utf8)
            JSONWriter.appendString(file.sha256, to: &output)
            output.append(UInt8(ascii: "}"))
        }
        output += Array("\n]}\n".utf8)
        return output
    }

    private static let fix = "rebuild the bundle with `context-host package` (the index is written for you), or download it again"

    /// An `indexInvalid` error.
    private static func invalid(_ what: String) -> PackageError {
        PackageError(.indexInvalid, "\(fileName): \(what)", fix: fix)
    }

    /// Reads an index, strictly. Refuses: over 1 MiB, not JSON, not an object, an unknown or
    /// missing key, a `format` other than 1 (`indexUnsupportedFormat`, checked first), an invalid
    /// id or version, more than `ArchiveLimits().entries` files, a file without exactly `path`,
    /// `size` (an integer from 0 to the one-file cap) and `sha256` (64 lowercase hex digits), an
    /// unsafe path, a path naming the index or signature, duplicate or clashing paths, files not
    /// sorted by path (`indexInvalid`). A repeated JSON key keeps its last value (the parser's
    /// rule); the signature covers the bytes, so this cannot be used to smuggle anything.
    package static func decode(_ bytes: [UInt8]) throws(PackageError) -> BundleIndex {
        guard bytes.count <= maximumBytes else { throw invalid("the index is \(bytes.count) bytes (the cap is \(maximumBytes))") }
        let value: JSONValue
        do {
            value = try JSONReader.parse(bytes)
        } catch {
            throw invalid("the index is not valid JSON: \(error.description)")
        }
        guard let object = value.objectValue else { throw invalid("the index is a JSON \(value.typeName), not an object") }
        guard let formatValue = object["format"] else { throw invalid("the index has no 'format'") }
        guard let format = formatValue.intValue else {
            throw invalid("'format' is not an integer")
        }
        guard format == formatVersion else {
            throw PackageError(
                .indexUnsupportedFormat,
                "\(fileName): the index is in format \(format); this host reads format \(formatVersion) only",
                fix: "install a newer context-host, or rebuild the bundle with a context-host that writes format \(formatVersion)")
        }
        for key in object.keys where !["format", "id", "version", "files"].contains(key) {
            throw invalid("unknown key '\(ArchivePath.describe(Array(key.utf8)))' (format \(formatVersion) has format, id, version and files)")
        }
        guard let id = object["id"]?.stringValue else { throw invalid("'id' is missing or not a string") }
        guard ManifestValidator.isValidID(id) else {
            throw invalid("'id' '\(ArchivePath.describe(Array(id.utf8)))' is not a reverse-DNS provider id")
        }
        guard let version = object["version"]?.stringValue else { throw invalid("'version' is missing or not a string") }
        guard version.utf8.count <= 128, Version(version) != nil else {
            throw invalid("'version' '\(ArchivePath.describe(Array(version.utf8)))' is not a semantic version")
        }
        guard let list = object["files"]?.arrayValue else { throw invalid("'files' is missing or not an array") }
        let limits = ArchiveLimits()
        guard list.count <= limits.entries else { throw invalid("'files' lists \(list.count) files (the cap is \(limits.entries))") }
        var files: [File] = []
        files.reserveCapacity(list.count)
        var clashes = PathClashes()
        for (index, item) in list.enumerated() {
            let place = "files[\(index)]"
            guard let entry = item.objectValue else { throw invalid("\(place) is not an object") }
            for key in entry.keys where !["path", "size", "sha256"].contains(key) {
                throw invalid("\(place) has an unknown key '\(ArchivePath.describe(Array(key.utf8)))'")
            }
            guard let path = entry["path"]?.stringValue else { throw invalid("\(place).path is missing or not a string") }
            let shown = ArchivePath.describe(Array(path.utf8))
            if let problem = ArchivePath.problem(Array(path.utf8), limits: limits) {
                throw invalid("\(place).path '\(shown)' is unsafe: \(problem)")
            }
            if isIndexOrSignature(path) { throw invalid("\(place).path '\(shown)' names the index or its signature") }
            guard let size = entry["size"]?.intValue, size >= 0, size <= limits.fileBytes else {
                throw invalid("file '\(shown)': 'size' is not an integer from 0 to \(limits.fileBytes)")
            }
            guard let sha256 = entry["sha256"]?.stringValue, sha256.utf8.count == 64,
                sha256.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) })
            else { throw invalid("file '\(shown)': 'sha256' is not 64 lowercase hex digits") }
            if let clash = clashes.add(path, isDirectory: false) { throw invalid("file '\(shown)' is listed twice or clashes: \(clash)") }
            if let last = files.last, !ArchivePath.precedes(last.path, path) {
                throw invalid("file '\(shown)' is out of order (files are sorted by path, in byte order)")
            }
            files.append(File(path: path, size: size, sha256: sha256))
        }
        var index = BundleIndex(id: id, version: version, files: [])
        index.files = files
        return index
    }

    /// Checks the archive's files against the index: every listed file present with the same
    /// size and SHA-256 (`indexMismatch`), none missing (`indexMissingFile`), nothing besides the
    /// index and its signature unlisted (`indexExtraFile`).
    package func verify(_ entries: [ArchiveEntry]) throws(PackageError) {
        var byPath: [String: ArchiveEntry] = [:]
        for entry in entries where byPath[entry.path] == nil { byPath[entry.path] = entry }
        let fix = "download the bundle again; if it persists, the bundle was changed after it was built: rebuild it with `context-host package`"
        for file in files {
            guard let entry = byPath[file.path] else {
                throw PackageError(.indexMissingFile, "file '\(file.path)' is listed in \(Self.fileName) but not in the archive", fix: fix)
            }
            let digest = SHA256.hex(of: entry.bytes)
            if entry.bytes.count != file.size || digest != file.sha256 {
                throw PackageError(
                    .indexMismatch,
                    "file '\(file.path)' differs from \(Self.fileName): expected \(file.size) bytes with SHA-256 \(file.sha256), found \(entry.bytes.count) bytes with SHA-256 \(digest)",
                    fix: fix)
            }
        }
        let listed = Set(files.map(\.path))
        for entry in entries where !listed.contains(entry.path) && !Self.isIndexOrSignature(entry.path) {
            throw PackageError(.indexExtraFile, "file '\(entry.path)' is in the archive but not listed in \(Self.fileName)", fix: fix)
        }
    }
}
