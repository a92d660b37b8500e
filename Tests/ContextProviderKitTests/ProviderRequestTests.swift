@testable import ContextProviderKit
import Testing

/// The SDK's request scanner (`ProviderRequest`, `RequestParams`): it must accept and refuse
/// exactly what parsing the whole message as a tree does, and decode the same items with the
/// same errors.
@Suite("Provider request scanning")
struct ProviderRequestTests {
    static let plainItem = #"{"id":"i1","providerId":"p","type":"note","displayName":"D","content":{"title":"T","body":"a\nb"}}"#

    /// Params texts, valid and not: each is decoded every way and the results compared.
    static let params: [String] = [
        #"{"item":\#(plainItem)}"#,
        // Escapes in every string, keys included.
        #"{"item":{"i\u0064":"\u00e9\ud83d\ude00\/\"\\\b\f\n\r\t","provider\u0049d":"p","type":"t","displayName":"caf\u00e9","content":"x\u0000y"}}"#,
        #"{"it\u0065m":\#(plainItem)}"#,
        // createdAt: a string, null, absent, the wrong type.
        #"{"item":{"id":"i","providerId":"p","type":"t","displayName":"d","content":null,"createdAt":"2026-11-21T21:59:13Z"}}"#,
        #"{"item":{"id":"i","providerId":"p","type":"t","displayName":"d","createdAt":null}}"#,
        #"{"item":{"id":"i","providerId":"p","type":"t","displayName":"d","createdAt":5}}"#,
        #"{"item":{"id":"i","providerId":"p","type":"t","displayName":"d","createdAt":null,"createdAt":"later"}}"#,
        #"{"item":{"id":"i","providerId":"p","type":"t","displayName":"d","createdAt":"x","createdAt":null}}"#,
        #"{"item":{"id":"i","providerId":"p","type":"t","displayName":"d","createdAt":[],"createdAt":null}}"#,
        // Repeated keys keep the last value.
        #"{"item":{"id":5,"id":"i","providerId":"p","type":"t","displayName":"d"}}"#,
        #"{"item":{"id":"i","id":5,"providerId":"p","type":"t","displayName":"d"}}"#,
        #"{"item":{"id":"a","providerId":"p","type":"t","displayName":"d"},"item":{"id":"b","providerId":"q","type":"t","displayName":"e"}}"#,
        #"{"item":\#(plainItem),"item":7}"#,
        #"{"item":7,"item":\#(plainItem)}"#,
        // Missing members, wrong types, an empty id.
        #"{"item":{"providerId":"p","type":"t","displayName":"d"}}"#,
        #"{"item":{"id":"","providerId":"p","type":"t","displayName":"d"}}"#,
        #"{"item":{"id":"i","type":"t","displayName":"d"}}"#,
        #"{"item":{"id":"i","providerId":true,"type":"t","displayName":"d"}}"#,
        #"{"item":{"id":"i","providerId":"p","type":null,"displayName":"d"}}"#,
        #"{"item":{"id":"i","providerId":"p","type":"t","displayName":{"x":1}}}"#,
        #"{"item":{"id":"i","providerId":"p","type":"t"}}"#,
        // Params or item not objects, no item at all.
        #"{}"#, #"[]"#, #"[1,{"item":{}}]"#, #""item""#, #"null"#, #"{"item":null}"#, #"{"item":[1]}"#, #"{"other":\#(plainItem)}"#,
        // Unknown members, nesting and numbers in content (kept as they parse).
        #"{"representation":"json","item":{"extra":{"deep":[[[{"a":[]}]]]},"id":"i","providerId":"p","type":"t","displayName":"d","content":{"n":-0,"e":1e5,"f":1.5E-3,"big":12345678901234567890,"neg":-42,"list":[true,false,null,{}],"nested":{"a":{"b":{"c":"\u2603"}}}}}}"#,
        #" { "item" : { "id" : "i" , "providerId" : "p" , "type" : "t" , "displayName" : "d" , "content" : [ 1 , 2 ] } } "#,
    ]

