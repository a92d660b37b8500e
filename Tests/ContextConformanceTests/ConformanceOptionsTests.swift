import ContextConformance
import ContextHostTestSupport
import ContextProviderKit
import Testing

/// Selection, baselines and the report model.
@Suite("Conformance options and baselines")
struct ConformanceOptionsTests {
    @Test("--check runs only the named checks, --skip leaves checks out")
    func selection() async throws {
        try BuildProducts.checkBuilt()
        // Worker mode: the provider's timing then does not depend on this process's busy pool.
        var options = ConformanceTestSupport.options(modes: [.worker])
        options.only = ["chip.schema", "encode.deterministic"]
        var report = await Conformance.run([ConformanceTestSupport.fixture("bad-chip")], options: options)
        #expect(report.providers.first?.results.map(\.id) == ["chip.schema", "encode.deterministic"])
        #expect(report.failedCheckIDs(provider: ConformanceTestSupport.fixture("bad-chip"), mode: .worker) == ["chip.schema"])

        options.only = nil
        options.skip = ["chip.schema", "robustness.stdout-clean", "timing.preview", "timing.detail", "timing.encode"]
        report = await Conformance.run([ConformanceTestSupport.fixture("bad-chip")], options: options)
        let ids = report.providers.first?.results.map(\.id) ?? []
        #expect(!ids.contains("chip.schema") && !ids.contains("robustness.stdout-clean") && ids.contains("detail.schema"))
        #expect(report.passed)
    }

    @Test("a baseline turns listed failures into expected failures and reports stale entries")
    func baseline() async throws {
        try BuildProducts.checkBuilt()
        let badChip = ConformanceTestSupport.fixture("bad-chip")
        let text = """
            # Known problems, to be fixed.
            com.contexthost.conformance-fixture chip.schema worker
            \(badChip) chip.schema   # by manifest path
            com.contexthost.conformance-fixture detail.schema
            com.contexthost.conformance-fixture encode.deterministic in-process   # that mode did not run
            com.example.not-run chip.schema
            """
        var options = ConformanceTestSupport.options(modes: [.worker])
        options.only = ["chip.schema", "detail.schema"]
        options.baseline = try ConformanceBaseline(parsing: text, file: "baseline.txt")
        let report = await Conformance.run([badChip], options: options)
        #expect(report.count(.failed) == 0)
        #expect(report.count(.expectedFailure) == 1)
        // detail.schema passes: its entry is stale (reported once, at its line); the entry for a
        // provider that did not run is not.
        #expect(report.staleBaselineEntries.map(\.location) == ["baseline.txt:4"])
        #expect(report.staleBaselineEntries.first?.entry == "com.contexthost.conformance-fixture detail.schema")
        #expect(!report.passed)
        #expect(report.exitCode == 1)
    }

    @Test("baseline syntax errors name the line")
    func baselineErrors() {
        #expect(throws: ConformanceBaseline.ParseError.self) { try ConformanceBaseline(parsing: "a chip.schemaa\n", file: "b") }
        do {
            _ = try ConformanceBaseline(parsing: "\n\nprovider chip.schema sometimes\n", file: "b.txt")
            Issue.record("expected an error")
        } catch {
            #expect(error.description == "b.txt:3: unknown mode 'sometimes'; expected worker or in-process")
        }
        do {
            _ = try ConformanceBaseline(parsing: "provider chip.shema\n", file: "b.txt")
        } catch {
            #expect(error.description.hasPrefix("b.txt:1: unknown check id 'chip.shema'"))
        }
    }

    @Test("the check catalogue has unique, documented ids")
    func catalogue() throws {
        let missing = try BuildProducts.undocumented(ConformanceCheck.ids, in: "docs/conformance.md") { "### `\($0)`" }
        #expect(missing.isEmpty, "docs/conformance.md has no section for \(missing)")
    }

    @Test("a missing manifest is reported under manifest.schema, the rest skipped")
    func missingManifest() async {
        let report = await Conformance.run(["/nonexistent/provider.yaml"], options: ConformanceTestSupport.options(modes: [.inProcess]))
        let results = report.providers.first?.results ?? []
        #expect(results.first?.id == "manifest.schema")
        #expect(results.first?.status == .failed)
        #expect(results.first?.details.first?.contains("[unreadable-file]") == true)
        #expect(results.dropFirst().allSatisfy { $0.status == .skipped })
    }

    @Test("folders expand to their manifests, sorted")
    func folders() {
        let files = Conformance.manifestFiles([ConformanceTestSupport.fixtures])
        #expect(files.first == ConformanceTestSupport.fixture("accepts-invalid"))
        #expect(files.contains(ConformanceTestSupport.fixture("clean")))
        #expect(files == files.sorted())
    }
}
