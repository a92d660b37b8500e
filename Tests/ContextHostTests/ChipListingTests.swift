import ContextProviderKit
import Logging
import Synchronization
import Testing

@testable import ContextHost

/// `composer/list` asks each provider for its items' chips in `item/previewMany` calls, and falls
/// back to `item/preview` per item for providers that do not answer it. These tests drive
/// `ChipListing` against a scripted connection that records every call.
@Suite("Chip listing (item/previewMany)")
struct ChipListingTests {
    @Test("a provider's items go in one item/previewMany; each answer lands in its own slot")
    func batched() async throws {
        let notes = ScriptedConnection { call in
            guard call.method == "item/previewMany" else { return .error(-32603, "unexpected \(call.method)") }
            let items = try #require(call.params["items"]?.arrayValue)
            // The second item's preview fails; the others get a chip titled with the item's name.
            let previews: [String] = items.enumerated().map { index, item in
                index == 1
                    ? #"{"error":{"code":-32000,"message":"no such note","data":{"why":"deleted"}}}"#
                    : #"{"chip":\#(chip(title: item["displayName"]?.stringValue ?? "?"))}"#
            }
            return .result(#"{"previews":[\#(previews.joined(separator: ","))]}"#)
        }
        let calendar = ScriptedConnection { call in
            call.method == "item/preview" ? .result(chip(title: "Standup")) : .error(-32601, "Method not found")
        }
        let items = [
            item("n1", provider: "com.test.note"), item("c1", provider: "com.test.calendar"),
            item("n2", provider: "com.test.note"), item("n3", provider: "com.test.note"),
        ]
        let results = await list(items, connections: ["com.test.note": notes, "com.test.calendar": calendar])

        #expect(notes.calls.map(\.method) == ["item/previewMany"])
        #expect(notes.calls.first?.params["items"]?.arrayValue?.compactMap { $0["id"]?.stringValue } == ["n1", "n2", "n3"])
        #expect(calendar.calls.map(\.method) == ["item/preview"])
        #expect(try title(results[0]) == "Note n1")
        #expect(try title(results[1]) == "Standup")
        #expect(try title(results[3]) == "Note n3")
        let error = try #require(failure(results[2]))
        #expect(error.code == .providerError)
        #expect(error.message.contains("no such note"))
        #expect(error.data?["providerCode"] == -32000)
        #expect(error.data?["providerData"]?["why"] == "deleted")
    }

    @Test("-32601: item/preview per item, now and for later listings")
    func methodNotFound() async throws {
        let old = ScriptedConnection { call in
            call.method == "item/preview"
                ? .result(chip(title: call.params["item"]?["displayName"]?.stringValue ?? "?"))
                : .error(-32601, "Method not found: \(call.method)")
        }
        let items = (1...3).map { item("n\($0)", provider: "com.test.old") }
        let first = await list(items, connections: ["com.test.old": old])
        #expect(old.calls.map(\.method) == ["item/previewMany", "item/preview", "item/preview", "item/preview"])
        #expect(try first.map(title) == ["Note n1", "Note n2", "Note n3"])

        let second = await list(items, connections: ["com.test.old": old])
        #expect(old.calls.dropFirst(4).map(\.method) == ["item/preview", "item/preview", "item/preview"])
        #expect(try second.map(title) == ["Note n1", "Note n2", "Note n3"])
    }

    @Test(
        "an answer of the wrong shape falls back to item/preview per item",
        arguments: [
            #"{"chip":{"ctxui":1}}"#,  // a chip, as a provider that answers every item/* method with one would
            #"{"previews":[]}"#,  // wrong count
            #"{"previews":{}}"#,
        ])
    func wrongShape(answer: String) async throws {
        let odd = ScriptedConnection { call in
            call.method == "item/previewMany"
                ? .result(answer) : .result(chip(title: call.params["item"]?["displayName"]?.stringValue ?? "?"))
        }
        let items = (1...2).map { item("n\($0)", provider: "com.test.odd") }
        let results = await list(items, connections: ["com.test.odd": odd])
        #expect(odd.calls.map(\.method) == ["item/previewMany", "item/preview", "item/preview"])
        #expect(try results.map(title) == ["Note n1", "Note n2"])
    }

    @Test("an invalid chip in a batch costs only its own item")
    func invalidChip() async throws {
        let connection = ScriptedConnection { _ in
            .result(#"{"previews":[{"chip":\#(chip(title: "fine"))},{"chip":{"ctxui":1,"icon":"x"}}]}"#)
        }
        let items = (1...2).map { item("n\($0)", provider: "com.test.note") }
        let results = await list(items, connections: ["com.test.note": connection])
        #expect(try title(results[0]) == "fine")
        let error = try #require(failure(results[1]))
        #expect(error.code == .providerBadReply)
        #expect(error.message.contains("chip.title"))
    }

    @Test("a batch that is never answered times out every item and tells the provider")
    func timeout() async throws {
        let silent = ScriptedConnection { _ in .never }
        let items = (1...3).map { item("n\($0)", provider: "com.test.note") }
        let results = await list(items, connections: ["com.test.note": silent], previewTimeout: "100ms")
        try expectTimedOut(results, method: "item/previewMany")
        // The provider is told to stop (off the timer thread, so allow it a moment).
        let end = ContinuousClock.now + .seconds(10)
        while silent.timedOutIDs.isEmpty, ContinuousClock.now < end { try await Task.sleep(for: .milliseconds(5)) }
        #expect(silent.timedOutIDs == silent.calls.map(\.id))
    }

    @Test("a bad error entry costs only its own item, and the provider keeps item/previewMany")
    func invalidErrorEntry() async throws {
        let connection = ScriptedConnection { _ in
            .result(#"{"previews":[{"chip":\#(chip(title: "fine"))},{"error":{"message":"no code"}}]}"#)
        }
        let items = (1...2).map { item("n\($0)", provider: "com.test.note") }
        let results = await list(items, connections: ["com.test.note": connection])
        #expect(try title(results[0]) == "fine")
        #expect(try #require(failure(results[1])).code == .providerBadReply)
        _ = await list(items, connections: ["com.test.note": connection])
        #expect(connection.calls.map(\.method) == ["item/previewMany", "item/previewMany"])
    }

    @Test("a batch that times out: every item says so, and later listings go item by item")
    func timeoutThenPerItem() async throws {
        let connection = ScriptedConnection { call in
            call.method == "item/previewMany" ? .never : .result(chip(title: call.params["item"]?["displayName"]?.stringValue ?? "?"))
        }
        let items = (1...2).map { item("n\($0)", provider: "com.test.note") }
        let first = await list(items, connections: ["com.test.note": connection], previewTimeout: "100ms")
        #expect(first.allSatisfy { failure($0)?.code == .providerTimedOut })
        let second = await list(items, connections: ["com.test.note": connection], previewTimeout: "100ms")
        #expect(try second.map(title) == ["Note n1", "Note n2"])
        #expect(connection.calls.map(\.method) == ["item/previewMany", "item/preview", "item/preview"])
    }

    @Test("after a fallback, a hanging item/preview times out as item/preview and is told to stop")
    func fallbackThenHang() async throws {
        let connection = ScriptedConnection { call in
            call.method == "item/previewMany" ? .error(-32601, "Method not found") : .never
        }
        let items = (1...2).map { item("n\($0)", provider: "com.test.note") }
        let results = await list(items, connections: ["com.test.note": connection], previewTimeout: "100ms")
        try expectTimedOut(results, method: "item/preview")
        let previewIDs = connection.calls.filter { $0.method == "item/preview" }.map(\.id)
        #expect(previewIDs.count == 2)
        let end = ContinuousClock.now + .seconds(10)
        while connection.timedOutIDs.count < 2, ContinuousClock.now < end { try await Task.sleep(for: .milliseconds(5)) }
        #expect(Set(connection.timedOutIDs) == Set(previewIDs))
    }

    @Test("more items than one call takes go in several calls, in order")
    func chunks() async throws {
        let connection = ScriptedConnection { call in
            let items = call.params["items"]?.arrayValue ?? []
            let previews = items.map { #"{"chip":\#(chip(title: $0["displayName"]?.stringValue ?? "?"))}"# }
            return .result(#"{"previews":[\#(previews.joined(separator: ","))]}"#)
        }
        let count = ChipListing.batchSize * ChipListing.cores + 5
        let items = (0..<count).map { item("n\($0)", provider: "com.test.note") }
        let results = await list(items, connections: ["com.test.note": connection])
        let sizes = connection.calls.map { $0.params["items"]?.arrayValue?.count ?? 0 }
        #expect(sizes.reduce(0, +) == count)
        #expect(sizes.allSatisfy { $0 <= ChipListing.batchSize })
        #expect(sizes.count == ChipListing.calls(for: count).count)
        #expect(try results.map(title) == (0..<count).map { "Note n\($0)" })
    }

    @Test(
        "a provider's items are split into two calls per core, at least 16 items and at most 128 each",
        arguments: [
            (100, 2, [0..<25, 25..<50, 50..<75, 75..<100]), (101, 2, [0..<26, 26..<52, 52..<78, 78..<101]),
            (20, 2, [0..<16, 16..<20]), (10, 2, [0..<10]), (100, 1, [0..<50, 50..<100]),
            (300, 1, [0..<128, 128..<256, 256..<300]),
            (100, 8, [0..<16, 16..<32, 32..<48, 48..<64, 64..<80, 80..<96, 96..<100]),
        ])
    func split(count: Int, cores: Int, expected: [Range<Int>]) {
        #expect(ChipListing.calls(for: count, cores: cores) == expected)
    }

    @Test("an unknown provider's items fail with its error and cost no call")
    func unknownProvider() async throws {
        let results = await list([item("n1", provider: "com.test.gone")], connections: [:])
        #expect(try #require(failure(results[0])).code == .providerNotFound)
    }

    @Test("an item/previewMany answer that is not JSON fails each item as a bad reply (no fallback)")
    func unreadableAnswer() async throws {
        let notes = ScriptedConnection { call in
            call.method == "item/previewMany"
                ? .response(#"{"jsonrpc":"2.0","id":ID,"result":{"previews":[{"chip":\#(chip(title: "a"))},{"chip":{"title":x}}]}}"#)
                : .result(chip(title: "single"))
        }
        let items = [item("n1", provider: "com.test.note"), item("n2", provider: "com.test.note")]
        let results = await list(items, connections: ["com.test.note": notes])
        for result in results {
            let error = try #require(failure(result))
            #expect(error.code == .providerBadReply)
            #expect(error.message.contains("not valid JSON"))
        }
        // A broken answer is not a provider without the method: the next listing asks again.
        _ = await list(items, connections: ["com.test.note": notes])
        #expect(notes.calls.map(\.method) == ["item/previewMany", "item/previewMany"])
    }

    @Test("an item/previewMany answer with a second id is refused as a reply to another request")
    func secondID() async throws {
        let notes = ScriptedConnection { _ in
            .response(#"{"jsonrpc":"2.0","id":ID,"result":{"previews":[{"chip":\#(chip(title: "a"))},{"chip":\#(chip(title: "b"))}]},"id":999}"#)
        }
        let items = [item("n1", provider: "com.test.note"), item("n2", provider: "com.test.note")]
        for result in await list(items, connections: ["com.test.note": notes]) {
            let error = try #require(failure(result))
            #expect(error.code == .providerBadReply)
            #expect(error.message.contains("carries id 999"))
        }
    }

    @Test("a chip nested as deep as JSON allows is accepted, one level deeper is a bad reply", arguments: [251, 252])
    func nesting(levels: Int) async throws {
        let deep = String(repeating: "[", count: levels) + String(repeating: "]", count: levels)
        let odd = #"{"ctxui":1,"icon":"i","title":"t","fallbackText":"f","x":\#(deep)}"#
        let text = #"{"jsonrpc":"2.0","id":ID,"result":{"previews":[{"chip":\#(odd)},{"chip":\#(chip(title: "b"))}]}}"#
        let notes = ScriptedConnection { _ in .response(text) }
        let results = await list(
            [item("n1", provider: "com.test.note"), item("n2", provider: "com.test.note")], connections: ["com.test.note": notes])
        // Exactly what parsing the whole message accepts.
        let parses = (try? JSONReader.parse(Array(text.replacing("ID", with: "1").utf8))) != nil
        #expect(parses == (levels == 251))
        #expect(((try? results[0].get()) != nil) == parses)
        #expect(((try? results[1].get()) != nil) == parses)
    }

    // MARK: PreviewManyReply

    @Test(
        "item/previewMany results that are read",
        arguments: [
            (#"{"previews":[{"chip":{"a":1}},{"error":{"code":-32000,"message":"m"}}]}"#, "chip:{\"a\":1} | error:-32000"),
            (" {\n \"other\": [1, {\"x\": null}], \"previews\" : [ { \"chip\" : [ ] } , {\"error\":{\"message\":\"m\",\"code\":7,\"data\":{}}} ] } ", "chip:[ ] | error:7"),
            (#"{"previews":[{"chip":"\"}{"}]}"#, #"chip:"\"}{""#),
            (#"{"previews":[{"error":{"code":"x","message":"m"}},{"error":{"code":1}}]}"#, "invalid | invalid"),
            (#"{"previews":[{"chip":\#(chip(title: "T"))},{"chip": \#(chip(title: "U"))}]}"#, "scanned | scanned"),
            (#"{"previews":[{"chip":{"ctxui":1,"icon":"i","title":"T","tone":"blue","fallbackText":"f"}}]}"#, "chip:{\"ctxui\":1,\"icon\":\"i\",\"title\":\"T\",\"tone\":\"blue\",\"fallbackText\":\"f\"}"),
        ])
    func parses(json: String, expected: String) throws {
        let bytes = Array(json.utf8)
        let previews = try #require(bytes.withUnsafeBytes { buffer in
            PreviewManyReply.parse(buffer, count: expected.split(separator: " | ").count).map { previews in
                previews.map { preview in
                    switch preview {
                    // A chip `ChipScan` accepts is marked so (not checked again); others are
                    // only located.
                    case .chip(let range, let scanned):
                        scanned && String(decoding: bytes[range], as: UTF8.self).hasSuffix("}")
                            ? "scanned" : "chip:" + String(decoding: bytes[range], as: UTF8.self)
                    case .error(let error): "error:\(error.code.rawValue)"
                    case .invalidError: "invalid"
                    }
                }
            }
        })
        #expect(previews.joined(separator: " | ") == expected)
    }

    @Test(
        "item/previewMany results that are refused",
        arguments: [
            #"{"previews":[{"chip":{}}]}"#,  // count 2 expected
            #"{"previews":[{"chip":{}},{"chip":{},"error":{"code":1,"message":"m"}}]}"#,
            #"{"previews":[{"chip":{}},{}]}"#,
            #"{"previews":[{"chip":{}},{"chip":{}}]} trailing"#,
            #"{"previews":[{"chip":{}},{"chip":{}},]}"#,
            #"{"previews":[{"chip":{}},{"chip":{}}]"#,
            #"{"previews":[{"chip":{}},{"chip":{"a":}}]}"#,
            #"[{"chip":{}},{"chip":{}}]"#,
            #"{previews:[]}"#,
            "",
        ])
    func refuses(json: String) {
        let previews = Array(json.utf8).withUnsafeBytes { PreviewManyReply.parse($0, count: 2) }
        #expect(previews == nil)
    }

    // MARK: Helpers

    private func list(
        _ items: [AttachedItem], connections: [String: ScriptedConnection], previewTimeout: String = "2s"
    ) async -> [ChipOutcome] {
        var providers: [String: Host.LiveProvider] = [:]
        for (id, connection) in connections {
            providers[id] = Host.LiveProvider(manifest: manifest(id: id, previewTimeout: previewTimeout), connection: connection)
        }
        return await ChipListing.chips(
            for: items, limits: OutputLimits(), messageLimit: 16 << 20, logger: Logger(label: "test")
        ) { id throws(RPCError) in
            guard let live = providers[id] else { throw RPCError(.providerNotFound, "No provider has id '\(id)'.") }
            return live
        }
    }

    private func manifest(id: String, previewTimeout: String) -> Manifest {
        let yaml = """
            manifestVersion: 1
            id: \(id)
            title: Test
            iconName: wrench
            version: 0.0.1
            library: libTest.so
            timeouts: { collect: 30s, preview: \(previewTimeout), detail: 2s, encode: 1s }
            """
        return try! Manifest.parse(yaml, file: "/tmp/\(id).yaml")
    }

    private func item(_ id: String, provider: String) -> AttachedItem {
        AttachedItem(
            item: ["id": .string(id), "providerId": .string(provider), "type": "note", "displayName": .string("Note \(id)"), "content": [:]],
            encoding: ["representation": "json", "contentType": "application/json", "data": ""])
    }

    private func title(_ result: ChipOutcome) throws -> String? {
        try JSONReader.parse(Array(result.get()))["title"]?.stringValue
    }

    /// Every result is a `-32015` whose data names `method`.
    private func expectTimedOut(_ results: [ChipOutcome], method: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        for result in results {
            let error = try #require(failure(result), sourceLocation: sourceLocation)
            #expect(error.code == .providerTimedOut, sourceLocation: sourceLocation)
            #expect(error.data?["method"] == .string(method), sourceLocation: sourceLocation)
        }
    }

    private func failure(_ result: ChipOutcome) -> RPCError? {
        if case .failure(let error) = result { return error }
        return nil
    }
}

private func chip(title: String) -> String {
    #"{"ctxui":1,"icon":"note.text","title":"\#(title)","tone":"neutral","accessibilityLabel":"\#(title)","fallbackText":"\#(title)"}"#
}

/// A provider connection that answers from a script and records every request.
private final class ScriptedConnection: ProviderConnection, @unchecked Sendable {
    struct Call {
        var id: Int64
        var method: String
        var params: JSONValue
    }

    enum Answer {
        /// `{"jsonrpc":"2.0","id":ID,"result":…}` with this result text.
        case result(String)
        /// This whole response text (`ID` is replaced by the request's id).
        case response(String)
        case error(Int, String)
        case never
    }

    private let script: @Sendable (Call) throws -> Answer
    private let state = Mutex<(calls: [Call], timedOut: [Int64], nextID: Int64)>(([], [], 1))

    init(_ script: @escaping @Sendable (Call) throws -> Answer) {
        self.script = script
    }

    var calls: [Call] { state.withLock { $0.calls } }
    var timedOutIDs: [Int64] { state.withLock { $0.timedOut } }

    func send(method: String, params: ParamsWriter, completion: @escaping @Sendable (ProviderResponse) -> Void) -> Int64 {
        var bytes: [UInt8] = []
        params(&bytes)
        let call = Call(
            id: state.withLock { state in
                defer { state.nextID += 1 }
                return state.nextID
            }, method: method, params: (try? JSONReader.parse(bytes)) ?? .null)
        state.withLock { $0.calls.append(call) }
        let answer = (try? script(call)) ?? .error(-32603, "script failed")
        switch answer {
        case .result(let json):
            deliver(#"{"jsonrpc":"2.0","id":\#(call.id),"result":\#(json)}"#, for: call, to: completion)
        case .response(let text):
            deliver(text.replacingOccurrences(of: "ID", with: String(call.id)), for: call, to: completion)
        case .error(let code, let message):
            let empty: [UInt8] = []
            empty.withUnsafeBytes { buffer in
                completion(ProviderResponse(bytes: buffer, result: nil, error: RPCError(ErrorCode(rawValue: code), message)))
            }
        case .never:
            break
        }
        return call.id
    }

    /// Read as an in-process provider's answer is read.
    private func deliver(_ text: String, for call: Call, to completion: @escaping @Sendable (ProviderResponse) -> Void) {
        Array(text.utf8).withUnsafeBytes { buffer in
            ReplyRouter.deliver(buffer, to: completion, expectedID: call.id, expected: ReplyRouter.Expected(method: call.method))
        }
    }

    func cancel(_ id: Int64) {}

    func timedOut(_ id: Int64) { state.withLock { $0.timedOut.append(id) } }
}
