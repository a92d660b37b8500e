import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// `context-host gallery`: the real binary on the bundled manifests, the page checked in headless
/// Chromium (Debian's `chromium` package) through `Tests/Fixtures/browser/check_page.py`.
///
/// The browser test leaves its output in `.build/test-artifacts/gallery/`: `index.html`,
/// `gallery.json`, and `screenshots/` (`full-page.png`, one `section-provider-<id>.png` per
/// provider, `chromium.log`), for CI to collect.
@Suite("gallery", .timeLimit(.minutes(3)))
struct GalleryTests {
    static let manifests = BuildProducts.packageRoot + "/manifests"
    static let artifacts = BuildProducts.packageRoot + "/.build/test-artifacts/gallery"
    static let checkPage = BuildProducts.packageRoot + "/Tests/Fixtures/browser/check_page.py"
    static let bundledIDs = [  // priority order (manifests/*.yaml)
        "com.contexthost.location", "com.contexthost.calendar", "com.contexthost.stock-quote",
        "com.contexthost.health-metric", "com.contexthost.note", "com.contexthost.device-info",
    ]

    /// Runs a program to completion; stdout and stderr separately.
    static func program(_ executable: String, _ arguments: [String], timeout: Double = 45) throws -> (status: Int32, output: String, error: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe(), error = Pipe()
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        try process.run()
        // Read both pipes while the program runs, so a full pipe cannot block it.
        nonisolated(unsafe) var errorData = Data()
        let errorReader = Thread { errorData = error.fileHandleForReading.readDataToEndOfFile() }
        errorReader.start()
        let outputData = output.fileHandleForReading.readDataToEndOfFile()
        guard ChildProcess.waitForExit(process, timeout: timeout) else {
            ChildProcess.stop(process)
            throw GalleryFailure(description: "\(executable) \(arguments.joined(separator: " ")) did not finish in \(timeout) s")
        }
        while !errorReader.isFinished { usleep(1_000) }
        return (process.terminationStatus, String(decoding: outputData, as: UTF8.self), String(decoding: errorData, as: UTF8.self))
    }

    struct GalleryFailure: Error, CustomStringConvertible {
        var description: String
    }

