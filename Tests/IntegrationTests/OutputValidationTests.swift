import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// Output validation (issue 4, part 4): every provider result is checked against the ctxui schema
/// and a size cap before it reaches the client, in a worker and in-process. A violation is `-32014`
/// naming the provider, the method and the field; the provider keeps serving.
@Suite("Provider output validation", .serialized)
struct OutputValidationTests {
    static let isolatedManifests = BuildProducts.packageRoot + "/Tests/Fixtures/manifests-isolated"
    static let misbehaving = "com.contexthost.misbehaving"
    static let swiftFixture = "com.contexthost.fixture.isolated"
    static let modes = ["process", "in-process"]

    private func client(_ isolation: String) throws -> RPCClient {
        let client = try RPCClient(arguments: ["--manifests", Self.isolatedManifests, "--isolation", isolation])
        try client.initialize()
        return client
    }

    private func item(_ providerID: String, _ content: JSONValue) -> JSONValue {
        [
            "id": "8c4a9f4e-1d55-4b8e-9a0a-0c1f4b3f2a11", "providerId": .string(providerID), "type": "fixture",
            "displayName": "Fixture", "content": content,
        ]
    }

    /// Checks a `-32014` answer: code, the whole message, and `data`.
    private func expectBadReply(
        _ error: JSONValue, provider: String, method: String, kind: String, field: String, problem: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(error["code"] == -32014, sourceLocation: sourceLocation)
        #expect(
            error["message"] == .string("Provider '\(provider)' sent an invalid \(kind) for \(method): \(field): \(problem)"),
            sourceLocation: sourceLocation)
        #expect(error["data"] == ["providerId": .string(provider), "method": .string(method), "field": .string(field)], sourceLocation: sourceLocation)
    }

    @Test("an invalid chip, detail, encoding or description is refused naming the field", arguments: modes)
    func invalidItemViews(_ isolation: String) throws {
        let client = try client(isolation)
        defer { client.host.terminate() }
        var error = try client.callExpectingError("items/preview", ["item": item(Self.misbehaving, ["misbehave": "bad-chip-tone"])])
        expectBadReply(
            error, provider: Self.misbehaving, method: "item/preview", kind: "chip", field: "chip.tone",
            problem: #"expected one of neutral, good, warning, attention, got "blue""#)

        error = try client.callExpectingError("items/detail", ["item": item(Self.misbehaving, ["misbehave": "bad-detail"])])
        expectBadReply(
            error, provider: Self.misbehaving, method: "item/detail", kind: "detail", field: "detail.blocks[1].type",
            problem: #"expected one of text, facts, chart, map, list, image, link, got "video""#)

        error = try client.callExpectingError("items/encode", ["item": item(Self.misbehaving, ["misbehave": "bad-encode"])])
        expectBadReply(
            error, provider: Self.misbehaving, method: "item/encode", kind: "encoded item", field: "encoding.data",
            problem: "expected Base64 text")

        error = try client.callExpectingError("items/describe", ["item": item(Self.misbehaving, ["misbehave": "bad-describe"])])
        expectBadReply(
            error, provider: Self.misbehaving, method: "item/describe", kind: "description", field: "result.text",
            problem: "expected a string, got number")

        // Valid answers pass through untouched, and the provider keeps serving.
        #expect(try client.call("items/preview", ["item": item(Self.misbehaving, [:])])["tone"] == "neutral")
        #expect(try client.call("items/detail", ["item": item(Self.misbehaving, [:])])["blocks"]?.arrayValue?.count == 1)
        #expect(try client.call("items/encode", ["item": item(Self.misbehaving, [:])])["data"] == "b2s=")
        #expect(try client.call("items/describe", ["item": item(Self.misbehaving, [:])])["text"] == "ok")
    }

    @Test("a chip over the 64 KiB chip cap is refused with the limit", arguments: modes)
    func chipTooLarge(_ isolation: String) throws {
        let client = try client(isolation)
        defer { client.host.terminate() }
        let error = try client.callExpectingError("items/preview", ["item": item(Self.misbehaving, ["misbehave": "big-chip"])])
        #expect(error["code"] == -32014)
        let message = try #require(error["message"]?.stringValue)
        #expect(message.hasPrefix("Provider '\(Self.misbehaving)' sent a chip of "), "\(message)")
        #expect(message.hasSuffix(" bytes for item/preview; the limit is 65536 bytes."), "\(message)")
        #expect(error["data"]?["limit"] == 65536)
        #expect(error["data"]?["field"] == "chip")
        #expect((error["data"]?["length"]?.intValue ?? 0) > 100_000)
        // The same size is fine for a detail (cap 4 MiB).
        #expect(try client.call("items/preview", ["item": item(Self.misbehaving, [:])])["title"] == "ok")
    }

    @Test("an SDK provider's views are checked too (thumbnail and map link URIs)", arguments: modes)
    func swiftProvider(_ isolation: String) throws {
        let client = try client(isolation)
        defer { client.host.terminate() }
        var error = try client.callExpectingError("items/preview", ["item": item(Self.swiftFixture, ["invalidView": true])])
        expectBadReply(
            error, provider: Self.swiftFixture, method: "item/preview", kind: "chip", field: "chip.thumbnail",
            problem: #"expected a data: URI, got "https://example.com/chip.png""#)
        error = try client.callExpectingError("items/detail", ["item": item(Self.swiftFixture, ["invalidView": true])])
        expectBadReply(
            error, provider: Self.swiftFixture, method: "item/detail", kind: "detail", field: "detail.blocks[1].link",
            problem: #"expected a geo: URI, got "https://maps.example.com/?q=52.5,13.4""#)
        #expect(try client.call("items/preview", ["item": item(Self.swiftFixture, [:])])["subtitle"] == "fixture")
    }

    /// A host over a scratch folder with the C provider as a `collection: both` provider.
    private func collector(_ isolation: String, settings: String) throws -> (RPCClient, TemporaryDirectory) {
        let directory = try TemporaryDirectory(
            writing: "misbehaving.yaml",
            TestManifest.yaml(
                id: Self.misbehaving, library: "libFixtureMisbehavingProvider.so", isolation: isolation, collection: "both",
                extra: settings))
        let client = try RPCClient(arguments: ["--manifests", directory.path, "--library-path", BuildProducts.directory])
        try client.initialize()
        return (client, directory)
    }

    @Test("an invalid form or made item is refused; so are bad options and outcomes", arguments: modes)
    func collection(_ isolation: String) throws {
        var (client, directory) = try collector(
            isolation, settings: "settings:\n  startForm: { type: string, default: bad }\n  makeItem: { type: string, default: bad }")
        var error = try client.callExpectingError("collect/start", ["providerId": .string(Self.misbehaving)])
        expectBadReply(
            error, provider: Self.misbehaving, method: "collect/start", kind: "form", field: "form.fields[0].kind",
            problem: #"expected one of text, number, date, datetime, choice, toggle, location, got "slider""#)
        error = try client.callExpectingError("collect/make", ["providerId": .string(Self.misbehaving)])
        expectBadReply(
            error, provider: Self.misbehaving, method: "provider/makeContext", kind: "item", field: "result.item.id",
            problem: "expected a non-empty string")
        client.host.terminate()
        _ = directory

        (client, directory) = try collector(isolation, settings: "")
        defer { client.host.terminate() }
        #expect(try client.call("collect/make", ["providerId": .string(Self.misbehaving)])["item"]?["displayName"] == "Made")
        let start = try client.call("collect/start", ["providerId": .string(Self.misbehaving)])
        let session = try #require(start["sessionId"])
        #expect(start["form"]?["stepId"] == "first")

        error = try client.callExpectingError(
            "collect/query", ["sessionId": session, "fieldId": "text", "values": ["misbehave": "bad-options"]])
        expectBadReply(
            error, provider: Self.misbehaving, method: "collect/query", kind: "option list", field: "result.options[0].label",
            problem: "missing; expected a string")
        error = try client.callExpectingError("collect/submit", ["sessionId": session, "values": ["misbehave": "bad-outcome"]])
        expectBadReply(
            error, provider: Self.misbehaving, method: "collect/submit", kind: "submit outcome", field: "result.form.title",
            problem: "expected a string, got number")
        error = try client.callExpectingError("collect/submit", ["sessionId": session, "values": ["misbehave": "bad-item"]])
        expectBadReply(
            error, provider: Self.misbehaving, method: "collect/submit", kind: "submit outcome", field: "result.item.displayName",
            problem: "expected a string, got number")
        // After a bad reply the session stays open on its step.
        let invalid = try client.call("collect/submit", ["sessionId": session, "values": ["text": "x"]])
        #expect(invalid["outcome"] == "invalid")
        #expect(try client.call("collect/query", ["sessionId": session, "fieldId": "text"])["options"]?.arrayValue?.count == 1)
    }
}
