import CContextProvider
import Dispatch
import Testing

@testable import ContextProviderKit

/// A provider defined in the test target, exported through the real C table.
struct EchoProvider: ContextProvider {
    static let metadata = ProviderMetadata(id: "test.echo", title: "Echo", version: "2.0.0", iconName: "bubble")

    /// Previews start inline (Task.immediate); describe runs in a new task, so both paths are tested.
    static var immediateMethods: ProviderMethods { [.preview] }

    /// How many times `submit` ran, to prove validation short-circuits it.
    static let submits = Counter()

    let context: ProviderContext

    init(context: ProviderContext) throws {
        if let reason = context.settings.string("failOpen") {
            throw ProviderError(reason, hint: "Unset failOpen.")
        }
        self.context = context
    }

    func startCollection(sessionId: String) async throws -> ContextForm {
        ContextForm(
            stepId: "one", title: "Echo",
            fields: [.text(id: "title", label: "Title", required: true, maxLength: 5), .number(id: "n", label: "Count", min: 1)])
    }

    func submit(stepId: String, values: FormValues, sessionId: String) async throws -> SubmitOutcome {
        Self.submits.increment()
        return .item(context.makeItem(type: "echo", displayName: values.string("title") ?? "", content: values.object.jsonValue))
    }

    func preview(_ item: ContextItem) async throws -> ContextChip {
        if let delay = item.content["sleepMs"]?.intValue { try await Task.sleep(nanoseconds: UInt64(delay) * 1_000_000) }
        if let message = item.content["fail"]?.stringValue { throw ProviderError(code: 4001, message: message, data: ["why": "asked"]) }
        if item.content["plainError"] != nil { throw PlainError() }
        return ContextChip(icon: Self.metadata.iconName, title: item.displayName)
    }

    /// The display names of the items whose `describe` was cancelled while it slept.
    static let cancelledDescribes = Names()

    func describe(_ item: ContextItem) async throws -> String {
        if let delay = item.content["sleepMs"]?.intValue {
            do {
                try await Task.sleep(nanoseconds: UInt64(delay) * 1_000_000)
            } catch {
                Self.cancelledDescribes.append(item.displayName)
                throw error
            }
        }
        return "Echo \(item.displayName)"
    }

    struct PlainError: Error, CustomStringConvertible {
        var description: String { "plain failure" }
    }
}

/// A provider whose chips are made synchronously (`immediatePreview`), unless the item asks for
/// the async path (`content.async`). Each chip says whether it was made inside a task.
struct ImmediateEchoProvider: ContextProvider {
    static let metadata = ProviderMetadata(id: "test.immediate", title: "Immediate", version: "1.0.0", iconName: "bolt")
    static var immediateMethods: ProviderMethods { [.preview] }

    init(context: ProviderContext) throws {}

    /// The display names `immediatePreview` was asked for, once per call.
    static let asked = Names()

    func immediatePreview(_ item: ContextItem) throws -> ContextChip? {
        Self.asked.append(item.displayName)
        if item.content["async"] != nil { return nil }
        if let message = item.content["fail"]?.stringValue { throw ProviderError(code: 4002, message: message) }
        let inTask = withUnsafeCurrentTask { $0 != nil }
        return ContextChip(icon: "bolt", title: "now " + item.displayName, subtitle: inTask ? "in a task" : "no task")
    }

    func preview(_ item: ContextItem) async throws -> ContextChip {
        if let delay = item.content["sleepMs"]?.intValue { try await Task.sleep(nanoseconds: UInt64(delay) * 1_000_000) }
        return ContextChip(icon: "bolt", title: "later " + item.displayName)
    }

    func describe(_ item: ContextItem) async throws -> String {
        if let delay = item.content["sleepMs"]?.intValue { try await Task.sleep(nanoseconds: UInt64(delay) * 1_000_000) }
        // Work that does not look at cancellation: the task ends after its request was cancelled.
        if let delay = item.content["blockMs"]?.intValue {
            let end = ContinuousClock.now + .milliseconds(delay)
            while ContinuousClock.now < end { await Task.yield() }
        }
        return item.displayName
    }
}