    /// The path of an executable on PATH, or nil.
    static func which(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test("the bundled providers' gallery loads in headless Chromium: every section, no errors, no requests; screenshots saved")
    func browser() throws {
        try BuildProducts.checkBuilt()
        try? FileManager.default.removeItem(atPath: Self.artifacts)
        // 10 s previews: six providers walked on a debug build must not fail on the 500 ms default.
        let manifests = try RelaxedManifests.folder(copying: RelaxedManifests.bundled)
        let result = try CommandRunner.run(["gallery", "--output", Self.artifacts, "--manifests", manifests, "--library-path", BuildProducts.directory])
        #expect(result.status == 0, "stderr: \(result.standardError)")
        let index = Self.artifacts + "/index.html"
        #expect(result.standardOutput == index + "\n")

        // The raw data: every bundled provider walked to a chip, a detail and an encoding.
        let data = try JSONValue(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: Self.artifacts + "/gallery.json"))))
        let providers = try #require(data["providers"]?.arrayValue)
        #expect(providers.compactMap { $0["id"]?.stringValue } == Self.bundledIDs)
        for provider in providers {
            let id = provider["id"]?.stringValue ?? "?"
            #expect(provider["problems"] == [], "\(id): \(provider["problems"] ?? .null)")
            #expect(provider["chip"]?["title"]?.stringValue != nil, "\(id) has no chip")
            #expect(provider["detail"]?["blocks"]?.arrayValue?.isEmpty == false, "\(id) has no detail")
            #expect(provider["encoding"]?["data"]?.stringValue != nil, "\(id) has no encoding")
        }
        // The Note form shows the error its invalid submit got.
        let note = try #require(providers.first { $0["id"] == "com.contexthost.note" })
        #expect(note["steps"]?.arrayValue?.first?["invalidAttempt"]?["fieldErrors"] == ["title": "Title is required."])
        let html = try String(contentsOfFile: index, encoding: .utf8)
        #expect(html.contains("✗ Title is required."))
        #expect(html.contains("<svg class=\"chart-svg\""))  // Stock Quote and Health Metric charts
        #expect(html.contains("<svg class=\"map-svg\""))  // Location's map
        #expect(html.contains("href=\"geo:"))

        // The browser.
        guard Self.which("chromium") != nil else {
            Issue.record("chromium is not installed, so the gallery cannot be checked in a browser: install it with 'sudo apt-get install -y chromium' (.ci/run does this on CI).")
            return
        }
        let screenshots = Self.artifacts + "/screenshots"
        let run = try Self.program("/usr/bin/env", ["python3", Self.checkPage, index, screenshots])
        try #require(run.status == 0, "check_page.py failed (\(run.status)): \(run.error)")
        let report = try JSONValue(parsing: Array(run.output.utf8))
        #expect(report["sections"] == .array(Self.bundledIDs.map { .string("provider-" + $0) }))
        #expect(report["errors"] == [], "console errors: \(report["errors"] ?? .null)")
        #expect(report["failedRequests"] == [], "failed requests: \(report["failedRequests"] ?? .null)")
        // Only the page itself (and data: URIs the browser makes for its own controls) is loaded.
        let requests = report["requests"]?.arrayValue?.compactMap(\.stringValue) ?? []
        let external = requests.filter { $0 != "file://" + index && !$0.hasPrefix("data:") }
        #expect(external.isEmpty, "the page loaded \(external)")
        #expect(report["scripts"] == 0)
        #expect(report["title"]?.stringValue?.hasPrefix("Provider gallery") == true)
        let shots = report["screenshots"]?.arrayValue?.compactMap(\.stringValue) ?? []
        #expect(shots.count == 1 + Self.bundledIDs.count)
        for shot in shots {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: shot))
            #expect(bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(shot) is not a PNG")
            #expect(bytes.count > 10_000, "\(shot) is almost empty")
        }
        #expect(shots.contains(screenshots + "/full-page.png"))
        #expect(shots.contains(screenshots + "/section-provider-com.contexthost.note.png"))
    }

    @Test("unavailable, failed and rejected providers get a section saying why; the gallery still succeeds")
    func unavailableProviders() throws {
        try BuildProducts.checkBuilt()
        let directory = try TemporaryDirectory(writing: "m/fixture.yaml", TestManifest.yaml(id: "com.contexthost.fixture", library: "libFixtureProviders.so", priority: 30))
        try directory.write("m/perm.yaml", TestManifest.yaml(id: "com.example.perm", library: "libFixtureProviders.so", permissions: "[network]", priority: 20))
        try directory.write("m/failing.yaml", TestManifest.yaml(
            id: "com.example.failing", library: "libFixtureProviders.so", extra: "settings:\n  failOpen: { type: string, default: \"no database at /nowhere\" }"))
        try directory.write("m/zz-broken.yaml", "manifestVersion: 1\nid: [broken\n")
        let output = directory.path + "/out"
        let result = try CommandRunner.run(["gallery", "--output", output, "--manifests", directory.path + "/m", "--library-path", BuildProducts.directory])
        #expect(result.status == 0, "stderr: \(result.standardError)")
        let html = try String(contentsOfFile: output + "/index.html", encoding: .utf8)
        for id in ["provider-com.contexthost.fixture", "provider-com.example.perm", "provider-com.example.failing", "provider-manifest-4"] {
            #expect(html.contains("<section class=\"provider\" id=\"\(id)\">"), "no section \(id)")
        }
        #expect(html.contains("needs permission network, which the client did not grant"))
        #expect(html.contains("no database at /nowhere"))
        #expect(html.contains("zz-broken.yaml:"))
        // The fixture's flow: the required text left out is refused, then an item is made.
        let data = try JSONValue(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: output + "/gallery.json"))))
        let fixture = try #require(data["providers"]?.arrayValue?.first { $0["id"] == "com.contexthost.fixture" })
        #expect(fixture["steps"]?.arrayValue?.first?["invalidAttempt"]?["fieldErrors"] == ["text": "Text is required."])
        #expect(fixture["chip"]?["subtitle"] == "fixture")
        #expect(fixture["exchanges"]?.arrayValue?.map { $0["method"]?.stringValue ?? "" }
            == ["collect/start", "collect/submit", "collect/submit", "items/preview", "items/detail", "items/describe", "items/encode"])

        // --provider limits the page; an unknown id is an error naming the known ones.
        let one = try CommandRunner.run(["gallery", "--output", output, "--manifests", directory.path + "/m", "--library-path", BuildProducts.directory,
                                         "--provider", "com.example.perm"])
        #expect(one.status == 0)
        let limited = try String(contentsOfFile: output + "/index.html", encoding: .utf8)
        #expect(limited.contains("id=\"provider-com.example.perm\"") && !limited.contains("id=\"provider-com.contexthost.fixture\""))
        let unknown = try CommandRunner.run(["gallery", "--output", output, "--manifests", directory.path + "/m", "--library-path", BuildProducts.directory,
                                             "--provider", "com.example.nobody"])
        #expect(unknown.status == 1)
        #expect(unknown.standardError.contains("no provider has id 'com.example.nobody'; the host lists: com.contexthost.fixture"))
    }

    @Test("conformance --gallery writes the gallery of the checked providers and the report names it")
    func conformanceAttach() throws {
        try BuildProducts.checkBuilt()
        let directory = try TemporaryDirectory()
        let gallery = directory.path + "/gallery"
        let result = try CommandRunner.run([
            "conformance", Self.manifests + "/note.yaml", "--mode", "in-process", "--timing-samples", "2", "--format", "json",
            "--gallery", gallery, "--check", "manifest.schema", "--check", "abi.load",
        ], timeout: 60)
        #expect(result.status == 0, "stderr: \(result.standardError)")
        let report = try JSONValue(parsing: Array(result.standardOutput.utf8))
        #expect(report["gallery"] == .string(gallery + "/index.html"))
        let data = try JSONValue(parsing: Array(try Data(contentsOf: URL(fileURLWithPath: gallery + "/gallery.json"))))
        // Only the checked manifest, though its folder holds all six.
        #expect(data["providers"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["com.contexthost.note"])
        let text = try CommandRunner.run(["conformance", Self.manifests + "/note.yaml", "--mode", "in-process", "--gallery", gallery, "--check", "abi.load"])
        #expect(text.standardOutput.contains("Gallery: \(gallery)/index.html\n"))
    }
}
