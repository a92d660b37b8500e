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
    /// fatal. The result is the same as `discover(_:)`'s.
    package static func discover(
        _ searchPaths: [ManifestSearchPath], cacheFile: String,
        racyWindowNanoseconds: Int64 = defaultRacyWindowNanoseconds
    ) -> (catalog: ManifestCatalog, report: CachedDiscoveryReport) {
        let folders = searchPaths.map(\.path)
        var report = CachedDiscoveryReport()
        var previous: ManifestCache?
        switch ManifestCache.read(path: cacheFile, folders: folders) {
        case .loaded(let cache): previous = cache
        case .missing: break
        case .unusable(let reason): report.ignoredCache = reason
        }
        let storableBefore = Self.realTimeNanoseconds() - racyWindowNanoseconds
        // The next cache's entries: those parsed now, and those the cache answered (its answers as
        // they are, copied into the next cache only if it is written).
        var added: [ManifestCache.Entry] = []
        var reusedEntries: [ManifestCache.Entry?] = []
        let catalog = discover(searchPaths) { files in
            // The cache's answers first; the files it has none for are parsed side by side, then
            // everything is counted and kept in file order.
            let cached = files.map { found in
                previous?.result(absolutePath: found.absolutePath, file: found.file, directory: found.directory, stamp: found.stamp)
            }
            var parsed = loadResults(files.indices.filter { cached[$0] == nil }.map { files[$0] }).makeIterator()
            var outcomes: [Result<Manifest, ManifestRejection>] = []
            outcomes.reserveCapacity(files.count)
            for (found, entry) in zip(files, cached) {
                if let entry {
                    report.reused += 1
                    outcomes.append(entry.result)
                    continue
                }
                report.parsed += 1
                let result = parsed.next()!
                outcomes.append(result)
                if case .failure(let rejection) = result, rejection.diagnostics.contains(where: { $0.code == .unreadableFile }) {
                    continue  // permissions may change without touching the stamp we keep
                }
                if max(found.stamp.modifiedNanoseconds, found.stamp.changedNanoseconds) < storableBefore {
                    added.append(ManifestCache.Entry(
                        absolutePath: found.absolutePath, file: found.file, directory: found.directory, stamp: found.stamp,
                        result: result))
                }
            }
            reusedEntries = cached
            return outcomes
        }
        let unchanged = previous != nil && added.isEmpty && report.reused == previous?.entries.count
        if !unchanged {
            var next = ManifestCache(folders: folders)
            for case let entry? in reusedEntries { next.entries[entry.absolutePath] = entry }
            for entry in added { next.entries[entry.absolutePath] = entry }
            do {
                try next.write(to: cacheFile)
                report.written = true
            } catch {
                report.writeError = error.reason
            }
        }
        return (catalog, report)
    }

    static func realTimeNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }
}
