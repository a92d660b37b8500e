import ContextProviderKit

/// A validated provider manifest (docs/manifest.md). Build one with `Manifest.load(file:)` or
/// `Manifest.parse(_:file:)`, or find all of them with `ManifestCatalog.discover(_:)`.
package struct Manifest: Sendable, Equatable {
    /// The manifest format version; this host reads `1`.
    package var manifestVersion: Int
    /// Reverse-DNS identifier, unique across the catalog.
    package var id: String
    /// Display title, possibly localized.
    package var title: LocalizedText
    /// What the provider gives, in a sentence or two, possibly localized (`description`): shown
    /// by clients, and the description of its MCP tools.
    package var summary: LocalizedText? = nil
    /// Symbol name the client maps to an icon.
    package var iconName: String
    /// The provider's own version.
    package var version: Version
    /// Library file name or relative path, as written; resolve it with `LibraryResolver`.
    package var library: String
    /// Optional pin of the library's SHA-256 (64 lowercase hex digits). For an installed provider,
    /// the lock file's hash of its library for this platform.
    package var sha256: String?
    /// `libraries`: one library per platform (a bundle's manifest, docs/packages.md), in file order.
    /// When present, `library` is the entry for this machine's platform.
    package var libraries: [PlatformLibrary] = []
    /// `runtime` (and `swiftVersion`): which runtime the library carries, filled in by
    /// `context-host package`; nil when the manifest does not say.
    package var runtime: ProviderRuntime? = nil
    /// Higher is listed first. Default 0.
    package var priority: Int
    /// At most this many items of this provider per composer. Default 1.
    package var maximumAttachmentCount: Int
    /// Whether the collector wants a container panel. Default false.
    package var usesContainerPanel: Bool
    /// How items are collected. Default `.form`.
    package var collection: CollectionMode
    /// Where the provider runs. Default `.process`.
    package var isolation: IsolationMode
    /// Platforms, host versions and permissions.
    package var availability: Availability
    /// Declared settings, in file order.
    package var settings: [ManifestSetting]
    /// `network`: the origins the provider may ask the host to fetch from (the broker,
    /// docs/security.md "Egress"); nil when the manifest declares none.
    package var network: NetworkPolicy? = nil
    /// Per-call timeouts.
    package var timeouts: Timeouts
    /// The manifest file as the user named it (used in diagnostics).
    package var manifestPath: String
    /// Absolute path of the folder that holds the manifest; `library` and relative `path` settings
    /// resolve against it.
    package var directory: String
    /// The `$schema=` target of a first-line `# yaml-language-server: $schema=…` comment, if present.
    package var schemaReference: String?
    /// 1-based positions of the values of fields, keyed by field path (`id`, `library`, `sha256`,
    /// `settings.x`, …), so later stages can point at them.
    package var sourceLocations: SourceLocations

    /// Field paths and where their values are, sorted by path: built once per manifest (and read
    /// back from the registry cache without hashing a string), looked up only for diagnostics.
    package struct SourceLocations: Sendable, Hashable {
        package private(set) var fields: [String] = []
        package private(set) var locations: [SourceLocation] = []

        package init(_ dictionary: [String: SourceLocation] = [:]) {
            for (field, location) in dictionary.sorted(by: { $0.key < $1.key }) {
                fields.append(field)
                locations.append(location)
            }
        }

        /// From pairs already in ascending field order; nil if they are not.
        package init?(sortedFields fields: [String], locations: [SourceLocation]) {
            guard fields.count == locations.count, zip(fields, fields.dropFirst()).allSatisfy({ $0 < $1 }) else { return nil }
            self.fields = fields
            self.locations = locations
        }

        package var count: Int { fields.count }

        package subscript(field: String) -> SourceLocation? {
            var low = 0
            var high = fields.count
            while low < high {
                let middle = (low + high) / 2
                if fields[middle] < field { low = middle + 1 } else { high = middle }
            }
            return low < fields.count && fields[low] == field ? locations[low] : nil
        }
    }

    package struct SourceLocation: Sendable, Hashable {
        package var line: Int
        package var column: Int

        package init(line: Int, column: Int) {
            self.line = line
            self.column = column
        }
    }

    /// A diagnostic positioned at the value of `fieldPath` in this manifest (or at 1:1 if unknown).
    package func diagnostic(
        _ code: ManifestErrorCode, at fieldPath: String, message: String, hint: String
    ) -> ManifestDiagnostic {
        let location = sourceLocations[fieldPath] ?? SourceLocation(line: 1, column: 1)
        return ManifestDiagnostic(
            file: manifestPath, line: location.line, column: location.column, fieldPath: fieldPath, code: code,
            message: message, hint: hint)
    }

    /// The diagnostic the loader reports when the loaded bytes do not hash to `sha256`.
    package func sha256MismatchDiagnostic(actual: String, libraryPath: String) -> ManifestDiagnostic {
        diagnostic(
            .sha256Mismatch, at: "sha256",
            message: "the library '\(libraryPath)' has SHA-256 \(actual), but the manifest pins \(sha256 ?? "nothing")",
            hint: "if you rebuilt or updated the library on purpose, set 'sha256: \(actual)'; otherwise the "
                + "file was changed by someone else: do not load it")
    }

    /// The supported `manifestVersion`.
    package static let supportedManifestVersion = 1
}

