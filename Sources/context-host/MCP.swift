import ArgumentParser
import ContextHost
import ContextMCP
import ContextProtocol
import ContextWeb
import Dispatch
import Logging
import Synchronization

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
            abstract: "Serve the providers to MCP clients on stdin/stdout, or over Streamable HTTP with --http (MCP 2025-11-25 and 2026-07-28).",
            discussion: """
                Each provider becomes tools (<slug>_collect or <slug>_make, <slug>_search, <slug>_detail) and each \
                collected item a contexthost:// resource, kept in the state folder. Forms ask the user through MCP \
                elicitation for what the arguments leave out. Permissions are what --grant gives: an MCP client \
                cannot grant them. Logs go to stderr only. See docs/mcp.md.
                """)

        @OptionGroup var options: HostOptions

        /// What the providers are granted: an MCP client cannot grant permissions itself.
        @OptionGroup var grants: GrantOptions

        @Option(help: ArgumentHelp("The user's locale, a BCP 47 tag such as de-CH.", valueName: "tag"))
        var locale: String?

        @Option(help: ArgumentHelp(
            "Serve MCP over Streamable HTTP at http://ADDRESS/mcp instead of stdin/stdout: 127.0.0.1:8766, [::1]:0 (any free port), localhost:8766; a non-loopback address (0.0.0.0:8766) requires a token. See docs/mcp.md.",
            valueName: "address"))
        var http: String?

        @Option(help: ArgumentHelp("With --http: most MCP sessions (2025-11-25 handshakes) at once, each with its own host; another initialize is answered 503.", valueName: "n"))
        var maxSessions: Int?

        @OptionGroup var access: WebAccessOptions

        func validate() throws {
            try access.check(enabledBy: "--http", given: http != nil)
            if let maxSessions {
                guard http != nil else { throw ValidationError("--max-sessions applies only with --http ADDRESS.") }
                guard (1...1000).contains(maxSessions) else { throw ValidationError("--max-sessions must be from 1 to 1000 (got \(maxSessions)).") }
            }
            if let locale, locale.isEmpty || locale.count > 64 || !locale.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) {
                throw ValidationError("--locale \(locale): expected a BCP 47 tag such as en-US.")
            }
        }

        func run() throws {
            if let http { try serveHTTP(http) }
            let protocolFD = StdioServer.takeOverStandardOutput()
            let logger = options.bootstrapLogging()
            var configuration = options.hostConfiguration()
            configuration.watchManifests = true
            let itemsDirectory = configuration.stateDirectory.map { $0 + "/mcp-items" }
            let host = try exitingOnError("context-host mcp") { try InProcessHost(configuration: configuration, logger: logger) }
            let bridge = MCPBridge(
                host: host, options: MCPBridge.Options(itemsDirectory: itemsDirectory, grantedPermissions: grants.permissions, locale: locale),
                output: OutputChannel(fileDescriptor: protocolFD), logger: logger)
            let started = DispatchSemaphore(value: 0)
            let failure = Mutex<String?>(nil)
            Task {
                do throws(ResponseError) {
                    try await bridge.start()
                } catch {
                    failure.withLock { $0 = error.message }
                }
                started.signal()
            }
            started.wait()
            if let message = failure.withLock({ $0 }) {
                writeStandardError("context-host mcp: the host did not start: \(message)")
                throw ExitCode(1)
            }
            bridge.run(input: STDIN_FILENO, maximumMessageBytes: options.maxMessageBytes)
        }
    }
}

extension ContextHostCommand.MCPServe {
    /// `mcp --http`: Streamable HTTP (ContextWeb), each session a host session of one `HostCore`; never returns.
    func serveHTTP(_ text: String) throws -> Never {
        let (address, token, generated) = try access.resolve(text, flag: "--http")
        // As for stdio: stray provider output goes to stderr, the process is not dumpable (the
        // token is in its memory), SIGPIPE is ignored and the signal mask is cleared.
        close(StdioServer.takeOverStandardOutput())
        let logger = options.bootstrapLogging()
        var configuration = options.hostConfiguration()
        configuration.watchManifests = true
        // Items are the server's resources, shared by every session (one store, one file).
        let store = ItemStore(directory: configuration.stateDirectory.map { $0 + "/mcp-items" }, logger: logger)
        let bridgeOptions = MCPBridge.Options(itemsDirectory: nil, grantedPermissions: grants.permissions, locale: locale)
        // One set of providers for every session (they all grant `--grant` and use `--locale`).
        let core = try exitingOnError("context-host mcp") { try HostCore(configuration: configuration, logger: logger) }
        let factory: MCPBridgeFactory = { sink in
            let host = InProcessHost(core: core)
            let bridge = MCPBridge(host: host, options: bridgeOptions, store: store, logger: logger, sink: sink)
            do throws(ResponseError) {
                try await bridge.start()
            } catch {
                await host.close()
                throw error
            }
            return bridge
        }
        var httpOptions = MCPHTTPOptions(
            listener: access.listenerOptions(address: address, token: token, defaultConnections: 128, configuration: configuration))
        httpOptions.maximumSessions = maxSessions ?? 32
        let frozenOptions = httpOptions
        let shownToken = generated ? token : nil
        runListener(label: "context-host mcp", address: text) {
            try await MCPHTTPServer.run(options: frozenOptions, factory: factory, logger: logger) { url in
                writeStandardError("context-host mcp: listening on \(url)")
                if let shownToken {
                    writeStandardError("context-host mcp: token for this listener (shown once; clients send 'Authorization: Bearer <token>'; docs/mcp.md): \(shownToken.value)")
                }
            }
        }
    }
}
