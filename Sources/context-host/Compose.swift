import ArgumentParser
import ContextClient
import ContextHost
import ContextProviderKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ContextHostCommand {
    /// `compose`: an interactive terminal client; it starts `context-host serve --no-state` and
    /// speaks only the public protocol to it.
    struct Compose: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Compose a message with context in the terminal: pick providers, fill forms, attach, send.",
            discussion: """
                Starts a host ('serve --no-state', same options) and talks JSON-RPC to it. On a terminal: arrow keys, \
                Enter, Esc. When stdin is not a terminal: numbered menus, one answer per line (a number or the option's \
                text), so it can be scripted; multiline text ends with a line '.'. On send, prints the envelope a backend \
                receives (composer/send) as JSON on stdout. Colour is off with NO_COLOR or when stdout is not a terminal. \
                The draft lives for this session only (the host runs with --no-state), so --state-dir and --no-state \
                do not apply here.
                """)

        @OptionGroup var options: HostOptions

        @OptionGroup var grants: GrantOptions

        @Option(help: ArgumentHelp("Columns to draw in when stdin is not a terminal. Default: $COLUMNS, else 80.", valueName: "n"))
        var width: Int?

        func run() throws {
            let interactive = isatty(STDIN_FILENO) == 1 && isatty(STDOUT_FILENO) == 1
            let noColor = (getenv("NO_COLOR").map { String(cString: $0) } ?? "").isEmpty == false
            let color = !noColor && isatty(STDOUT_FILENO) == 1 && (getenv("TERM").map { String(cString: $0) } ?? "") != "dumb"
            guard let executable = HostOptions.executablePath() else {
                writeStandardError("context-host compose: cannot find its own executable to start the host.")
                throw ExitCode(1)
            }
            // On a terminal the host's logs would garble the screen: they go to /dev/null.
            let nullFD = open("/dev/null", O_WRONLY)
            let host = try exitingOnError("context-host compose") {
                try BlockingHost(
                    executable: executable, arguments: ["serve", "--no-state", "--no-watch"] + options.serveArguments(),
                    standardError: .fileDescriptor(interactive ? nullFD : STDERR_FILENO))
            }
            if nullFD >= 0 { close(nullFD) }
            let permissions = grants.permissions
            let terminal: ComposeTerminal
            if interactive, let raw = RawTerminal(color: color) {
                terminal = raw
            } else {
                let columns = width ?? getenv("COLUMNS").flatMap { Int(String(cString: $0)) } ?? 80
                terminal = LineTerminal(width: columns, color: color)
            }
            let envelope: JSONValue?
            do {
                envelope = try ComposeApp(host: host, terminal: terminal, grantedPermissions: permissions).run()
            } catch {
                terminal.finish(printing: "")
                writeStandardError("context-host compose: \(error.message)")
                host.shutdown()
                throw ExitCode(1)
            }
            host.shutdown()
            if let envelope {
                terminal.finish(printing: "Sent. The envelope a backend receives (composer/send):\n" + CtxuiRender.prettyJSON(envelope))
            } else {
                terminal.finish(printing: "Nothing sent.")
            }
        }
    }
}

extension HostOptions {
    /// These options as `serve` arguments, so the host `compose` starts sees the same providers.
    func serveArguments() -> [String] {
        var arguments: [String] = []
        for directory in manifestDirectories { arguments += ["--manifests", directory] }
        arguments += libraries.serveArguments
        arguments += ["--max-message-bytes", String(maxMessageBytes), "--log-level", logLevel]
        if let configFile { arguments += ["--config", configFile] }
        if let registryCache { arguments += ["--registry-cache", registryCache] }
        let isolation = isolationOptions
        arguments += [
            "--isolation", isolation.isolation,
            "--max-call-timeout", String(isolation.maxCallTimeout),
            "--cancel-grace", String(isolation.cancelGrace),
            "--max-crashes", String(isolation.maxCrashes),
            "--crash-window", String(isolation.crashWindow),
            "--worker-memory-limit", String(isolation.workerMemoryLimit),
            "--sandbox", isolation.sandbox.rawValue,
            "--worker-idle-cpu", String(isolation.workerIdleCpu),
            "--worker-idle-timeout", String(isolation.workerIdleTimeout),
        ]
        if isolation.eagerWorkers { arguments.append("--eager-workers") }
        if let starts = isolation.maxWorkerStarts { arguments += ["--max-worker-starts", String(starts)] }
        if let dataDir = isolation.dataDir { arguments += ["--data-dir", dataDir] }
        for id in isolation.trust { arguments += ["--trust", id] }
        return arguments
    }

    /// The running executable's path (`/proc/self/exe` on Linux).
    static func executablePath() -> String? {
        RunningExecutable.path
    }
}
