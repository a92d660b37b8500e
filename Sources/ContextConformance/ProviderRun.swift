import ContextHost
import ContextProviderKit

/// What a check concluded.
struct Verdict: Sendable {
    var status: CheckStatus
    var message: String
    var details: [String] = []

    static func pass(_ message: String, _ details: [String] = []) -> Verdict { Verdict(status: .passed, message: message, details: details) }
    static func warn(_ message: String, _ details: [String] = []) -> Verdict { Verdict(status: .warning, message: message, details: details) }
    static func fail(_ message: String, _ details: [String] = []) -> Verdict { Verdict(status: .failed, message: message, details: details) }
    static func skip(_ message: String) -> Verdict { Verdict(status: .skipped, message: message) }
}

/// An item the runner collected, and where it came from.
struct CollectedItem: Sendable {
    var source: String
    var json: JSONValue
    var item: ContextItem?
}

/// Runs every check for one manifest in one mode.
final class ProviderRun {
    let manifestPath: String
    let mode: ConformanceMode
    let options: ConformanceOptions
    let probeCache: StdoutProbeCache
    private(set) var results: [String: CheckResult] = [:]
    var manifest: Manifest?
    var session: ProviderSession?
    var startForm: ContextForm?
    var searchOptions: [String: String] = [:]
    var items: [CollectedItem] = []
    /// Chip and encoding of each item, from the first sequential calls.
    var chips: [Int: JSONValue] = [:]
    var encodings: [Int: JSONValue] = [:]
    /// Result sizes seen per kind (for limits.respects-maximum).
    var oversized: [String] = []
    /// Values the collector accepted for its first step (a declared or derived sample).
    var acceptedValues: JSONObject?
    /// Why each set of derived values was refused, when none was accepted.
    var derivedRefusals: [String] = []
    /// Why the item checks cannot run, if they cannot.
    var blocked: String?

    /// Items the item checks use, at most.
    static let maximumItems = 6

    init(manifestPath: String, mode: ConformanceMode, options: ConformanceOptions, probeCache: StdoutProbeCache) {
        self.manifestPath = manifestPath
        self.mode = mode
        self.options = options
        self.probeCache = probeCache
    }

    // MARK: Recording

