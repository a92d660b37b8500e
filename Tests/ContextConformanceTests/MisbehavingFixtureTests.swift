import ContextConformance
import ContextHostTestSupport
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

    @Test("caught by the right check ids", arguments: expectations)
    func caught(fixture: String, expected: [String]) async throws {
        try BuildProducts.checkBuilt()
        let path = ConformanceTestSupport.fixture(fixture)
        let modes: [ConformanceMode] = Self.workerToo.contains(fixture) ? [.worker, .inProcess] : [.inProcess]
        let report = await Conformance.run([path], options: ConformanceTestSupport.options(modes: modes))
        #expect(report.providers.map(\.mode) == modes)
        for mode in modes {
            #expect(report.failedCheckIDs(provider: path, mode: mode) == expected.sorted(), "\(fixture) in \(mode.rawValue):\n\(ConformanceFormatter.text(report, colour: false))")
        }
        #expect(report.passed == expected.isEmpty)
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
