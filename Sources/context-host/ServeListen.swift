import ArgumentParser
import ContextHost
import ContextWeb
import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `serve --listen`: the same protocol over WebSocket (ContextWeb; docs/web.md). Only this
/// path starts the listener: `serve` on stdin/stdout and `worker` never reach it.
struct ListenOptions: ParsableArguments {
    @Option(help: ArgumentHelp(
        "Serve JSON-RPC over WebSocket at ws://ADDRESS/rpc instead of stdin/stdout, one message per text frame, each connection its own session: 127.0.0.1:8765, [::1]:0 (any free port), localhost:8765; a non-loopback address (0.0.0.0:8765) requires a token. See docs/web.md.",
        valueName: "address"))
    var listen: String?

    @Option(name: .customLong("allow-origin"), help: ArgumentHelp(
        "With --listen: a browser origin allowed to connect besides the listener's own (repeatable), e.g. http://localhost:5173 or app://my-app. No wildcard.",
        valueName: "origin"))
    var allowOrigins: [String] = []

    @Option(name: .customLong("allow-host"), help: ArgumentHelp(
        "With --listen: a Host header value accepted besides the listener's address (repeatable), as clients send it, e.g. chat.example.com behind a reverse proxy.",
        valueName: "host"))
    var allowHosts: [String] = []

    @Option(help: ArgumentHelp(
        "With --listen: a file (mode 600) holding the bearer token clients must send. Required use on any address when given; without it a non-loopback address gets a new token, printed once on stderr.",
        valueName: "file"))
    var tokenFile: String?

    @Option(help: ArgumentHelp("With --listen: most connections open at once; more are answered 503.", valueName: "n"))
    var maxConnections: Int = 32

    @Option(help: ArgumentHelp(
        "With --listen: messages per second one connection may send on average (bursts of up to 256); past it the connection is read more slowly. 0: no limit.",
        valueName: "n"))
    var maxMessagesPerSecond: Int = 2000

    func validate() throws {
        if listen == nil {
            var given: [String] = []
            if !allowOrigins.isEmpty { given.append("--allow-origin") }
            if !allowHosts.isEmpty { given.append("--allow-host") }
            if tokenFile != nil { given.append("--token-file") }
            if let first = given.first { throw ValidationError("\(first) applies only with --listen ADDRESS.") }
            return
        }
        guard (1...10_000).contains(maxConnections) else {
            throw ValidationError("--max-connections must be from 1 to 10000 (got \(maxConnections)).")
        }
        guard (0...1_000_000).contains(maxMessagesPerSecond) else {
            throw ValidationError("--max-messages-per-second must be from 0 to 1000000 (got \(maxMessagesPerSecond)).")
        }
        for origin in allowOrigins {
            guard origin == "null" || (origin.contains("://") && !origin.contains(" ") && !origin.contains("*")) else {
                throw ValidationError("--allow-origin \(origin): give one origin as a browser sends it, scheme://host[:port] (no wildcard).")
            }
        }
    }

    /// Serves until SIGTERM/SIGINT; never returns.
    func run(host options: HostOptions, noWatch: Bool) throws -> Never {
        guard let listen else { fatalError("run(host:) without --listen") }
        let address: ListenAddress
        do {
            address = try ListenAddress(parsing: listen)
        } catch {
            throw ValidationError("--listen \(error.description)")
        }
        var token: BearerToken?
        var generated = false
        if let tokenFile {
            do {
                token = try BearerToken.read(file: tokenFile)
            } catch {
                throw ValidationError(error.description)
            }
        } else if !address.isLoopback {
            token = BearerToken.generate()
            generated = true
        }
        // As for stdio: stray provider output goes to stderr, the process is not dumpable (the
        // token is in its memory), SIGPIPE is ignored and the signal mask is cleared.
        let unused = StdioServer.takeOverStandardOutput()
        close(unused)
        let logger = options.bootstrapLogging()
        var configuration = options.hostConfiguration()
        configuration.watchManifests = !noWatch
        // Each connection is its own session: drafts live in memory and end with it (a shared
        // state folder would hand one client's restored drafts to every other).
        configuration.stateDirectory = nil
        var listenerOptions = WebListenerOptions(address: address)
        listenerOptions.extraHosts = allowHosts
        listenerOptions.extraOrigins = allowOrigins
        listenerOptions.token = token
        listenerOptions.maximumConnections = maxConnections
        listenerOptions.messagesPerSecond = maxMessagesPerSecond
        listenerOptions.messageBurst = min(256, max(1, maxMessagesPerSecond))
        listenerOptions.maximumMessageBytes = configuration.maximumMessageBytes
        listenerOptions.maximumQueuedBytes = max(2 * configuration.maximumMessageBytes, 8 << 20)
        let factory = WebSessionFactory(configuration: configuration, logger: logger)
        let finished = DispatchSemaphore(value: 0)
        let failure = Mutex<String?>(nil)
        let frozenOptions = listenerOptions
        let shownToken = generated ? token : nil
        Task {
            do {
                try await WebListener.run(options: frozenOptions, factory: factory, logger: logger) { url in
                    writeStandardError("context-host: listening on \(url)")
                    if let shownToken {
                        writeStandardError("context-host: token for this listener (shown once; clients send 'Authorization: Bearer <token>', browsers the subprotocol 'bearer.<token>'; docs/web.md): \(shownToken.value)")
                    }
                }
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
            finished.signal()
        }
        finished.wait()
        if let message = failure.withLock({ $0 }) {
            writeStandardError("context-host: cannot serve on \(listen): \(message)")
            fflush(nil)
            _exit(1)
        }
        fflush(nil)
        _exit(0)
    }
}
