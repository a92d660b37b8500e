/// What the host tells a provider instance when it opens it (the init JSON).
public struct ProviderContext: Sendable, Hashable {
    /// The ABI message version the host speaks (1).
    public var ctxpVersion: Int
    /// The provider id from the manifest; items this instance makes carry it.
    public var providerId: String
    /// The host's version, e.g. `0.1.0`.
    public var hostVersion: String
    /// The client's locale as a BCP 47 tag, e.g. `en-US`.
    public var locale: String
    /// Resolved setting values (manifest defaults overridden by host configuration).
    public var settings: ProviderSettings
    /// Permissions the client granted, e.g. `network`.
    public var grantedPermissions: Set<String>
    /// The provider's private folder (absolute path), created by the host: the only place it may
    /// write when its worker is sandboxed (also its `HOME`; `TMPDIR` is `tmp` inside it). nil when
    /// the host gave none (older hosts, tests).
    public var dataDirectory: String?
    /// What the client renders (init JSON `ui`; absent: everything). The SDK adapts every detail
    /// and chip to it (`ContextDetail.adapted(to:)`), so providers need not look at it.
    public var ui: UICapabilities = .everything

    /// Creates a context (for tests and for hosts that call providers directly).
    public init(
        providerId: String, hostVersion: String = "0.1.0", locale: String = "en-US",
        settings: ProviderSettings = ProviderSettings(), grantedPermissions: Set<String> = [], ctxpVersion: Int = 1,
        dataDirectory: String? = nil
    ) {
        self.dataDirectory = dataDirectory
        self.ctxpVersion = ctxpVersion
        self.providerId = providerId
        self.hostVersion = hostVersion
        self.locale = locale
        self.settings = settings
        self.grantedPermissions = grantedPermissions
    }

    /// Converts the init JSON
    /// `{"ctxpVersion":1,"providerId","hostVersion","locale","settings","grantedPermissions","dataDirectory","ui"?}`.
    public init(json: JSONValue, path: String = "init") throws(JSONDecodeError) {
        let reader = try JSONObjectReader(json, path: path)
        ctxpVersion = try reader.optionalInt("ctxpVersion") ?? 1
        guard ctxpVersion == 1 else {
            throw JSONDecodeError(path: reader.path("ctxpVersion"), message: "unsupported version \(ctxpVersion); this SDK speaks 1")
        }
        providerId = try reader.string("providerId")
        hostVersion = try reader.optionalString("hostVersion") ?? "0.0.0"
        locale = try reader.optionalString("locale") ?? "en-US"
        settings = ProviderSettings(try reader.optionalObject("settings")?.object ?? JSONObject())
        grantedPermissions = Set(try reader.optionalStrings("grantedPermissions") ?? [])
        dataDirectory = try reader.optionalString("dataDirectory")
        if let ui = reader.value("ui"), !ui.isNull {
            self.ui = try UICapabilities(json: ui, path: reader.path("ui"))
        }
    }

    /// The init JSON.
    public var json: JSONValue {
        var object: JSONObject = [
            "ctxpVersion": .number(Double(ctxpVersion)), "providerId": .string(providerId),
            "hostVersion": .string(hostVersion), "locale": .string(locale), "settings": .object(settings.values),
            "grantedPermissions": .array(grantedPermissions.sorted().map(JSONValue.string)),
        ]
        if let dataDirectory { object["dataDirectory"] = .string(dataDirectory) }
        if !ui.isEverything { object["ui"] = ui.json }
        return .object(object)
    }

    /// Whether the client granted `permission`.
    public func isGranted(_ permission: String) -> Bool { grantedPermissions.contains(permission) }

    /// A new item from this provider, stamped with a new id and the current time.
    public func makeItem(type: String, displayName: String, content: JSONValue) -> ContextItem {
        ContextItem(
            providerId: providerId, type: type, displayName: displayName, content: content,
            createdAt: ItemIdentity.nowRFC3339())
    }
}

/// Typed access to resolved settings. Accessors answer `nil` for a missing setting or one of
/// another type.
public struct ProviderSettings: Sendable, Hashable {
    /// The raw values.
    public var values: JSONObject

    /// Wraps raw values.
    public init(_ values: JSONObject = JSONObject()) {
        self.values = values
    }

    /// The raw value of a setting, `nil` when absent or `null`.
    public subscript(key: String) -> JSONValue? {
        guard let value = values[key], !value.isNull else { return nil }
        return value
    }

    /// A string setting.
    public func string(_ key: String) -> String? { self[key]?.stringValue }

    /// An integer setting.
    public func int(_ key: String) -> Int? { self[key]?.intValue }

    /// A number setting.
    public func double(_ key: String) -> Double? { self[key]?.numberValue }

    /// A Boolean setting.
    public func bool(_ key: String) -> Bool? { self[key]?.boolValue }

    /// A list-of-strings setting.
    public func strings(_ key: String) -> [String]? {
        guard let array = self[key]?.arrayValue else { return nil }
        var result: [String] = []
        for element in array {
            guard let string = element.stringValue else { return nil }
            result.append(string)
        }
        return result
    }

    /// A path setting with a leading `~` expanded to `$HOME`.
    public func path(_ key: String) -> String? {
        guard let path = string(key) else { return nil }
        return Self.expandTilde(path)
    }

    /// Expands a leading `~` or `~/` to the home directory.
    public static func expandTilde(_ path: String) -> String {
        guard path == "~" || path.hasPrefix("~/"), let home = environmentValue("HOME") else { return path }
        return home + path.dropFirst()
    }
}

extension ProviderContext {
    /// Reports progress of the request being handled: the host passes it to the client as
    /// `$/progress` when the client asked (a `progressToken`). `done` and `total` are in any unit
    /// (bytes, items); call it as often as you like: the SDK sends at most one every 50 ms, and
    /// always the one with `done == total`. Outside a request's task (or after its answer) it does
    /// nothing. Invalid numbers (not finite, negative, `done > total`) are ignored.
    public func reportProgress(done: Double, total: Double? = nil, message: String? = nil) {
        RequestChannel.current?.progress(done: done, total: total, message: message)
    }

    /// Logs a line: through the request being handled to the host's log and, if the client asked
    /// for that level, to the client (`log/message`); outside a request, to standard error.
    /// Never log secrets or whole inputs. Lines are cut at 1,000 characters.
    public func log(_ level: LogLevel, _ message: String) {
        guard level != .off else { return }
        let text = String(message.prefix(ProviderLogNotification.maximumMessageLength))
        if let channel = RequestChannel.current {
            channel.log(level, text)
        } else {
            writeStandardError("[\(providerId)] \(level.rawValue): \(text)\n")
        }
    }
}
