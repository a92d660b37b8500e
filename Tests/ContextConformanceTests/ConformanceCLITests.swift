import ContextConformance
import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// `context-host conformance`: exit status, formats, and their consumers (TAP::Parser, the JUnit
/// schema).
@Suite("context-host conformance (CLI)", .serialized)
struct ConformanceCLITests {
    static let libraryPath = ["--library-path", BuildProducts.directory]

    @Test("exit status 0 when everything passes, 1 on a failure, 2 on a bad baseline or check id")
    func exitStatus() async throws {
        try BuildProducts.checkBuilt()
        let clean = try await ConformanceTestSupport.cli(["conformance", ConformanceTestSupport.fixture("clean"), "--mode", "in-process"] + Self.libraryPath)
        #expect(clean.status == 0, "\(clean.standardOutput)\(clean.standardError)")
        #expect(clean.standardOutput.contains("PASS: 1 run(s):"))
        #expect(!clean.standardOutput.contains("\u{1B}["), "no colour when stdout is not a terminal")

        let bad = try await ConformanceTestSupport.cli(["conformance", ConformanceTestSupport.fixture("bad-chip"), "--mode", "in-process", "--check", "chip.schema"] + Self.libraryPath)
        #expect(bad.status == 1)
        #expect(bad.standardOutput.contains("✘ chip.schema"))

        let unknown = try await ConformanceTestSupport.cli(["conformance", ConformanceTestSupport.fixture("clean"), "--check", "chip.schemaa"] + Self.libraryPath)
        #expect(unknown.status == 2)
        #expect(unknown.standardError.contains("unknown check id 'chip.schemaa'"))

        let directory = try TemporaryDirectory()
        let baseline = try directory.write("baseline.txt", "com.contexthost.conformance-fixture nonsense.check\n")
        let badBaseline = try await ConformanceTestSupport.cli(["conformance", ConformanceTestSupport.fixture("clean"), "--baseline", baseline] + Self.libraryPath)
        #expect(badBaseline.status == 2)
        #expect(badBaseline.standardError.contains("baseline.txt:1: unknown check id 'nonsense.check'"))
    }

    @Test("--format json is stable and machine-readable")
    func json() async throws {
        try BuildProducts.checkBuilt()
        let result = try await ConformanceTestSupport.cli(["conformance", ConformanceTestSupport.fixture("bad-detail"), "--format", "json", "--skip", "timing.preview", "--skip", "timing.detail", "--skip", "timing.encode"] + Self.libraryPath)
        #expect(result.status == 1)
        let report = try JSONValue(parsing: result.standardOutput)
        #expect(report["format"] == 1)
        #expect(report["passed"] == false)
        #expect(report["exitCode"] == 1)
        let providers = try #require(report["providers"]?.arrayValue)
        #expect(providers.map { $0["mode"]?.stringValue ?? "" } == ["worker", "in-process"])
        #expect(providers.map { $0["failed"] ?? .null } == [["detail.schema"], ["detail.schema"]])
        let checks = try #require(providers.first?["checks"]?.arrayValue)
        #expect(checks.map { $0["id"]?.stringValue ?? "" } == ConformanceCheck.ids.filter { !$0.hasPrefix("timing.") })
        let detail = try #require(checks.first { $0["id"] == "detail.schema" })
        #expect(detail["status"] == "failed")
        #expect(detail["details"]?.arrayValue?.first?.stringValue?.contains("detail.blocks[1].link: expected a geo: URI") == true)
        #expect(report["summary"]?["failed"] == 2)
    }

    @Test("--format tap parses with TAP::Parser (the parser behind prove)")
    func tap() async throws {
        try BuildProducts.checkBuilt()
        let result = try await ConformanceTestSupport.cli(["conformance", ConformanceTestSupport.fixture("stdout"), ConformanceTestSupport.fixture("clean"), "--format", "tap"] + Self.libraryPath)
        #expect(result.status == 1)
        #expect(result.standardOutput.hasPrefix("TAP version 13\n1..104\n"))
        let parsed = try await ConformanceTestSupport.program("/usr/bin/perl", [ConformanceTestSupport.scripts + "/parse-tap.pl"], input: result.standardOutput)
        #expect(parsed.status == 0, "\(parsed.output)")
        let skipped = result.standardOutput.components(separatedBy: "# SKIP").count - 1
        #expect(parsed.output.hasPrefix("tests=104 passed=102 failed=2 skipped=\(skipped) todo=0 version=13 parse_errors=0"), "\(parsed.output)")

        // A passing report makes `prove` succeed.
        let clean = try await ConformanceTestSupport.cli(["conformance", ConformanceTestSupport.fixture("clean"), "--format", "tap", "--mode", "in-process"] + Self.libraryPath)
        let directory = try TemporaryDirectory()
        let file = try directory.write("clean.tap", clean.standardOutput)
        let prove = try await ConformanceTestSupport.program("/usr/bin/prove", ["--exec", "/bin/cat", file])
        #expect(prove.status == 0, "\(prove.output)")
        #expect(prove.output.contains("Result: PASS"))
    }

    @Test("--format junit validates against the common JUnit XML schema")
    func junit() async throws {
        try BuildProducts.checkBuilt()
        let directory = try TemporaryDirectory()
        let output = directory.path + "/report.xml"
        let result = try await ConformanceTestSupport.cli(["conformance", ConformanceTestSupport.fixture("bad-chip"), ConformanceTestSupport.fixture("bad-manifest"), ConformanceTestSupport.fixture("clean"), "--format", "junit", "--output", output] + Self.libraryPath)
        #expect(result.status == 1)
        let xml = try String(contentsOfFile: output, encoding: .utf8)
        #expect(xml.contains(#"<testcase name="chip.schema" classname="com.contexthost.conformance-fixture.worker""#))
        #expect(xml.contains(#"<failure message="item/preview answered"#))
        let validation = try await ConformanceTestSupport.program("/bin/bash", [ConformanceTestSupport.scripts + "/validate-junit.sh", output])
        // 77: the test venv lacks xmlschema; a failure, never a skip (scripts/test.sh makes the venv).
        #expect(validation.status != 77, "the JUnit schema check could not run: \(validation.output) — run scripts/test-venv.sh")
        #expect(validation.status == 0, "\(validation.output)")
        #expect(validation.output.contains("valid"))
    }
}
