#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

/// What a discovery with the registry cache did: for the log, the tests and the benchmark.
package struct CachedDiscoveryReport: Sendable, Equatable {
    /// Files whose cached result was used (no YAML read).
    package var reused = 0
    /// Files read and parsed (new, changed, or not cacheable).
    package var parsed = 0
    /// Why an existing cache file was not used (corrupt, truncated, another format or host build,
    /// other folders, not private), if it was not.
    package var ignoredCache: String?
    /// Whether the cache file was (re)written.
    package var written = false
    /// Why writing the cache failed, if it did.
    package var writeError: String?
}

extension ManifestCatalog {
    /// A file changed this recently (mtime or ctime, in nanoseconds) is parsed but not cached: a
    /// second write within the file system's timestamp granularity could leave its stamp unchanged
    /// (git's "racy clean" problem). One second also covers coarse and skewed clocks.
    package static let defaultRacyWindowNanoseconds: Int64 = 1_000_000_000

    /// `discover(_:)` with the registry cache at `cacheFile` (see `ManifestCache`): each file whose
    /// stamp (size, mtime, ctime, inode, device) and naming match its cache entry takes the cached
    /// result without being read; other files are parsed; entries of files no longer found are
    /// dropped. The cache is rewritten (atomically) only if that changed anything. A cache that
    /// cannot be used is ignored and rebuilt; a cache that cannot be written is reported, never
    /// fatal. The result is the same as `discover(_:)`'s. A cache file of at least
    /// `sideBySideDecodeMinimum` bytes is decoded while the folders are listed.
    package static func discover(
        _ searchPaths: [ManifestSearchPath], cacheFile: String,
        racyWindowNanoseconds: Int64 = defaultRacyWindowNanoseconds,
        sideBySideDecodeMinimum: Int = ManifestCache.sideBySideDecodeMinimum,
        onlyFileNamed fileName: String? = nil
    ) -> (catalog: ManifestCatalog, report: CachedDiscoveryReport) {
        let folders = searchPaths.map(\.path)
        var report = CachedDiscoveryReport()
        // Read before anything is stat'ed: a file written after this moment is never cached with
        // a stamp older than the window.
        let storableBefore = Self.realTimeNanoseconds() - racyWindowNanoseconds
        // Decoding a large cache costs about as much as listing and stat'ing the files it covers
        // (~25M instructions each for 1,000 manifests): the two run side by side.
        let cacheBytes = ManifestCache.readBytes(path: cacheFile)
        let (read, found) = sideBySide(
            when: cacheBytes.count >= sideBySideDecodeMinimum,
            { cacheBytes.decoded(folders: folders) },
            { fileName.map { findFiles(named: $0, in: searchPaths) } ?? findFiles(searchPaths) })
        var previous: ManifestCache?
        switch consume read {  // consumed: `previous` must hold the only reference to its entries
        case .loaded(let cache): previous = cache
        case .missing: break
        case .unusable(let reason): report.ignoredCache = reason
        }
        let previousCount = previous?.entries.count ?? 0
        // The cache's answers first (each taken out of it, not copied); the files it has none for
        // are parsed side by side, then everything is counted and kept in file order.
        let files = found.files
        var misses: [FoundFile] = []
        var reused = files.map { file in
            let result = previous?.takeResult(
                absolutePath: file.absolutePath, file: file.file, directory: file.directory, stamp: file.stamp)
            if case .none = result { misses.append(file) }
            return result
        }
        var parsed = loadResults(misses).makeIterator()
        var outcomes: [Result<Manifest, ManifestRejection>] = []
        outcomes.reserveCapacity(files.count)
        // Which outcomes the next cache holds: the reused ones, and those parsed now that may be.
        var cacheable: [Bool] = []
        cacheable.reserveCapacity(files.count)
        var added = 0
        for (index, file) in files.enumerated() {
            var cached: Result<Manifest, ManifestRejection>?
            swap(&cached, &reused[index])  // moved out (see ManifestCache.takeResult)
            if case .some(let result) = consume cached {
                report.reused += 1
                outcomes.append(result)
                cacheable.append(true)
                continue
            }
            report.parsed += 1
            let result = parsed.next()!
            var storable = max(file.stamp.modifiedNanoseconds, file.stamp.changedNanoseconds) < storableBefore
            if case .failure(let rejection) = result, rejection.diagnostics.contains(where: { $0.code == .unreadableFile }) {
                storable = false  // permissions may change without touching the stamp we keep
            }
            outcomes.append(result)
            cacheable.append(storable)
            if storable { added += 1 }
        }
        if previous != nil, added == 0, report.reused == previousCount {
            // Unchanged: nothing to write.
        } else {
            writeCache(files, outcomes, cacheable: cacheable, folders: folders, to: cacheFile, report: &report)
        }
        let catalog = catalog(found, outcomes: consume outcomes)
        return (catalog, report)
    }

    /// Writes the cache of `files` whose outcomes are `cacheable`; the result goes into `report`.
    private static func writeCache(
        _ files: [FoundFile], _ outcomes: [Result<Manifest, ManifestRejection>], cacheable: [Bool], folders: [String],
        to cacheFile: String, report: inout CachedDiscoveryReport
    ) {
        var next = ManifestCache(folders: folders)
        for (index, file) in files.enumerated() where cacheable[index] {
            next.entries[file.absolutePath] = ManifestCache.Entry(
                absolutePath: file.absolutePath, file: file.file, directory: file.directory, stamp: file.stamp,
                result: outcomes[index])
        }
        do {
            try next.write(to: cacheFile)
            report.written = true
        } catch {
            report.writeError = error.reason
        }
    }

    static func realTimeNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}
