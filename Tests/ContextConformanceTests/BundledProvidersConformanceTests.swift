import ContextConformance
import ContextHostTestSupport
import Testing

/// Every bundled provider (each manifest in `manifests/`, as they land) passes every check, in a
/// worker process and in-process.
@Suite("Conformance of the bundled providers")
struct BundledProvidersConformanceTests {
    @Test("passes every check in both modes", arguments: ConformanceTestSupport.bundledManifests)
    func bundledProviderConforms(manifest: String) async throws {
        try BuildProducts.checkBuilt()
        let report = await Conformance.run([manifest], options: ConformanceTestSupport.options())
        #expect(report.providers.map(\.mode) == [.worker, .inProcess])
        #expect(report.passed, "\(ConformanceFormatter.text(report, colour: false))")
        #expect(report.failureSummaries == [])
    }

    @Test("the Note provider's declared samples are walked")
    func noteSamples() async throws {
        try BuildProducts.checkBuilt()
        var options = ConformanceTestSupport.options(modes: [.inProcess])
        options.only = ["collect.sample-flow", "item.provider-id"]
        let report = await Conformance.run([ConformanceTestSupport.bundled + "/note.yaml"], options: options)
        let results = try #require(report.providers.first?.results)
        #expect(results.map(\.id) == ["collect.sample-flow", "item.provider-id"])
        #expect(results.first?.message == "3 declared sample(s) walked; 2 item(s) made.")
    }

    @Test("a provider author verifies a provider with one call")
    func oneCall() async throws {
        try BuildProducts.checkBuilt()
        try await Conformance.verify(ConformanceTestSupport.bundled + "/note.yaml", options: ConformanceTestSupport.options())
        await #expect(throws: ConformanceFailure.self) {
            try await Conformance.verify(ConformanceTestSupport.fixture("bad-chip"), options: ConformanceTestSupport.options(modes: [.inProcess]))
        }
        do {
            try await Conformance.verify(ConformanceTestSupport.fixture("bad-chip"), options: ConformanceTestSupport.options(modes: [.inProcess]))
        } catch let failure as ConformanceFailure {
            #expect(failure.description.contains("✘ chip.schema"))
            #expect(failure.description.contains("chip.thumbnail: expected a data: URI"))
        }
    }
}
