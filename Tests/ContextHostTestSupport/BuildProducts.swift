import Foundation

/// Where `swift build` put the binaries the tests run: the folder of the running test bundle.
public enum BuildProducts {
    /// The products folder (`.build/<triple>/<config>`).
    public static let directory: String = {
        if let override = ProcessInfo.processInfo.environment["CONTEXT_HOST_BUILD_DIR"] { return override }
        #if os(Linux)
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        #else
        let executable = Bundle.main.bundlePath
        #endif
        var url = URL(fileURLWithPath: executable)
        // On macOS the runner may sit inside an .xctest bundle.
        while url.path.contains(".xctest") { url.deleteLastPathComponent() }
        if !FileManager.default.fileExists(atPath: url.appendingPathComponent("context-host").path) {
            url.deleteLastPathComponent()
        }
        return url.path
    }()

    /// The `context-host` executable.
    public static var hostExecutable: String { directory + "/context-host" }

    /// A provider library, e.g. `library("NoteProvider")` → `…/libNoteProvider.so`.
    public static func library(_ product: String) -> String {
        #if os(macOS)
        directory + "/lib\(product).dylib"
        #else
        directory + "/lib\(product).so"
        #endif
    }

    /// The package root (for `manifests/` and test fixtures).
    public static let packageRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<3 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// The text of a file of the package, e.g. `packageText("docs/manifest.md")`.
    public static func packageText(_ path: String) throws -> String {
        try String(contentsOfFile: packageRoot + "/" + path, encoding: .utf8)
    }

    /// What a "every code is documented" test checks: the codes of `codes` that the page `page`
    /// (below the package root) does not mention as `mention(code)`, e.g. `` "| `\($0)` |" `` for a
    /// table row, followed by every code listed twice. Empty when each code is on the page once.
    public static func undocumented(_ codes: [String], in page: String, as mention: (String) -> String) throws -> [String] {
        let text = try packageText(page)
        var seen: Set<String> = []
        let repeated = codes.filter { !seen.insert($0).inserted }.map { "\($0) (listed twice)" }
        return codes.filter { !text.contains(mention($0)) } + repeated
    }

    /// The Python of the test-only venv (scripts/test-venv.sh): `$CONTEXT_HOST_TEST_VENV/bin/python`,
    /// else `.build/test-venv/bin/python` in the package.
    public static var testVenvPython: String {
        (ProcessInfo.processInfo.environment["CONTEXT_HOST_TEST_VENV"] ?? packageRoot + "/.build/test-venv") + "/bin/python"
    }

    /// Fails with a clear message when the binaries were not built first.
    public static func checkBuilt() throws {
        for path in [hostExecutable, library("NoteProvider"), library("FixtureProviders")] where !FileManager.default.fileExists(atPath: path) {
            throw MissingBuildProduct(path: path)
        }
    }

    public struct MissingBuildProduct: Error, CustomStringConvertible {
        public var path: String
        public var description: String {
            "\(path) is missing: run 'swift build' before 'swift test' (scripts/test.sh does both)."
        }
    }
}
