// One codec for the protocol's object-shaped wire types: each type lists its members once, in a
// `WireFields` table (key, the property it fills, how it is read, written and described), and its
// `init(json:path:)`, `json` and `schema` come from that table. The readers are JSONObjectReader's,
// so errors (paths and wording) are the same as a hand-written conversion's.
//
// Size: every function a table calls is kept generic (`@inline(never)` and the
// `optimize.sil.specialize.generic.never` semantics), so the codec exists once in a binary instead
// of once per wire type. Every provider links this module whole (its types' metadata keep it), and
// the per-type copies the optimiser made took Note's release library from 0.88 to 1.20 MB of text
// (docs/sdk.md §1). The items/* hot path does not go through tables (hand-written codecs).

/// A value whose JSON object form is described by one table of its members, `wireFields`.
///
/// `init(json:path:)` and `json` (and `schema`, for wire values) come from the table: the members
/// are read and written in the table's order, members named nowhere in it are kept in the table's
/// `extra` property when it has one. The tables are built in this module.
public protocol WireObject: JSONConvertible {
    /// The members, in wire order, and the value decoding starts from.
    static var wireFields: WireFields<Self> { get }
}

extension WireObject {
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    public init(json: JSONValue, path: String) throws(JSONDecodeError) {
        self = try Self.wireFields.decode(json, path: path)
    }

    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    public var json: JSONValue { Self.wireFields.encode(self) }
}

extension WireObject where Self: WireValue {
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    public static var schema: JSONValue { Self.wireFields.schema }
}

/// The member table of a `WireObject`: built only in this module (`package` initialisers).
public struct WireFields<Root: Sendable>: Sendable {
    let blank: Root
    let fields: [WireField<Root>]
    private(set) var extra: (WritableKeyPath<Root, JSONObject> & Sendable)?
    let known: Set<String>
    let readsNullAsEmpty: Bool
    let description: String?
    let required: [String]
    let additional: Bool
    let check: (@Sendable (Root, JSONObjectReader) throws(JSONDecodeError) -> Void)?

    /// A table: `blank` is the value decoding fills (its members are overwritten or are the
    /// defaults of absent optional members); `params` reads absent or `null` as `{}`; `required`
    /// overrides the schema's required list (default: the members the decoder requires, in order);
    /// `check` vets the decoded value (ranges across members).
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package init(
        _ blank: Root, params: Bool = false, description: String? = nil, required: [String]? = nil, additional: Bool = true,
        _ fields: [WireField<Root>], check: (@Sendable (Root, JSONObjectReader) throws(JSONDecodeError) -> Void)? = nil
    ) {
        self.check = check
        self.blank = blank
        self.fields = fields
        self.extra = nil
        self.known = Set(fields.map(\.key))
        self.readsNullAsEmpty = params
        self.description = description
        self.required = required ?? fields.filter(\.required).map(\.key)
        self.additional = additional
    }

    /// A table whose unknown members are kept in `extra` (read as they came, written after the
    /// known ones).
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package init(
        _ blank: Root, extra: WireKeyPath<Root, JSONObject>, description: String? = nil, required: [String]? = nil,
        _ fields: [WireField<Root>]
    ) {
        self.init(blank, description: description, required: required, fields)
        self.extra = extra
    }

