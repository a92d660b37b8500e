import ContextHost
#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// The archive layer of `.ctxp` bundles: a gzip'd ustar holding regular files (and optional
/// directory entries), read as hostile input. See `docs/packages.md`.
///
/// Reading refuses, with `PackageErrorCode`s: a file that is not gzip, a truncated or damaged
/// stream (zlib checks the CRC-32 and length), bytes after the gzip member (a second member
/// included), a tar header with a bad checksum or no ustar/GNU magic, no end-of-archive marker,
/// non-zero data after it (`archiveCorrupt`); links (`archiveLink`); devices, FIFOs, pax global
/// headers, sparse files and unknown types (`archiveSpecialFile`); unsafe paths
/// (`archiveUnsafePath`, see `ArchivePath.problem`); duplicates, including paths that differ only
/// in ASCII case and a file where a directory is needed (`archiveDuplicateEntry`); and every cap of
/// `ArchiveLimits` (`archiveTooLarge`), checked from each header before its data is read and while
/// inflating (so a gzip bomb stops at `limits.streamBytes` with no buffer beyond the files
/// accepted). ustar names with the prefix field, pax `x` headers (`path`, `size`, `linkpath`) and
/// GNU `L`/`K` long names are read; numeric fields may be octal or base-256.
package enum BundleArchive {
    /// A deterministic gzip'd ustar of `entries`, in their order: mode 0755/0644, uid/gid 0,
    /// empty owner names, mtime 0, no directory entries; a path too long for ustar gets a pax
    /// header. Throws `archiveUnsafePath` for a path `read` would refuse, `archiveDuplicateEntry`
    /// for a clash, `archiveTooLarge` over the default caps.
    package static func write(_ entries: [ArchiveEntry]) throws(PackageError) -> [UInt8] {
        let limits = ArchiveLimits()
        guard entries.count <= limits.entries else {
            throw PackageError(.archiveTooLarge, "\(entries.count) files are over the cap of \(limits.entries)", fix: ArchiveFix.tooLarge)
        }
        var clashes = PathClashes()
        var total = 0
        for entry in entries {
            if let problem = ArchivePath.problem(Array(entry.path.utf8), limits: limits) {
                throw PackageError(
                    .archiveUnsafePath, "file '\(ArchivePath.describe(Array(entry.path.utf8)))' has an unsafe path: \(problem)",
                    fix: ArchiveFix.unsafePath)
            }
            if let clash = clashes.add(entry.path, isDirectory: false) {
                throw PackageError(.archiveDuplicateEntry, "file '\(entry.path)' is a duplicate: \(clash)", fix: ArchiveFix.duplicate)
            }
            guard entry.bytes.count <= limits.fileBytes else {
                throw PackageError(
                    .archiveTooLarge, "file '\(entry.path)' is \(entry.bytes.count) bytes (the cap is \(limits.fileBytes))",
                    fix: ArchiveFix.tooLarge)
            }
            total += entry.bytes.count
            guard total <= limits.expandedBytes else {
                throw PackageError(
                    .archiveTooLarge, "the files add up to more than \(limits.expandedBytes) bytes (at file '\(entry.path)')",
                    fix: ArchiveFix.tooLarge)
            }
        }
        var tar: [UInt8] = []
        tar.reserveCapacity(total + entries.count * 1536 + 1024)
        for entry in entries {
            TarWriter.appendHeader(path: entry.path, size: entry.bytes.count, executable: entry.executable, to: &tar)
            tar += entry.bytes
            tar += [UInt8](repeating: 0, count: (512 - entry.bytes.count % 512) % 512)
        }
        tar += [UInt8](repeating: 0, count: 1024)
        guard let compressed = GzipInflater.gzip(tar) else {
            throw PackageError(.archiveCorrupt, "zlib could not compress the archive (out of memory?)", fix: "try again with more free memory")
        }
        return compressed
    }

    /// The regular files of a `.ctxp` archive, in archive order (directory entries are checked,
    /// not returned). Trailing data is refused: after the tar's end-of-archive block only zero
    /// blocks may follow, and nothing may follow the gzip member.
    package static func read(_ bytes: [UInt8], limits: ArchiveLimits = .init()) throws(PackageError) -> [ArchiveEntry] {
        guard bytes.count <= limits.compressedBytes else {
            throw PackageError(
                .archiveTooLarge, "the archive is \(bytes.count) bytes (the cap is \(limits.compressedBytes))", fix: ArchiveFix.tooLarge)
        }
        let result: Result<[ArchiveEntry], PackageError> = bytes.withUnsafeBytes { raw in
            let inflater: GzipInflater
            do {
                inflater = try GzipInflater(input: raw, limit: limits.streamBytes)
            } catch {
                return .failure(PackageError(.archiveCorrupt, "the file is not gzip-compressed (a .ctxp bundle is a gzip'd tar)", fix: ArchiveFix.corrupt))
            }
            var reader = TarReader(inflater: inflater, limits: limits)
            do throws(PackageError) { return .success(try reader.readAll()) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Reads the archive at `path`: refuses a file over `limits.compressedBytes` before reading
    /// it (`archiveTooLarge`), an unreadable one with `storeIO`; every message starts with the path.
    package static func read(file path: String, limits: ArchiveLimits = .init()) throws(PackageError) -> [ArchiveEntry] {
        let bytes = try readBytes(file: path, limits: limits)
        do {
            return try read(bytes, limits: limits)
        } catch {
            throw PackageError(error.code, "\(path): \(error.message)", fix: error.fix)
        }
    }

    /// The bytes of the archive at `path`, not decompressed or parsed (for checking a detached
    /// signature first): a file over `limits.compressedBytes` is refused before it is read.
    package static func readBytes(file path: String, limits: ArchiveLimits = .init()) throws(PackageError) -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            throw PackageError(.storeIO, "\(path): cannot open the bundle: \(String(cString: strerror(errno)))", fix: "check the path and its permissions")
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            throw PackageError(.storeIO, "\(path): cannot read the bundle: \(String(cString: strerror(errno)))", fix: "check the path and its permissions")
        }
        guard (status.st_mode & S_IFMT) == S_IFREG else {
            throw PackageError(.storeIO, "\(path): not a regular file", fix: "give the path of a .ctxp file")
        }
        guard status.st_size <= limits.compressedBytes else {
            throw PackageError(
                .archiveTooLarge, "\(path): the archive is \(status.st_size) bytes (the cap is \(limits.compressedBytes))",
                fix: ArchiveFix.tooLarge)
        }
        do {
            return try FileBytes.read(fd: fd, expectedSize: Int(status.st_size))
        } catch {
            throw PackageError(.storeIO, "\(path): cannot read the bundle: \(error.reason)", fix: "check the path and its permissions")
        }
    }
}
