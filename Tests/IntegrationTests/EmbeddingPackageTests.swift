import ContextHostTestSupport
import Foundation
import Testing

/// An app outside this repository embeds the host: a separate Swift package, made in a temporary
/// folder from `Tests/Fixtures/EmbeddingPackage/` and depending on this checkout by path, is built
/// with `swift build` and drives Note end to end through the public API only, in its own process
/// and through a spawned `context-host`. Also the standard-library Python example, driven by
/// `docs/openrpc.json`.
@Suite("Embedding from another package", .serialized)
struct EmbeddingPackageTests {
    static let fixture = BuildProducts.packageRoot + "/Tests/Fixtures/EmbeddingPackage"
    static let manifests = BuildProducts.packageRoot + "/manifests"
    /// Kept between runs (inside this package's .build), so a second run builds incrementally.
    static let scratch = BuildProducts.packageRoot + "/.build/embedding-package"

    /// The steps a successful run prints, in order, with what each must say.
    static let expected = [
        "initialize server=context-host",
        "providers count=",
        "form step=note fields=title,body",
        "invalid title=Title is required.",
        "item displayName=Groceries attached=1",
        "preview title=Groceries",
        "detail title=Groceries",
        "encode representation=",
        "send items=1 first=Groceries",
        "done",
    ]

    @Test("a separate Swift package builds against ContextHost (without libsodium, zlib or AsyncHTTPClient) and drives Note in-process and through the client")
    func separatePackage() throws {
        try BuildProducts.checkBuilt()
        let folder = try TemporaryDirectory()
        let app = folder.path + "/EmbedNote"
        try FileManager.default.createDirectory(atPath: app + "/Sources/EmbedNote", withIntermediateDirectories: true)
        let template = try String(contentsOfFile: Self.fixture + "/Package.swift.template", encoding: .utf8)
        try template.replacingOccurrences(of: "@CONTEXT_HOST_PATH@", with: BuildProducts.packageRoot)
            .write(toFile: app + "/Package.swift", atomically: true, encoding: .utf8)
        try FileManager.default.copyItem(
            atPath: Self.fixture + "/Sources/EmbedNote/main.swift", toPath: app + "/Sources/EmbedNote/main.swift")
        try FileManager.default.createDirectory(atPath: app + "/Sources/DocExample", withIntermediateDirectories: true)
        try Self.documentedExample().write(toFile: app + "/Sources/DocExample/main.swift", atomically: true, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: app + "/Sources/DocSnippets", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Self.fixture + "/Sources/DocSnippets/main.swift", toPath: app + "/Sources/DocSnippets/main.swift")
        try Self.documentedSnippets().write(toFile: app + "/Sources/DocSnippets/Snippets.swift", atomically: true, encoding: .utf8)

        let build = try Shell.run("swift build --scratch-path '\(Self.scratch)'", in: app, timeout: 1200)
        try #require(build.status == 0, "swift build of the embedding package (EmbedNote and docs/embedding.md's examples) failed:\n\(build.output.suffix(4000))")
        let binary = try Shell.run("swift build --scratch-path '\(Self.scratch)' --show-bin-path", in: app, timeout: 120)
        let executable = binary.output.split(separator: "\n").last.map(String.init).map { $0 + "/EmbedNote" } ?? ""

        #if os(Linux)
        // An app that embeds only the host links neither libsodium nor zlib (they are
        // ContextPackages', for the CLI's install and package commands). Control: the same check
        // finds both in `context-host`, so it can see them when they are there.
        let embedded = try Self.neededLibraries(executable, in: app)
        #expect(!embedded.isEmpty, "readelf listed no NEEDED libraries of \(executable)")
        #expect(!embedded.contains { $0.hasPrefix("libsodium.") }, "EmbedNote links libsodium: \(embedded)")
        #expect(!embedded.contains { $0.hasPrefix("libz.") }, "EmbedNote links zlib: \(embedded)")
        let cli = try Self.neededLibraries(BuildProducts.hostExecutable, in: app)
        #expect(cli.contains { $0.hasPrefix("libsodium.") } && cli.contains { $0.hasPrefix("libz.") }, "context-host: \(cli)")
        #endif
        // Nor AsyncHTTPClient (ContextNetwork's, for the CLI's HTTPS broker): Swift packages link
        // statically, so the check is for its module's name in the binary's symbols and metadata.
        // Control: the same search finds it in `context-host`.
        let module = Array("AsyncHTTPClient".utf8)
        #expect(try Self.contains(module, file: executable) == false, "EmbedNote links AsyncHTTPClient")
        #expect(try Self.contains(module, file: BuildProducts.hostExecutable), "the search cannot see AsyncHTTPClient in context-host")

        // The page's example: Note attached and sent in this process, then through a child.
        let example = try Shell.run("'\(executable.dropLast("EmbedNote".count))DocExample'", in: app, timeout: 120)
        #expect(example.status == 0, "docs/embedding.md's example failed:\n\(example.output)")
        let hosts = example.output.split(separator: "\n").filter { $0.hasPrefix("host ") && $0.hasSuffix("protocol 2") }
        let chips = example.output.split(separator: "\n").filter { $0.hasPrefix("Groceries ") }
        #expect(hosts.count == 2 && chips.count == 2, "docs/embedding.md's example did not run both ways:\n\(example.output)")

        // The page's §1 (events) and §3 (HostCore) snippets, against the real Note provider.
        let snippets = try Shell.run(
            "'\(executable.dropLast("EmbedNote".count))DocSnippets' '\(BuildProducts.hostExecutable)' '\(BuildProducts.directory)' '\(Self.manifests)'",
            in: app, timeout: 120)
        #expect(snippets.status == 0, "docs/embedding.md's snippets failed:\n\(snippets.output)")
        let ran = snippets.output.split(separator: "\n").filter { $0.hasSuffix(" example ran") || $0 == "done" }
        #expect(ran == ["events example ran", "core example ran", "done"], "docs/embedding.md's snippets did not all run:\n\(snippets.output)")

        for mode in ["in-process", "client"] {
            let run = try Shell.run(
                "'\(executable)' \(mode) '\(BuildProducts.hostExecutable)' '\(BuildProducts.directory)' '\(Self.manifests)'",
                in: app, timeout: 120)
            #expect(run.status == 0, "EmbedNote \(mode) failed:\n\(run.output)")
            let lines = run.output.split(separator: "\n").map(String.init).filter { !$0.contains("warning context-host") }
            var index = 0
            for step in Self.expected {
                guard let found = lines[index...].firstIndex(where: { $0.hasPrefix(step) }) else {
                    Issue.record("EmbedNote \(mode): no line starting '\(step)' after line \(index):\n\(run.output)")
                    break
                }
                index = found + 1
            }
        }
    }

