import ContextHost
import ContextProtocol
import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// docs/openrpc.json: generated from the typed messages, valid OpenRPC, documented in
/// docs/protocol.md, and true to what the real host sends and answers.
@Suite("OpenRPC")
struct OpenRPCTests {
    static let root = BuildProducts.packageRoot
    static let fixtures = root + "/Tests/Fixtures/openrpc"

    static var python: String {
        let venv = ProcessInfo.processInfo.environment["CONTEXT_HOST_TEST_VENV"] ?? root + "/.build/test-venv"
        return venv + "/bin/python"
    }

    /// Runs `python check-openrpc.py arguments…`; (status, output).
    static func check(_ arguments: [String]) throws -> (Int32, String) {
        try #require(
            FileManager.default.isExecutableFile(atPath: python),
            "the test-only Python venv is missing at \(python): run scripts/test-venv.sh (scripts/test.sh does)")
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [fixtures + "/check-openrpc.py"] + arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: output, as: UTF8.self))
    }

    @Test("docs/openrpc.json and docs/openrpc-provider.json are what the generator and the CLI print")
    func checkedInDocumentsAreCurrent() throws {
        for (file, provider) in [("docs/openrpc.json", false), ("docs/openrpc-provider.json", true)] {
            let checkedIn = try String(contentsOfFile: Self.root + "/" + file, encoding: .utf8)
            let generated = OpenRPCDocument.prettyPrinted(provider ? OpenRPCDocument.provider : OpenRPCDocument.client)
            #expect(
                generated == checkedIn,
                "\(file) is out of date: run `context-host protocol --openrpc\(provider ? " --provider" : "") > \(file)`")
            let printed = try CommandRunner.run(["protocol", "--openrpc"] + (provider ? ["--provider"] : []))
            #expect(printed.status == 0)
            #expect(printed.standardOutput == generated)
        }
    }

    @Test("both documents validate against the OpenRPC 1.3 meta-schema; every embedded schema is valid 2020-12")
    func documentsAreValidOpenRPC() throws {
        let (status, output) = try Self.check(["document", Self.root + "/docs/openrpc.json", Self.root + "/docs/openrpc-provider.json"])
        #expect(status == 0, "\(output)")
    }

    @Test("the document lists every registered message, and docs/protocol.md has a section for each")
    func everyMethodIsDocumented() throws {
        let document = OpenRPCDocument.client
        let names = (document["methods"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
        let registered = MessageRegistry.clientRequests.map { $0.method } + MessageRegistry.clientNotifications.map { $0.method }
            + MessageRegistry.hostNotifications.map { $0.method }
        #expect(Set(names) == Set(registered))
        #expect(names.count == registered.count)
        let protocolText = try String(contentsOfFile: Self.root + "/docs/protocol.md", encoding: .utf8)
        let headings = Set(protocolText.split(separator: "\n").filter { $0.hasPrefix("### `") }.map { String($0) })
        for name in registered {
            #expect(headings.contains("### `\(name)`"), "docs/protocol.md has no section ### `\(name)`")
        }
        let providerNames = (OpenRPCDocument.provider["methods"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue }
        #expect(providerNames == MessageRegistry.providerRequests.map { $0.method } + MessageRegistry.providerNotifications.map { $0.method })
        // The host answers exactly the registered client methods.
        let methodNames = Set(MessageRegistry.clientRequests.map { $0.method } + MessageRegistry.clientNotifications.map { $0.method })
        #expect(Set(MethodRegistry.all.map { $0.method }) == methodNames)
    }

    /// Records what a client sends and receives, and decodes each answer with its Swift type.
    final class Recorder {
        let client: RPCClient
        var exchanges: [JSONValue] = []
        var decodeFailures: [String] = []

        init(_ client: RPCClient) { self.client = client }

        @discardableResult
        func call(_ method: String, _ params: JSONValue = [:]) throws -> JSONValue {
            let result = try client.call(method, params)
            exchanges.append(["method": .string(method), "params": params, "result": result])
            decode(method, params: params, result: result)
            return result
        }

        func notify(_ method: String, _ params: JSONValue) {
            client.notify(method, params)
            exchanges.append(["method": .string(method), "params": params])
        }

        func decode(_ method: String, params: JSONValue, result: JSONValue) {
            guard let type = MessageRegistry.clientRequests.first(where: { $0.method == method }) else {
                decodeFailures.append("\(method): not registered")
                return
            }
            do throws(JSONDecodeError) {
                try Self.decode(type, params: params, result: result)
            } catch {
                decodeFailures.append("\(method): \(error)")
            }
        }

        static func decode<R: RequestType>(_ type: R.Type, params: JSONValue, result: JSONValue) throws(JSONDecodeError) {
            let request = try R(json: params, path: "params")
            #expect(try R(json: request.json, path: "params").json == request.json)
            let response = try R.Response(json: result, path: "result")
            #expect(try R.Response(json: response.json, path: "result").json == response.json)
        }
    }

    @Test("a Note session's requests and answers match docs/openrpc.json and decode with the Swift types")
    func realExchangesMatchTheDocument() throws {
        let temporary = try TemporaryDirectory()
        let client = try RPCClient(arguments: [
            "--manifests", Self.root + "/manifests", "--library-path", BuildProducts.directory, "--state-dir", temporary.path,
        ])
        defer { client.host.terminate() }
        let recorder = Recorder(client)
        try recorder.call("initialize", ["clientInfo": ["name": "openrpc-tests", "version": "1"], "protocolVersion": 1, "locale": "en-US", "grantedPermissions": []])
        recorder.notify("initialized", [:])
        try recorder.call("ping")
        try recorder.call("providers/list")
        let composer = try recorder.call("composer/open", ["maximumItems": 5])
        let composerID = try #require(composer["composerId"])
        try recorder.call("providers/list", ["composerId": composerID])

        // A plain session: a field error, then a valid submit.
        let start = try recorder.call("collect/start", ["providerId": "com.contexthost.note"])
        let session = try #require(start["sessionId"])
        let invalid = try recorder.call("collect/submit", ["sessionId": session, "values": ["title": "", "body": "Milk, eggs"]])
        #expect(invalid["outcome"] == "invalid")
        try recorder.call("collect/query", ["sessionId": session, "fieldId": "title", "query": "gro"])
        let made = try recorder.call("collect/submit", ["sessionId": session, "values": ["title": "Groceries", "body": "Milk, eggs and **bread**."]])
        let item = try #require(made["item"])
        try recorder.call("items/preview", ["item": item])
        try recorder.call("items/detail", ["item": item])
        try recorder.call("items/describe", ["item": item])
        try recorder.call("items/encode", ["item": item])
        try recorder.call("items/encode", ["item": item, "representation": "text"])

        // A cancelled session.
        let other = try recorder.call("collect/start", ["providerId": "com.contexthost.note"])
        try recorder.call("collect/cancel", ["sessionId": try #require(other["sessionId"])])

        // A composer session: attach, list, remove, attach again, send, close.
        let inComposer = try recorder.call("collect/start", ["providerId": "com.contexthost.note", "composerId": composerID])
        let attached = try recorder.call("collect/submit", ["sessionId": try #require(inComposer["sessionId"]), "values": ["title": "Plan", "body": "One two three."]])
        #expect(attached["composer"]?["itemCount"] == 1)
        try recorder.call("composer/list")
        try recorder.call("composer/list", ["composerId": composerID])
        try recorder.call("composer/remove", ["composerId": composerID, "itemId": try #require(attached["item"]?["id"])])
        let again = try recorder.call("collect/start", ["providerId": "com.contexthost.note", "composerId": composerID])
        try recorder.call("collect/submit", ["sessionId": try #require(again["sessionId"]), "values": ["title": "Again", "body": "Four five."]])
        try recorder.call("composer/send", ["composerId": composerID, "text": "What now?"])
        try recorder.call("composer/close", ["composerId": composerID])

        // providers/retry on a loaded provider answers its current entry.
        let retry = try recorder.call("providers/retry", ["providerId": "com.contexthost.note"])
        #expect(retry["provider"]?["status"] == "loaded")
        recorder.notify("$/cancelRequest", ["id": 424242])
        try recorder.call("shutdown")
        recorder.notify("exit", [:])
        #expect(client.host.waitForExit() == 0)

        #expect(recorder.decodeFailures.isEmpty, "\(recorder.decodeFailures)")
        let file = try temporary.write("exchanges.json", JSONValue.array(recorder.exchanges).jsonString)
        let (status, output) = try Self.check(["exchanges", Self.root + "/docs/openrpc.json", Self.root + "/docs/ctxui.schema.json", file])
        #expect(status == 0, "\(output)")
        #expect(output.contains("exchanges"))
    }

    @Test("every message type's json round-trips for sample values")
    func typesRoundTrip() throws {
        let item = try ContextItem(json: [
            "id": "756e2a99-4acc-4421-b5ad-4e048912ec4b", "providerId": "com.contexthost.note", "type": "note", "displayName": "Groceries",
            "content": ["title": "Groceries"], "createdAt": "2026-11-21T19:53:41Z",
        ])
        let chip = ContextChip.default(for: item, icon: "note.text")
        let form = try ContextForm(json: [
            "stepId": "note", "title": "New Note", "fallbackText": "New note",
            "fields": [["id": "title", "kind": "text", "label": "Title", "required": true]],
        ])
        let summary = ComposerSummary(composerId: "c1", maximumItems: 10, byteBudget: 4_194_304, bytesUsed: 12, itemCount: 1)
        let provider = try ProviderDescription(json: [
            "id": "com.contexthost.note", "title": "Note", "priority": 50, "status": "loaded", "available": true, "manifestPath": "m.yaml",
            "unavailableReason": ["code": "permission", "message": "no"], "sandbox": ["policy": "none"], "futureMember": [1, 2],
        ])
        #expect(provider.extra["futureMember"] == [1, 2])
        let samples: [any WireValue] = [
            InitializeRequest(
                clientInfo: .init(name: "app", version: "1", extra: ["build": 7]), protocolVersion: 1, protocolVersions: [1, 2], locale: "de-CH",
                grantedPermissions: ["network"], logLevel: .info,
                capabilities: ClientCapabilities(ui: UICapabilities(blocks: ["text", "facts"], chipAccessories: ["badge"]))),
            InitializeRequest(),
            InitializeResult(
                protocolVersion: 1, protocolVersions: [1], serverInfo: ServerInfo(name: "context-host", version: "0.1.0"),
                capabilities: HostCapabilities(methods: ["ping"], features: ["items"], ctxui: 1, maximumMessageBytes: 16, limits: ["maximumDepth": 64])),
            InitializedNotification(), ShutdownRequest(), ExitNotification(), PingRequest(),
            CancelRequestNotification(id: .number(7)), CancelRequestNotification(id: .string("a")), CancelRequestNotification(id: .null),
            ProvidersListRequest(), ProvidersListRequest(composerId: "c1"), ProvidersListResult(providers: [provider]),
            ProvidersRetryRequest(providerId: "p", progressToken: .string("t")), ProvidersRetryResult(provider: provider),
            ProvidersChangedNotification(added: ["a"], changed: [], removed: ["b"], providers: [provider]),
            ComposerOpenRequest(maximumItems: 3, byteBudget: 100), summary,
            ComposerListRequest(composerId: "c1"), ComposerListResult(composers: [summary]),
            ComposerListResult(composer: summary, items: [ComposerItem(item: item, chip: chip, encodedBytes: 12, providerAvailable: false, providerProblem: ProviderProblem(code: "x", message: "y"))]),
            ComposerRemoveRequest(composerId: "c1", itemId: "i"), ComposerRemoveResult(composer: summary, removed: item),
            ComposerSendRequest(composerId: "c1", text: "hi"),
            ComposerSendResult(composerId: "c1", message: OutgoingMessage(text: "hi", contextItems: [OutgoingContextItem(contextType: "note", displayName: "G", encodedContent: "e30=", metadata: ["a": "b"])], summary: "hi")),
            ComposerCloseRequest(composerId: "c1"), ComposerCloseResult(composerId: "c1", discardedItems: 2),
            CollectStartRequest(providerId: "p", composerId: "c1", progressToken: .number(3)),
            CollectStartResult(sessionId: "s", providerId: "p", form: form, composerId: "c1"),
            CollectQueryRequest(sessionId: "s", fieldId: "f", query: "q", values: ["f": "v"], progressToken: .number(1)),
            CollectQueryResult(options: [try FormOption(json: ["value": "v", "label": "V"])]),
            CollectSubmitRequest(sessionId: "s", values: ["title": "x"]),
            CollectSubmitResult(outcome: .item(item), composer: summary), CollectSubmitResult(outcome: .invalid(fieldErrors: ["title": "Required."], formError: "No.")),
            CollectSubmitResult(outcome: .step(form)),
            CollectCancelRequest(sessionId: "s"), CollectMakeRequest(providerId: "p"), CollectMakeResult(item: nil), CollectMakeResult(item: item, composer: summary),
            ItemsPreviewRequest(item: item, progressToken: .string("p")), ItemsDetailRequest(item: item), ItemsDescribeRequest(item: item),
            ItemDescription(text: "Note"), ItemsEncodeRequest(item: item, representation: "text"),
            ProviderInfoRequest(), ProviderAvailabilityRequest(), ProviderMakeContextRequest(), ProviderMakeContextResult(item: item),
            ProviderCollectStartRequest(sessionId: "s"), ProviderCollectQueryRequest(sessionId: "s", stepId: "1", fieldId: "f", query: "", values: [:]),
            ProviderCollectSubmitRequest(sessionId: "s", stepId: "1", values: ["a": 1]), ProviderCollectCancelRequest(sessionId: "s"),
            ItemPreviewRequest(item: item), ItemDetailRequest(item: item), ItemDescribeRequest(item: item), ItemEncodeRequest(item: item, representation: "json"),
            ItemPreviewManyRequest(items: [item, item]),
            ItemPreviewManyResult(previews: [.chip(chip), .error(code: -32602, message: "bad", data: ["x": 1]), .error(code: 1, message: "m", data: nil)]),
            ConformanceSamplesRequest(),
            ConformanceSamplesResult(samples: [ConformanceSampleFlow(name: "n", steps: [.init(stepId: "1", values: ["a": true]), .init(values: [:])], expectsItem: false)]),
            ProviderMetadata(id: "p", title: "P", version: "1", iconName: "i"), Availability.unavailable("why"),
        ]
        for sample in samples {
            let json = sample.json
            let decoded = try type(of: sample).init(json: json, path: "")
            #expect(decoded.json == json, "\(type(of: sample)) does not round-trip: \(json)")
        }
    }
}