/// A second provider in the same library gets its own table.
struct QuietProvider: ContextProvider {
    static let metadata = ProviderMetadata(id: "test.quiet", title: "Quiet", version: "1.0.0", iconName: "q")
    init(context: ProviderContext) throws {}
}

extension JSONObject {
    var jsonValue: JSONValue { .object(self) }
}

final class Names: @unchecked Sendable {
    private let lock = Lock()
    private var names: [String] = []
    func append(_ name: String) { lock.withLock { names.append(name) } }
    func count(of name: String) -> Int { lock.withLock { names.filter { $0 == name }.count } }
}

final class Counter: @unchecked Sendable {
    private let lock = Lock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

/// Collects replies delivered through the C callback.
final class ReplyBox: @unchecked Sendable {
    private let lock = Lock()
    private var replies: [JSONValue] = []

    static let callback: ctxp_reply_fn = { context, bytes, length in
        let box = Unmanaged<ReplyBox>.fromOpaque(context!).takeUnretainedValue()
        let value = (try? JSONValue(parsing: UnsafeRawBufferPointer(start: bytes, count: length))) ?? "unparseable"
        box.lock.withLock { box.replies.append(value) }
    }

    var context: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    var all: [JSONValue] { lock.withLock { replies } }

    /// Waits until at least `count` replies arrived (or 30 seconds passed: a clock, not a number
    /// of polls, so a slow machine's late replies still count).
    func wait(for count: Int) async throws -> [JSONValue] {
        let end = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < end {
            let current = all
            if current.count >= count { return current }
            try await Task.sleep(nanoseconds: 1_000_000)
        }
        return all
    }
}

/// Drives an exported table exactly as a host would, without dlopen.
struct Harness: @unchecked Sendable {
    let table: UnsafePointer<ctxp_provider_v1>
    let instance: UnsafeMutableRawPointer
    let box = ReplyBox()

    init<P: ContextProvider>(_ type: P.Type, settings: JSONValue = [:]) throws {
        let table = ContextProviderExport.table(for: type)
        self.table = table
        var instance: UnsafeMutableRawPointer?
        let initJSON: JSONValue = [
            "ctxpVersion": 1, "providerId": .string(P.metadata.id), "hostVersion": "0.1.0", "locale": "en-US",
            "settings": settings, "grantedPermissions": [],
        ]
        let errors = ReplyBox()
        let status = initJSON.jsonBytes.withUnsafeBufferPointer {
            table.pointee.open($0.baseAddress, $0.count, &instance, ReplyBox.callback, errors.context)
        }
        guard status == CTXP_OK, let instance else { throw ProviderError(errors.all.first?.jsonString ?? "open failed") }
        self.instance = instance
    }

    func send(_ message: JSONValue) {
        message.jsonBytes.withUnsafeBufferPointer {
            table.pointee.call(instance, $0.baseAddress, $0.count, ReplyBox.callback, box.context)
        }
    }

    func sendRaw(_ text: String) {
        Array(text.utf8).withUnsafeBufferPointer {
            table.pointee.call(instance, $0.baseAddress, $0.count, ReplyBox.callback, box.context)
        }
    }

    func request(_ id: Int, _ method: String, _ params: JSONValue = [:]) {
        send(["jsonrpc": "2.0", "id": .number(Double(id)), "method": .string(method), "params": params])
    }

    /// Sends one request and waits for its reply.
    func call(_ method: String, _ params: JSONValue = [:], id: Int = 1) async throws -> JSONValue {
        let before = box.all.count
        request(id, method, params)
        let replies = try await box.wait(for: before + 1)
        return replies[before]
    }

    func close() { table.pointee.close(instance) }
}

@Suite("Export through the C table")
struct ExportTests {
    static let item: JSONValue = [
        "id": "3f2504e0-4f89-41d3-9a0c-0305e82c3301", "providerId": "test.echo", "type": "echo",
        "displayName": "Hello", "content": [:],
    ]

    static func item(content: JSONValue) -> JSONValue {
        guard case .object(var object) = item else { return item }
        object["content"] = content
        return .object(object)
    }