/// One entry of a manifest's `libraries`: the library for one platform.
package struct PlatformLibrary: Sendable, Hashable {
    /// `linux-x86_64`, `linux-aarch64`, `macos-arm64` or `macos-x86_64`.
    package var platform: String
    /// Relative to the manifest's folder, e.g. `lib/linux-x86_64/libWeatherProvider.so`.
    package var path: String

    package init(platform: String, path: String) {
        self.platform = platform
        self.path = path
    }
}

/// How a provider collects items.
package enum CollectionMode: String, Sendable, Hashable, CaseIterable {
    /// Through a declarative form the host drives.
    case form
    /// Through the provider's own calls (`collect/start` → provider logic).
    case programmatic
    /// Either.
    case both
}

/// Where a provider's library runs.
package enum IsolationMode: String, Sendable, Hashable, CaseIterable {
    /// In a `context-host worker` child process.
    case process
    /// In the host process.
    case inProcess = "in-process"
}

/// An operating system a provider supports.
package enum ManifestPlatform: String, Sendable, Hashable, CaseIterable {
    case linux
    case macos
    // `ManifestPlatform.current` is declared by the registry (Registry/ProviderRegistry.swift).
}

/// A permission a provider needs; the client grants it (or not) at `initialize`.
package struct ManifestPermission: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    package var rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package var description: String { rawValue }

    package static let network = Self(rawValue: "network")
    package static let location = Self(rawValue: "location")
    package static let health = Self(rawValue: "health")
    package static let calendar = Self(rawValue: "calendar")
    package static let files = Self(rawValue: "files")
    package static let contacts = Self(rawValue: "contacts")
    /// Start processes (`fork`, `execve`); refused by the worker sandbox without it.
    package static let exec = Self(rawValue: "exec")

    /// Every permission a manifest may name.
    package static let known: [ManifestPermission] = [.network, .location, .health, .calendar, .files, .contacts, .exec]
}

/// Where and when a provider is available.
package struct Availability: Sendable, Hashable {
    /// Default: every platform.
    package var platforms: [ManifestPlatform]
    /// Host versions the provider works with; `nil` means any.
    package var host: VersionRange?
    /// Permissions the provider needs. Default none.
    package var permissions: [ManifestPermission]

    package init(
        platforms: [ManifestPlatform] = ManifestPlatform.allCases, host: VersionRange? = nil,
        permissions: [ManifestPermission] = []
    ) {
        self.platforms = platforms
        self.host = host
        self.permissions = permissions
    }
}

/// Per-call timeouts. Each is > 0 and ≤ `Timeouts.maximum`.
package struct Timeouts: Sendable, Hashable {
    package var collect: Duration
    package var preview: Duration
    package var detail: Duration
    package var encode: Duration

    package init(
        collect: Duration = .seconds(30), preview: Duration = .milliseconds(500), detail: Duration = .seconds(2),
        encode: Duration = .seconds(1)
    ) {
        self.collect = collect
        self.preview = preview
        self.detail = detail
        self.encode = encode
    }

    /// The largest timeout a manifest may ask for.
    package static let maximum: Duration = .seconds(300)
}

