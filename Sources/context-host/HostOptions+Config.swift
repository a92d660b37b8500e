import ContextHost

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension HostOptions {
    /// Exit status when the `--config` file cannot be used.
    static let badConfigurationStatus: Int32 = 2

    /// The `--config` file, parsed; nil without `--config`. A file with errors is not half-used:
    /// every diagnostic goes to stderr and the process exits with status 2 before anything starts.
    func loadConfigFile() -> HostConfigFile? {
        guard let configFile else { return nil }
        do {
            return try HostConfigFile.load(file: configFile)
        } catch {
            for diagnostic in error.diagnostics { writeStandardError(diagnostic.description) }
            writeStandardError(
                "context-host: the configuration file \(configFile) has \(error.diagnostics.count) error(s); nothing was started.")
            exitProcess(Self.badConfigurationStatus)
        }
    }
}

/// Ends the process at once (the C `exit`).
private func exitProcess(_ status: Int32) -> Never {
    exit(status)
}
