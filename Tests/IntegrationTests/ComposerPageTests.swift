import ContextHostTestSupport
import Foundation
import Testing

/// The live composer served by `serve --listen` at `/` (web/), through the real binary, driven in
/// headless Chromium with real input events by Tests/Fixtures/browser/composer_check.py (one
/// PASS/FAIL line per check; the checks are counted, so one that silently stops running fails
/// too). Screenshots and chromium.log are kept in `.build/test-artifacts/composer/` for CI.
/// Also: the JavaScript client's generated types are current with docs/openrpc.json.
@Suite("composer page (headless Chromium)")
struct ComposerPageTests {
    static let root = BuildProducts.packageRoot
    static let artifacts = root + "/.build/test-artifacts/composer"
    /// Every check composer_check.py makes (static route 17, hostile --web-root 3, navigation 1, page 13, ctxui.js on hostile input 7, console and requests 3).
    static let expectedChecks = 44

    @Test("attach a Note (after a field error), search and attach a Location, remove, detail, send, providers/changed")
    func browser() throws {
        try BuildProducts.checkBuilt()
        // CheckScript.run throws when the time is up: a timeout is a failure.
        let outcome = try CheckScript.run(
            "Tests/Fixtures/browser/composer_check.py", [BuildProducts.hostExecutable, Self.artifacts], timeout: 300)
        #expect(outcome.failed.isEmpty, "\(outcome.failed.joined(separator: "\n"))\n\(outcome.output.suffix(3000))")
        #expect(outcome.passed.count == Self.expectedChecks, "\(outcome.output)")
        #expect(outcome.status == 0, "\(outcome.output)")
        for name in ["2-note-field-error.png", "4-detail.png", "5-sent.png", "6-providers-changed.png"] {
            #expect(FileManager.default.fileExists(atPath: Self.artifacts + "/" + name), "screenshot \(name)")
        }
    }

    @Test("web/context-host-protocol.d.ts is what scripts/gen-client-types.py makes from docs/openrpc.json")
    func generatedTypesCurrent() throws {
        let result = try Shell.run("python3 scripts/gen-client-types.py --check", in: Self.root, timeout: 60)
        #expect(result.status == 0, "\(result.output)")
    }

    @Test("control: --check fails once docs/openrpc.json has a method the types lack")
    func generatedTypesCheckDetectsDrift() throws {
        let copy = NSTemporaryDirectory() + "gen-types-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: copy) }
        for folder in ["scripts", "docs", "web"] {
            try FileManager.default.createDirectory(atPath: copy + "/" + folder, withIntermediateDirectories: true)
        }
        for file in ["scripts/gen-client-types.py", "docs/ctxui.schema.json", "web/context-host-protocol.d.ts"] {
            try FileManager.default.copyItem(atPath: Self.root + "/" + file, toPath: copy + "/" + file)
        }
        let openrpc = try String(contentsOfFile: Self.root + "/docs/openrpc.json", encoding: .utf8)
        try openrpc.replacingOccurrences(of: "\"methods\": [", with: "\"methods\": [{\"name\": \"x/new\", \"params\": []},")
            .write(toFile: copy + "/docs/openrpc.json", atomically: true, encoding: .utf8)
        #expect(openrpc.contains("\"methods\": ["))
        let stale = try Shell.run("python3 scripts/gen-client-types.py --check", in: copy, timeout: 60)
        #expect(stale.status == 1 && stale.output.contains("is not up to date"), "\(stale.output)")
        let regenerated = try Shell.run("python3 scripts/gen-client-types.py && python3 scripts/gen-client-types.py --check", in: copy, timeout: 60)
        #expect(regenerated.status == 0 && regenerated.output.contains("is up to date"), "\(regenerated.output)")
        #expect(try String(contentsOfFile: copy + "/web/context-host-protocol.d.ts", encoding: .utf8).contains("\"x/new\": {"))
    }
}
