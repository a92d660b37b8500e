import ContextProviderKit
import ContextHostTestSupport
import Logging
import Testing

@testable import ContextHost

/// `AttachedItem` keeps items as compact bytes; what comes back out must be exactly what went in.
@Suite("Composer item storage")
struct ComposerStorageTests {
    private let item: JSONObject = [
        "id": "4588697d-f14c-419d-8983-95182453a9d8", "providerId": "com.contexthost.note", "type": "note",
        "displayName": "Groceries ☕",
        "content": ["title": "Groceries ☕", "body": "Milk, \"eggs\"\nand **bread**.", "wordCount": 5],
        "createdAt": "2026-11-21T19:53:41Z",
    ]

    private func encoding(data: JSONValue?) -> JSONObject {
        var encoding: JSONObject = ["representation": "json", "contentType": "application/json"]
        if let data { encoding["data"] = data }
        encoding["metadata"] = ["title": "Groceries ☕", "wordCount": "5"]
        return encoding
    }

    @Test(
        "item and encoding round-trip whatever the data is",
        arguments: [
            "the item's content", "other bytes", "empty", "not canonical Base64", "not Base64", "absent", "not a string",
        ])
    func roundTrip(data kind: String) throws {
        let content = try #require(item["content"]).jsonBytes
        let data: JSONValue? =
            switch kind {
            case "the item's content": .string(Base64.encode(content))
            case "other bytes": .string(Base64.encode(Array("plain text, not in the item".utf8)))
            case "empty": ""
            case "not canonical Base64": "QQ"  // "A" without padding
            case "not Base64": "%%%"
            case "not a string": 42
            default: nil
            }
        let encoding = encoding(data: data)
        let attached = AttachedItem(item: item, encoding: encoding)
        #expect(attached.item == item)
        #expect(attached.encoding == encoding)
        #expect(attached.id == "4588697d-f14c-419d-8983-95182453a9d8")
        #expect(attached.hasID("4588697d-f14c-419d-8983-95182453a9d8"))
        #expect(!attached.hasID("4588697d"))
        #expect(attached.displayName == "Groceries ☕")
        #expect(attached.providerID == "com.contexthost.note")
        #expect(attached.type == "note")
        let expectedBytes =
            switch kind {
            case "the item's content": content.count
            case "other bytes": "plain text, not in the item".utf8.count
            case "not canonical Base64": 0  // what the Base64 text's length says (2 / 4 * 3)
            case "not Base64": 0
            default: 0
            }
        #expect(attached.encodedBytes == expectedBytes)
        #expect(try JSONValue(parsing: attached.itemJSON.withUnsafeBytes { Array($0) }) == .object(item))
    }

    /// `count` copies of the sample item, `item-0`…, each encoded as the text `data N`.
    func numberedItems(_ count: Int) -> [AttachedItem] {
        (0..<count).map { index -> AttachedItem in
            var item = item
            item["id"] = .string("item-\(index)")
            return AttachedItem(item: item, encoding: encoding(data: .string(Base64.encode(Array("data \(index)".utf8)))))
        }
    }

    @Test("a draft written from stored bytes reads back as the same composer")
    func draftRoundTrip() throws {
        let items = numberedItems(3)
        let composer = Composer(id: "c1", maximumItems: 10, byteBudget: 1 << 20, items: items, createdAt: 1_763_750_000.25)
        let bytes = composer.draftBytes
        let restored = try #require(Composer(json: try JSONValue(parsing: bytes)))
        #expect(restored == composer)
        #expect(restored.bytesUsed == "data 0".utf8.count * 3)
    }