    /// Reads `json` (an object) into a value, member by member in table order.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package func decode(_ json: JSONValue, path: String) throws(JSONDecodeError) -> Root {
        if readsNullAsEmpty { return try decode(try JSONObjectReader.params(json, path: path)) }
        return try decode(try JSONObjectReader(json, path: path))
    }

    /// Reads the members of `reader`'s object into a value.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package func decode(_ reader: JSONObjectReader) throws(JSONDecodeError) -> Root {
        var value = blank
        for field in fields { try field.read(&value, reader) }
        if let extra { value[keyPath: extra] = reader.object.removing(known) }
        try check?(value, reader)
        return value
    }

    /// The object form of `value`: its members in table order, then its unknown ones.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package func encode(_ value: Root) -> JSONValue { .object(members(of: value)) }

    /// The members of `value`, appended to `object` (after any it has, e.g. a `type`).
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package func members(of value: Root, into object: JSONObject = JSONObject()) -> JSONObject {
        var object = object
        for field in fields { field.write(value, &object) }
        if let extra { object.append(value[keyPath: extra]) }
        return object
    }

    /// The object schema: the members' schemas in table order.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package var schema: JSONValue {
        var object: JSONObject = ["type": "object"]
        if let description { object["description"] = .string(description) }
        var members = JSONObject()
        for field in fields { members[field.key] = field.schema }
        object["properties"] = .object(members)
        if !required.isEmpty { object["required"] = .array(required.map(JSONValue.string)) }
        if !additional { object["additionalProperties"] = false }
        return .object(object)
    }
}

/// One member of a `WireFields` table.
public struct WireField<Root>: Sendable {
    let key: String
    let schema: JSONValue
    let required: Bool
    let read: @Sendable (inout Root, JSONObjectReader) throws(JSONDecodeError) -> Void
    let write: @Sendable (Root, inout JSONObject) -> Void

    /// A member with its own reading and writing (`write` sets nothing to leave it out).
    package init(
        _ key: String, schema: JSONValue, required: Bool = false,
        read: @escaping @Sendable (inout Root, JSONObjectReader) throws(JSONDecodeError) -> Void,
        write: @escaping @Sendable (Root, inout JSONObject) -> Void
    ) {
        self.key = key
        self.schema = schema
        self.required = required
        self.read = read
        self.write = write
    }
}

/// A key path a table may hold.
package typealias WireKeyPath<Root, Value> = WritableKeyPath<Root, Value> & Sendable

extension WireField {
    // MARK: Strings, numbers, Booleans

