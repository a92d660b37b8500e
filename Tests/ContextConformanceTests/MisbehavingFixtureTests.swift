import ContextConformance
import ContextHostTestSupport
import ContextProviderKit
import Testing

/// Each misbehaving fixture is caught by exactly the right check ids, in each mode
/// (Tests/Fixtures/manifests-conformance; the defects are listed in
/// Tests/Fixtures/FixtureConformanceProvider/ConformanceFixture.swift).
@Suite("Conformance: misbehaving fixtures are caught by the right checks")
struct MisbehavingFixtureTests {
    /// Fixture manifest → the exact failing check ids (the same in both modes unless noted).
    static let expectations: [(String, [String])] = [
        ("clean", []),
        ("bad-manifest", ["manifest.schema"]),
        ("missing-library", ["abi.load"]),
        ("old-abi", ["abi.version"]),
        ("open-fails", ["provider.open"]),
        ("metadata-mismatch", ["metadata.matches-manifest"]),
        ("unavailable-no-reason", ["availability.answers"]),
        ("invalid-form", ["collect.form-valid"]),
        ("query-fails", ["collect.query"]),
        ("rejects-samples", ["collect.sample-flow"]),
        ("accepts-invalid", ["collect.rejects-invalid"]),
        ("cancel-fails", ["collect.cancel"]),
        ("make-context-fails", ["collect.make-context"]),
        ("foreign-item", ["item.provider-id"]),
        ("bad-chip", ["chip.schema"]),
        ("bad-detail", ["detail.schema"]),
        ("empty-describe", ["describe.text"]),
        ("wrong-representation", ["encode.declared-representation"]),
        ("nondeterministic-encode", ["encode.deterministic"]),
        ("stateful-items", ["item.survives-restart"]),
        ("slow-preview", ["timing.preview"]),
        ("slow-detail", ["timing.detail"]),
        ("slow-encode", ["timing.encode"]),
        ("shared-state", ["concurrency.parallel-calls"]),
        ("hang-on-garbage", ["robustness.garbage-input"]),
        ("stdout", ["robustness.stdout-clean"]),
        ("oversized-at-maximum", ["limits.respects-maximum"]),
    ]

    /// Fixtures also run in worker mode (each worker run spawns processes, so the rest run
    /// in-process only, to keep the suite light on 2 cores): the ones whose defect involves the
    /// worker (restart, crash, hang, stdout, loading) and the clean one.
    static let workerToo: Set<String> = ["clean", "old-abi", "open-fails", "stateful-items", "hang-on-garbage", "stdout", "bad-chip"]

    /// Through `context-host conformance --format json`, so in-process runs happen in that
    /// process: the timing of in-process calls must not depend on this test process's
    /// cooperative pool, which the provider tests keep busy.
    @Test("caught by the right check ids", arguments: expectations)
    func caught(fixture: String, expected: [String]) async throws {
        try BuildProducts.checkBuilt()
        let path = ConformanceTestSupport.fixture(fixture)
        let modes = Self.workerToo.contains(fixture) ? ["worker", "in-process"] : ["in-process"]
        let result = try await ConformanceTestSupport.cli(
            ["conformance", path, "--format", "json", "--mode", modes.count == 2 ? "both" : "in-process", "--library-path", BuildProducts.directory])
        let report = try JSONValue(parsing: result.standardOutput)
        let providers = report["providers"]?.arrayValue ?? []
        #expect(providers.map { $0["mode"]?.stringValue ?? "" } == modes)
        for provider in providers {
            let failed = (provider["failed"]?.arrayValue ?? []).compactMap(\.stringValue).sorted()
            let messages = (provider["checks"]?.arrayValue ?? []).filter { $0["status"] == "failed" }.map { $0.jsonString }
            #expect(failed == expected.sorted(), "\(fixture) in \(provider["mode"]?.stringValue ?? ""): \(messages)")
        }
        #expect(result.status == (expected.isEmpty ? 0 : 1))
    }

    @Test("every check id has a fixture that fails it")
    func everyCheckCovered() {
        let covered = Set(Self.expectations.flatMap(\.1))
        #expect(Set(ConformanceCheck.ids).subtracting(covered).sorted() == [])
    }

    @Test("a crash is caught in the worker, and the in-process run is skipped rather than crashing the runner")
    func crashOnGarbage() async throws {
        try BuildProducts.checkBuilt()
        let path = ConformanceTestSupport.fixture("crash-on-garbage")
        let report = await Conformance.run([path], options: ConformanceTestSupport.options())
        #expect(report.failedCheckIDs(provider: path, mode: .worker) == ["robustness.garbage-input"])
        let garbage = try #require(report.providers.first?.results.first { $0.id == "robustness.garbage-input" })
        #expect(garbage.details.contains { $0.contains("error -32016") && $0.contains("crashed") })
        let inProcess = try #require(report.providers.last)
        #expect(inProcess.mode == .inProcess)
        #expect(inProcess.results.first?.id == "manifest.schema")
        #expect(inProcess.results.dropFirst().allSatisfy { $0.status == .skipped })
        #expect(inProcess.results.dropFirst().first?.message.contains("crashed its worker") == true)
    }

    @Test("failure details say what is wrong and how to fix it")
    func failureDetails() async throws {
        try BuildProducts.checkBuilt()
        let path = ConformanceTestSupport.fixture("stdout")
        var options = ConformanceTestSupport.options(modes: [.worker])
        options.only = ["robustness.stdout-clean"]
        let report = await Conformance.run([path], options: options)
        let result = try #require(report.providers.first?.results.first)
        #expect(result.id == "robustness.stdout-clean")
        #expect(result.status == .failed)
        #expect(result.details.first?.hasPrefix("first bytes: \"conformance fixture: previewing ") == true)
        #expect(result.details.last?.hasPrefix("fix: log to stderr") == true)
    }
}
