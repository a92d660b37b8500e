import ContextHost
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The fixes the archive errors suggest.
enum ArchiveFix {
    /// For `archiveCorrupt`.
    static let corrupt = "download the bundle again, or rebuild it with `context-host package`; a damaged or non-.ctxp file cannot be installed"
    /// For `archiveTooLarge`.
    static let tooLarge = "remove what the provider does not need from the bundle (or split its data), then rebuild it"
    /// For `archiveUnsafePath`.
    static let unsafePath = "give every file a relative path of plain components (no '/', '.', '..', '\\', empty or control-character parts), within the length and depth caps, and rebuild the bundle"
    /// For `archiveLink`.
    static let link = "replace the link with a copy of the file it points to and rebuild the bundle"
    /// For `archiveSpecialFile`.
    static let special = "bundle only regular files and directories (created with a standard tar, without global pax headers or sparse files)"
    /// For `archiveDuplicateEntry`.
    static let duplicate = "give each file its own path (paths differing only in case count as the same) and rebuild the bundle"
}

/// The 512-byte ustar header's fields.
enum TarHeader {
    /// Headers and data come in 512-byte blocks.
    static let blockSize = 512
    /// The name (the path, or its last part when `prefix` is used).
    static let name = 0..<100
    /// Permission bits, octal.
    static let mode = 100..<108
    /// Owner id, octal.
    static let uid = 108..<116
    /// Group id, octal.
    static let gid = 116..<124
    /// Data size, octal or base-256.
    static let size = 124..<136
    /// Modification time, octal.
    static let mtime = 136..<148
    /// Header checksum, octal.
    static let checksum = 148..<156
    /// Entry type (`0` file, `5` directory, `x` pax, `L` GNU long name…).
    static let typeflag = 156
    /// A link's target.
    static let linkname = 157..<257
    /// Magic and version.
    static let magic = 257..<265
    /// POSIX ustar: the path's leading directories.
    static let prefix = 345..<500

    /// `ustar\0` and version `00`: POSIX ustar (and pax).
    static let posixMagic: [UInt8] = [0x75, 0x73, 0x74, 0x61, 0x72, 0x00, 0x30, 0x30]
    /// `ustar  \0`: GNU tar's format.
    static let gnuMagic: [UInt8] = [0x75, 0x73, 0x74, 0x61, 0x72, 0x20, 0x20, 0x00]

    /// The bytes of a NUL-terminated field up to its first NUL.
    static func string(_ header: [UInt8], _ field: Range<Int>) -> ArraySlice<UInt8> {
        let slice = header[field]
        return slice[..<(slice.firstIndex(of: 0) ?? slice.endIndex)]
    }

    /// A numeric field: octal digits (leading spaces, ended by a space or NUL; all NUL means 0),
    /// or GNU base-256 (high bit of the first byte set). `nil` if malformed, negative or over
    /// `Int.max`.
    static func number(_ field: ArraySlice<UInt8>) -> Int? {
        guard let first = field.first else { return nil }
        if first & 0x80 != 0 {
            if first & 0x40 != 0 { return nil }  // negative
            var value = Int(first & 0x3F)
            for byte in field.dropFirst() {
                guard value <= Int.max >> 8 else { return nil }
                value = value << 8 | Int(byte)
            }
            return value
        }
        var index = field.startIndex
        while index < field.endIndex, field[index] == 0x20 { index += 1 }
        var value = 0
        var digits = 0
        while index < field.endIndex, field[index] >= 0x30, field[index] <= 0x37 {
            let (shifted, overflow) = value.multipliedReportingOverflow(by: 8)
            guard !overflow else { return nil }
            value = shifted | Int(field[index] - 0x30)
            digits += 1
            index += 1
        }
        // What follows the digits: spaces and NULs only.
        guard field[index...].allSatisfy({ $0 == 0 || $0 == 0x20 }) else { return nil }
        if digits == 0, !field.allSatisfy({ $0 == 0 || $0 == 0x20 }) { return nil }
        return value
    }