    /// A required string.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func string(_ key: String, _ keyPath: WireKeyPath<Root, String>, _ summary: String? = nil, schema: JSONValue? = nil) -> Self {
        Self(key, schema: schema ?? Schema.string(summary), required: true) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try reader.string(key)
        } write: { value, object in object[key] = .string(value[keyPath: keyPath]) }
    }

    /// An optional string.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func string(_ key: String, _ keyPath: WireKeyPath<Root, String?>, _ summary: String? = nil, schema: JSONValue? = nil) -> Self {
        Self(key, schema: schema ?? Schema.string(summary)) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try reader.optionalString(key)
        } write: { value, object in object.set(key, value[keyPath: keyPath]) }
    }

    /// A required integer.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func int(_ key: String, _ keyPath: WireKeyPath<Root, Int>, _ summary: String? = nil) -> Self {
        Self(key, schema: Schema.integer(summary), required: true) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try reader.int(key)
        } write: { value, object in object[key] = .number(Double(value[keyPath: keyPath])) }
    }

    /// An optional integer.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func int(_ key: String, _ keyPath: WireKeyPath<Root, Int?>, _ summary: String? = nil) -> Self {
        Self(key, schema: Schema.integer(summary)) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try reader.optionalInt(key)
        } write: { value, object in object.set(key, value[keyPath: keyPath]) }
    }

    /// A required number.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func double(_ key: String, _ keyPath: WireKeyPath<Root, Double>, _ summary: String? = nil) -> Self {
        Self(key, schema: Schema.number(summary), required: true) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try reader.double(key)
        } write: { value, object in object[key] = .number(value[keyPath: keyPath]) }
    }

    /// An optional number.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func double(_ key: String, _ keyPath: WireKeyPath<Root, Double?>, _ summary: String? = nil) -> Self {
        Self(key, schema: Schema.number(summary)) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try reader.optionalDouble(key)
        } write: { value, object in object.set(key, value[keyPath: keyPath]) }
    }

    /// A required Boolean.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func bool(_ key: String, _ keyPath: WireKeyPath<Root, Bool>, _ summary: String? = nil) -> Self {
        Self(key, schema: Schema.boolean(summary), required: true) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try reader.bool(key)
        } write: { value, object in object[key] = .bool(value[keyPath: keyPath]) }
    }

    /// An optional Boolean.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func bool(_ key: String, _ keyPath: WireKeyPath<Root, Bool?>, _ summary: String? = nil) -> Self {
        Self(key, schema: Schema.boolean(summary)) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try reader.optionalBool(key)
        } write: { value, object in object.set(key, value[keyPath: keyPath]) }
    }

    /// An optional string that must be one of `E`'s raw values.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func enumeration<E: RawRepresentable & CaseIterable & Sendable>(
        _ key: String, _ keyPath: WireKeyPath<Root, E?>, schema: JSONValue? = nil
    ) -> Self where E.RawValue == String {
        Self(key, schema: schema ?? Schema.oneOf(E.allCases.map(\.rawValue))) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try reader.optionalEnum(key)
        } write: { value, object in object.set(key, value[keyPath: keyPath]?.rawValue) }
    }

    /// A required string that must be one of `E`'s raw values.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func enumeration<E: RawRepresentable & CaseIterable & Sendable>(
        _ key: String, _ keyPath: WireKeyPath<Root, E>, schema: JSONValue? = nil
    ) -> Self where E.RawValue == String {
        Self(key, schema: schema ?? Schema.oneOf(E.allCases.map(\.rawValue)), required: true) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try reader.enum(key)
        } write: { value, object in object[key] = .string(value[keyPath: keyPath].rawValue) }
    }

    /// `"ctxui": 1`: written first by the ctxui documents; a reader checks the version when present.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static var ctxui: Self {
        Self("ctxui", schema: Schema.integer()) { (_, reader) throws(JSONDecodeError) in
            try reader.checkCtxuiVersion()
        } write: { _, object in object["ctxui"] = .number(Double(ctxuiVersion)) }
    }

    // MARK: Arrays

    /// An array of strings; with `whenAbsent`, optional on the wire and read as it when absent.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func strings(
        _ key: String, _ keyPath: WireKeyPath<Root, [String]>, _ summary: String? = nil, whenAbsent: [String]? = nil
    ) -> Self {
        Self(key, schema: Schema.array(Schema.string(), summary), required: whenAbsent == nil) { (value, reader) throws(JSONDecodeError) in
            if let whenAbsent { value[keyPath: keyPath] = try reader.optionalStrings(key) ?? whenAbsent } else { value[keyPath: keyPath] = try reader.strings(key) }
        } write: { value, object in object.setStrings(key, value[keyPath: keyPath]) }
    }

    /// An optional array of strings.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func strings(_ key: String, _ keyPath: WireKeyPath<Root, [String]?>, _ summary: String? = nil) -> Self {
        Self(key, schema: Schema.array(Schema.string(), summary)) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try reader.optionalStrings(key)
        } write: { value, object in object.setStrings(key, value[keyPath: keyPath]) }
    }

    /// An optional array of integers.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func ints(_ key: String, _ keyPath: WireKeyPath<Root, [Int]?>, _ summary: String? = nil) -> Self {
        Self(key, schema: Schema.array(Schema.integer(), summary)) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try reader.optionalInts(key)
        } write: { value, object in object.setInts(key, value[keyPath: keyPath]) }
    }

    // MARK: Nested values

    /// A required nested value (schema: `T.schema`, or `schema`); `expected` words the error
    /// when it is absent.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func value<T: WireValue>(
        _ key: String, _ keyPath: WireKeyPath<Root, T>, schema: JSONValue? = nil, expected: String = "an object"
    ) -> Self {
        Self(key, schema: schema ?? T.schema, required: true) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try T(json: reader.required(key, expected: expected), path: reader.path(key))
        } write: { value, object in object[key] = value[keyPath: keyPath].json }
    }

    /// An optional nested value (schema: `T.schema`, or `schema`).
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func value<T: WireValue>(_ key: String, _ keyPath: WireKeyPath<Root, T?>, schema: JSONValue? = nil) -> Self {
        Self(key, schema: schema ?? T.schema) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try reader.optionalDecode(key)
        } write: { value, object in object.set(key, value[keyPath: keyPath]) }
    }

    /// A nested value that is always written, as `null` when absent (schema: `schema` or null).
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func nullable<T: WireValue>(_ key: String, _ keyPath: WireKeyPath<Root, T?>) -> Self {
        Self(key, schema: Schema.nullable(T.schema), required: true) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try reader.optionalDecode(key)
        } write: { value, object in object[key] = value[keyPath: keyPath]?.json ?? .null }
    }

    /// An optional nested value whose schema is given.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func value<T: JSONConvertible>(_ key: String, _ keyPath: WireKeyPath<Root, T?>, schema: JSONValue) -> Self {
        Self(key, schema: schema) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try reader.optionalDecode(key)
        } write: { value, object in object.set(key, value[keyPath: keyPath]) }
    }

    /// A required nested value whose schema is given.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func value<T: JSONConvertible>(_ key: String, _ keyPath: WireKeyPath<Root, T>, schema: JSONValue) -> Self {
        Self(key, schema: schema, required: true) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try reader.decode(key)
        } write: { value, object in object[key] = value[keyPath: keyPath].json }
    }

    /// An array of nested values; with `whenAbsent`, optional on the wire and read as it when
    /// absent; `omitEmpty` leaves an empty array out of the wire form.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func values<T: JSONConvertible>(
        _ key: String, _ keyPath: WireKeyPath<Root, [T]>, schema: JSONValue, whenAbsent: [T]? = nil, omitEmpty: Bool = false
    ) -> Self {
        Self(key, schema: schema, required: whenAbsent == nil) { (value, reader) throws(JSONDecodeError) in
            if let whenAbsent { value[keyPath: keyPath] = try reader.optionalDecodeArray(key) ?? whenAbsent } else { value[keyPath: keyPath] = try reader.decodeArray(key) }
        } write: { value, object in
            let values = value[keyPath: keyPath]
            if !(omitEmpty && values.isEmpty) { object[key] = .array(values.map(\.json)) }
        }
    }

    /// An optional array of nested values.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func values<T: JSONConvertible>(_ key: String, _ keyPath: WireKeyPath<Root, [T]?>, schema: JSONValue) -> Self {
        Self(key, schema: schema) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try reader.optionalDecodeArray(key)
        } write: { value, object in object.set(key, value[keyPath: keyPath]) }
    }

    /// A required object, kept as it is.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func object(_ key: String, _ keyPath: WireKeyPath<Root, JSONObject>, schema: JSONValue) -> Self {
        Self(key, schema: schema, required: true) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try reader.object(key).object
        } write: { value, object in object[key] = .object(value[keyPath: keyPath]) }
    }

    /// An optional object, kept as it is.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func object(_ key: String, _ keyPath: WireKeyPath<Root, JSONObject?>, schema: JSONValue) -> Self {
        Self(key, schema: schema) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try reader.optionalRawObject(key)
        } write: { value, object in object.setObject(key, value[keyPath: keyPath]) }
    }

    /// An optional array of objects, kept as they are.
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func objects(_ key: String, _ keyPath: WireKeyPath<Root, [JSONObject]?>, schema: JSONValue) -> Self {
        Self(key, schema: schema) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try reader.optionalRawObjects(key)
        } write: { value, object in
            if let objects = value[keyPath: keyPath] { object[key] = .array(objects.map(JSONValue.object)) }
        }
    }

    /// An optional map of strings (written with its keys sorted).
    @inline(never) @_semantics("optimize.sil.specialize.generic.never")
    package static func stringMap(_ key: String, _ keyPath: WireKeyPath<Root, [String: String]?>, schema: JSONValue) -> Self {
        Self(key, schema: schema) { (value, reader) throws(JSONDecodeError) in
            value[keyPath: keyPath] = try reader.optionalStringMap(key)
        } write: { value, object in object.set(key, value[keyPath: keyPath]) }
    }
}

extension ContextItem {
    /// The value a table holding an item starts decoding from (no UUID is made).
    package static let blank = ContextItem(id: "", providerId: "", type: "", displayName: "")
}