    /// The general way: the params as a tree, then `JSONObjectReader`.
    static func tree(_ params: String) -> Result<ContextItem, JSONDecodeError> {
        let value: JSONValue
        do {
            value = try JSONValue(parsing: params)
        } catch {
            Issue.record("test params must be valid JSON: \(error)")
            return .failure(JSONDecodeError(path: "", message: "\(error)"))
        }
        do throws(JSONDecodeError) {
            return .success(try JSONObjectReader(value, path: "params").decode("item", as: ContextItem.self))
        } catch {
            return .failure(error)
        }
    }

    static func decode(_ params: RequestParams) -> Result<ContextItem, JSONDecodeError> {
        var params = params
        do throws(JSONDecodeError) {
            return .success(try params.takeItem())
        } catch {
            return .failure(error)
        }
    }

    /// What scanning a whole message gave (read while the message's bytes exist).
    struct Scanned {
        var jsonrpc: JSONValue?
        var id: JSONValue?
        var method: JSONValue?
        var hasParams: Bool
        var params: JSONValue?
        /// Whether the item was decoded while the message was read.
        var itemWhileScanning: ContextItem?
        var item: Result<ContextItem, JSONDecodeError>
    }

    /// Scans a whole message and decodes its item; nil if the scan failed.
    static func scanned(_ message: String) -> Scanned? {
        let bytes = Array(message.utf8)
        return bytes.withUnsafeBytes { buffer in
            guard let request = try? ProviderRequest(scanning: buffer) else { return nil }
            return Scanned(
                jsonrpc: request.jsonrpc, id: request.id, method: request.method, hasParams: request.params.range != nil,
                params: try? request.params.value(), itemWhileScanning: request.params.item, item: decode(request.params))
        }
    }

