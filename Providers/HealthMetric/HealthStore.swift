#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import ContextProviderKit
import ProviderSupport

/// Where the data is, and its aggregates once read: loads lazily, once per version of the file,
/// through the on-disk cache. Safe to use from concurrent requests.
final class HealthStore: @unchecked Sendable {
    /// A data file found on disk.
    struct Located: Sendable, Hashable {
        var path: String
        var stamp: FileStamp
        var isCSV: Bool
    }

    /// The data file, aggregated.
    struct Loaded: Sendable {
        var located: Located
        var data: HealthData
    }

    /// Files below this size are read inline by the availability check.
    static let inlineLimit: UInt64 = 256 << 10

    let configuredPath: String
    let cache: AggregateCache?
    private let lock = Lock()
    private var loaded: Loaded?
    private var loading: (Located, Task<Loaded, any Error>, LoadProgress)?

    /// Bytes per read.
    let chunkSize: Int

    init(configuredPath: String, cacheDirectory: String?, chunkSize: Int = ExportScanner.defaultChunkSize) {
        self.configuredPath = configuredPath
        self.chunkSize = chunkSize
        self.cache = cacheDirectory.map(AggregateCache.init(directory:))
    }

    /// Finds the data file: the configured file, or `export.xml` (also under
    /// `apple_health_export/`) in the configured folder.
    func locate() throws(ProviderError) -> Located {
        guard let stamp = FileStamp.of(configuredPath) else {
            throw ProviderError(
                "No health data at \(configuredPath)",
                hint: "Set `export` to your Health export.xml (Health app → profile → Export All Health Data, then unzip) or to a CSV file with date,metric,value,unit.")
        }
        var path = configuredPath
        var fileStamp = stamp
        if stamp.isDirectory {
            let candidates = [configuredPath + "/export.xml", configuredPath + "/apple_health_export/export.xml"]
            // Exports made in some languages name the file differently (`Exportieren.xml`,
            // `exportar.xml`): then the one XML file in the folder that is not `export_cda.xml`.
            let localized = [configuredPath, configuredPath + "/apple_health_export"].compactMap(FileSystem.soleExportXML)
            guard let found = (candidates + localized).first(where: { FileStamp.of($0).map { !$0.isDirectory } ?? false }),
                let foundStamp = FileStamp.of(found)
            else {
                throw ProviderError(
                    "No export.xml in the folder \(configuredPath)",
                    hint: "Unzip the Health app's export there, or set `export` to the export.xml or a CSV file.")
            }
            path = found
            fileStamp = foundStamp
        }
        let canonical = FileSystem.canonical(path)
        return Located(path: canonical, stamp: fileStamp, isCSV: canonical.lowercased().hasSuffix(".csv"))
    }

    /// The aggregates if they are already in memory and the file has not changed.
    func current() -> Loaded? {
        guard let located = try? locate() else { return nil }
        return lock.withLock { loaded?.located == located ? loaded : nil }
    }

    /// The aggregates of the current file, reading it (or its cache) when needed.
    func data() async throws -> Loaded {
        let located = try locate()
        // The request this runs for (if any) hears how far the read got, even one it joins.
        let reporter = ProgressReporter.current
        let task: Task<Loaded, any Error> = lock.withLock {
            if let loaded, loaded.located == located {
                return Task { loaded }
            }
            if let (pending, task, progress) = loading, pending == located {
                if let reporter { progress.add(reporter) }
                return task
            }
            let cache = self.cache
            let chunkSize = self.chunkSize
            let progress = LoadProgress(total: located.stamp.size, fileName: FileIO.baseName(located.path))
            if let reporter { progress.add(reporter) }
            let task = Task<Loaded, any Error>.detached(priority: .userInitiated) {
                try Self.read(located, cache: cache, chunkSize: chunkSize, progress: progress)
            }
            loading = (located, task, progress)
            return task
        }
        do {
            let result = try await task.value
            lock.withLock {
                if loading?.0 == located { loading = nil }
                loaded = result
            }
            return result
        } catch {
            lock.withLock { if loading?.0 == located { loading = nil } }
            throw error
        }
    }

    /// Starts reading in the background (for the availability check on big files).
    func prefetch() {
        Task.detached(priority: .utility) { [self] in _ = try? await data() }
    }

    /// Reads the cache, else the file (then writes the cache).
    static func read(_ located: Located, cache: AggregateCache?, chunkSize: Int, progress: LoadProgress? = nil) throws -> Loaded {
        if let cache, let data = cache.load(dataPath: located.path, stamp: located.stamp) {
            return Loaded(located: located, data: data)
        }
        let onRead: (Int) -> Void = { progress?.advance(by: $0) }
        let data = try FileSystem.streaming(located.path, onRead: onRead) { (fileName, read) throws(ProviderError) -> HealthData in
            located.isCSV
                ? try CSVReader.read(fileName: fileName, chunkSize: chunkSize, read: read)
                : try ExportScanner.scan(fileName: fileName, chunkSize: chunkSize, read: read)
        }
        progress?.finish()
        if let cache, let problem = cache.store(data, dataPath: located.path, stamp: located.stamp) {
            FileSystem.log("could not write the aggregate cache (\(problem)); the next open will read the file again")
        }
        if let truncation = data.report.truncation { FileSystem.log(truncation) }
        if data.report.malformed > 0 {
            FileSystem.log("\(data.report.malformed) malformed record(s) skipped in \(located.path); first: \(data.report.problems.first ?? "")")
        }
        return Loaded(located: located, data: data)
    }

    /// Reads the cache only (fast); `nil` when there is no valid cache.
    func loadFromCache(_ located: Located) -> Loaded? {
        guard let cache, let data = cache.load(dataPath: located.path, stamp: located.stamp) else { return nil }
        let result = Loaded(located: located, data: data)
        lock.withLock { loaded = result }
        return result
    }
}


/// How far one read of the data file got, told to every request waiting for it (bytes read of
/// the file's size, as `$/progress`).
final class LoadProgress: @unchecked Sendable {
    private let lock = Lock()
    private var reporters: [ProgressReporter] = []
    private var done: UInt64 = 0
    private var total: UInt64
    private let message: String

    init(total: UInt64, fileName: String) {
        self.total = total
        self.message = "Reading \(fileName)"
    }

    /// Adds a request that waits for this read; it hears the current position at once.
    func add(_ reporter: ProgressReporter) {
        let (done, total) = lock.withLock { () -> (UInt64, UInt64) in
            // (Bounded: a request joins at most once, and reports to a finished one do nothing.)
            if reporters.count < 64 { reporters.append(reporter) }
            return (self.done, self.total)
        }
        reporter.report(done: Double(done), total: Double(total), message: message)
    }

    /// `count` more bytes were read.
    func advance(by count: Int) {
        guard count > 0 else { return }
        let (listeners, position, size) = lock.withLock { () -> ([ProgressReporter], UInt64, UInt64) in
            done &+= UInt64(count)
            total = max(total, done)  // (the file grew while read)
            return (reporters, done, total)
        }
        for reporter in listeners { reporter.report(done: Double(position), total: Double(size), message: message) }
    }

    /// The read is over: everyone hears `done == total`.
    func finish() {
        let (listeners, size) = lock.withLock { () -> ([ProgressReporter], UInt64) in
            total = max(total, done)
            done = total
            return (reporters, total)
        }
        for reporter in listeners { reporter.report(done: Double(size), total: Double(size), message: message) }
    }
}
