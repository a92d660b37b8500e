import ContextHostTestSupport
import ContextProtocol
import ContextProviderKit
import Testing

@testable import ContextHost

/// `RPCServer.prepare`: an `items/*` request's params are checked from where they were written
/// (`checkWritten`), and that must find what scanning the same bytes finds (`checkInput`, the
/// path every other typed request and every wire message takes): the same location, or the same
/// error.
@Suite("Typed item params checked from where they were written")
struct TypedParamsTests {
    struct Limits: Sendable, CustomStringConvertible {
        var message = 1 << 20
        var item = 4 << 20
        var string = 1 << 20
        var elements = 10_000
        var description: String { "message \(message), item \(item), string \(string), elements \(elements)" }
    }

    static let items: [ContextItem] = {
        let nested = (0..<15).reduce(JSONValue.string("deep")) { inner, _ in .array([inner]) }
        let tooNested = (0..<300).reduce(JSONValue.null) { inner, _ in .object(["a": inner]) }
        return [
            ContextItem(id: "n1", providerId: "com.example.note", type: "note", displayName: "Groceries", content: ["title": "Groceries", "body": "eggs\nmilk \"2%\"\t\u{1}"]),
            ContextItem(id: "é", providerId: "com.exa\"mple.\\quote", type: "t", displayName: "Ünïcode 🎉", content: .null, createdAt: "2026-11-28T19:00:00Z"),
            ContextItem(id: "x", providerId: "", type: "t", displayName: "", content: [1.5, .number(.nan), true, ["k": [.null, 1e300]]]),
            ContextItem(id: "big", providerId: "p", type: "t", displayName: "d", content: .string(String(repeating: "a", count: 5000))),
            ContextItem(id: "nested", providerId: "p", type: "t", displayName: "d", content: nested),
            ContextItem(id: "too deep", providerId: "p", type: "t", displayName: "d", content: tooNested),
        ]
    }()

    static let tokens: [ProgressToken?] = [nil, .string("tok"), .string(String(repeating: "z", count: 300)), .number(7), .number(Int.max)]

    static let limits: [Limits] = [
        Limits(),
        Limits(message: 400),  // refuses the larger items' messages
        Limits(item: 150),  // refuses the larger items
        Limits(string: 100),  // refuses the long token
        Limits(string: 0),  // refuses the member names ("item" is 4 bytes)
        Limits(string: 5),  // refuses "progressToken" as a name, and any longer string token
        Limits(elements: 1),  // refuses params with a token (two members)
        Limits(elements: 0),  // refuses any params
    ]

    static func server(_ limits: Limits) throws -> RPCServer {
        var configuration = HostConfiguration()
        configuration.maximumMessageBytes = limits.message
        configuration.outputLimits.itemBytes = limits.item
        configuration.inputLimits.maximumStringBytes = limits.string
        configuration.inputLimits.maximumElements = limits.elements
        return try #require(TestClient.inMemory(configuration).server)
    }

    static func outcome(_ result: Result<ItemLocation, RPCError>) -> String {
        switch result {
        case .success(let location): "\(location)"
        case .failure(let error): "\(error.code.rawValue) \(error.message) \(error.data.map { "\($0)" } ?? "")"
        }
    }

    @Test("the location or error equals a scan of the same bytes", arguments: limits)
    func sameAsScan(_ limits: Limits) throws {
        let server = try Self.server(limits)
        var written = 0
        for item in Self.items {
            for token in Self.tokens {
                for (method, prepared) in [
                    (ItemsPreviewRequest.method, server.prepare(ItemsPreviewRequest(item: item, progressToken: token))),
                    (ItemsDetailRequest.method, server.prepare(ItemsDetailRequest(item: item, progressToken: token))),
                ] {
                    let scanned = Result { () throws(RPCError) in try server.checkInput(params: prepared.bytes, method: method) }
                    #expect(Self.outcome(prepared.checked) == Self.outcome(scanned), "\(item.id) \(String(describing: token)) \(method)")
                    if case .success = prepared.checked { written += 1 }
                }
            }
        }
        // Each limit lets some through (the comparison is not only of errors).
        #expect(written > 0 || limits.elements == 0 || limits.string < 4)
    }

    @Test("a string token over the limit is refused, naming the field; a number token is not a string")
    func tokenLimit() throws {
        // 13 bytes: "progressToken" passes as a name, a 14-byte token does not.
        let server = try Self.server(Limits(string: 13))
        let item = Self.items[0]
        let refused = server.prepare(ItemsPreviewRequest(item: item, progressToken: .string(String(repeating: "t", count: 14))))
        guard case .failure(let error) = refused.checked else {
            Issue.record("a 14-byte token passed a 13-byte string limit")
            return
        }
        #expect(error.code == .invalidParams)
        #expect(error.message == "params.progressToken: a string of 14 bytes exceeds the limit of 13 bytes (maximumStringBytes).")
        let number = server.prepare(ItemsPreviewRequest(item: item, progressToken: .number(123_456_789_012_345)))
        #expect((try? number.checked.get())?.progressToken != nil)
    }

    @Test("nesting is measured up to the limit only")
    func nesting() {
        let deep = (0..<5).reduce(JSONValue.string("x")) { inner, _ in .object(["k": inner]) }
        #expect(deep.nests(atMost: 5))
        #expect(!deep.nests(atMost: 4))
        #expect(JSONValue.string("x").nests(atMost: 0))
        #expect(!JSONValue.array([]).nests(atMost: 0))
    }
}

/// `RequestEvents`: how a provider's message met before its response is told apart. A response
/// written the SDK's way is known by its first bytes; anything else is scanned.
@Suite("A provider's message: response, notification or host request")
struct ProviderMessageKindTests {
    static func kind(_ text: String) -> String {
        Array(text.utf8).withUnsafeBytes { bytes in
            RequestEvents.isNotification(bytes) ? "notification" : RequestEvents.isHostRequest(bytes) ? "host request" : "response"
        }
    }

    @Test("each form is told apart", arguments: [
        (#"{"jsonrpc":"2.0","id":12,"result":{"title":"a"}}"#, "response", true),
        (#"{"jsonrpc":"2.0","id":12,"error":{"code":-32000,"message":"m"}}"#, "response", true),
        (#"{"jsonrpc":"2.0","id":3,"method":"host/fetch","params":{"url":"https://a.example"}}"#, "host request", false),
        (#"{"jsonrpc":"2.0","id":"s","method":"host/fetch","params":{}}"#, "host request", false),
        (#"{"id":4,"jsonrpc":"2.0","method":"host/fetch","params":{}}"#, "host request", false),
        (#"{"jsonrpc":"2.0","method":"$/log","params":{"message":"m"}}"#, "notification", false),
        (#"{"jsonrpc":"2.0","id":,"result":{}}"#, "response", false),
        (#"{"jsonrpc":"2.0","id":12"#, "response", false),
    ])
    func kinds(text: String, expected: String, plain: Bool) {
        #expect(Self.kind(text) == expected)
        #expect(Array(text.utf8).withUnsafeBytes(RequestEvents.isPlainResponse) == plain)
    }
}