    /// Runs `body` as check `id`, timing it: only when selected, unless `always` (checks whose
    /// work later checks need: search options, items, baseline chips and encodings).
    func check(_ id: String, always: Bool = false, _ body: () async -> Verdict) async {
        guard always || options.isSelected(id) else { return }
        if let blocked, results[id] == nil, !Self.independent.contains(id) {
            record(id, .skip(blocked), 0)
            return
        }
        let start = ContinuousClock.now
        let verdict = await body()
        let elapsed = ContinuousClock.now - start
        record(id, verdict, Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
    }

    /// Checks that run even when items are blocked (they do not need items).
    static let independent: Set<String> = [
        "manifest.schema", "abi.load", "abi.version", "provider.open", "metadata.matches-manifest",
        "availability.answers", "robustness.garbage-input", "robustness.stdout-clean", "limits.respects-maximum",
    ]

    func record(_ id: String, _ verdict: Verdict, _ durationMs: Double) {
        guard options.isSelected(id) else { return }
        results[id] = CheckResult(id: id, status: verdict.status, message: verdict.message, details: verdict.details, durationMs: durationMs)
    }

    /// Marks every check not yet recorded as skipped.
    func skipRest(_ reason: String) {
        for id in ConformanceCheck.ids where results[id] == nil { record(id, .skip(reason), 0) }
    }

    /// The report, in catalogue order.
    var report: ProviderReport {
        ProviderReport(
            manifestPath: manifestPath, providerId: manifest?.id, mode: mode,
            results: ConformanceCheck.ids.compactMap { results[$0] })
    }

    // MARK: The run

    func run(previousModeCrashed: Bool) async -> ProviderReport {
        // manifest.schema
        let loaded: Manifest
        do {
            loaded = try Manifest.load(file: manifestPath)
            manifest = loaded
            await check("manifest.schema") { .pass("The manifest is valid (id \(loaded.id), version \(loaded.version)).") }
        } catch {
            manifest = nil
            record("manifest.schema", .fail(
                "The manifest has \(error.diagnostics.count) error(s); the host rejects it.",
                error.diagnostics.map(\.description)), 0)
            skipRest("blocked: the manifest was rejected (manifest.schema)")
            return report
        }
        if mode == .inProcess && previousModeCrashed {
            skipRest("skipped: the provider crashed its worker; in-process the crash would end the runner (fix the worker-mode failures first)")
            return report
        }
        await openProvider(loaded)
        guard let session else { return report }
        await runProviderChecks(session)
        return report
    }

    /// abi.load, abi.version and provider.open.
    private func openProvider(_ manifest: Manifest) async {
        var configuration = HostConfiguration(
            libraryDirectories: options.libraryDirectories, allowOutsideLibraryPaths: options.allowOutsideLibraryPaths)
        configuration.executableDirectory = nil
        let libraryPath: String
        do {
            libraryPath = try configuration.libraryResolver().resolve(manifest)
        } catch {
            record("abi.load", .fail("The library '\(manifest.library)' cannot be used: [\(error.code)] \(error.message)", ["fix: \(error.hint)"]), 0)
            skipRest("blocked: the library did not load (abi.load)")
            return
        }
        let start = ContinuousClock.now
        var loadError: LoadError?
        if mode == .inProcess {
            let sha256 = manifest.sha256
            let loaded: Result<ProviderLibrary, LoadError> = await offPool {
                do throws(LoadError) {
                    return .success(try ProviderLibrary.load(path: libraryPath, sha256: sha256))
                } catch {
                    return .failure(error)
                }
            }
            if case .failure(let error) = loaded { loadError = error }
        }
        if loadError == nil {
            switch await ProviderSession.openOffPool(manifest: manifest, libraryPath: libraryPath, mode: mode, options: options) {
            case .success(let opened): session = opened
            case .failure(let error): loadError = error
            }
        }
        let elapsed = Double((ContinuousClock.now - start).components.attoseconds) / 1e15 + Double((ContinuousClock.now - start).components.seconds) * 1000
        guard let error = loadError else {
            record("abi.load", .pass("'\(libraryPath)' loads and exports context_provider_entry_v1."), elapsed)
            record("abi.version", .pass("ABI version 1 with a complete function table."), 0)
            record("provider.open", .pass("open succeeded with the default settings (\(mode == .worker ? "in a worker process" : "in-process"))."), 0)
            return
        }
        let text = "[\(error.code)] \(error.message)"
        let fix = "fix: \(error.hint)"
        switch error.code {
        case "worker-unavailable", "worker-spawn-failed":
            skipRest("skipped: worker mode cannot run here: \(error.message) (set ConformanceOptions.hostExecutable, or run --mode in-process)")
        case "abi-version-mismatch", "abi-table-too-small", "abi-table-incomplete", "entry-returned-null":
            record("abi.load", .pass("'\(libraryPath)' loads and exports context_provider_entry_v1."), elapsed)
            record("abi.version", .fail(text, [fix]), 0)
            skipRest("blocked: the function table was refused (abi.version)")
        case "provider-open-failed", "worker-crashed-on-load", "worker-start-timeout", "missing-setting", "setting-type-mismatch", "unknown-setting":
            record("abi.load", .pass("'\(libraryPath)' loads and exports context_provider_entry_v1."), elapsed)
            record("abi.version", .pass("ABI version 1 with a complete function table."), 0)
            record("provider.open", .fail(text, [fix]), 0)
            skipRest("blocked: the provider did not open (provider.open)")
        default:
            record("abi.load", .fail(text, [fix]), elapsed)
            skipRest("blocked: the library did not load (abi.load)")
        }
    }

    private func runProviderChecks(_ session: ProviderSession) async {
        await checkMetadata(session)
        await checkAvailability(session)
        await collectItems(session)
        await itemChecks(session)
        await restartCheck(session)
        await timingChecks(session)
        await concurrencyCheck(session)
        await garbageCheck(session)
        await limitsCheck(session)
        await stdoutCheck(session)
        skipRest(blocked ?? "not run")
    }
}