    /// Whether `file`'s bytes contain `needle`.
    static func contains(_ needle: [UInt8], file: String) throws -> Bool {
        let data = try Data(contentsOf: URL(fileURLWithPath: file))
        return data.range(of: Data(needle)) != nil
    }

    /// The `swift` code blocks of a Markdown page, each without the indentation of its fence (a
    /// block inside a list item is indented with it).
    static func swiftBlocks(of page: String) -> [String] {
        var blocks: [String] = []
        var open: (indent: String, lines: [Substring])?
        for line in page.split(separator: "\n", omittingEmptySubsequences: false) {
            if let block = open {
                if line == block.indent + "```" {
                    blocks.append(block.lines.joined(separator: "\n"))
                    open = nil
                } else {
                    open?.lines.append(line.hasPrefix(block.indent) ? line.dropFirst(block.indent.count) : line)
                }
            } else if line.hasSuffix("```swift"), line.dropLast("```swift".count).allSatisfy({ $0 == " " }) {
                open = (String(line.dropLast("```swift".count)), [])
            }
        }
        return blocks
    }

    /// The one `swift` block of docs/embedding.md that contains `marker`.
    static func documentedBlock(containing marker: String) throws -> String {
        let page = try String(contentsOfFile: BuildProducts.packageRoot + "/docs/embedding.md", encoding: .utf8)
        let blocks = Self.swiftBlocks(of: page).filter { $0.contains(marker) }
        try #require(blocks.count == 1, "docs/embedding.md has \(blocks.count) swift blocks with '\(marker)'; update this test with the page")
        return blocks[0]
    }

    /// docs/embedding.md §2's example exactly as the page shows it, but for its three install
    /// paths, which become this checkout's folders (each must still be in the text).
    static func documentedExample() throws -> String {
        var example = try Self.documentedBlock(containing: "func attachNote(through")
        for (path, replacement) in [
            ("/usr/share/my-app/manifests", Self.manifests), ("/usr/lib/my-app/providers", BuildProducts.directory),
            ("/usr/libexec/context-host", BuildProducts.hostExecutable),
        ] {
            try #require(example.contains(path), "docs/embedding.md's example no longer names \(path); update this test with it")
            example = example.replacingOccurrences(of: path, with: replacement)
        }
        return example + "\n"
    }

    /// docs/embedding.md §1's events snippet and §3's `HostCore` snippet exactly as the page shows
    /// them, each the body of a function whose parameters are what the snippet uses but does not
    /// make (Tests/Fixtures/EmbeddingPackage/Sources/DocSnippets/main.swift calls them).
    static func documentedSnippets() throws -> String {
        func indented(_ block: String) -> String {
            block.split(separator: "\n", omittingEmptySubsequences: false).map { $0.isEmpty ? "" : "    " + $0 }.joined(separator: "\n")
        }
        let events = try Self.documentedBlock(containing: "let events = host.events()")
        let core = try Self.documentedBlock(containing: "let core = try HostCore(configuration: configuration)")
        return """
            // Made by EmbeddingPackageTests from docs/embedding.md: do not edit.
            import ContextHost
            import ContextProtocol

            /// docs/embedding.md §1: a session's events.
            func eventsExample(host: some ContextHostSession, healthItem: ContextItem) async throws {
            \(indented(events))
            }

            /// docs/embedding.md §3: several sessions over one set of providers.
            func coreExample(configuration: HostConfiguration) async throws {
            \(indented(core))
            }

            """
    }

    /// The `NEEDED` entries of an ELF file's dynamic section (`readelf -d`), e.g. `libsodium.so.23`.
    static func neededLibraries(_ file: String, in directory: String) throws -> [String] {
        let result = try Shell.run("readelf -d '\(file)'", in: directory, timeout: 60)
        try #require(result.status == 0, "readelf -d \(file) failed:\n\(result.output)")
        return result.output.split(separator: "\n").compactMap { line -> String? in
            guard line.contains("(NEEDED)"), let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]"), open < close
            else { return nil }
            return String(line[line.index(after: open)..<close])
        }
    }

    @Test("the Python example (standard library only, methods from docs/openrpc.json) runs Note end to end")
    func pythonExample() throws {
        try BuildProducts.checkBuilt()
        let run = try Shell.run(
            "python3 Examples/python/contexthost.py '\(BuildProducts.hostExecutable)' manifests", in: BuildProducts.packageRoot, timeout: 120)
        #expect(run.status == 0, "\(run.output)")
        #expect(run.output.contains("first submit: invalid"), "\(run.output)")
        #expect(run.output.contains("chip: Groceries"), "\(run.output)")
        #expect(run.output.contains("detail: Groceries"), "\(run.output)")
    }
}
