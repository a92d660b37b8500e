import ContextProviderKit
import Logging

/// Starts a provider instance the way its manifest and the host policy ask.
package enum ProviderLauncher {
    /// A started provider and how it runs.
    package struct Launched: Sendable {
        package var connection: any ProviderConnection
        package var isolation: IsolationMode
    }

    /// How a provider runs under this host's policy (`HostConfiguration.isolation.policy`).
    package static func isolation(for manifest: Manifest, configuration: HostConfiguration) -> IsolationMode {
        switch configuration.isolation.policy {
        case .manifest: manifest.isolation
        case .process: .process
        case .inProcess: .inProcess
        }
    }

    /// Loads the library and opens an instance with `initJSON`: in this process, or in a
    /// supervised `context-host worker` process (`WorkerConnection`).
    package static func open(
        manifest: Manifest, libraryPath: String, initJSON: [UInt8], configuration: HostConfiguration, logger: Logger
    ) throws(LoadError) -> Launched {
        switch isolation(for: manifest, configuration: configuration) {
        case .process:
            let connection = try WorkerConnection(
                providerID: manifest.id, libraryPath: libraryPath, sha256: manifest.sha256, initJSON: initJSON,
                configuration: configuration, logger: logger)
            return Launched(connection: connection, isolation: .process)
        case .inProcess:
            let library = try ProviderLibrary.load(path: libraryPath, sha256: manifest.sha256, confined: !configuration.allowOutsideLibraryPaths)
            let connection = try InProcessConnection(
                library: library, initJSON: initJSON, maximumReplyBytes: configuration.maximumMessageBytes)
            return Launched(connection: connection, isolation: .inProcess)
        }
    }
}