    @Test func tableShape() {
        let table = ContextProviderExport.table(for: EchoProvider.self)
        #expect(table.pointee.abi_version == CTXP_ABI_VERSION)
        #expect(Int(table.pointee.struct_size) == MemoryLayout<ctxp_provider_v1>.size)
        #expect(ContextProviderExport.entry(for: EchoProvider.self) == UnsafeRawPointer(table))
        #expect(ContextProviderExport.entry(for: QuietProvider.self) != UnsafeRawPointer(table))
    }

    @Test func openFailuresReportMessageAndHint() throws {
        let table = ContextProviderExport.table(for: EchoProvider.self)
        let errors = ReplyBox()
        var instance: UnsafeMutableRawPointer?
        let bad = Array("{nope".utf8)
        let status = bad.withUnsafeBufferPointer { table.pointee.open($0.baseAddress, $0.count, &instance, ReplyBox.callback, errors.context) }
        #expect(status == CTXP_ERROR)
        #expect(errors.all.first?["message"]?.stringValue?.hasPrefix("Invalid init JSON") == true)

        do {
            _ = try Harness(EchoProvider.self, settings: ["failOpen": "The data folder is missing"])
            Issue.record("open should fail")
        } catch let error as ProviderError {
            #expect(error.message == #"{"message":"The data folder is missing","hint":"Unset failOpen."}"#)
        }

        let missing = Array(#"{"ctxpVersion":1}"#.utf8)
        let status2 = missing.withUnsafeBufferPointer { table.pointee.open($0.baseAddress, $0.count, &instance, ReplyBox.callback, errors.context) }
        #expect(status2 == CTXP_ERROR)
        #expect(errors.all.last?["message"] == "Invalid init JSON: init.providerId: missing; expected a string")
    }

    @Test func infoAndDefaults() async throws {
        let harness = try Harness(EchoProvider.self)
        defer { harness.close() }
        let info = try await harness.call("provider/info")
        #expect(info == ["jsonrpc": "2.0", "id": 1, "result": ["id": "test.echo", "title": "Echo", "version": "2.0.0", "iconName": "bubble", "ctxui": 1]])
        #expect(try await harness.call("provider/availability", id: 2)["result"] == ["available": true])
        #expect(try await harness.call("provider/makeContext", id: 3)["result"] == ["item": nil])
        #expect(try await harness.call("item/describe", ["item": Self.item], id: 4)["result"] == ["text": "Echo Hello"])
        let detail = try await harness.call("item/detail", ["item": Self.item], id: 5)["result"]
        #expect(detail?["title"] == "Hello")
        let encoded = try await harness.call("item/encode", ["item": Self.item], id: 6)["result"]
        #expect(encoded == ["representation": "json", "contentType": "application/json", "data": .string(Base64.encode(Array("{}".utf8))), "metadata": [:]])
        let unknown = try await harness.call("item/encode", ["item": Self.item, "representation": "pdf"], id: 7)["error"]
        #expect(unknown?["code"] == -32602)
        #expect(unknown?["message"] == #"params.representation: unknown representation "pdf"; expected one of json"#)
        #expect(try await harness.call("collect/query", ["sessionId": "s", "stepId": "one", "fieldId": "f", "query": "q"], id: 8)["result"] == ["options": []])
        #expect(try await harness.call("collect/cancel", ["sessionId": "s"], id: 9)["result"] == [:])
    }

    @Test func previewAnswersAChip() async throws {
        let harness = try Harness(EchoProvider.self)
        defer { harness.close() }
        let reply = try await harness.call("item/preview", ["item": Self.item], id: 42)
        #expect(reply["id"] == 42)
        #expect(try ContextChip(json: reply["result"] ?? nil) == ContextChip(icon: "bubble", title: "Hello"))
    }

    /// Hosts write `item/previewMany` as `{"jsonrpc":"2.0","id":N,"method":"item/previewMany",
    /// "params":…}`, which the SDK reads in the request's task instead of in `call`. Each message
    /// here is sent in that form and with `id` and `jsonrpc` swapped (read in `call`, as every
    /// other message is): both must get the same answer, whatever follows the common start.
    @Test(
        "item/previewMany read in its task is answered as when read in call",
        arguments: [
            #"{"items":[ITEM,ITEM]}}"#,
            #"{"items":[ITEM,{"id":"x"},ITEM],"other":[1]}}"#,
            #"{"items":[]}}"#,
            #"{"items":42}}"#,
            #"{"items":[\#(Array(repeating: "null", count: 257).joined(separator: ","))]}}"#,
            #"{}}"#,
            #"[]}"#,
            #"{"items":[ITEM]},"method":"item/preview"}"#,
            #"{"items":[ITEM]},"id":777}"#,
            #"{"items":[ITEM]},"jsonrpc":"1.0"}"#,
            #"{"items":[ITEM]}} x"#,
            #"{"items":[ITEM,}}"#,
            #"{"items":[{"id":"\ud800","providerId":"p","type":"t","displayName":"d"}]}}"#,
        ])
    func previewManyReadInTask(rest: String) async throws {
        let harness = try Harness(EchoProvider.self)
        defer { harness.close() }
        let rest = rest.replacing("ITEM", with: Self.item.jsonString)
        try await Self.expectSameAnswerBothWays(harness, params: rest)
    }

    /// Sends `item/previewMany` with `params` (the message's text from there on) as hosts write
    /// it, which the SDK reads in the request's task, then with `id` and `jsonrpc` swapped, which
    /// it reads in `call` as every other message: the two answers must be the same.
    static func expectSameAnswerBothWays(_ harness: Harness, params: String) async throws {
        var replies: [JSONValue] = []
        for (index, start) in [#"{"jsonrpc":"2.0","id":5,"#, #"{"id":5,"jsonrpc":"2.0","#].enumerated() {
            harness.sendRaw(start + #""method":"item/previewMany","params":"# + params)
            replies.append(try #require(try await harness.box.wait(for: index + 1).last))
        }
        #expect(replies[0] == replies[1])
        #expect(replies[0] != "unparseable")
    }

    /// The same for a provider whose chips are made as each item is read (`immediatePreview`):
    /// items whose chip is not immediate, failing ones and undecodable ones, anywhere in the batch,
    /// keep their places; a message that turns out not to be a plain batch after some chips were
    /// made (a repeated `items` or `params`, a later `method`) is answered as `call` answers it.
    @Test(
        "item/previewMany whose chips are made while it is read is answered as when read in call",
        arguments: [
            #"{"items":[NOW,LATER,NOW]}}"#,
            #"{"items":[NOW,FAIL,BAD,NOW,LATER,FAIL,NOW]}}"#,
            #"{"items":[LATER,NOW]}}"#,
            #"{"items":[NOW,NOW],"items":[FAIL,NOW]}}"#,
            #"{"items":[NOW]},"params":{"items":[NOW,NOW]}}"#,
            #"{"items":[NOW]},"params":{"other":1}}"#,
            #"{"items":[NOW,NOW]},"method":"item/previewMany"}"#,
            #"{"items":[NOW,NOW]},"method":"item/describe"}"#,
            #"{"items":[NOW,NOW]}"#,
            #"{"items":[\#(Array(repeating: "NOW", count: 257).joined(separator: ","))]}}"#,
        ])
    func previewManyMadeWhileRead(rest: String) async throws {
        let harness = try Harness(ImmediateEchoProvider.self)
        defer { harness.close() }
        let rest = rest.replacing("NOW", with: Self.item.jsonString)
            .replacing("LATER", with: Self.item(content: ["async": true]).jsonString)
            .replacing("FAIL", with: Self.item(content: ["fail": "no chip"]).jsonString)
            .replacing("BAD", with: #"{"id":"x","content":{}}"#)
        try await Self.expectSameAnswerBothWays(harness, params: rest)
    }

    @Test("item/previewMany keeps each item's place: chips made while reading, after it, and errors")
    func previewManyOrder() async throws {
        let harness = try Harness(ImmediateEchoProvider.self)
        defer { harness.close() }
        func named(_ name: String, _ content: JSONValue = [:]) -> JSONValue {
            guard case .object(var object) = Self.item(content: content) else { return nil }
            object["displayName"] = .string("order-" + name)
            return .object(object)
        }
        let items: [JSONValue] = [
            named("a"), named("b", ["fail": "no b"]), named("c"), named("d", ["async": true]), named("e"),
            ["id": "f"], named("g", ["fail": "no g"]), named("h"),
        ]
        // Written as hosts write it, so it is read (and its chips made) in its task.
        harness.sendRaw(#"{"jsonrpc":"2.0","id":3,"method":"item/previewMany","params":"# + (["items": .array(items)] as JSONValue).jsonString + "}")
        let reply = try #require(try await harness.box.wait(for: 1).first)
        let entries = reply["result"]?["previews"]?.arrayValue ?? []
        #expect(entries.map { $0["chip"]?["title"]?.stringValue ?? $0["error"]?["message"]?.stringValue ?? "?" } == [
            "now order-a", "no b", "now order-c", "later order-d", "now order-e",
            "params.items[5].providerId: missing; expected a string", "no g", "now order-h",
        ])
        // Asked once per item, as `item/preview` asks: `d`, which makes no chip at once, is not
        // asked again before its `preview`.
        for name in ["a", "b", "c", "d", "e", "g", "h"] {
            #expect(ImmediateEchoProvider.asked.count(of: "order-" + name) == 1, "order-\(name)")
        }
    }

    @Test func providerWithoutCollectorSaysSo() async throws {
        let harness = try Harness(QuietProvider.self)
        defer { harness.close() }
        let error = try await harness.call("collect/start", ["sessionId": "s"])["error"]
        #expect(error?["code"] == -32601)
        #expect(error?["message"] == "Quiet (test.quiet) has no collector; it makes items programmatically")
        #expect(try await harness.call("item/describe", ["item": Self.item], id: 3)["result"] == ["text": "Hello"])
        let chip = try await harness.call("item/preview", ["item": Self.item], id: 2)["result"]
        #expect(chip?["icon"] == "q")
        #expect(chip?["title"] == "Hello")
        #expect(chip?["fallbackText"] == "Hello")
    }

    @Test func protocolErrors() async throws {
        let harness = try Harness(EchoProvider.self)
        defer { harness.close() }
        let unknown = try await harness.call("item/frobnicate", id: 3)
        #expect(unknown == ["jsonrpc": "2.0", "id": 3, "error": ["code": -32601, "message": "Method not found: item/frobnicate"]])

        let badItem = Self.item(content: [:]).objectValue.map { object -> JSONValue in
            var object = object
            object["displayName"] = 12
            return .object(object)
        }!
        let bad = try await harness.call("item/preview", ["item": badItem], id: 4)
        #expect(bad["error"] == ["code": -32602, "message": "params.item.displayName: expected a string, got number"])

        let missing = try await harness.call("item/detail", [:], id: 5)
        #expect(missing["error"]?["message"] == "params.item: missing; expected an object")

        let noProvider = try await harness.call("item/preview", ["item": ["id": "x", "type": "t", "displayName": "d"]], id: 6)
        #expect(noProvider["error"]?["message"] == "params.item.providerId: missing; expected a string")

        let wrongParams = try await harness.call("collect/start", [1, 2], id: 7)
        #expect(wrongParams["error"]?["message"] == "params: expected an object, got array")

        var count = harness.box.all.count
        harness.sendRaw("{not json")
        var replies = try await harness.box.wait(for: count + 1)
        #expect(replies[count]["id"] == .null)
        #expect(replies[count]["error"]?["code"] == -32700)

        count = replies.count
        harness.sendRaw(#"{"jsonrpc":"2.0","id":"abc","method":"provider/info"}"#)
        replies = try await harness.box.wait(for: count + 1)
        #expect(replies[count] == ["jsonrpc": "2.0", "id": "abc", "error": ["code": -32600, "message": "Invalid Request: id must be an integer"]])

        count = replies.count
        harness.sendRaw(#"{"id":9,"method":"provider/info"}"#)
        replies = try await harness.box.wait(for: count + 1)
        #expect(replies[count]["error"]?["code"] == -32600)
    }

    @Test func providerErrorsKeepCodeAndMessage() async throws {
        let harness = try Harness(EchoProvider.self)
        defer { harness.close() }
        let failed = try await harness.call("item/preview", ["item": Self.item(content: ["fail": "Quote file unreadable"])])
        #expect(failed["error"] == ["code": 4001, "message": "Quote file unreadable", "data": ["why": "asked"]])
        let plain = try await harness.call("item/preview", ["item": Self.item(content: ["plainError": true])], id: 2)
        #expect(plain["error"] == ["code": -32603, "message": "plain failure"])
    }

    @Test(arguments: ["item/preview", "item/describe"])
    func cancellationAnswersExactlyOnce(method: String) async throws {
        let harness = try Harness(EchoProvider.self)
        defer { harness.close() }
        // Long enough that the cancel always comes first; the cancel ends the sleep early.
        harness.request(7, method, ["item": Self.item(content: ["sleepMs": 5000])])
        harness.send(["jsonrpc": "2.0", "method": "$/cancelRequest", "params": ["id": 7]])
        let replies = try await harness.box.wait(for: 1)
        #expect(replies.first == ["jsonrpc": "2.0", "id": 7, "error": ["code": -32800, "message": "Request cancelled"]])
        // A second cancel and the task's own end produce nothing more.
        harness.send(["jsonrpc": "2.0", "method": "$/cancelRequest", "params": ["id": 7]])
        try await Task.sleep(nanoseconds: 300_000_000)
        #expect(harness.box.all.count == 1)

        // Cancelling a request that already finished produces nothing.
        _ = try await harness.call("provider/availability", id: 8)
        harness.send(["jsonrpc": "2.0", "method": "$/cancelRequest", "params": ["id": 8]])
        try await Task.sleep(nanoseconds: 20_000_000)
        #expect(harness.box.all.count == 2)
    }

    @Test(arguments: ["item/preview", "item/describe"])
    func racingCancellationsStillAnswerOnce(method: String) async throws {
        let harness = try Harness(EchoProvider.self)
        defer { harness.close() }
        let count = 300
        for id in 0..<count {
            harness.request(id, method, ["item": Self.item(content: ["sleepMs": .number(Double(id % 3))])])
            if id % 2 == 0 { harness.send(["jsonrpc": "2.0", "method": "$/cancelRequest", "params": ["id": .number(Double(id))]]) }
        }
        let replies = try await harness.box.wait(for: count)
        try await Task.sleep(nanoseconds: 50_000_000)
        let ids = harness.box.all.compactMap { $0["id"]?.intValue }
        #expect(replies.count >= count)
        #expect(ids.count == count)
        #expect(Set(ids).count == count)
        for reply in harness.box.all where reply["id"]?.intValue.map({ $0 % 2 == 1 }) == true {
            #expect(reply["result"] != nil)
        }
    }

    @Test func concurrentCallersGetEveryAnswer() async throws {
        let harness = try Harness(EchoProvider.self)
        defer { harness.close() }
        let perTask = 250
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<4 {
                group.addTask {
                    for index in 0..<perTask { harness.request(worker * perTask + index, "item/preview", ["item": Self.item]) }
                }
            }
        }
        let replies = try await harness.box.wait(for: 4 * perTask)
        #expect(Set(replies.compactMap { $0["id"]?.intValue }).count == 4 * perTask)
        #expect(replies.allSatisfy { $0["result"]?["title"] == "Hello" })
    }

    /// Sends `next` from inside the reply callback of the first answer it gets.
    final class ChainBox: @unchecked Sendable {
        let table: UnsafePointer<ctxp_provider_v1>
        let instance: UnsafeMutableRawPointer
        let next: [UInt8]
        let replies = ReplyBox()
        private let lock = Lock()
        private var sent = false

        init(_ harness: Harness, next: JSONValue) {
            table = harness.table
            instance = harness.instance
            self.next = next.jsonBytes
        }

        static let callback: ctxp_reply_fn = { context, bytes, length in
            let box = Unmanaged<ChainBox>.fromOpaque(context!).takeUnretainedValue()
            ReplyBox.callback(box.replies.context, bytes, length)
            let first = box.lock.withLock { () -> Bool in
                defer { box.sent = true }
                return !box.sent
            }
            if first {
                box.next.withUnsafeBufferPointer {
                    box.table.pointee.call(box.instance, $0.baseAddress, $0.count, ReplyBox.callback, box.replies.context)
                }
            }
        }

        func send(_ message: JSONValue) {
            message.jsonBytes.withUnsafeBufferPointer {
                table.pointee.call(instance, $0.baseAddress, $0.count, Self.callback, Unmanaged.passUnretained(self).toOpaque())
            }
        }
    }

    @Test("an id reused from inside the answer of an immediate request: the new request's task is the one a cancel stops")
    func idReusedInsideAnswer() async throws {
        let harness = try Harness(EchoProvider.self)
        defer { harness.close() }
        // The immediate preview answers inside `call`; its answer's callback sends a slow describe
        // with the same id before `call` returns.
        guard case .object(var slow) = Self.item(content: ["sleepMs": 5_000]) else { return }
        slow["displayName"] = "reused id"
        let chain = ChainBox(harness, next: [
            "jsonrpc": "2.0", "id": 5, "method": "item/describe", "params": ["item": .object(slow)],
        ])
        chain.send(["jsonrpc": "2.0", "id": 5, "method": "item/preview", "params": ["item": Self.item]])
        let first = try await chain.replies.wait(for: 1)
        #expect(first.first?["result"]?["title"] == "Hello")
        harness.send(["jsonrpc": "2.0", "method": "$/cancelRequest", "params": ["id": 5]])
        let replies = try await chain.replies.wait(for: 2)
        #expect(replies.count == 2 && replies[1]["error"]?["code"] == -32800)
        // The describe's task was cancelled (its sleep ended early), not left running.
        for _ in 0..<2000 where EchoProvider.cancelledDescribes.count(of: "reused id") == 0 { try await Task.sleep(nanoseconds: 1_000_000) }
        #expect(EchoProvider.cancelledDescribes.count(of: "reused id") == 1)
    }

    @Test func duplicateIdsInFlightAreRejected() async throws {
        let harness = try Harness(EchoProvider.self)
        defer { harness.close() }
        harness.request(5, "item/preview", ["item": Self.item(content: ["sleepMs": 1000])])
        harness.request(5, "item/preview", ["item": Self.item])
        let replies = try await harness.box.wait(for: 2)
        #expect(replies[0]["error"]?["message"] == "Invalid Request: request id 5 is already in flight")
        #expect(replies[1]["result"] != nil)
    }

    @Test func submitValidatesBeforeCallingTheProvider() async throws {
        let harness = try Harness(EchoProvider.self)
        defer { harness.close() }
        let start = try await harness.call("collect/start", ["sessionId": "s1"])["result"]
        #expect(start?["stepId"] == "one")
        let before = EchoProvider.submits.value
        let invalid = try await harness.call("collect/submit", ["sessionId": "s1", "stepId": "one", "values": ["title": "far too long", "n": 0]], id: 2)
        #expect(invalid["result"] == ["outcome": "invalid", "fieldErrors": ["n": "Count must be at least 1.", "title": "Title must be at most 5 characters."]])
        let empty = try await harness.call("collect/submit", ["sessionId": "s1", "stepId": "one", "values": [:]], id: 3)
        #expect(empty["result"]?["fieldErrors"] == ["title": "Title is required."])
        #expect(EchoProvider.submits.value == before)

        let ok = try await harness.call("collect/submit", ["sessionId": "s1", "stepId": "one", "values": ["title": "Hi"]], id: 4)
        #expect(ok["result"]?["outcome"] == "item")
        let item = try ContextItem(json: ok["result"]?["item"] ?? nil)
        #expect(item.providerId == "test.echo" && item.displayName == "Hi" && item.type == "echo")
        #expect(EchoProvider.submits.value == before + 1)

        let missingValues = try await harness.call("collect/submit", ["sessionId": "s1", "stepId": "one"], id: 5)
        #expect(missingValues["error"]?["message"] == "params.values: missing; expected an object")
    }

    @Test("a chip from immediatePreview is answered before call returns, made outside any task")
    func immediatePreviewAnswersAtOnce() throws {
        let harness = try Harness(ImmediateEchoProvider.self)
        defer { harness.close() }
        // Called from a thread that runs no task, as a host's call thread is.
        let done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            harness.request(7, "item/preview", ["item": Self.item])
            done.signal()
        }
        done.wait()
        let replies = harness.box.all  // no waiting: the answer came inside `call`
        #expect(replies.count == 1)
        #expect(replies.first?["id"] == 7)
        #expect(replies.first?["result"]?["title"] == "now Hello")
        #expect(replies.first?["result"]?["subtitle"] == "no task")
        // A thrown error is answered the same way, with its code.
        harness.request(8, "item/preview", ["item": Self.item(content: ["fail": "no chip"])])
        #expect(harness.box.all.last?["error"] == ["code": 4002, "message": "no chip"])
    }

    @Test("when immediatePreview makes no chip, preview(_:) runs in a task; previewMany uses both")
    func immediatePreviewFallsBack() async throws {
        let harness = try Harness(ImmediateEchoProvider.self)
        defer { harness.close() }
        let later = try await harness.call("item/preview", ["item": Self.item(content: ["async": true])], id: 1)
        #expect(later["result"]?["title"] == "later Hello")
        let many = try await harness.call(
            "item/previewMany", ["items": [Self.item, Self.item(content: ["async": true]), Self.item(content: ["fail": "bad"])]], id: 2)
        let entries = many["result"]?["previews"]?.arrayValue ?? []
        #expect(entries.count == 3)
        #expect(entries.first?["chip"]?["title"] == "now Hello")
        #expect(entries.dropFirst().first?["chip"]?["title"] == "later Hello")
        #expect(entries.last?["error"]?["code"] == 4002)
    }

    @Test("an immediate preview whose id is in flight is refused, and accepted once that request is answered")
    func immediatePreviewIdsAndClose() async throws {
        let harness = try Harness(ImmediateEchoProvider.self)
        harness.request(5, "item/describe", ["item": Self.item(content: ["sleepMs": 200])])
        harness.request(5, "item/preview", ["item": Self.item])
        let replies = try await harness.box.wait(for: 2)
        #expect(replies.first?["error"]?["message"] == "Invalid Request: request id 5 is already in flight")
        #expect(replies.dropFirst().first?["result"] == ["text": "Hello"])
        // Answered, the id may be used again.
        #expect(try await harness.call("item/preview", ["item": Self.item], id: 5)["result"]?["title"] == "now Hello")
        harness.close()
    }

    @Test("a cancelled request whose task ends later does not answer the id's next request")
    func cancelledTaskDoesNotAnswerReusedId() async throws {
        let harness = try Harness(ImmediateEchoProvider.self)
        defer { harness.close() }
        harness.request(9, "item/describe", ["item": Self.item(content: ["blockMs": 150])])
        harness.send(["jsonrpc": "2.0", "method": "$/cancelRequest", "params": ["id": 9]])
        #expect(try await harness.box.wait(for: 1).first?["error"]?["code"] == -32800)
        // Id 9 again, answered after the cancelled describe has ended (immediately, and later).
        harness.request(9, "item/preview", ["item": Self.item(content: ["async": true, "sleepMs": 400])])
        let replies = try await harness.box.wait(for: 2)
        #expect(replies.count == 2)
        #expect(replies.last?["result"]?["title"] == "later Hello", "\(replies)")
        try await Task.sleep(nanoseconds: 100_000_000)
        #expect(harness.box.all.count == 2)
    }

    @Test func noReplyAfterClose() async throws {
        let harness = try Harness(EchoProvider.self)
        harness.request(1, "item/preview", ["item": Self.item(content: ["sleepMs": 50])])
        harness.close()
        try await Task.sleep(nanoseconds: 150_000_000)
        #expect(harness.box.all.isEmpty)
    }

    @Test func previewThroughput() async throws {
        let harness = try Harness(EchoProvider.self)
        defer { harness.close() }
        let count = 20_000
        let suffix = #","method":"item/preview","params":{"item":"# + Self.item.jsonString + "}}"
        let messages = (0..<count).map { #"{"jsonrpc":"2.0","id":"# + String($0) + suffix }
        let start = ContinuousClock.now
        for message in messages { harness.sendRaw(message) }
        let replies = try await harness.box.wait(for: count)
        let elapsed = ContinuousClock.now - start
        #expect(replies.count == count)
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("item/preview through the C table: \(Int(Double(count) / seconds)) per second (debug build)")
    }
}

