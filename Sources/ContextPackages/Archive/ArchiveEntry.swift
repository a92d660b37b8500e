import ContextHost
/// One regular file of a bundle archive: its relative path, its bytes and whether it is executable.
package struct ArchiveEntry: Sendable, Equatable {
    /// The path inside the archive: relative, `/`-separated, checked by `ArchivePath`.
    package var path: String
    /// The file's contents.
    package var bytes: [UInt8]
    /// Whether any execute bit is set (written as mode 0755, else 0644).
    package var executable: Bool

    /// An entry with these contents.
    package init(path: String, bytes: [UInt8], executable: Bool = false) {
        self.path = path
        self.bytes = bytes
        self.executable = executable
    }
}

/// The caps `BundleArchive.read` enforces (and `write` enforces at their defaults).
package struct ArchiveLimits: Sendable, Equatable {
    /// The compressed archive (the `.ctxp` file).
    package var compressedBytes = 128 << 20
    /// The sum of the file sizes.
    package var expandedBytes = 256 << 20
    /// One file.
    package var fileBytes = 128 << 20
    /// Entries, directories included.
    package var entries = 1024
    /// One path, in UTF-8 bytes.
    package var pathBytes = 200
    /// Components of one path.
    package var pathDepth = 8

    /// The default caps.
    package init() {}

    /// The most inflated tar bytes accepted: the files plus room for headers, padding and the
    /// end-of-archive blocks (a gzip bomb of zeros stops here).
    var streamBytes: Int {
        let (perEntry, overflow1) = entries.multipliedReportingOverflow(by: 4096)
        let (withFiles, overflow2) = expandedBytes.addingReportingOverflow(overflow1 ? Int.max / 2 : perEntry)
        let (total, overflow3) = withFiles.addingReportingOverflow(1 << 20)
        return overflow2 || overflow3 ? Int.max : total
    }
}

/// The path rules shared by the archive reader, the writer and the index.
enum ArchivePath {
    /// Why `bytes` is not a safe relative path, or `nil` when it is. Refused: empty, absolute,
    /// with an empty, `.` or `..` component, backslashes, NUL and other control characters, non-UTF-8,
    /// over `limits.pathBytes` bytes or `limits.pathDepth` components.
    static func problem(_ bytes: some Collection<UInt8>, limits: ArchiveLimits) -> String? {
        if bytes.isEmpty { return "the path is empty" }
        if bytes.count > limits.pathBytes { return "the path is \(bytes.count) bytes long (the limit is \(limits.pathBytes))" }
        if bytes.first == UInt8(ascii: "/") { return "the path is absolute" }
        if bytes.contains(0) { return "the path contains a NUL byte" }
        if bytes.contains(UInt8(ascii: "\\")) { return "the path contains a backslash" }
        if bytes.contains(where: { $0 < 0x20 || $0 == 0x7F }) { return "the path contains a control character" }
        if String(validating: Array(bytes), as: UTF8.self) == nil { return "the path is not valid UTF-8" }
        let components = bytes.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        if components.count > limits.pathDepth {
            return "the path has \(components.count) components (the limit is \(limits.pathDepth))"
        }
        for component in components {
            if component.isEmpty { return "the path has an empty component ('//' or a trailing '/')" }
            if component.elementsEqual([UInt8(ascii: ".")]) { return "the path has a '.' component" }
            if component.elementsEqual([UInt8(ascii: "."), UInt8(ascii: ".")]) { return "the path has a '..' component" }
        }
        return nil
    }

    /// The path as text for a message: valid UTF-8 as is (control characters escaped), other
    /// bytes as `\xNN`; at most 300 bytes shown.
    static func describe(_ bytes: some Collection<UInt8>) -> String {
        let shown = Array(bytes.prefix(300))
        var text = ""
        if let string = String(validating: shown, as: UTF8.self) {
            for scalar in string.unicodeScalars {
                if scalar.value < 0x20 || scalar.value == 0x7F {
                    text += "\\x" + hex(UInt8(scalar.value))
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        } else {
            for byte in shown {
                if byte >= 0x20, byte < 0x7F { text.unicodeScalars.append(Unicode.Scalar(byte)) } else { text += "\\x" + hex(byte) }
            }
        }
        return bytes.count > shown.count ? text + "…" : text
    }

    /// Two lowercase hex digits.
    private static func hex(_ byte: UInt8) -> String {
        let digits = Array("0123456789abcdef".utf8)
        return String(decoding: [digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]], as: UTF8.self)
    }

    /// Whether `a` sorts before `b` in byte (UTF-8) order.
    static func precedes(_ a: String, _ b: String) -> Bool {
        a.utf8.lexicographicallyPrecedes(b.utf8)
    }
}

/// Finds duplicate paths and file/directory clashes as entries arrive: two entries with the same
/// path (ASCII case ignored, as a case-insensitive file system would), or a file where another
/// entry needs a directory.
struct PathClashes {
    /// Regular files, by folded path.
    private var files: [String: String] = [:]
    /// Directories (explicit entries and every parent of an entry), by folded path.
    private var directories: [String: String] = [:]
    /// Directories given by their own entries.
    private var explicitDirectories: Set<String> = []

    /// ASCII-lowercased, so `Lib/A.so` and `lib/a.so` count as the same path.
    private static func fold(_ path: String) -> String {
        String(decoding: path.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// Records `path` (a checked path); answers what it clashes with, or `nil`.
    mutating func add(_ path: String, isDirectory: Bool) -> String? {
        let folded = Self.fold(path)
        if let other = files[folded] { return other == path ? "another entry has the same path" : "another entry differs only in case ('\(other)')" }
        if isDirectory {
            if explicitDirectories.contains(folded) { return "another directory entry has the same path" }
            explicitDirectories.insert(folded)
        } else if let other = directories[folded] {
            return "it is also a directory (holding '\(other)')"
        }
        // Every parent must not be a file.
        var parents: [String] = []
        let components = folded.split(separator: "/", omittingEmptySubsequences: false)
        for index in components.indices.dropLast() {
            parents.append(components[...index].joined(separator: "/"))
        }
        for parent in parents {
            if let file = files[parent] { return "'\(file)' is a file, not a directory" }
        }
        for parent in parents where directories[parent] == nil { directories[parent] = path }
        if isDirectory {
            if directories[folded] == nil { directories[folded] = path }
        } else {
            files[folded] = path
        }
        return nil
    }
}