extension Duration {
    /// Parses a manifest duration: a number (decimals allowed) and a unit `ms`, `s` or `m`,
    /// e.g. `500ms`, `1.5s`, `2m`. `nil` if it is not one.
    package init?(manifestText text: String) {
        var number = Substring(text)
        let scale: Double
        if number.hasSuffix("ms") {
            number = number.dropLast(2)
            scale = 1e-3
        } else if number.hasSuffix("s") {
            number = number.dropLast()
            scale = 1
        } else if number.hasSuffix("m") {
            number = number.dropLast()
            scale = 60
        } else {
            return nil
        }
        let parts = number.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count <= 2, !parts[0].isEmpty,
            parts.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 } }),
            let value = Double(number)
        else { return nil }
        let nanoseconds = (value * scale * 1e9).rounded()
        guard nanoseconds < 1e18 else { return nil }
        self = .nanoseconds(Int64(nanoseconds))
    }

    /// Short text for messages: `500ms`, `2s`, `1.5s`, `5m`.
    package var manifestText: String {
        let ms = Double(components.seconds) * 1000 + Double(components.attoseconds) / 1e15
        if ms.truncatingRemainder(dividingBy: 60_000) == 0, ms >= 60_000 { return "\(Int(ms / 60_000))m" }
        if ms.truncatingRemainder(dividingBy: 1000) == 0, ms >= 1000 { return "\(Int(ms / 1000))s" }
        if ms.rounded() == ms { return "\(Int(ms))ms" }
        return "\(ms)ms"
    }

    /// Whole milliseconds (rounded up), handy for timers; clamped to `Int`'s range (an embedder's
    /// or a cache file's duration may be near `Int64.max` seconds).
    package var milliseconds: Int {
        let c = components
        let (whole, overflow) = Int(c.seconds).multipliedReportingOverflow(by: 1000)
        if overflow { return c.seconds < 0 ? .min : .max }
        let (total, carried) = whole.addingReportingOverflow(Int((c.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000))
        return carried ? .max : total
    }
}

/// Text that may be localized: one string, or a map of locale → string in file order.
package struct LocalizedText: Sendable, Hashable, CustomStringConvertible {
    package struct Entry: Sendable, Hashable {
        /// BCP 47-ish locale (`en`, `pt-BR`, `zh_Hans`); empty for unlocalized text.
        package var locale: String
        package var text: String

        package init(locale: String, text: String) {
            self.locale = locale
            self.text = text
        }
    }

    /// At least one entry.
    package var entries: [Entry]

    /// Unlocalized text.
    package init(_ text: String) {
        entries = [Entry(locale: "", text: text)]
    }

    package init(entries: [Entry]) {
        precondition(!entries.isEmpty, "LocalizedText needs at least one entry")
        self.entries = entries
    }

    /// Whether the text is one unlocalized string.
    package var isLocalized: Bool { !(entries.count == 1 && entries[0].locale.isEmpty) }

    /// The best text for `locale`: exact match (ignoring case and `-`/`_`), then the bare language
    /// (`pt` for `pt-BR`), then another region of the same language, then `en`, then the first entry.
    package func resolve(locale: String?) -> String {
        if let locale, !locale.isEmpty {
            let wanted = LocalizedText.normalize(locale)
            if let entry = entries.first(where: { LocalizedText.normalize($0.locale) == wanted }) { return entry.text }
            let language = LocalizedText.language(of: wanted)
            if let entry = entries.first(where: { LocalizedText.normalize($0.locale) == language }) {
                return entry.text
            }
            if let entry = entries.first(where: { LocalizedText.language(of: LocalizedText.normalize($0.locale)) == language }) {
                return entry.text
            }
        }
        if let entry = entries.first(where: { LocalizedText.normalize($0.locale) == "en" }) { return entry.text }
        return entries[0].text
    }

    /// The first entry's text.
    package var description: String { resolve(locale: nil) }

    private static func normalize(_ locale: String) -> String {
        String(locale.lowercased().map { $0 == "_" ? "-" : $0 })
    }

    private static func language(of normalized: String) -> String {
        String(normalized.prefix { $0 != "-" })
    }
}

/// The type of a setting.
package enum SettingType: String, Sendable, Hashable, CaseIterable {
    case string
    /// A file-system path: `~` expands to the home folder, relative paths resolve against the manifest's folder.
    case path
    case number
    case integer
    case bool
    /// A credential (API key, password): never in the provider's settings, a configuration file,
    /// a client's view or a log. Set with `context-host secrets set` or `secrets/set`, kept
    /// encrypted by the host, and injected by the host into brokered requests (`inject`).
    case secret
}

/// What a sandboxed worker may do at a `path` setting's value.
package enum SettingAccess: String, Sendable, CaseIterable {
    case read
    case write
}

/// One declared setting.
package struct ManifestSetting: Sendable, Hashable {
    package var name: String
    package var type: SettingType
    /// Already checked against `type`. For `path`, unexpanded.
    package var defaultValue: JSONValue?
    package var description: String?
    /// A required setting with no default must be given a value.
    package var isRequired: Bool
    /// `access: write` (path settings only): a sandboxed worker may write there (a cache folder);
    /// other path settings are read-only.
    package var isWritable: Bool = false
    /// `inject` (secret settings only): where the host puts the secret in brokered requests.
    package var inject: SecretInjection? = nil

    package init(
        name: String, type: SettingType, defaultValue: JSONValue? = nil, description: String? = nil,
        isRequired: Bool = false
    ) {
        self.name = name
        self.type = type
        self.defaultValue = defaultValue
        self.description = description
        self.isRequired = isRequired
    }
}
