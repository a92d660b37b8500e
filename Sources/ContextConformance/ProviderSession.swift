import ContextHost
import ContextProviderKit
import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The answer to one call, as the host sees it.
struct CallOutcome: Sendable {
    /// The decoded result, when the provider succeeded with JSON.
    var result: JSONValue?
    /// The size of the result's JSON text, in bytes.
    var resultBytes: Int = 0
    /// The error: the provider's, or the host's (timeout, crash, bad reply).
    var error: RPCError?
    /// Whether `error` was made by the host.
    var errorIsFromHost = false
    /// Wall time from send to answer.
    var elapsed: Duration = .zero

    /// `code: message` of the error, or "no result".
    var errorText: String {
        guard let error else { return "answered without a result" }
        return "error \(error.code.rawValue): \(error.message)"
    }

    /// The provider crashed, hung or broke the protocol (worker), or timed out.
    var isFatal: Bool {
        guard let error else { return false }
        return [-32016, -32015, -32014].contains(error.code.rawValue)
    }
}

/// Runs blocking work (spawning and waiting for a worker, dlopen, the stdout probe) on a Dispatch
/// thread, so it never blocks Swift's cooperative pool, where in-process providers run their tasks.
func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        DispatchQueue.global().async { continuation.resume(returning: body()) }
    }
}

/// One call the runner made, kept for the stdout probe to replay.
struct RecordedCall: Sendable {
    var method: String
    var params: JSONValue
}

/// A provider instance opened the way the host opens it, with timed calls.
final class ProviderSession: Sendable {
    let manifest: Manifest
    let libraryPath: String
    let mode: ConformanceMode
    let connection: any ProviderConnection
    private let recorded = Mutex<[RecordedCall]>([])
    private let sawCrash = Mutex(false)
    private let oversized = Mutex<[String]>([])
    /// The host's default size limits on results.
    static let limits = OutputLimits()
    /// The host's default message limit.
    static let messageLimit = 16 << 20

    /// The most calls kept for the stdout probe.
    static let recordLimit = 48

    init(manifest: Manifest, libraryPath: String, mode: ConformanceMode, connection: any ProviderConnection) {
        self.manifest = manifest
        self.libraryPath = libraryPath
        self.mode = mode
        self.connection = connection
    }

    /// A logger that drops everything: worker supervision logs are not the report.
    static let silentLogger = Logger(label: "context-host.conformance", factory: { _ in SwiftLogNoOpLogHandler() })

    /// The init JSON the registry sends: resolved settings, every permission the manifest asks for.
    static func context(for manifest: Manifest, overrides: [String: JSONValue]) throws(LoadError) -> ProviderContext {
        let settings: JSONObject
        do {
            settings = try manifest.resolvedSettings(overrides: overrides)
        } catch {
            let first = error.diagnostics.first
            throw LoadError(
                code: first?.code.rawValue ?? "invalid-settings", message: first?.message ?? "\(error)",
                hint: first?.hint ?? "Fix the provider's settings.")
        }
        return ProviderContext(providerID: manifest.id, settings: settings, grantedPermissions: manifest.availability.permissions.map(\.rawValue))
    }

    /// Opens an instance in `mode`.
    static func open(
        manifest: Manifest, libraryPath: String, mode: ConformanceMode, options: ConformanceOptions
    ) throws(LoadError) -> ProviderSession {
        let context = try Self.context(for: manifest, overrides: options.settings[manifest.id] ?? [:])
        var configuration = HostConfiguration(
            libraryDirectories: options.libraryDirectories, allowOutsideLibraryPaths: options.allowOutsideLibraryPaths)
        configuration.isolation.policy = mode == .worker ? .process : .inProcess
        configuration.isolation.workerExecutable = hostExecutable(options: options, libraryPath: libraryPath)
        // Only the first restart matters here; never quarantine during a run.
        configuration.isolation.maximumCrashes = 1000
        configuration.isolation.sandbox = options.sandbox
        let launched = try ProviderLauncher.open(
            manifest: manifest, libraryPath: libraryPath, context: context, configuration: configuration,
            logger: silentLogger)
        return ProviderSession(manifest: manifest, libraryPath: libraryPath, mode: mode, connection: launched.connection)
    }

    /// A fresh instance of the same provider in the same mode (worker mode: a new worker process).
    func reopen(options: ConformanceOptions) async -> Result<ProviderSession, LoadError> {
        await Self.openOffPool(manifest: manifest, libraryPath: libraryPath, mode: mode, options: options)
    }