    /// Whether the stored checksum matches the header (unsigned sum, or the signed sum some old
    /// tars wrote), the checksum field counting as eight spaces.
    static func checksumMatches(_ header: [UInt8]) -> Bool {
        guard let stored = number(header[checksum]) else { return false }
        var unsigned = 0
        var signed = 0
        for (index, byte) in header.enumerated() {
            let value = checksum.contains(index) ? 0x20 : byte
            unsigned += Int(value)
            signed += Int(Int8(bitPattern: value))
        }
        return stored == unsigned || stored == signed
    }
}

/// Reads a gzip'd tar stream entry by entry (see `BundleArchive.read`).
struct TarReader {
    /// The inflated tar stream.
    let inflater: GzipInflater
    /// The caps.
    let limits: ArchiveLimits
    /// The files read so far.
    private(set) var entries: [ArchiveEntry] = []
    private var clashes = PathClashes()
    /// The sum of file sizes so far.
    private var expanded = 0
    /// Entries (files and directories) so far.
    private var entryCount = 0
    /// The path of the entry being read or last read, for messages.
    private var current: String?

    /// A reader at the start of the stream.
    init(inflater: GzipInflater, limits: ArchiveLimits) {
        self.inflater = inflater
        self.limits = limits
    }

    /// What an extended header ('x', 'L', 'K') says about the next entry.
    private struct Pending {
        /// `path` (pax) or a GNU long name.
        var path: [UInt8]?
        /// `linkpath` (pax) or a GNU long link.
        var linkPath: [UInt8]?
        /// `size` (pax).
        var size: Int?
        /// Whether nothing is pending.
        var isEmpty: Bool { path == nil && linkPath == nil && size == nil }
    }

    /// Where in the archive: the entry being read, or the one before.
    private var location: String {
        if let current { return " (at entry '\(current)')" }
        return entries.isEmpty && entryCount == 0 ? " (before the first entry)" : ""
    }

    /// An `archiveCorrupt` error, located.
    private func corrupt(_ what: String) -> PackageError {
        PackageError(.archiveCorrupt, what + location, fix: ArchiveFix.corrupt)
    }

    /// The error for an inflating failure.
    private func failure(_ failure: GzipFailure) -> PackageError {
        switch failure {
        case .notGzip: return corrupt("the file is not gzip-compressed (a .ctxp bundle is a gzip'd tar)")
        case .truncated: return corrupt("the gzip stream ends early: the file is truncated")
        case .damaged(let reason): return corrupt("the gzip stream is damaged (\(reason))")
        case .tooLarge(let limit):
            return PackageError(.archiveTooLarge, "the archive inflates to more than \(limit) bytes" + location, fix: ArchiveFix.tooLarge)
        case .trailingData(let count):
            return corrupt("\(count) bytes follow the gzip stream (a second gzip member or garbage)")
        }
    }

    /// Reads exactly `count` bytes into `buffer` (answers fewer only at the end of the stream).
    private func fill(_ buffer: inout [UInt8]) throws(PackageError) -> Int {
        let result: Result<Int, GzipFailure> = buffer.withUnsafeMutableBytes { raw in
            do throws(GzipFailure) { return .success(try inflater.read(into: raw)) } catch { return .failure(error) }
        }
        switch result {
        case .success(let count): return count
        case .failure(let error): throw failure(error)
        }
    }

