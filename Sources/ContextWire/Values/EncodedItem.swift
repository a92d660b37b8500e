/// How encoded bytes should be read.
public enum EncodingRepresentation: String, Sendable, Hashable, CaseIterable {
    /// UTF-8 JSON.
    case json
    /// UTF-8 text.
    case text
    /// Opaque bytes; see `contentType`.
    case binary
}

/// An item encoded for transport to a chat backend (the seed's `encodeForTransport`).
///
/// Wire form: `{"representation","contentType","data":base64,"metadata":{String:String}}`.
public struct EncodedItem: WireObject, Hashable {
    /// How to read `data`.
    public var representation: EncodingRepresentation
    /// A MIME type, e.g. `application/json`.
    public var contentType: String
    /// The encoded bytes (Base64 on the wire).
    public var data: [UInt8]
    /// Extra string metadata for the backend.
    public var metadata: [String: String]

    /// Creates an encoding.
    public init(
        representation: EncodingRepresentation, contentType: String, data: [UInt8], metadata: [String: String] = [:]
    ) {
        self.representation = representation
        self.contentType = contentType
        self.data = data
        self.metadata = metadata
    }

    /// A JSON encoding of `value` (`application/json`).
    public static func json(_ value: JSONValue, metadata: [String: String] = [:]) -> EncodedItem {
        EncodedItem(representation: .json, contentType: "application/json", data: value.jsonBytes, metadata: metadata)
    }

    /// A text encoding (`text/plain; charset=utf-8` unless given).
    public static func text(
        _ text: String, contentType: String = "text/plain; charset=utf-8", metadata: [String: String] = [:]
    ) -> EncodedItem {
        EncodedItem(representation: .text, contentType: contentType, data: Array(text.utf8), metadata: metadata)
    }

    /// `data` must be valid Base64; metadata keys are written sorted.
    public static let wireFields = WireFields<Self>(Self(representation: .json, contentType: "", data: []), [
        .enumeration("representation", \.representation), .string("contentType", \.contentType),
        WireField("data", schema: Schema.string("Base64."), required: true) { (value, reader) throws(JSONDecodeError) in
            guard let bytes = Base64.decode(try reader.string("data")) else {
                throw JSONDecodeError(path: reader.path("data"), message: "expected Base64 text")
            }
            value.data = bytes
        } write: { value, object in object["data"] = .string(Base64.encode(value.data)) },
        WireField("metadata", schema: ["type": "object", "additionalProperties": ["type": "string"]]) { (value, reader) throws(JSONDecodeError) in
            value.metadata = try reader.optionalStringMap("metadata") ?? [:]
        } write: { value, object in object.set("metadata", value.metadata) },
    ])
}

/// Whether a provider can work right now (e.g. its data folder exists).
public struct Availability: WireObject, Hashable {
    /// Whether the provider can be used.
    public var available: Bool
    /// Why not, in words a user can act on.
    public var reason: String?

    /// Creates an availability.
    public init(available: Bool, reason: String? = nil) {
        self.available = available
        self.reason = reason
    }

    /// Available.
    public static let available = Availability(available: true)

    /// Unavailable, with a reason.
    public static func unavailable(_ reason: String) -> Availability {
        Availability(available: false, reason: reason)
    }

    /// `{"available":Bool,"reason"?:String}`.
    public static let wireFields = WireFields<Self>(Self(available: false), [
        .bool("available", \.available), .string("reason", \.reason, "Why not, in words a user can act on."),
    ])
}

/// A provider's identity, as answered by `provider/info`.
public struct ProviderMetadata: JSONConvertible, Hashable {
    /// Reverse-DNS id, e.g. `com.contexthost.note`; should match the manifest.
    public var id: String
    /// The human-readable name, e.g. `Note`.
    public var title: String
    /// The provider's version, e.g. `1.0.0`.
    public var version: String
    /// The symbol for menus and default chips, e.g. `note.text`.
    public var iconName: String

    /// Creates metadata.
    public init(id: String, title: String, version: String, iconName: String) {
        self.id = id
        self.title = title
        self.version = version
        self.iconName = iconName
    }

    /// Converts `{"id","title","version","iconName"?,"ctxui"?}`.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        try reader.checkCtxuiVersion()
        id = try reader.string("id")
        title = try reader.string("title")
        version = try reader.string("version")
        iconName = try reader.optionalString("iconName") ?? ""
    }

    /// The wire form, with `"ctxui":1`.
    public var json: JSONValue {
        var object = JSONObject()
        object["id"] = .string(id)
        object["title"] = .string(title)
        object["version"] = .string(version)
        object["iconName"] = .string(iconName)
        object["ctxui"] = .number(Double(ctxuiVersion))
        return .object(object)
    }
}