    @Test("params.item decodes the same from the bytes, while scanning and as a tree", arguments: params)
    func sameItemEveryWay(params: String) throws {
        let expected = Self.tree(params)
        let bytes = Array(params.utf8)
        let direct = bytes.withUnsafeBytes { Self.decode(RequestParams(message: $0, range: 0..<$0.count, item: nil)) }
        #expect(direct == expected)
        // Method before params: the item is decoded while the message is read (or again after).
        let first = Self.scanned(#"{"jsonrpc":"2.0","id":1,"method":"item/preview","params":\#(params)}"#)
        #expect(first?.item == expected)
        if let item = first?.itemWhileScanning { #expect(.success(item) == expected) }
        // Params before method: decoded from the params' bytes afterwards.
        let later = Self.scanned(#"{"params":\#(params),"id":1,"method":"item/detail","jsonrpc":"2.0"}"#)
        #expect(later?.itemWhileScanning == nil)
        #expect(later?.item == expected)
        #expect(try later?.params == JSONValue(parsing: params))
    }

    @Test("a plain item is decoded while the message is read", arguments: params[0...4])
    func decodedWhileScanning(params: String) throws {
        let scanned = Self.scanned(#"{"jsonrpc":"2.0","id":1,"method":"item/describe","params":\#(params)}"#)
        #expect(scanned?.itemWhileScanning != nil)
        #expect(try scanned?.itemWhileScanning == Self.tree(params).get())
    }

    @Test("envelope members: repeated ones keep the last value; an item read for another method is not used")
    func envelope() throws {
        let request = Self.scanned(
            #"{"jsonrpc":"1.0","jsonrpc":"2.0","id":"x","id":7,"method":"item/preview","params":{"item":{"id":"a","providerId":"p","type":"t","displayName":"d"}},"params":{"item":{"id":"b","providerId":"p","type":"t","displayName":"d"}}}"#)
        #expect(request?.jsonrpc == "2.0")
        #expect(request?.id == 7)
        #expect(request?.method == "item/preview")
        #expect(try request?.item.get().id == "b")
        #expect(request?.itemWhileScanning?.id == "b")

        let changed = Self.scanned(#"{"method":"item/preview","params":{"item":\#(Self.plainItem)},"method":"item/encode","id":1}"#)
        #expect(changed?.method == "item/encode")
        #expect(changed?.itemWhileScanning == nil)

        let none = Self.scanned(#"{"jsonrpc":"2.0","id":1,"method":"provider/info"}"#)
        #expect(none?.hasParams == false)
        #expect(none?.params == [:])
        #expect(none?.item == .failure(JSONDecodeError(path: "params.item", message: "missing; expected an object")))

        let odd = Self.scanned(#"{"id":1.5,"method":3,"params":{"item":\#(Self.plainItem)}}"#)
        #expect(odd?.id == 1.5)
        #expect(odd?.method == 3)
        #expect(odd?.jsonrpc == nil)
        #expect(odd?.itemWhileScanning == nil)
    }

    /// Messages that are not one JSON object: the scanner reports what parsing reports.
    static let malformed: [String] = [
        "", " ", "{", "{\"id\":1", "{\"id\":1,}", "{\"id\" 1}", "{\"id\":1}}", "{\"id\":1} x", "{id:1}", "{\"a\":tru}",
        #"{"jsonrpc":"2.0","id":1,"method":"item/preview","params":{"item":{"id":"\x"}}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"item/preview","params":{"item":{"id":"unterminated}}}"#,
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"item/preview\",\"params\":{\"item\":{\"id\":\"raw\ncontrol\"}}}",
        // Unpaired surrogates, in decoded and in skipped parts alike.
        #"{"jsonrpc":"2.0","id":1,"method":"item/preview","params":{"item":{"id":"\ud800"}}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"item/preview","params":{"item":{"id":"i","unknown":"\udc00"}}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"provider/info","extra":"\ud83d\u0041"}"#,
        #"{"params":{"x":"\ud800x"},"jsonrpc":"2.0","id":1,"method":"item/preview"}"#,
        #"{"params":{"x":[1,2,{"y":01}]},"id":1}"#,
        String(repeating: "[", count: 300) + String(repeating: "]", count: 300),
        "{\"params\":" + String(repeating: "[", count: 300) + String(repeating: "]", count: 300) + "}",
        "[1,2", "\"abc", "-", "1.", "nul",
    ]

    @Test("malformed messages fail with the parser's own error", arguments: malformed)
    func malformedMessages(message: String) {
        let bytes = Array(message.utf8)
        let expected: JSONParseError? = {
            do throws(JSONParseError) {
                _ = try JSONValue(parsing: bytes)
                return nil
            } catch {
                return error
            }
        }()
        #expect(expected != nil, "the case must be malformed")
        bytes.withUnsafeBytes { buffer in
            do throws(ProviderRequest.Failure) {
                _ = try ProviderRequest(scanning: buffer)
                Issue.record("accepted: \(message)")
            } catch {
                guard case .parse(let reported, _) = error else {
                    Issue.record("not a parse error: \(error)")
                    return
                }
                #expect(reported == expected)
            }
        }
    }

    @Test("valid JSON that is not an object is named")
    func notAnObject() {
        for (text, typeName) in [("[1]", "array"), ("3", "number"), ("\"s\"", "string"), ("null", "null"), (" true ", "boolean")] {
            let bytes = Array(text.utf8)
            bytes.withUnsafeBytes { buffer in
                do throws(ProviderRequest.Failure) {
                    _ = try ProviderRequest(scanning: buffer)
                    Issue.record("accepted \(text)")
                } catch {
                    guard case .notAnObject(let name) = error else {
                        Issue.record("\(text): \(error)")
                        return
                    }
                    #expect(name == typeName)
                }
            }
        }
    }

    @Test("skipping checks surrogates only when asked, and then like decoding")
    func surrogateChecks() throws {
        for text in [#""\ud800""#, #""\udc00x""#, #""\ud83d\u0041""#, #""\ud83d""#, #""ok \ud83d\ude00""#] {
            let bytes = Array(text.utf8)
            try bytes.withUnsafeBytes { buffer in
                var lenient = JSONReader(buffer)
                try lenient.skipValue()
                #expect(lenient.position == buffer.count)
                var strict = JSONReader(buffer)
                strict.checksSurrogates = true
                var decoding = JSONReader(buffer)
                let skipped = Result { () throws(JSONParseError) in try strict.skipValue() }
                let decoded = Result { () throws(JSONParseError) in _ = try decoding.readValue() }
                switch (skipped, decoded) {
                case (.success, .success): #expect(strict.position == decoding.position)
                case (.failure(let a), .failure(let b)): #expect(a == b)
                default: Issue.record("\(text): skip \(skipped), decode \(decoded)")
                }
            }
        }
    }

    @Test(
        "items handed out while read: exactly the previewItems of a plain batch, once each; never a second items array",
        arguments: [
            (#""params":{"items":[I,I,I]}}"#, 3, true),
            (#""params":{"items":[I,{"id":"x"},I],"other":1}}"#, 3, true),
            (#""params":{"items":[]}}"#, 0, true),
            (#""params":{"items":[I,I],"items":[I]}}"#, 2, false),
            (#""params":{"items":[I]},"params":{"items":[I,I]}}"#, 1, false),
            (#""params":{"items":[I]},"params":{}}"#, 1, false),
            (#""params":{"items":7}}"#, 0, false),
            (#""params":[I]}"#, 0, false),
        ])
    func previewItemsHandedOut(rest: String, handedOut: Int, streamed: Bool) throws {
        let text = #"{"jsonrpc":"2.0","id":3,"method":"item/previewMany","# + rest.replacing("I", with: Self.plainItem)
        var seen: [Result<ContextItem, JSONDecodeError>] = []
        let request = try Array(text.utf8).withUnsafeBytes { bytes in
            try ProviderRequest(scanning: bytes) { seen.append($0) }
        }
        #expect(seen.count == handedOut)
        #expect(request.streamedPreviewItems == streamed)
        if streamed { #expect(request.previewItems?.items.isEmpty == true, "handed out, not kept") }
        // The same items as reading without the callback keeps, in the same order.
        let kept = try Array(text.utf8).withUnsafeBytes { try ProviderRequest(scanning: $0) }
        if streamed {
            #expect(kept.previewItems?.count == handedOut)
            let keptItems: [ContextItem?] = (kept.previewItems?.items ?? []).map { try? $0.get() }
            let seenItems: [ContextItem?] = seen.map { try? $0.get() }
            #expect(seenItems == keptItems)
        }
    }
}

@Suite("Response writing")
struct WireTests {
    static let chips: [ContextChip] = [
        ContextChip(icon: "note.text", title: "Plain"),
        ContextChip(
            icon: "i", title: "T \"quoted\" \\ back\nline\u{1}", subtitle: "caf\u{E9} \u{1F600}", tone: .attention,
            thumbnail: "data:image/svg+xml;base64,PHN2Zz4=", accessory: .sparkline([1, 2.5, -3, 1e20]),
            accessibilityLabel: "", fallbackText: "</script>"),
        ContextChip(icon: "", title: "", subtitle: nil, tone: .good, thumbnail: "data:x", accessibilityLabel: "a", fallbackText: "f"),
        ContextChip(icon: "x", title: "y", subtitle: "s", tone: .warning, accessory: .sparkline([])),
    ]

    @Test("a chip is written exactly as its JSON value would be", arguments: chips)
    func chipBytes(chip: ContextChip) throws {
        var direct: [UInt8] = []
        chip.appendJSON(to: &direct)
        #expect(direct == chip.json.jsonBytes)
        #expect(try ContextChip(json: JSONValue(parsing: direct)) == chip)
        let response = Wire.result(id: 12, writing: chip)
        #expect(try JSONValue(parsing: response) == ["jsonrpc": "2.0", "id": 12, "result": chip.json])
    }
}
