import ContextConformance
import ContextHostTestSupport
import ContextProviderKit
import Testing

/// Every bundled provider (each manifest in `manifests/`, as they land) passes every check, in a
/// worker process — sandboxed with every layer (`--sandbox required`, docs/security.md §8) — and
/// in-process.
@Suite("Conformance of the bundled providers", .serialized)
struct BundledProvidersConformanceTests {
    /// Through the CLI, as CI runs it: the in-process mode then loads the provider into that
    /// `context-host` process, not into the test process (whose cooperative pool the other
    /// provider tests share).
    @Test("passes every check in both modes", arguments: ConformanceTestSupport.bundledManifests)
    func bundledProviderConforms(manifest: String) async throws {
        try BuildProducts.checkBuilt()
        let result = try await ConformanceTestSupport.cli(["conformance", manifest, "--format", "json", "--sandbox", "required"])
        let report = try JSONValue(parsing: result.standardOutput)
        let providers = report["providers"]?.arrayValue ?? []
        #expect(providers.map { $0["mode"]?.stringValue ?? "" } == ["worker", "in-process"])
        var failures: [String] = []
        for provider in providers {
            for check in provider["checks"]?.arrayValue ?? [] where check["status"] == "failed" {
                failures.append("\(provider["mode"]?.stringValue ?? "") \(check["id"]?.stringValue ?? ""): \(check["message"]?.stringValue ?? "") \(check["details"]?.jsonString ?? "")")
            }
        }
        #expect(failures == [])
        #expect(result.status == 0, "\(result.standardError)")
    }

    @Test("the Note provider's declared samples are walked")
    func noteSamples() async throws {
        try BuildProducts.checkBuilt()
        var options = ConformanceTestSupport.options(modes: [.worker])
        options.only = ["collect.sample-flow", "item.provider-id"]
        let report = await Conformance.run([ConformanceTestSupport.bundled + "/note.yaml"], options: options)
        let results = try #require(report.providers.first?.results)
        #expect(results.map(\.id) == ["collect.sample-flow", "item.provider-id"])
        #expect(results.first?.message == "3 declared sample(s) walked; 2 item(s) made.")
    }

    @Test("a provider author verifies a provider with one call")
    func oneCall() async throws {
        try BuildProducts.checkBuilt()
        // Worker mode here: the in-process run is covered through the CLI above, away from this
        // process's busy cooperative pool.
        let options = ConformanceTestSupport.options(modes: [.worker])
        try await Conformance.verify(ConformanceTestSupport.bundled + "/note.yaml", options: options)
        do {
            try await Conformance.verify(ConformanceTestSupport.fixture("bad-chip"), options: options)
            Issue.record("bad-chip must fail")
        } catch let failure as ConformanceFailure {
            #expect(failure.description.contains("✘ chip.schema"))
            #expect(failure.description.contains("chip.thumbnail: expected a data: URI"))
        }
    }
}
