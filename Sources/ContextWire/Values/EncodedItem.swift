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
public struct EncodedItem: JSONConvertible, Hashable {
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

    /// Converts the wire form; `data` must be valid Base64.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        representation = try reader.enum("representation")
        contentType = try reader.string("contentType")
        let base64 = try reader.string("data")
        guard let bytes = Base64.decode(base64) else {
            throw JSONDecodeError(path: reader.path("data"), message: "expected Base64 text")
        }
        data = bytes
        metadata = try reader.optionalStringMap("metadata") ?? [:]
    }

    /// The wire form (metadata keys sorted).
    public var json: JSONValue {
        var object = JSONObject()
        object["representation"] = .string(representation.rawValue)
        object["contentType"] = .string(contentType)
        object["data"] = .string(Base64.encode(data))
        object.set("metadata", metadata)
        return .object(object)
    }
}

/// Whether a provider can work right now (e.g. its data folder exists).
public struct Availability: JSONConvertible, Hashable {
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

    /// Converts `{"available":Bool,"reason"?:String}`.
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        available = try reader.bool("available")
        reason = try reader.optionalString("reason")
    }

    /// The wire form.
    public var json: JSONValue {
        var object = JSONObject()
        object["available"] = .bool(available)
        object.set("reason", reason)
        return .object(object)
    }
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