    /// Reads `count` bytes that must all be there (`what` names them for the truncation error).
    private func bytes(_ count: Int, _ what: String) throws(PackageError) -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        if try fill(&buffer) < count { throw corrupt("the archive ends inside \(what): it is truncated") }
        return buffer
    }

    /// Skips the padding after `size` bytes of data, up to the next 512-byte block.
    private func skipPadding(after size: Int, _ what: String) throws(PackageError) {
        let padding = (TarHeader.blockSize - size % TarHeader.blockSize) % TarHeader.blockSize
        if padding > 0 { _ = try bytes(padding, what) }
    }

    /// Reads every entry, then checks the end-of-archive blocks and the gzip trailer.
    mutating func readAll() throws(PackageError) -> [ArchiveEntry] {
        var pending = Pending()
        while true {
            var header = [UInt8](repeating: 0, count: TarHeader.blockSize)
            let got = try fill(&header)
            if got == 0 { throw corrupt("the archive has no end-of-archive marker: it is truncated") }
            if got < TarHeader.blockSize { throw corrupt("the archive ends inside a header: it is truncated") }
            if header.allSatisfy({ $0 == 0 }) {
                if !pending.isEmpty { throw corrupt("an extended header is not followed by an entry") }
                try readEnd()
                return entries
            }
            guard TarHeader.checksumMatches(header) else { throw corrupt("a tar header's checksum is wrong") }
            let magic = Array(header[TarHeader.magic])
            let posix = magic == TarHeader.posixMagic
            guard posix || magic == TarHeader.gnuMagic else {
                throw corrupt("a header is not a ustar, pax or GNU tar header")
            }
            var pathBytes = Array(TarHeader.string(header, TarHeader.name))
            if posix {
                let prefix = TarHeader.string(header, TarHeader.prefix)
                if !prefix.isEmpty { pathBytes = Array(prefix) + [UInt8(ascii: "/")] + pathBytes }
            }
            if let path = pending.path { pathBytes = path }
            let described = ArchivePath.describe(pathBytes)
            let type = header[TarHeader.typeflag]
            guard let headerSize = TarHeader.number(header[TarHeader.size]) else {
                throw corrupt("the size field of entry '\(described)' is not a number")
            }
            let size = pending.size ?? headerSize

            switch type {
            case UInt8(ascii: "x"), UInt8(ascii: "L"), UInt8(ascii: "K"):
                try readExtended(type: type, size: headerSize, into: &pending)
                continue
            case UInt8(ascii: "g"):
                throw PackageError(
                    .archiveSpecialFile, "the archive has a pax global header ('g'), which this host does not read" + location,
                    fix: ArchiveFix.special)
            case UInt8(ascii: "1"), UInt8(ascii: "2"):
                let target = ArchivePath.describe(pending.linkPath ?? Array(TarHeader.string(header, TarHeader.linkname)))
                let kind = type == UInt8(ascii: "1") ? "a hard link" : "a symbolic link"
                throw PackageError(.archiveLink, "entry '\(described)' is \(kind) to '\(target)'", fix: ArchiveFix.link)
            case UInt8(ascii: "0"), 0, UInt8(ascii: "7"), UInt8(ascii: "5"):
                break
            default:
                throw PackageError(
                    .archiveSpecialFile, "entry '\(described)' is \(Self.specialKind(type)), not a regular file or directory",
                    fix: ArchiveFix.special)
            }

            // A regular file or a directory.
            let isDirectory = type == UInt8(ascii: "5")
            if isDirectory, pathBytes.count > 1, pathBytes.last == UInt8(ascii: "/") { pathBytes.removeLast() }
            if let problem = ArchivePath.problem(pathBytes, limits: limits) {
                throw PackageError(.archiveUnsafePath, "entry '\(described)' has an unsafe path: \(problem)", fix: ArchiveFix.unsafePath)
            }
            let path = String(decoding: pathBytes, as: UTF8.self)
            current = path
            entryCount += 1
            if entryCount > limits.entries {
                throw PackageError(
                    .archiveTooLarge, "the archive has more than \(limits.entries) entries (at entry '\(path)')", fix: ArchiveFix.tooLarge)
            }
            if let clash = clashes.add(path, isDirectory: isDirectory) {
                throw PackageError(.archiveDuplicateEntry, "entry '\(path)' is a duplicate: \(clash)", fix: ArchiveFix.duplicate)
            }
            pending = Pending()
            if isDirectory {
                guard size == 0 else { throw corrupt("directory entry '\(path)' has \(size) bytes of data") }
                continue
            }
            try readFile(path, size: size, header: header)
        }
    }

    /// An extended header's data (pax `x`, GNU long name `L` or long link `K`), into `pending`.
    private mutating func readExtended(type: UInt8, size headerSize: Int, into pending: inout Pending) throws(PackageError) {
        // Its own size, never one a previous pax header gave.
        let cap = type == UInt8(ascii: "x") ? 65_536 : 4096
        guard headerSize <= cap else {
            throw PackageError(
                .archiveTooLarge, "an extended header of \(headerSize) bytes is over the \(cap)-byte cap" + location,
                fix: ArchiveFix.tooLarge)
        }
        let data = try bytes(headerSize, "an extended header")
        try skipPadding(after: headerSize, "an extended header")
        if type == UInt8(ascii: "x") {
            try readPax(data, into: &pending)
        } else {
            let value = Array(data[..<(data.firstIndex(of: 0) ?? data.endIndex)])
            if type == UInt8(ascii: "L") { pending.path = value } else { pending.linkPath = value }
        }
    }

    /// What a special entry type is, for the refusal.
    private static func specialKind(_ type: UInt8) -> String {
        switch type {
        case UInt8(ascii: "3"): "a character device"
        case UInt8(ascii: "4"): "a block device"
        case UInt8(ascii: "6"): "a FIFO"
        case UInt8(ascii: "S"): "a GNU sparse file"
        default: type >= 0x21 && type < 0x7F ? "of type '\(Character(Unicode.Scalar(type)))'" : "of type \(type)"
        }
    }

    /// A regular file's data (`size` bytes, within the per-file and total caps), as an entry.
    private mutating func readFile(_ path: String, size: Int, header: [UInt8]) throws(PackageError) {
        guard size <= limits.fileBytes else {
            throw PackageError(
                .archiveTooLarge, "entry '\(path)' is \(size) bytes (the cap for one file is \(limits.fileBytes))",
                fix: ArchiveFix.tooLarge)
        }
        let (total, overflow) = expanded.addingReportingOverflow(size)
        guard !overflow, total <= limits.expandedBytes else {
            throw PackageError(
                .archiveTooLarge,
                "the files add up to more than \(limits.expandedBytes) bytes (at entry '\(path)', \(size) bytes)",
                fix: ArchiveFix.tooLarge)
        }
        expanded = total
        let data = try bytes(size, "entry '\(path)'")
        try skipPadding(after: size, "entry '\(path)'")
        let mode = TarHeader.number(header[TarHeader.mode]) ?? 0o644
        entries.append(ArchiveEntry(path: path, bytes: data, executable: mode & 0o111 != 0))
    }

    /// Parses pax records (`LEN key=value\n`): `path`, `linkpath` and `size` are used; sparse
    /// files are refused; other keys (times, owners, charset) are ignored.
    private func readPax(_ data: [UInt8], into pending: inout Pending) throws(PackageError) {
        var offset = 0
        while offset < data.count {
            // The record's length: decimal digits, then a space.
            var length = 0
            var index = offset
            while index < data.count, data[index] >= 0x30, data[index] <= 0x39, index - offset < 8 {
                length = length * 10 + Int(data[index] - 0x30)
                index += 1
            }
            guard index > offset, index < data.count, data[index] == 0x20, length > index - offset + 1,
                length <= data.count - offset, data[offset + length - 1] == 0x0A
            else { throw corrupt("a pax extended header is malformed") }
            let record = data[(index + 1)..<(offset + length - 1)]
            guard let equals = record.firstIndex(of: UInt8(ascii: "=")) else { throw corrupt("a pax record has no '='") }
            let key = String(decoding: record[..<equals], as: UTF8.self)
            let value = Array(record[(equals + 1)...])
            switch key {
            case "path": pending.path = value
            case "linkpath": pending.linkPath = value
            case "size":
                guard !value.isEmpty, value.count <= 18, value.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                    throw corrupt("a pax 'size' record is not a size")
                }
                pending.size = value.reduce(0) { $0 * 10 + Int($1 - 0x30) }
            default:
                if key.hasPrefix("GNU.sparse.") {
                    throw PackageError(
                        .archiveSpecialFile, "the archive has a sparse file, which this host does not read" + location,
                        fix: ArchiveFix.special)
                }
            }
            offset += length
        }
    }

    /// After the first zero block: the rest of the tar stream must be zeros, then the gzip
    /// member must end with nothing after it (its CRC-32 and length are checked on the way).
    private func readEnd() throws(PackageError) {
        var chunk = [UInt8](repeating: 0, count: 1 << 16)
        let zeros = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let got = try fill(&chunk)
            if got == 0 { return }
            // memcmp: a bomb of zeros is hundreds of megabytes; a byte loop is slow in debug builds.
            if memcmp(chunk, zeros, got) != 0 {
                throw corrupt("data follows the end-of-archive marker")
            }
            if got < chunk.count { return }
        }
    }
}

