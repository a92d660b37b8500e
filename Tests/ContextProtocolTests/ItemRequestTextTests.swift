import ContextProtocol
import Testing

/// `PlainItemRequest.appendJSON` (what `InProcessHost` writes for each typed `items/*` request)
/// must be the very text of `json`: the provider reads those bytes.
@Suite("Item request text")
struct ItemRequestTextTests {
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
}
