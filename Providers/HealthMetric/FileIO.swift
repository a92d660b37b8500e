#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import ContextProviderKit
import ProviderSupport

/// What `stat` says about a file: enough to tell whether it changed.
struct FileStamp: Sendable, Hashable {
    var size: UInt64
    var modifiedSeconds: Int64
    var modifiedNanoseconds: Int64
    var isDirectory: Bool

    /// The stamp of `path`, or `nil` when it does not exist or cannot be read.
    static func of(_ path: String) -> FileStamp? {
        guard let info = FileIO.info(path) else { return nil }
        return FileStamp(
            size: UInt64(clamping: info.size), modifiedSeconds: Int64(info.modified), modifiedNanoseconds: Int64(info.modifiedNanoseconds),
            isDirectory: info.isDirectory)
    }
}

/// What the health file readers read from: it fills up to `count` bytes at the pointer and answers
/// how many, 0 at the end (a file, or a fuzzer's bytes).
package typealias ChunkSource = (_ pointer: UnsafeMutablePointer<UInt8>, _ count: Int) throws(ProviderError) -> Int

/// Small file-system helpers over the C library (no Foundation).
enum FileSystem {
    /// The text of the current `errno`.
    static func errorText() -> String { String(cString: strerror(errno)) }

    /// Opens a file for reading.
    static func openForReading(_ path: String) throws(ProviderError) -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw ProviderError("Cannot open \(path): \(errorText())", hint: "Check the `export` setting and the file's permissions.")
        }
        return fd
    }

    /// Reads up to `count` bytes, retrying on interruption; 0 at end of file.
    static func read(_ fd: Int32, into pointer: UnsafeMutablePointer<UInt8>, count: Int, path: String) throws(ProviderError) -> Int {
        while true {
            #if canImport(Darwin)
            let result = Darwin.read(fd, pointer, count)
            #elseif canImport(Glibc)
            let result = Glibc.read(fd, pointer, count)
            #else
            let result = Musl.read(fd, pointer, count)
            #endif
            if result >= 0 { return result }
            if errno == EINTR { continue }
            throw ProviderError("Cannot read \(path): \(errorText())")
        }
    }

    /// Opens `path` and runs `body` with the file's name and a reader that fills up to `count`
    /// bytes at the pointer and answers how many (0 at the end), telling `onRead` each read's
    /// byte count; closes the file after.
    static func streaming(
        _ path: String, onRead: @escaping (Int) -> Void,
        _ body: (_ fileName: String, _ read: ChunkSource) throws(ProviderError) -> HealthData
    ) throws(ProviderError) -> HealthData {
        let fd = try openForReading(path)
        defer { close(fd) }
        return try body(FileIO.baseName(path)) { (pointer, count) throws(ProviderError) -> Int in
            let got = try FileSystem.read(fd, into: pointer, count: count, path: path)
            onRead(got)
            return got
        }
    }

    /// The bytes per read the readers use for a requested chunk size: at least 64, at most 64 MiB.
    static func chunkSize(_ requested: Int) -> Int { min(max(requested, 64), 64 << 20) }

    /// Whether `path` is a folder holding a manifest (`*.yaml` / `*.yml`): never a cache folder.
    static func holdsManifests(_ path: String) -> Bool {
        guard let directory = opendir(path) else { return false }
        defer { closedir(directory) }
        var seen = 0
        while let entry = readdir(directory), seen < 100_000 {
            seen += 1
            let isManifest = withUnsafeBytes(of: entry.pointee.d_name) { raw -> Bool in
                let name = String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
                return name.hasSuffix(".yaml") || name.hasSuffix(".yml")
            }
            if isManifest { return true }
        }
        return false
    }

    /// The path of the only `*.xml` file in `folder` other than `export_cda.xml` (a localized
    /// export's main file, e.g. `Exportieren.xml`), or `nil` when there is none or more than one.
    static func soleExportXML(_ folder: String) -> String? {
        guard let directory = opendir(folder) else { return nil }
        defer { closedir(directory) }
        var found: String?
        var seen = 0
        while let entry = readdir(directory), seen < 10_000 {
            seen += 1
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.bindMemory(to: CChar.self).baseAddress!)
            }
            let lower = name.lowercased()
            guard lower.hasSuffix(".xml"), !lower.hasPrefix("."), !lower.contains("_cda") else { continue }
            if found != nil { return nil }
            found = folder + "/" + name
        }
        return found
    }

    /// Creates a folder and its parents.
    static func makeDirectories(_ path: String) -> Bool {
        var partial = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            partial += "/" + component
            if mkdir(partial, 0o755) != 0, errno != EEXIST { return false }
        }
        return true
    }

    /// Writes a file atomically: a temporary file in the same folder, then `rename`.
    static func writeAtomically(_ bytes: [UInt8], to path: String) -> String? {
        let temporary = path + ".tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return "cannot create \(temporary): \(errorText())" }
        var offset = 0
        let failure: String? = bytes.withUnsafeBufferPointer { buffer in
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return "cannot write \(temporary): \(errorText())"
                }
                offset += written
            }
            return nil
        }
        close(fd)
        if let failure {
            unlink(temporary)
            return failure
        }
        guard rename(temporary, path) == 0 else {
            let message = "cannot rename \(temporary) to \(path): \(errorText())"
            unlink(temporary)
            return message
        }
        return nil
    }

    /// The canonical absolute path, or the path itself when it cannot be resolved.
    static func canonical(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }

    /// Writes a line to standard error (providers never print to stdout).
    static func log(_ message: String) {
        writeStandardError("health-metric: " + message)
    }
}

/// FNV-1a, 64-bit.
@inline(__always)
func fnv1a(_ pointer: UnsafePointer<UInt8>, _ count: Int) -> UInt64 {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for index in 0..<count {
        hash = (hash ^ UInt64(pointer[index])) &* 0x100_0000_01b3
    }
    return hash
}
