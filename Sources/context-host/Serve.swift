import ArgumentParser
import ContextHost

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ContextHostCommand {
    /// `serve`: the JSON-RPC server on stdin/stdout (the default subcommand).
    struct Serve: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Serve JSON-RPC 2.0 on stdin/stdout (the default), or over WebSocket with --listen.",
            discussion: "Messages are one JSON object per line, or LSP-style Content-Length framing when the first byte is 'C'. The host exits when stdin closes. With --listen ADDRESS, the same protocol over WebSocket at ws://ADDRESS/rpc, one message per text frame, each connection its own session (docs/web.md).")

        @OptionGroup var options: HostOptions

        @Flag(help: "Do not watch the manifest folders for changes (no providers/changed notifications).")
        var noWatch = false

        @OptionGroup var listenOptions: ListenOptions

        func run() throws {
            if listenOptions.listen != nil {
                try listenOptions.run(host: options, noWatch: noWatch)
            }
            // Before anything can print: keep the real stdout for the protocol only.
            let protocolFD = StdioServer.takeOverStandardOutput()
            let logger = options.bootstrapLogging()
            if isatty(STDIN_FILENO) == 1 {
                writeStandardError("context-host: serving JSON-RPC 2.0 on stdin/stdout, one message per line; press Ctrl-D to quit. Try: {\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}} (docs/protocol.md). To see providers, run 'context-host list'.")
            }
            var configuration = options.hostConfiguration()
            configuration.watchManifests = !noWatch
            StdioServer.run(configuration: configuration, protocolFD: protocolFD, logger: logger)
        }
    }
}
