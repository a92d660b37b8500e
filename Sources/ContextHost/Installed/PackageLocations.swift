#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where installed providers live (docs/packages.md §3):
/// - the **configuration folder** (`$XDG_CONFIG_HOME/context-host`, else `~/.config/context-host`)
///   holds the lock file `providers.lock`, the only record of which version of each provider is
///   active, and the trusted signing keys `trusted-keys.json`;
/// - the **store** (`$XDG_DATA_HOME/context-host/packages`, else
///   `~/.local/share/context-host/packages`) holds one read-only folder per installed version,
///   `<id>/<version>/`, exactly the bundle's files.
///
/// Public so an app that embeds the host can load the providers its user installed with
/// `context-host install` (`HostConfiguration.packageLocations`).
public struct PackageLocations: Sendable, Equatable {
    /// The configuration folder (lock file and trusted keys).
    public var configDirectory: String
    /// The store of unpacked versions.
    public var storeDirectory: String

    /// Explicit folders (tests, or an app with an installation of its own).
    public init(configDirectory: String, storeDirectory: String) {
        self.configDirectory = configDirectory
        self.storeDirectory = storeDirectory
    }

    /// The lock file's name in the configuration folder.
    package static let lockFileName = "providers.lock"
    /// The trusted keys' file name in the configuration folder.
    package static let trustedKeysFileName = "trusted-keys.json"

    package var lockFile: String { configDirectory + "/" + Self.lockFileName }
    package var trustedKeysFile: String { configDirectory + "/" + Self.trustedKeysFileName }

    /// The folder of one installed version.
    package func versionDirectory(id: String, version: String) -> String {
        storeDirectory + "/" + id + "/" + version
    }

    /// The folders of every version of `id` in the store.
    package func providerDirectory(id: String) -> String { storeDirectory + "/" + id }

    /// The standard folders for this user (XDG), the ones `context-host install` writes, or nil
    /// without `HOME` or XDG variables.
    public static func standard() -> PackageLocations? {
        func variable(_ name: String) -> String? {
            guard let value = getenv(name).map({ String(cString: $0) }), value.hasPrefix("/") else { return nil }
            return value
        }
        let home = getenv("HOME").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
        guard let config = variable("XDG_CONFIG_HOME") ?? home.map({ $0 + "/.config" }),
            let data = variable("XDG_DATA_HOME") ?? home.map({ $0 + "/.local/share" })
        else { return nil }
        return PackageLocations(
            configDirectory: config + "/context-host", storeDirectory: data + "/context-host/packages")
    }
}
