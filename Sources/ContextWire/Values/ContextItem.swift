/// One piece of attached context: the host owns it as plain JSON, the provider that made it
/// interprets `content`.
///
/// Wire form: `{"id","providerId","type","displayName","content","createdAt"?}`.
public struct ContextItem: JSONConvertible, Hashable {
    /// A UUID string that identifies this item.
    public var id: String
    /// The id of the provider that made the item, e.g. `com.contexthost.note`.
    public var providerId: String
    /// The provider-defined kind of item, e.g. `note`.
    public var type: String
    /// A short human-readable name, shown by default chips and in summaries.
    public var displayName: String
    /// Provider-defined content; the host stores it and hands it back unchanged.
    public var content: JSONValue
    /// When the item was made, as an RFC 3339 timestamp.
    public var createdAt: String?

    /// Creates an item; `id` defaults to a new random UUID.
    public init(
        id: String = ItemIdentity.newUUID(), providerId: String, type: String, displayName: String,
        content: JSONValue = .object([:]), createdAt: String? = nil
    ) {
        self.id = id
        self.providerId = providerId
        self.type = type
        self.displayName = displayName
        self.content = content
        self.createdAt = createdAt
    }

    /// Converts the wire form.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        id = try reader.string("id")
        guard !id.isEmpty else { throw JSONDecodeError(path: reader.path("id"), message: "expected a non-empty string") }
        providerId = try reader.string("providerId")
        type = try reader.string("type")
        displayName = try reader.string("displayName")
        content = reader.object["content"] ?? .null
        createdAt = try reader.optionalString("createdAt")
    }

    /// The wire form.
    public var json: JSONValue {
        var object = JSONObject()
        object["id"] = .string(id)
        object["providerId"] = .string(providerId)
        object["type"] = .string(type)
        object["displayName"] = .string(displayName)
        object["content"] = content
        object.set("createdAt", createdAt)
        return .object(object)
    }

    /// Appends the text of `json` (the same bytes) without building its tree: an embedded host
    /// writes an item per `items/*` request. Returns where the `providerId` value (a string token,
    /// quotes included) was written in `output`: the host routes by it without reading it back.
    @discardableResult
    package func appendJSON(to output: inout [UInt8]) -> Range<Int> {
        output.append(contentsOf: #"{"id":"#.utf8)
        JSONWriter.appendString(id, to: &output)
        output.append(contentsOf: #","providerId":"#.utf8)
        let providerIDStart = output.count
        JSONWriter.appendString(providerId, to: &output)
        let providerID = providerIDStart..<output.count
        output.append(contentsOf: #","type":"#.utf8)
        JSONWriter.appendString(type, to: &output)
        output.append(contentsOf: #","displayName":"#.utf8)
        JSONWriter.appendString(displayName, to: &output)
        output.append(contentsOf: #","content":"#.utf8)
        JSONWriter.append(content, to: &output)
        if let createdAt {
            output.append(contentsOf: #","createdAt":"#.utf8)
            JSONWriter.appendString(createdAt, to: &output)
        }
        output.append(UInt8(ascii: "}"))
        return providerID
    }
}

/// The visual tone of a chip or fact.
public enum Tone: String, Sendable, Hashable, CaseIterable {
    /// No emphasis.
    case neutral
    /// A good value (e.g. price up, goal met).
    case good
    /// Something to watch.
    case warning
    /// Needs attention (e.g. out of range).
    case attention
}
