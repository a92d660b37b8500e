import ArgumentParser
import ContextHost
import ContextMCP
import ContextProtocol
import Dispatch

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ContextHostCommand {
    /// `mcp`: the providers as an MCP server on stdin/stdout (docs/mcp.md).
    struct MCPServe: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "mcp",
            abstract: "Serve the providers to MCP clients on stdin/stdout (MCP 2025-11-25 and 2026-07-28).",
            discussion: """
                Each provider becomes tools (<slug>_collect or <slug>_make, <slug>_search, <slug>_detail) and each \
                collected item a contexthost:// resource, kept in the state folder. Forms ask the user through MCP \
                elicitation for what the arguments leave out. Logs go to stderr only. See docs/mcp.md.
                """)

        @OptionGroup var options: HostOptions

        @Option(name: .customLong("grant"), help: ArgumentHelp(
            "A permission granted to the providers (repeatable): network, location, health, calendar, files, contacts, exec. An MCP client cannot grant them.",
            valueName: "permission"))
        var grants: [String] = []

        @Option(help: ArgumentHelp("The user's locale, a BCP 47 tag such as de-CH.", valueName: "tag"))
        var locale: String?

        func validate() throws {
            let known = ManifestPermission.known.map(\.rawValue)
            for grant in grants where !known.contains(grant) {
                throw ValidationError("--grant \(grant): not a permission; use one of \(known.joined(separator: ", ")).")
            }
            if let locale, locale.isEmpty || locale.count > 64 || !locale.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) {
                throw ValidationError("--locale \(locale): expected a BCP 47 tag such as en-US.")
            }
        }

        func run() throws {
            let protocolFD = StdioServer.takeOverStandardOutput()
            let logger = options.bootstrapLogging()
            var configuration = options.hostConfiguration()
            configuration.watchManifests = true
            let itemsDirectory = configuration.stateDirectory.map { $0 + "/mcp-items" }
            let host: InProcessHost
            do {
                host = try InProcessHost(configuration: configuration, logger: logger)
            } catch {
                writeStandardError("context-host mcp: \(error)")
                throw ExitCode(1)
            }
            let bridge = MCPBridge(
                host: host, options: MCPBridge.Options(itemsDirectory: itemsDirectory, grantedPermissions: grants, locale: locale),
                output: OutputChannel(fileDescriptor: protocolFD), logger: logger)
            let started = DispatchSemaphore(value: 0)
            let failure = Failure()
            Task {
                do throws(ResponseError) {
                    try await bridge.start()
                } catch {
                    failure.set(error.message)
                }
                started.signal()
            }
            started.wait()
            if let message = failure.get() {
                writeStandardError("context-host mcp: the host did not start: \(message)")
                throw ExitCode(1)
            }
            bridge.run(input: STDIN_FILENO, maximumMessageBytes: options.maxMessageBytes)
        }
    }
}

/// A message set by one thread and read by another.
private final class Failure: @unchecked Sendable {
    private var message: String?
    private let lock = DispatchSemaphore(value: 1)
    func set(_ text: String) {
        lock.wait()
        message = text
        lock.signal()
    }
    func get() -> String? {
        lock.wait()
        defer { lock.signal() }
        return message
    }
}
