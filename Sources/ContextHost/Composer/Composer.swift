import ContextProviderKit

/// One draft message: the items attached to it and its limits (DESIGN §7).
///
/// Items are plain JSON owned by the host, so providers stay stateless and a restarted provider
/// serves old items. Each item keeps the encoding made when it was attached: that measures it
/// against the byte budget, and lets a draft be sent even when its provider is gone.
package struct Composer: Sendable, Equatable {
    package static let defaultMaximumItems = 10
    package static let defaultByteBudget = 4 << 20
    package static let maximumItemsCap = 100
    package static let byteBudgetCap = 64 << 20

    package var id: String
    /// At most this many items (like ChatKit's `contextPickerMaxItems`).
    package var maximumItems: Int
    /// At most this many bytes of encoded content across all items.
    package var byteBudget: Int
    package var items: [AttachedItem]
    /// Seconds since 1970 when it was opened.
    package var createdAt: Double

    package init(id: String, maximumItems: Int, byteBudget: Int, items: [AttachedItem] = [], createdAt: Double) {
        self.id = id
        self.maximumItems = maximumItems
        self.byteBudget = byteBudget
        self.items = items
        self.createdAt = createdAt
    }

    /// Encoded bytes used by the attached items.
    package var bytesUsed: Int { items.reduce(0) { $0 + $1.encodedBytes } }

    /// How many items of one provider are attached.
    package func count(of providerID: String) -> Int {
        items.reduce(0) { $0 + ($1.providerID == providerID ? 1 : 0) }
    }
}

/// An item in a composer, with the encoding made when it was attached.
package struct AttachedItem: Sendable, Equatable {
    /// The item as the provider made it (`id`, `providerId`, `type`, `displayName`, `content`…).
    package var item: JSONObject
    /// The provider's `item/encode` result at attach time.
    package var encoding: JSONObject

    package var id: String { item["id"]?.stringValue ?? "" }
    package var providerID: String { item["providerId"]?.stringValue ?? "" }
    package var displayName: String { item["displayName"]?.stringValue ?? "" }
    package var type: String { item["type"]?.stringValue ?? "" }

    /// Size of the decoded encoded content, from the base64 text.
    package var encodedBytes: Int {
        guard let base64 = encoding["data"]?.stringValue else { return 0 }
        let padding = base64.hasSuffix("==") ? 2 : (base64.hasSuffix("=") ? 1 : 0)
        return base64.utf8.count / 4 * 3 - padding
    }
}

// MARK: JSON (drafts on disk)

extension Composer {
    package var json: JSONValue {
        [
            "draftVersion": 1,
            "id": .string(id),
            "maximumItems": .number(Double(maximumItems)),
            "byteBudget": .number(Double(byteBudget)),
            "createdAt": .number(createdAt),
            "items": .array(items.map { ["item": .object($0.item), "encoding": .object($0.encoding)] }),
        ]
    }

    /// Reads a saved draft; nil if it is not one this host wrote.
    package init?(json: JSONValue) {
        guard json["draftVersion"]?.intValue == 1, let id = json["id"]?.stringValue,
            let maximumItems = json["maximumItems"]?.intValue, let byteBudget = json["byteBudget"]?.intValue,
            let items = json["items"]?.arrayValue
        else { return nil }
        var attached: [AttachedItem] = []
        for entry in items {
            guard let item = entry["item"]?.objectValue, let encoding = entry["encoding"]?.objectValue else { return nil }
            attached.append(AttachedItem(item: item, encoding: encoding))
        }
        self.init(
            id: id, maximumItems: maximumItems, byteBudget: byteBudget, items: attached,
            createdAt: json["createdAt"]?.numberValue ?? 0)
    }
}