/// Writes the deterministic ustar stream of `BundleArchive.write`.
enum TarWriter {
    /// Appends one entry's header (a pax header first when the path does not fit ustar).
    static func appendHeader(path: String, size: Int, executable: Bool, to tar: inout [UInt8]) {
        let bytes = Array(path.utf8)
        var name = bytes
        var prefix: [UInt8] = []
        if bytes.count > 100 {
            // Split at a '/' so the prefix fits 155 bytes and the name 100.
            var split: Int?
            for index in bytes.indices where bytes[index] == UInt8(ascii: "/") {
                if index <= 155, bytes.count - index - 1 <= 100, bytes.count - index - 1 > 0 { split = index; break }
            }
            if let split {
                prefix = Array(bytes[..<split])
                name = Array(bytes[(split + 1)...])
            } else {
                appendPax(path: bytes, to: &tar)
                name = Array(bytes.suffix(100))
            }
        }
        tar += block(name: name, prefix: prefix, mode: executable ? 0o755 : 0o644, size: size, type: UInt8(ascii: "0"))
    }

    /// A pax extended header giving `path`.
    private static func appendPax(path: [UInt8], to tar: inout [UInt8]) {
        let body = Array(" path=".utf8) + path + [0x0A]
        // The length counts its own digits.
        var length = body.count + 1
        while String(length).utf8.count + body.count != length { length += 1 }
        let record = Array(String(length).utf8) + body
        tar += block(name: Array("././@PaxHeader".utf8), prefix: [], mode: 0o644, size: record.count, type: UInt8(ascii: "x"))
        tar += record
        tar += [UInt8](repeating: 0, count: (TarHeader.blockSize - record.count % TarHeader.blockSize) % TarHeader.blockSize)
    }