    @Test("the summary written as text is the summary")
    func summaryText() throws {
        let items = numberedItems(2)
        let composer = Composer(id: "c\"1", maximumItems: 7, byteBudget: 4096, items: items, createdAt: 1)
        var bytes: [UInt8] = []
        composer.appendSummary(to: &bytes)
        #expect(
            try JSONValue(parsing: bytes)
                == ["composerId": "c\"1", "maximumItems": 7, "byteBudget": 4096, "bytesUsed": 12, "itemCount": 2])
        // The same as the summary other answers carry (collect/submit, composer/open, …).
        let host = Host(configuration: HostConfiguration(), logger: Logger(label: "test"))
        #expect(try JSONValue(parsing: bytes) == host.summary(of: composer).json)
    }
}

@Suite("Composer store order")
struct ComposerStoreOrderTests {
    @Test("every composer is listed oldest first, and composers opened at the same moment by id")
    func oldestFirst() throws {
        let store = ComposerStore(stateDirectory: nil, logger: Logger(label: "test"))
        var opened: [(Double, String)] = []
        for now in [5.0, 1.0, 3.0, 3.0, 1.0, 9.0, 3.0] {
            let composer = try store.open(maximumItems: 10, byteBudget: 1 << 20, now: now)
            opened.append((now, composer.id))
        }
        let expected = opened.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }.map(\.1)
        #expect(store.all().map(\.id) == expected)
        #expect(store.all().map(\.createdAt) == [1, 1, 3, 3, 3, 5, 9])
    }

    @Test("the order holds through attaches, closes and opens, and every composer is still found by id")
    func orderThroughChanges() throws {
        let store = ComposerStore(stateDirectory: nil, logger: Logger(label: "test"))
        var open: [String: Double] = [:]
        var random = SystemRandomNumberGenerator()
        for step in 0..<300 {
            if !open.isEmpty, step % 3 == 2, let id = open.keys.randomElement(using: &random) {
                _ = try store.close(id)
                open[id] = nil
            } else {
                let now = Double(Int.random(in: 0..<40, using: &random))
                open[try store.open(maximumItems: 10, byteBudget: 1 << 20, now: now).id] = now
            }
            if step % 50 == 0 || step == 299 {
                let expected = open.sorted { $0.value != $1.value ? $0.value < $1.value : $0.key < $1.key }.map(\.key)
                #expect(store.all().map(\.id) == expected)
                #expect(store.count == open.count)
                for id in open.keys { #expect(try store.get(id).id == id) }
            }
        }
        // Attaching changes a composer in place: the order and the lookups stay.
        let before = store.all().map(\.id)
        for (number, id) in before.enumerated() where number % 4 == 0 {
            let item = AttachedItem(
                item: ["id": .string("item-\(number)"), "providerId": "com.contexthost.note", "type": "note", "displayName": "n", "content": [:]],
                encoding: ["representation": "text", "contentType": "text/plain", "data": "eA=="])
            let attached = try store.attach(item, to: id, providerLimit: 10)
            #expect(attached.items.count == 1)
            #expect(try store.get(id).items.count == 1)
        }
        #expect(store.all().map(\.id) == before)
        for (id, _) in open.prefix(5) {
            #expect(throws: RPCError.self) { try store.remove(itemID: "none", from: id) }
            _ = try store.close(id)
            #expect(throws: RPCError.self) { try store.get(id) }
        }
    }

    @Test("restored drafts are listed in the same order as before the restart")
    func orderAfterRestore() throws {
        let directory = try TemporaryDirectory()
        let store = ComposerStore(stateDirectory: directory.path, logger: Logger(label: "test"))
        for now in [5.0, 1.0, 3.0, 3.0, 1.0, 9.0, 3.0] { _ = try store.open(maximumItems: 10, byteBudget: 1 << 20, now: now) }
        let before = store.all().map(\.id)
        let restored = ComposerStore(stateDirectory: directory.path, logger: Logger(label: "test"))
        #expect(restored.all().map(\.id) == before)
        let newest = try restored.open(maximumItems: 10, byteBudget: 1 << 20, now: 10)
        let oldest = try restored.open(maximumItems: 10, byteBudget: 1 << 20, now: 0)
        #expect(restored.all().map(\.id) == [oldest.id] + before + [newest.id])
    }
}
