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

    @OptionGroup var access: WebAccessOptions

    func validate() throws {
        try access.check(enabledBy: "--listen", given: listen != nil)
    }

    /// Serves until SIGTERM/SIGINT; never returns.
    func run(host options: HostOptions, noWatch: Bool) throws -> Never {
        guard let listen else { fatalError("run(host:) without --listen") }
        let (address, token, generated) = try access.resolve(listen, flag: "--listen")
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
        listenerOptions.extraHosts = access.allowHosts
        listenerOptions.extraOrigins = access.allowOrigins
        listenerOptions.token = token
        listenerOptions.maximumConnections = access.maxConnections ?? 32
        listenerOptions.messagesPerSecond = access.maxMessagesPerSecond
        listenerOptions.messageBurst = min(256, max(1, access.maxMessagesPerSecond))
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
