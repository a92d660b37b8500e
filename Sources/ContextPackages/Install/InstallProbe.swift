import ContextHost
import ContextProviderKit
import Dispatch
import Logging
import Synchronization

/// Loads a freshly unpacked provider in a throwaway worker, sandboxed like any untrusted provider,
/// and asks it `provider/info` (docs/packages.md §3). Proves the entry point resolves, the ABI
/// version is one this host speaks, the library's dependencies load, and the provider is the one
/// its manifest says — before the lock makes it active. The worker is killed afterwards.
package enum InstallProbe {
    /// How long the worker may take to start and answer.
    package static let timeout: DispatchTimeInterval = .seconds(20)

    /// What the worker answered.
    private enum Outcome: Sendable {
        case answered(JSONValue)
        case failed(String)
    }

    package static func run(
        manifest: Manifest, libraryPath: String, configuration base: HostConfiguration, logger: Logger
    ) throws(PackageError) {
        var configuration = base
        configuration.isolation.policy = .process
        configuration.isolation.maximumCrashes = 1
        configuration.stateDirectory = nil
        let settings = (try? manifest.resolvedSettings()) ?? JSONObject()
        let context = ProviderContext(providerID: manifest.id, settings: settings)
        let connection: any ProviderConnection
        do {
            connection = try ProviderLauncher.open(
                manifest: manifest, libraryPath: libraryPath, context: context, configuration: configuration,
                logger: logger
            ).connection
        } catch {
            throw PackageError(
                .probeFailed, "\(manifest.id) \(manifest.version) did not load in a test worker: [\(error.code)] \(error.message)",
                fix: error.hint)
        }
        let answer = Mutex<Outcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        let id = connection.send(method: ProviderInfoRequest.method, params: { $0.append(contentsOf: "{}".utf8) }) { response in
            let outcome: Outcome
            if let error = response.error {
                outcome = .failed("[\(error.code)] \(error.message)")
            } else if let range = response.result,
                let value = try? JSONValue(parsing: UnsafeRawBufferPointer(rebasing: response.bytes[range]))
            {
                outcome = .answered(value)
            } else {
                outcome = .failed("an unreadable answer")
            }
            answer.withLock { $0 = outcome }
            done.signal()
        }
        if done.wait(timeout: .now() + timeout) == .timedOut {
            connection.cancel(id)
            throw PackageError(
                .probeFailed, "\(manifest.id) \(manifest.version) loaded but did not answer provider/info within \(timeout)",
                fix: "run `context-host conformance` on the unpacked manifest to see where it hangs")
        }
        switch answer.withLock({ $0 }) {
        case .answered(let info)?:
            let id = info["id"]?.stringValue
            let version = info["version"]?.stringValue
            guard id == manifest.id, version == manifest.version.description else {
                throw PackageError(
                    .probeFailed,
                    "provider/info answers \(id ?? "no id") \(version ?? "no version"), but the manifest says \(manifest.id) \(manifest.version)",
                    fix: "make the provider's metadata and its manifest agree, then package it again")
            }
        case .failed(let reason)?:
            throw PackageError(
                .probeFailed, "\(manifest.id) \(manifest.version) failed provider/info: \(reason)",
                fix: "run `context-host conformance` on the manifest to see why")
        case nil:
            throw PackageError(.probeFailed, "\(manifest.id): no answer to provider/info", fix: "run `context-host conformance`")
        }
    }
}
