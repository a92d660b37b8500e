import ContextProtocol
import Testing

/// The typed `items/*` fast paths of `InProcessHost` against the general codec:
/// `PlainItemRequest.appendJSON` (the params it writes) must be the very text of `json`, since the
/// provider reads those bytes; `ContextChip(text:)` (how it reads a chip) must read what
/// `init(json:)` reads, or decline.
@Suite("Typed fast paths")
struct FastPathTextTests {
    static let items: [ContextItem] = [
        ContextItem(id: "a", providerId: "com.example.p", type: "note", displayName: "Plain"),
        ContextItem(
            id: "0C7F6A0E-1", providerId: "com.example.p", type: "t\"q", displayName: "Line\nbreak \\ \u{01} é 😀",
            content: ["title": "T", "body": "a\nb", "n": 1.5, "list": [true, .null, ["k": "v"]]], createdAt: "2026-11-28T15:00:00Z"),
        ContextItem(id: "b", providerId: "com.example.p", type: "x", displayName: "", content: .null),
    ]

    @Test("the same bytes as the JSON tree, with and without a progress token, for every items/* request with plain params")
    func sameBytesAsTheTree() throws {
        for item in Self.items {
            for token: ProgressToken? in [nil, .string("tok\"1"), .number(7)] {
                let requests: [any PlainItemRequest] = [
                    ItemsPreviewRequest(item: item, progressToken: token),
                    ItemsDetailRequest(item: item, progressToken: token),
                    ItemsDescribeRequest(item: item, progressToken: token),
                ]
                for request in requests {
                    var direct: [UInt8] = []
                    request.appendJSON(to: &direct)
                    #expect(direct == request.json.jsonBytes, "\(String(decoding: direct, as: UTF8.self))")
                }
            }
        }
    }

    /// Chips as providers write them, and ones the direct reader must decline or read exactly as
    /// the tree does (nulls, duplicates, wrong types, other versions, trailing data).
    static let chipTexts: [(text: String, direct: Bool)] = [
        (#"{"ctxui":1,"icon":"note.text","title":"T","tone":"neutral","accessibilityLabel":"T","fallbackText":"T"}"#, true),
        (#"{"ctxui":1,"icon":"i","title":"T\n\"q\" é","subtitle":"s","tone":"good","thumbnail":"data:image/svg+xml;base64,PHN2Zz4=","accessibilityLabel":"L","fallbackText":"F"}"#, true),
        (#" {"icon":"i","title":"T","fallbackText":"F"} "#, true),
        (#"{"icon":"i","title":"T","fallbackText":"F","accessory":{"kind":"sparkline","values":[1,2.5,-3]},"extra":[1,{"a":null}]}"#, true),
        (#"{"icon":"i","title":"T","fallbackText":"F","subtitle":null,"tone":null,"thumbnail":null,"accessory":null,"accessibilityLabel":null}"#, true),
        (#"{"icon":"i","title":"A","title":"B","fallbackText":"F"}"#, true),
        (#"{"ctxui":2,"icon":"i","title":"T","fallbackText":"F"}"#, false),
        (#"{"ctxui":null,"icon":"i","title":"T","fallbackText":"F"}"#, false),
        (#"{"icon":"i","title":5,"fallbackText":"F"}"#, false),
        (#"{"icon":"i","title":"T"}"#, false),
        (#"{"icon":"i","title":"T","fallbackText":"F","tone":"blue"}"#, false),
        (#"{"icon":"i","title":"T","fallbackText":"F","subtitle":7}"#, false),
        (#"{"icon":"i","title":"T","fallbackText":"F","accessory":{"kind":"pie"}}"#, false),
        (#"{"icon":"i","title":"T","fallbackText":"F"} x"#, false),
        (#"{"icon":"i","title":"T","fallbackText":"F""#, false),
        (#"[1]"#, false),
        ("", false),
    ]

    @Test("ContextChip(text:) reads what init(json:) reads, and declines what it does not vouch for")
    func chipText() throws {
        for (text, direct) in Self.chipTexts {
            let bytes = Array(text.utf8)
            let read = bytes.withUnsafeBytes(ContextChip.init(text:))
            #expect((read != nil) == direct, "\(text)")
            if let read {
                let tree = try ContextChip(json: try JSONValue(parsing: bytes))
                #expect(read == tree, "\(text)")
            }
        }
    }
}
