@testable import ContextHost
import ContextProviderKit
import Synchronization
import Testing

@Suite("Envelope scanning")
struct EnvelopeTests {
    private func scan(_ text: String) -> (Envelope, String?, [UInt8]) {
        let bytes = Array(text.utf8)
        let (envelope, error) = bytes.withUnsafeBytes { Envelope.scan($0) }
        return (envelope, error?.description, bytes)
    }

    @Test("members are found without decoding params")
    func members() {
        let (envelope, error, bytes) = scan(#"{"params":{"item":{"x":[1,2,{"y":"\"}"}]}},"id":"abc","method":"items/preview","jsonrpc":"2.0"}"#)
        #expect(error == nil)
        #expect(envelope.jsonrpc == "2.0")
        #expect(envelope.method == "items/preview")
        #expect(envelope.id.map { String(decoding: bytes[$0], as: UTF8.self) } == "\"abc\"")
        #expect(envelope.params.map { String(decoding: bytes[$0], as: UTF8.self) } == #"{"item":{"x":[1,2,{"y":"\"}"}]}}"#)
    }

    @Test("the params scan notes the top-level progressToken (the last one) and a plain known method's registry index")
    func progressTokenAndMethodIndex() {
        let (envelope, error, bytes) = scan(
            #"{"jsonrpc":"2.0","id":1,"method":"items/preview","params":{"progressToken":1,"item":{"progressToken":"inner"},"progressToken":"t-2"}}"#)
        #expect(error == nil)
        #expect(envelope.itemLocation.scanned)
        #expect(envelope.itemLocation.progressToken.map { String(decoding: bytes[$0], as: UTF8.self) } == #""t-2""#)
        #expect(envelope.methodIndex.map { MethodRegistry.all[$0].method } == "items/preview")
        let (none, _, _) = scan(#"{"jsonrpc":"2.0","id":1,"method":"items\/preview","params":{"item":{}}}"#)
        #expect(none.itemLocation.scanned && none.itemLocation.progressToken == nil)
        #expect(none.method == "items/preview" && none.methodIndex == nil)  // (escaped: found by name)
        #expect(scan(#"{"method":"ping","method":7}"#).0.methodIndex == nil)
    }

    @Test("every method name and jsonrpc version reads as written, however it is spelled, known to the host or not")
    func methodsAndVersions() {
        let known = MethodRegistry.all.map { $0.method }
        let others = ["", "pin", "pingx", "items/preview2", "Items/preview", "пинг", "a\u{1F600}b", String(repeating: "m", count: 200)]
        for method in known + others {
            let written = JSONValue.string(method).jsonString
            let (envelope, error, _) = scan(#"{"jsonrpc":"2.0","id":1,"method":"# + written + "}")
            #expect(error == nil)
            #expect(envelope.method == method, "\(written)")
        }
        // Escaped spellings of known names and of the version are the same text.
        #expect(scan(#"{"method":"pi\u006eg"}"#).0.method == "ping")
        #expect(scan(#"{"method":"items\/preview"}"#).0.method == "items/preview")
        #expect(scan(#"{"method":"ping\n"}"#).0.method == "ping\n")
        for (written, version) in [(#""2.0""#, "2.0"), (#""2\u002e0""#, "2.0"), (#""2.1""#, "2.1"), (#""2.0 ""#, "2.0 "), (#""""#, "")] {
            #expect(scan(#"{"jsonrpc":"# + written + "}").0.jsonrpc == version, "\(written)")
        }
        // A version or method cut off by the end of the message is an error, with what came before kept.
        let (cut, error, bytes) = scan(#"{"id":7,"jsonrpc":"2.0"#)
        #expect(error != nil)
        #expect(cut.jsonrpc == nil)
        #expect(cut.id.map { String(decoding: bytes[$0], as: UTF8.self) } == "7")
        let (cutMethod, methodError, methodBytes) = scan(#"{"id":8,"method":"pin"#)
        #expect(methodError != nil)
        #expect(cutMethod.method == nil)
        #expect(cutMethod.id.map { String(decoding: methodBytes[$0], as: UTF8.self) } == "8")
        // Keys written with escapes are the same keys.
        let escaped = scan(#"{"jsonrp\u0063":"2.0","meth\u006fd":"ping","\u0069d":3}"#).0
        #expect(escaped.jsonrpc == "2.0")
        #expect(escaped.method == "ping")
        #expect(escaped.id != nil)
        // Repeated keys: the last string wins; a later non-string flags the method and keeps the string.
        #expect(scan(#"{"method":"ping","method":"shutdown"}"#).0.method == "shutdown")
        let flagged = scan(#"{"method":"ping","method":3}"#).0
        #expect(flagged.method == "ping")
        #expect(flagged.methodIsInvalid)
        let later = scan(#"{"method":3,"method":"ping"}"#).0
        #expect(later.method == "ping")
        #expect(later.methodIsInvalid)
        #expect(scan(#"{"jsonrpc":"2.0","jsonrpc":2}"#).0.jsonrpc == "")
    }

    @Test("the id survives a later syntax error")
    func idBeforeError() {
        let (envelope, error, bytes) = scan(#"{"jsonrpc":"2.0","id":42,"method":"ping","params":{"a":tru}}"#)
        #expect(error != nil)
        #expect(envelope.id.map { String(decoding: bytes[$0], as: UTF8.self) } == "42")
    }

    @Test("ids of the wrong type and non-string methods are flagged")
    func wrongTypes() {
        #expect(scan(#"{"id":[1],"method":"x"}"#).0.idIsInvalid)
        #expect(scan(#"{"id":true,"method":"x"}"#).0.idIsInvalid)
        #expect(scan(#"{"id":null,"method":3}"#).0.methodIsInvalid)
        #expect(!scan(#"{"id":null,"method":"x"}"#).0.idIsInvalid)
    }

    @Test("arrays and trailing data")
    func nonObjects() {
        let (batch, batchError, _) = scan(#"[{"id":1}]"#)
        #expect(!batch.isObject)
        #expect(batchError == nil)
        #expect(scan(#"{"id":1} x"#).1 == "Unexpected data after the JSON value at byte 9")
    }

    /// `params` is scanned member by member (to note where `params.item` is); it must accept and
    /// refuse exactly what skipping it as one value does, with the same error at the same byte.
    static let paramsTexts: [String] = {
        var texts: [String] = [
            #"{"item":{"providerId":"p",}}"#, #"{"item":{"providerId" "p"}}"#, #"{"item":{1:2}}"#, #"{"item":{"a":tru}}"#,
            #"{"item":{"a":1}"#, #"{"item":{"a":1},}"#, #"{"item" {}}"#, #"{,"item":{}}"#, #"{"item":{"\ud800":"\udc00x"}}"#,
            #"{"item":{"a":"b\x"}}"#, #"{"item":"#, #"{"item":{"a":[1,2}}}"#, #"{"x":1,"item":{"k":{"providerId":"in"}},"y":[]}"#,
        ]
        // Past the depth limit, inside the item and around it.
        let open = String(repeating: #"{"item":"#, count: 300)
        texts.append(open + "1" + String(repeating: "}", count: 300))
        let brackets = String(repeating: "[", count: 260) + String(repeating: "]", count: 260)
        texts.append(#"{"item":"# + brackets + "}")
        return texts
    }()

    @Test("params are checked as any value: same errors, same depth limit", arguments: paramsTexts)
    func paramsSyntax(params: String) {
        let message = Array((#"{"jsonrpc":"2.0","id":1,"method":"items/preview","params":"# + params + "}").utf8)
        let scanned = message.withUnsafeBytes { Envelope.scan($0).1 }
        let skipped: JSONParseError? = message.withUnsafeBytes { bytes in
            var reader = JSONReader(bytes)
            do throws(JSONParseError) {
                try reader.skipValue()
                return reader.position == bytes.count ? nil : JSONParseError(offset: reader.position, reason: "Unexpected data after the JSON value")
            } catch {
                return error
            }
        }
        #expect(scanned == skipped, "\(params)")
        // Checked against the input limits in the same pass: the same text accepted and refused.
        let limits = ParamsLimits(input: InputLimits(), itemBytes: 1 << 20)
        let limited = message.withUnsafeBytes { Envelope.scan($0, limits: limits).1 }
        #expect(limited == skipped, "\(params)")
    }

    /// Limits small enough to break with short texts.
    static let smallLimits: ParamsLimits = {
        var input = InputLimits()
        input.maximumStringBytes = 4
        input.maximumElements = 2
        return ParamsLimits(input: input, itemBytes: 12)
    }()

    private func limited(_ text: String) -> (Envelope, JSONParseError?, [UInt8]) {
        let bytes = Array(text.utf8)
        let (envelope, error) = bytes.withUnsafeBytes { Envelope.scan($0, limits: Self.smallLimits) }
        return (envelope, error, bytes)
    }

    @Test("one pass: a broken limit is noted with its field path, and the rest of the message is still read")
    func limitsInTheScan() {
        let (envelope, error, bytes) = limited(#"{"jsonrpc":"2.0","method":"collect/submit","params":{"vals":{"a":[1,{"t":"abcdef"}]}},"id":"late"}"#)
        #expect(error == nil)
        #expect(envelope.paramsProblem?.message == "params.vals.a[1].t: a string of 6 bytes exceeds the limit of 4 bytes (maximumStringBytes).")
        #expect(envelope.id.map { String(decoding: bytes[$0], as: UTF8.self) } == #""late""#)  // read past the problem
        #expect(limited(#"{"params":[1,2,3]}"#).0.paramsProblem?.message.hasPrefix("params: an array with more than 2 elements") == true)
        #expect(limited(#"{"params":{"a":1,"b":2,"c":3}}"#).0.paramsProblem?.message.hasPrefix("params: an object with more than 2 members") == true)
        #expect(limited(#"{"params":{"longkey":1}}"#).0.paramsProblem?.message.hasPrefix("params: a member name of 7 bytes") == true)
        #expect(limited(#"{"params":{"item":{"providerId":"p"}}}"#).0.paramsProblem?.message.hasPrefix("params.item: an item of 18 bytes") == true)
        // The item is measured whole, not entered; the token is a string like any other.
        #expect(limited(#"{"params":{"item":"abcdefghij"}}"#).0.paramsProblem == nil)
        var roomier = Self.smallLimits
        roomier.input.maximumStringBytes = 13
        let token = Array(#"{"params":{"progressToken":"abcdefghijklmn"}}"#.utf8).withUnsafeBytes { Envelope.scan($0, limits: roomier) }
        #expect(token.0.paramsProblem?.message.hasPrefix("params.progressToken: a string of 14 bytes") == true)
    }

    @Test("one pass: malformed JSON after a broken limit is a parse error; the last params decides")
    func limitsAfterFaults() {
        let (envelope, error, _) = limited(#"{"id":1,"params":{"a":"abcdefgh","b":tru}}"#)
        #expect(error?.description == scan(#"{"id":1,"params":{"a":"abcdefgh","b":tru}}"#).1)
        #expect(envelope.id != nil)
        #expect(limited(#"{"params":["abcdefgh"],"params":[1]}"#).0.paramsProblem == nil)
        #expect(limited(#"{"params":[1],"params":["abcdefgh"]}"#).0.paramsProblem != nil)
    }

    @Test("RawObject finds nested members")
    func rawObject() throws {
        let bytes = Array(#"{"item":{"providerId":"com.x","content":{"providerId":"inner"}},"representation":"text"}"#.utf8)
        try bytes.withUnsafeBytes { buffer in
            let item = try #require(try RawObject.member("item", of: buffer, in: 0..<buffer.count))
            let provider = try #require(try RawObject.member("providerId", of: buffer, in: item))
            #expect(RawObject.string(buffer, in: provider) == "com.x")
        }
    }
}

@Suite("Input limits walk: where params.item is")
struct ItemLocationTests {
    private static func check(_ bytes: [UInt8], itemLimit: Int) -> Result<ItemLocation, RPCError> {
        bytes.withUnsafeBytes { buffer in
            do throws(RPCError) {
                return .success(try InputLimits().checkParams(buffer, range: 0..<buffer.count, itemLimit: itemLimit))
            } catch {
                return .failure(error)
            }
        }
    }

    /// Where the input-limits walk finds the item; checked to be where the envelope's scan finds
    /// it too, and what the walk gives when it starts from the scan's finding.
    private func locate(_ params: String) throws -> Pair {
        let bytes = Array(params.utf8)
        let location = try Self.check(bytes, itemLimit: 1 << 20).get()
        let pair = Pair(location.item.map { String(decoding: bytes[$0], as: UTF8.self) }, location.providerID.map { String(decoding: bytes[$0], as: UTF8.self) })
        // The same params in a request, scanned: the envelope notes the same item and providerId.
        let prefix = #"{"jsonrpc":"2.0","id":1,"method":"items/preview","params":"#
        let message = Array((prefix + params + "}").utf8)
        let (envelope, error) = message.withUnsafeBytes { Envelope.scan($0) }
        #expect(error == nil)
        let scanned = envelope.itemLocation
        #expect(Pair(scanned.item.map { String(decoding: message[$0], as: UTF8.self) }, scanned.providerID.map { String(decoding: message[$0], as: UTF8.self) }) == pair)
        // Scanned with the input limits (one pass, as `serve` does): the same item, no problem.
        let limits = ParamsLimits(input: InputLimits(), itemBytes: 1 << 20)
        let (limited, limitedError) = message.withUnsafeBytes { Envelope.scan($0, limits: limits) }
        #expect(limitedError == nil && limited.paramsProblem == nil)
        #expect(limited.itemLocation == scanned)
        return pair
    }

    struct Pair: Equatable {
        var item: String?
        var providerID: String?
        init(_ item: String?, _ providerID: String?) {
            self.item = item
            self.providerID = providerID
        }
    }

    @Test("the item and its providerId are found, escaped keys included")
    func found() throws {
        let item = #"{"id":"i","content":{"providerId":"inner"},"providerId":"com.example"}"#
        #expect(try locate(#"{"item":\#(item)}"#) == Pair(item, "\"com.example\""))
        #expect(try locate(#" { "x" : [1,{"item":{}}] , "item" : \#(item) } "#) == Pair(item, "\"com.example\""))
        #expect(try locate(#"{"it\u0065m":{"provider\u0049d":"p"}}"#) == Pair(#"{"provider\u0049d":"p"}"#, "\"p\""))
    }

    @Test("repeated keys: the last item, its last providerId (as the provider decodes it)")
    func repeated() throws {
        #expect(try locate(#"{"item":{"providerId":"a"},"item":{"providerId":"b","providerId":"c"}}"#) == Pair(#"{"providerId":"b","providerId":"c"}"#, "\"c\""))
    }

    @Test("no providerId, an item that is not an object, no item")
    func absent() throws {
        #expect(try locate(#"{"item":{"id":"i"}}"#) == Pair(#"{"id":"i"}"#, nil))
        #expect(try locate(#"{"item":[{"providerId":"p"}]}"#) == Pair(#"[{"providerId":"p"}]"#, nil))
        #expect(try locate(#"{"items":{"providerId":"p"}}"#) == Pair(nil, nil))
        #expect(try locate(#"[{"item":{"providerId":"p"}}]"#) == Pair(nil, nil))
        #expect(try locate(#"{"x":{"item":{"providerId":"p"}}}"#) == Pair(nil, nil))
    }

    @Test("the whole item still counts against the item limit")
    func itemLimit() {
        let params = Array(#"{"it\u0065m":{"providerId":"p","content":"0123456789"}}"#.utf8)
        guard case .failure(let error) = Self.check(params, itemLimit: 20) else {
            Issue.record("an item over the limit was accepted")
            return
        }
        #expect(error.message.hasPrefix("params.item: an item of 41 bytes exceeds the limit of 20 bytes"))
    }
}

@Suite("Provider replies: the chip fast path")
struct ChipReplyTests {
    struct Seen: Equatable {
        var result: String?
        var error: RPCError?
        var errorIsFromHost: Bool
        var scannedChip: Bool
        var unread = false
    }

    private static func deliver(_ text: String, id: Int64 = 7, expected: ReplyRouter.Expected) -> Seen {
        let bytes = Array(text.utf8)
        let seen = Mutex<Seen?>(nil)
        bytes.withUnsafeBytes { buffer in
            ReplyRouter.deliver(buffer, to: { response in
                seen.withLock {
                    $0 = Seen(
                        result: response.resultBytes.map { String(decoding: $0, as: UTF8.self) }, error: response.error,
                        errorIsFromHost: response.errorIsFromHost, scannedChip: response.resultIsScannedChip,
                        unread: response.resultIsUnread)
                }
            }, expectedID: id, expected: expected)
        }
        return seen.withLock { $0! }
    }

    static let chip = #"{"ctxui":1,"icon":"note.text","title":"T","tone":"neutral","thumbnail":"data:image/svg+xml;base64,PHN2Zz4=","accessibilityLabel":"a","fallbackText":"f"}"#

    @Test("a chip written the SDK's way is passed on after one scan")
    func fastPath() {
        let seen = Self.deliver(#"{"jsonrpc":"2.0","id":7,"result":\#(Self.chip)}"#, expected: .chip)
        #expect(seen == Seen(result: Self.chip, error: nil, errorIsFromHost: false, scannedChip: true))
        let large = Self.deliver(#"{"jsonrpc":"2.0","id":1234567,"result":\#(Self.chip)}"#, id: 1_234_567, expected: .chip)
        #expect(large.scannedChip)
    }

    @Test("an item/previewMany result written the SDK's way is passed on unread; others are read in full")
    func previewsUnread() {
        let previews = #"{"previews":[{"chip":\#(Self.chip)}]}"#
        let seen = Self.deliver(#"{"jsonrpc":"2.0","id":7,"result":\#(previews)}"#, expected: .previews)
        #expect(seen == Seen(result: previews, error: nil, errorIsFromHost: false, scannedChip: false, unread: true))
        for text in [#"{"jsonrpc":"2.0","id":7,"result": \#(previews)}"#, #"{"jsonrpc":"2.0","id":8,"result":\#(previews)}"#] {
            let other = Self.deliver(text, expected: .previews)
            #expect(!other.unread)
            #expect(other == Self.deliver(text, expected: .any))
        }
    }

    @Test("deep nesting in a chip: the same outcome either way, and the scan never accepts more than parsing", arguments: 252...257)
    func nesting(levels: Int) {
        let deep = String(repeating: "[", count: levels) + String(repeating: "]", count: levels)
        let text = #"{"jsonrpc":"2.0","id":7,"result":{"ctxui":1,"icon":"i","title":"t","fallbackText":"f","x":\#(deep)}}"#
        var fast = Self.deliver(text, expected: .chip)
        let parses = (try? JSONReader.parse(Array(text.utf8))) != nil
        if fast.scannedChip { #expect(parses) }
        fast.scannedChip = false
        #expect(fast == Self.deliver(text, expected: .any))
        #expect((fast.error == nil) == parses)
        if levels == 257 { #expect(!parses) }
    }

    @Test("a chip with ill-formed UTF-8 is a bad reply, not passed on")
    func illFormedUTF8() {
        let bytes = Array(#"{"jsonrpc":"2.0","id":7,"result":{"ctxui":1,"icon":"i","title":"caf"#.utf8) + [0xE9]
            + Array(#"","fallbackText":"f"}}"#.utf8)
        let seen = Mutex<RPCError?>(nil)
        bytes.withUnsafeBytes { buffer in
            ReplyRouter.deliver(buffer, to: { response in seen.withLock { $0 = response.error } }, expectedID: 7, expected: .chip)
        }
        let error = seen.withLock { $0 }
        #expect(error?.code == .providerBadReply)
        #expect(error?.message.contains("Invalid UTF-8 in string") == true)
    }

    /// Every other reply is read as before: the same response with or without the fast path.
    static let others: [String] = [
        #"{"jsonrpc":"2.0","id":7,"result":{"ctxui":1,"icon":"i","title":"T","tone":"blue","fallbackText":"f"}}"#,
        #"{"jsonrpc":"2.0","id":7,"result":{"ctxui":1,"icon":"i","title":"T","fallbackText":"f","accessory":{"kind":"sparkline","values":[1]}}}"#,
        #"{"jsonrpc":"2.0","id":7,"result":{"ctxui":1,"icon":"i","title":"T","fallbackText":"f"} }"#,
        #"{"jsonrpc":"2.0","id":7,"result":\#(chip),"extra":1}"#,
        #"{"jsonrpc":"2.0","id":7,"result": \#(chip)}"#,
        #"{"jsonrpc":"2.0","id":07,"result":\#(chip)}"#,
        #"{"jsonrpc":"2.0","id":8,"result":\#(chip)}"#,
        #"{"jsonrpc":"2.0","id":-7,"result":\#(chip)}"#,
        #"{"jsonrpc":"2.0","id":7,"result":{"ctxui":1,"icon":"i","title":"T","fallbackText":"f",}}"#,
        #"{"jsonrpc":"2.0","id":7,"result":{"ctxui":1,"icon":"i","title":"T\u00"}}"#,
        #"{"jsonrpc":"2.0","id":7,"result":}"#,
        #"{"jsonrpc":"2.0","id":7,"result":"#,
        #"{"jsonrpc":"2.0","id":7,"result":\#(chip)}}"#,
        #"{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"bad"}}"#,
        #"{"jsonrpc":"2.0","id":7,"result":[1]}"#,
        #"{"jsonrpc":"2.0","id":7}"#,
    ]

    @Test("other replies are read in full, with the same outcome", arguments: others)
    func otherReplies(text: String) {
        let fast = Self.deliver(text, expected: .chip)
        #expect(!fast.scannedChip)
        #expect(fast == Self.deliver(text, expected: .any))
    }
}

@Suite("Reused request buffers")
struct MessageBufferTests {
    @Test("a buffer given back comes back empty with its capacity; large ones are dropped")
    func reuse() {
        let buffers = MessageBuffers()
        var first = buffers.take()
        #expect(first.isEmpty)
        first.reserveCapacity(1_500)
        first.append(contentsOf: [1, 2, 3])
        let capacity = first.capacity
        buffers.giveBack(consume first)  // (its only reference: the same buffer is kept)
        let again = buffers.take()
        #expect(again.isEmpty)
        #expect(again.capacity == capacity)
        #expect(buffers.take().capacity == 0, "only one was given back")

        buffers.giveBack([UInt8](repeating: 0, count: MessageBuffers.keptCapacity + 1))
        #expect(buffers.take().capacity == 0, "a buffer that grew past keptCapacity is not kept")

        for _ in 0..<(MessageBuffers.keptCount + 5) { buffers.giveBack([UInt8](repeating: 0, count: 16)) }
        var kept = 0
        while buffers.take().capacity > 0 { kept += 1 }
        #expect(kept == MessageBuffers.keptCount)
        #expect(buffers.keptByteCount == 0)

        // Large buffers: kept up to `keptBytes` in all, however many are given back.
        for _ in 0..<MessageBuffers.keptCount { buffers.giveBack([UInt8](repeating: 0, count: MessageBuffers.keptCapacity - 64)) }
        #expect(buffers.keptByteCount <= MessageBuffers.keptBytes)
        var large = 0
        while buffers.take().capacity > 0 { large += 1 }
        #expect(large > 0 && large < MessageBuffers.keptCount)
        #expect(buffers.keptByteCount == 0)
    }
}