    /// `open`, on a Dispatch thread.
    static func openOffPool(
        manifest: Manifest, libraryPath: String, mode: ConformanceMode, options: ConformanceOptions
    ) async -> Result<ProviderSession, LoadError> {
        await offPool {
            do throws(LoadError) {
                return .success(try open(manifest: manifest, libraryPath: libraryPath, mode: mode, options: options))
            } catch {
                return .failure(error)
            }
        }
    }

    /// The `context-host` executable for workers and the stdout probe.
    static func hostExecutable(options: ConformanceOptions, libraryPath: String) -> String? {
        if let explicit = options.hostExecutable { return explicit }
        if let running = RunningExecutable.contextHost { return running }
        for directory in [ManifestFileSystem.directoryName(libraryPath)] + options.libraryDirectories {
            let candidate = directory + "/context-host"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }

    /// The manifest's timeout for `method`, in milliseconds (as the host picks it).
    func timeoutMs(for method: String) -> Int {
        let timeouts = manifest.timeouts
        switch method {
        case ItemPreviewRequest.method, ItemDescribeRequest.method, ProviderAvailabilityRequest.method, ProviderInfoRequest.method, ConformanceSamplesRequest.method:
            return timeouts.preview.milliseconds
        case ItemDetailRequest.method: return timeouts.detail.milliseconds
        case ItemEncodeRequest.method: return timeouts.encode.milliseconds
        default: return timeouts.collect.milliseconds
        }
    }

    /// Whether any call so far ended with the worker crashing or being killed.
    var crashed: Bool { sawCrash.withLock { $0 } }

    /// Sends `method` with `params` and waits for the answer or the manifest's timeout.
    func call(_ method: String, _ params: JSONValue = [:], record: Bool = true) async -> CallOutcome {
        if record {
            recorded.withLock { calls in
                if calls.count < Self.recordLimit { calls.append(RecordedCall(method: method, params: params)) }
            }
        }
        return await callRaw(method) { JSONWriter.append(params, to: &$0) }
    }

    /// Like `call`, with the params written as raw bytes (for garbage input).
    func callRaw(_ method: String, params: @escaping ParamsWriter) async -> CallOutcome {
        let timeout = timeoutMs(for: method)
        let connection = self.connection
        let start = ContinuousClock.now
        let once = Mutex(false)
        let outcome: CallOutcome = await withCheckedContinuation { continuation in
            let finish: @Sendable (CallOutcome) -> Void = { outcome in
                let first = once.withLock { done in
                    defer { done = true }
                    return !done
                }
                guard first else { return }
                var outcome = outcome
                outcome.elapsed = ContinuousClock.now - start
                if outcome.error?.code.rawValue == -32016 { self.sawCrash.withLock { $0 = true } }
                continuation.resume(returning: outcome)
            }
            let providerRequest = Mutex<Int64?>(nil)
            // Weak: the timer must not keep the instance open (un-`close`d) for the whole timeout.
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(timeout)) { [weak connection] in
                finish(CallOutcome(
                    error: RPCError(.providerTimedOut, "no answer to \(method) within \(timeout) ms (the manifest's timeout)"),
                    errorIsFromHost: true))
                if let id = providerRequest.withLock({ $0 }) { connection?.timedOut(id) }
            }
            let id = connection.send(method: method, params: params) { response in
                if let error = response.error {
                    finish(CallOutcome(error: error, errorIsFromHost: response.errorIsFromHost))
                } else if let bytes = response.resultBytes {
                    if let kind = ProviderOutput.expected(for: method) {
                        let limit = Self.limits.limit(for: kind, messageLimit: Self.messageLimit)
                        if bytes.count > limit {
                            self.oversized.withLock { $0.append("\(method): a \(kind.noun) of \(bytes.count) bytes; the host's limit is \(limit)") }
                        }
                    }
                    if let value = try? JSONValue(parsing: bytes) {
                        finish(CallOutcome(result: value, resultBytes: bytes.count))
                    } else {
                        finish(CallOutcome(
                            resultBytes: bytes.count, error: RPCError(.providerBadReply, "its result is not valid JSON"),
                            errorIsFromHost: true))
                    }
                } else {
                    finish(CallOutcome(error: RPCError(.providerBadReply, "its reply has no result"), errorIsFromHost: true))
                }
            }
            providerRequest.withLock { $0 = id }
        }
        return outcome
    }

    /// Results over the host's size limits so far.
    var oversizedResults: [String] { oversized.withLock { $0 } }

    /// The calls made so far (for the stdout probe).
    var recordedCalls: [RecordedCall] { recorded.withLock { $0 } }
}
