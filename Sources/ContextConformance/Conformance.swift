import ContextHost
import ContextProviderKit
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The provider conformance runner (docs/conformance.md): loads each provider the way the host
/// does and runs every check in `ConformanceCheck.all`.
///
/// From a provider author's Swift tests, one call:
///
/// ```swift
/// @Test func conforms() async throws {
///     try await Conformance.verify("manifests/shopping.yaml")
/// }
/// ```
public enum Conformance {
    /// Runs the checks for manifests (files, or folders of `*.yaml`/`*.yml`), in every mode of
    /// `options.modes`, and applies the baseline.
    public static func run(_ paths: [String], options: ConformanceOptions = ConformanceOptions()) async -> ConformanceReport {
        let probeCache = StdoutProbeCache()
        var reports: [ProviderReport] = []
        for file in manifestFiles(paths) {
            var crashed = false
            for mode in options.modes {
                let run = ProviderRun(manifestPath: file, mode: mode, options: options, probeCache: probeCache)
                let report = await run.run(previousModeCrashed: crashed)
                if run.session?.crashed == true { crashed = true }
                reports.append(report)
            }
        }
        var report = ConformanceReport(providers: reports)
        if let baseline = options.baseline {
            report.staleBaselineEntries = baseline.apply(to: &report.providers)
        }
        return report
    }

    /// Runs the checks and throws `ConformanceFailure` (whose description is the readable
    /// report) if any failed. For provider authors' tests.
    public static func verify(_ paths: String..., options: ConformanceOptions = ConformanceOptions()) async throws {
        let report = await run(paths, options: options)
        if !report.passed { throw ConformanceFailure(report: report) }
    }

    /// `run` for synchronous callers (the CLI).
    public static func runBlocking(_ paths: [String], options: ConformanceOptions) -> ConformanceReport {
        let box = Mutex<ConformanceReport?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task.detached {
            let report = await run(paths, options: options)
            box.withLock { $0 = report }
            done.signal()
        }
        done.wait()
        return box.withLock { $0 }!
    }

    /// The manifest files named by `paths`: files as given, folders expanded to their `*.yaml` and
    /// `*.yml` files (not hidden), sorted by name. A path that does not exist is kept, so its run
    /// reports it under `manifest.schema`.
    public static func manifestFiles(_ paths: [String]) -> [String] {
        var files: [String] = []
        for path in paths {
            var info = stat()
            if stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
                guard let directory = opendir(path) else { continue }
                var names: [String] = []
                while let entry = readdir(directory) {
                    let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                    }
                    if name.hasPrefix(".") { continue }
                    if name.hasSuffix(".yaml") || name.hasSuffix(".yml") { names.append(name) }
                }
                closedir(directory)
                let base = path.hasSuffix("/") ? String(path.dropLast()) : path
                files += names.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }.map { base + "/" + $0 }
            } else {
                files.append(path)
            }
        }
        return files
    }
}
