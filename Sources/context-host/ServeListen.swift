import ArgumentParser
import ContextClient
import ContextHost
import ContextWeb
import Logging

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

    @Option(help: ArgumentHelp(
        "With --listen: the folder with the composer's files served at / (the repository's web/). Default: share/context-host/web beside the executable's folder, or the repository's web/ when the executable is in its .build folder. See docs/web.md.",
        valueName: "folder"))
    var webRoot: String?

    func validate() throws {
        try access.check(enabledBy: "--listen", given: listen != nil)
        if listen == nil, webRoot != nil { throw ValidationError("--web-root applies only with --listen ADDRESS.") }
    }

    /// The composer's folder when --web-root is not given: `../share/context-host/web` from the
    /// executable's folder (an installed host), else the repository's `web/` when the executable
    /// is inside the repository's `.build` folder (a development build). Nil when neither exists.
    static func defaultWebRoot() -> String? {
        guard let directory = RunningExecutable.directory else { return nil }
        var candidates = [directory + "/../share/context-host/web"]
        var components = directory.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        while components.count > 1 {
            let last = components.removeLast()
            if last == ".build" {
                candidates.append(components.joined(separator: "/") + "/web")
                break
            }
        }
        return candidates.first { pathExists($0 + "/index.html") }
    }

    /// `http://HOST:PORT/` for the listener's `ws://HOST:PORT/rpc`.
    static func pageURL(webSocketURL: String) -> String? {
        guard webSocketURL.hasPrefix("ws://"), webSocketURL.hasSuffix(WebListener.endpointPath) else { return nil }
        return "http://" + webSocketURL.dropFirst(5).dropLast(WebListener.endpointPath.count) + "/"
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
        // The composer's files, read once now (a missing or unsafe file stops the start when
        // --web-root names the folder; a default folder that is absent only leaves out the composer).
        var site: StaticSite?
        let stylesheet = StaticSite.File(contentType: "text/css; charset=utf-8", bytes: Array(GalleryPage.css.utf8))
        if let webRoot {
            do {
                site = try StaticSite(root: webRoot, extra: ["/ctxui.css": stylesheet])
            } catch {
                throw ValidationError("--web-root: \(error.description)")
            }
        } else if let root = Self.defaultWebRoot() {
            do {
                site = try StaticSite(root: root, extra: ["/ctxui.css": stylesheet])
            } catch {
                writeStandardError("context-host: no composer at /: \(error.description)")
            }
        } else {
            writeStandardError("context-host: no composer at /: its files were not found; give the repository's web/ folder with --web-root (docs/web.md).")
        }
        let servedSite = site
        var listenerOptions = access.listenerOptions(address: address, token: token, defaultConnections: 32, configuration: configuration)
        listenerOptions.site = servedSite
        let factory = WebSessionFactory(configuration: configuration, logger: logger)
        let frozenOptions = listenerOptions
        let shownToken = generated ? token : nil
        runListener(label: "context-host", address: listen) {
            try await WebListener.run(options: frozenOptions, factory: factory, logger: logger) { url in
                writeStandardError("context-host: listening on \(url)")
                if let servedSite, let page = Self.pageURL(webSocketURL: url) {
                    writeStandardError("context-host: composer at \(page) (files from \(servedSite.root))")
                }
                if let shownToken {
                    writeStandardError("context-host: token for this listener (shown once; clients send 'Authorization: Bearer <token>', browsers the subprotocol 'bearer.<token>'; docs/web.md): \(shownToken.value)")
                }
            }
        }
    }
}

/// Whether `path` exists (`access(2)`; a free function because `ListenOptions.access`, the
/// listener's access options, hides the C function inside that type).
private func pathExists(_ path: String) -> Bool { access(path, F_OK) == 0 }
