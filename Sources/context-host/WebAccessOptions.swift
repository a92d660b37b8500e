import ArgumentParser
import ContextHost
import ContextWeb
import Dispatch
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Who may reach a listener (`serve --listen`, `mcp --http`): one set of options for both, fed to
/// the one gate in ContextWeb (docs/web.md, docs/mcp.md, docs/security.md §12).
struct WebAccessOptions: ParsableArguments {
    @Option(name: .customLong("allow-origin"), help: ArgumentHelp(
        "With --listen or --http: a browser origin allowed besides the listener's own (repeatable), e.g. http://localhost:5173 or app://my-app. No wildcard.",
        valueName: "origin"))
    var allowOrigins: [String] = []

    @Flag(name: .customLong("no-own-origin"), help: ArgumentHelp(
        "With --listen or --http: do not accept the listener's own origin (http:// + Host) unlisted. Behind a TLS reverse proxy, where that would be a plain-HTTP page on the proxy's name; list the https origin with --allow-origin."))
    var noOwnOrigin = false

    @Option(name: .customLong("allow-host"), help: ArgumentHelp(
        "With --listen or --http: a Host header value accepted besides the listener's address (repeatable), as clients send it, e.g. chat.example.com behind a reverse proxy.",
        valueName: "host"))
    var allowHosts: [String] = []

    @Option(help: ArgumentHelp(
        "With --listen or --http: a file (mode 600) holding the bearer token clients must send. Required use on any address when given; without it a non-loopback address gets a new token, printed once on stderr.",
        valueName: "file"))
    var tokenFile: String?

    @Option(help: ArgumentHelp("With --listen or --http: most connections open at once; more are answered 503 (default 32 for --listen, 128 for --http).", valueName: "n"))
    var maxConnections: Int?

    @Option(help: ArgumentHelp(
        "With --listen or --http: messages (requests) per second one connection may send on average (bursts of up to 256); past it the connection is read more slowly. 0: no limit.",
        valueName: "n"))
    var maxMessagesPerSecond: Int = 2000

    /// Checks the values; `flag` is the option that turns the listener on, nil when not given.
    func check(enabledBy flag: String, given: Bool) throws {
        guard given else {
            var named: [String] = []
            if !allowOrigins.isEmpty { named.append("--allow-origin") }
            if !allowHosts.isEmpty { named.append("--allow-host") }
            if tokenFile != nil { named.append("--token-file") }
            if maxConnections != nil { named.append("--max-connections") }
            if noOwnOrigin { named.append("--no-own-origin") }
            if let first = named.first { throw ValidationError("\(first) applies only with \(flag) ADDRESS.") }
            return
        }
        if let maxConnections, !(1...10_000).contains(maxConnections) {
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

    /// The address to bind, and the token: from `--token-file`, or generated for a non-loopback
    /// address (then `generated`: it is printed once).
    func resolve(_ text: String, flag: String) throws -> (address: ListenAddress, token: BearerToken?, generated: Bool) {
        let address: ListenAddress
        do {
            address = try ListenAddress(parsing: text)
        } catch {
            throw ValidationError("\(flag) \(error.description)")
        }
        if let tokenFile {
            do {
                return (address, try BearerToken.read(file: tokenFile), false)
            } catch {
                throw ValidationError(error.description)
            }
        }
        if !address.isLoopback { return (address, BearerToken.generate(), true) }
        return (address, nil, false)
    }

    /// The listener's options from these flags and the host's message limit.
    func listenerOptions(address: ListenAddress, token: BearerToken?, defaultConnections: Int, configuration: HostConfiguration) -> WebListenerOptions {
        var options = WebListenerOptions(address: address)
        options.extraHosts = allowHosts
        options.extraOrigins = allowOrigins
        options.acceptsOwnOrigin = !noOwnOrigin
        options.token = token
        options.maximumConnections = maxConnections ?? defaultConnections
        options.messagesPerSecond = maxMessagesPerSecond
        options.messageBurst = min(256, max(1, maxMessagesPerSecond))
        options.maximumMessageBytes = configuration.maximumMessageBytes
        options.maximumQueuedBytes = max(2 * configuration.maximumMessageBytes, 8 << 20)
        return options
    }
}

/// Runs a listener (`serve --listen`, `mcp --http`) until it stops, then ends the process: exit 0,
/// or exit 1 after `<label>: cannot serve on <address>: <error>` on stderr. Never returns.
func runListener(label: String, address: String, _ serve: @escaping @Sendable () async throws -> Void) -> Never {
    let finished = DispatchSemaphore(value: 0)
    let failure = Mutex<String?>(nil)
    Task {
        do {
            try await serve()
        } catch {
            failure.withLock { $0 = "\(error)" }
        }
        finished.signal()
    }
    finished.wait()
    if let message = failure.withLock({ $0 }) {
        writeStandardError("\(label): cannot serve on \(address): \(message)")
        fflush(nil)
        _exit(1)
    }
    fflush(nil)
    _exit(0)
}