    /// One header block: uid/gid 0, empty owner names, mtime 0.
    private static func block(name: [UInt8], prefix: [UInt8], mode: Int, size: Int, type: UInt8) -> [UInt8] {
        var header = [UInt8](repeating: 0, count: TarHeader.blockSize)
        header.replaceSubrange(0..<name.count, with: name)
        put(octal(mode, 8), at: TarHeader.mode, in: &header)
        put(octal(0, 8), at: TarHeader.uid, in: &header)
        put(octal(0, 8), at: TarHeader.gid, in: &header)
        put(octal(size, 12), at: TarHeader.size, in: &header)
        put(octal(0, 12), at: TarHeader.mtime, in: &header)
        header[TarHeader.typeflag] = type
        put(TarHeader.posixMagic, at: TarHeader.magic, in: &header)
        header.replaceSubrange(TarHeader.prefix.lowerBound..<(TarHeader.prefix.lowerBound + prefix.count), with: prefix)
        put([UInt8](repeating: 0x20, count: 8), at: TarHeader.checksum, in: &header)
        let sum = header.reduce(0) { $0 + Int($1) }
        put(octal(sum, 7) + [0x20], at: TarHeader.checksum, in: &header)
        return header
    }

    /// Writes `bytes` at the start of `field`.
    private static func put(_ bytes: [UInt8], at field: Range<Int>, in header: inout [UInt8]) {
        header.replaceSubrange(field.lowerBound..<(field.lowerBound + bytes.count), with: bytes)
    }

    /// `width - 1` zero-padded octal digits and a NUL.
    private static func octal(_ value: Int, _ width: Int) -> [UInt8] {
        let digits = Array(String(value, radix: 8).utf8)
        return [UInt8](repeating: 0x30, count: max(0, width - 1 - digits.count)) + digits + [0]
    }
}
