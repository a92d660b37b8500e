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
    /// `gallery --output DIR`: every provider walked through a sample flow and rendered as a
    /// static HTML page (a reference client that speaks only the public protocol).
    struct Gallery: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Render every provider's chip, detail and form as a static HTML page.",
            discussion: """
                Starts a host ('serve --no-state', same options) and walks each provider, in priority order, through a \
                sample flow over the public protocol: providers/list; collect/start, one submit with an invalid value \
                (to show its error), then values derived from the form until one is accepted, or collect/make; then \
                items/preview, items/detail, items/describe and items/encode. Writes DIR/index.html (one section per \
                provider, id 'provider-<id>', with the raw JSON beside each view; no script, no network, nothing \
                external) and DIR/gallery.json (the raw data), and prints the path of index.html. Provider failures \
                are shown in their section; the exit status is 1 only when the host cannot be started, a --provider id \
                is unknown, or an output file cannot be written. The host keeps no drafts, so --state-dir and \
                --no-state do not apply.
                """)

        @OptionGroup var options: HostOptions

        @Option(name: .customLong("output"), help: ArgumentHelp("The folder to write index.html and gallery.json into (created if missing).", valueName: "dir"))
        var outputDirectory: String

        @Option(name: .customLong("provider"), help: ArgumentHelp("Only this provider (repeatable). Default: every provider.", valueName: "id"))
        var providerIDs: [String] = []

        @OptionGroup var grants: GrantOptions

        func run() throws {
            let index = try exitingOnError("context-host gallery") {
                try GalleryWriter.generate(
                    in: outputDirectory, serveArguments: options.serveArguments(), providerIDs: providerIDs,
                    grantedPermissions: grants.permissions)
            }
            print(index)
        }
    }
}

/// Starts a host, runs the gallery, writes the files. Shared by `gallery` and `conformance --gallery`.
enum GalleryWriter {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Writes `directory/index.html` and `directory/gallery.json`; returns the path of index.html.
    static func generate(
        in directory: String, serveArguments: [String], providerIDs: [String] = [], manifestPaths: [String] = [], grantedPermissions: [String] = []
    ) throws -> String {
        guard let executable = HostOptions.executablePath() else {
            throw Failure(description: "cannot find its own executable to start the host.")
        }
        try makeDirectories(directory)
        // A host that dies (an in-process provider crashed) must fail the calls, not kill us.
        signal(SIGPIPE, SIG_IGN)
        let host: BlockingHost
        do {
            host = try BlockingHost(
                executable: executable, arguments: ["serve", "--no-state", "--no-watch"] + serveArguments,
                standardError: .fileDescriptor(STDERR_FILENO))
        } catch {
            throw Failure(description: "cannot start the host: \(error)")
        }
        let data: GalleryData
        do {
            data = try GalleryRunner(host: host, grantedPermissions: grantedPermissions, providerIDs: providerIDs, manifestPaths: manifestPaths).run(generatedAt: utcTimestamp())
        } catch {
            host.shutdown()
            throw Failure(description: "\(error)")
        }
        host.shutdown()
        let index = directory + "/index.html"
        try writeFile(index, GalleryPage.render(data))
        try writeFile(directory + "/gallery.json", CtxuiRender.prettyJSON(data.json) + "\n")
        return index
    }

    /// `mkdir -p`.
    static func makeDirectories(_ path: String) throws {
        if let failure = Directories.make(path, mode: 0o755) {
            throw Failure(description: "cannot create the folder '\(failure.folder)': \(String(cString: strerror(failure.errno))); choose another folder.")
        }
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR else {
            throw Failure(description: "'\(path)' is not a folder; choose another folder.")
        }
    }

    /// Writes `text` to `path` (replacing it).
    static func writeFile(_ path: String, _ text: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw Failure(description: "cannot write '\(path)': \(String(cString: strerror(errno))).") }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw Failure(description: "cannot write '\(path)': \(String(cString: strerror(errno))).") }
            offset += count
        }
    }

    /// Now, as `2026-11-21T22:10:00Z`.
    static func utcTimestamp() -> String {
        var now = time(nil)
        var parts = tm()
        gmtime_r(&now, &parts)
        var buffer = [CChar](repeating: 0, count: 32)
        let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
