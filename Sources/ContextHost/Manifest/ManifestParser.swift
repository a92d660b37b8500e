import ContextProviderKit

extension Manifest {
    /// Top-level fields, in documentation order.
    package static let topLevelFields = [
        "manifestVersion", "id", "title", "description", "iconName", "version", "library", "libraries", "runtime", "swiftVersion",
        "sha256", "priority",
        "maximumAttachmentCount", "usesContainerPanel", "collection", "isolation", "availability", "settings",
        "network", "timeouts",
    ]
    /// Fields every manifest has; it also needs `library` or `libraries` (checked on their own).
    package static let requiredFields = ["manifestVersion", "id", "title", "iconName", "version"]
    package static let availabilityFields = ["platforms", "host", "permissions"]
    package static let timeoutFields = ["collect", "preview", "detail", "encode"]
    package static let settingFields = ["type", "default", "description", "required", "access", "inject"]

    /// Reads and validates the manifest at `path` (as the user named it; relative paths are relative to
    /// the current directory). Every problem is collected before throwing.
    package static func load(file path: String) throws(ManifestRejection) -> Manifest {
        switch ManifestFileSystem.readFile(path) {
        case .success(let bytes):
            return try parse(bytes: bytes, file: path)
        case .failure(let error):
            throw ManifestRejection(
                path: path, id: nil,
                diagnostics: [
                    ManifestDiagnostic(
                        file: path, line: 0, column: 0, fieldPath: "", code: .unreadableFile,
                        message: "cannot read the manifest: \(error.message)",
                        hint: "check that the file exists and is readable by the host's user")
                ])
        }
    }

    /// Validates manifest text. `file` names it in diagnostics; `directory` is the absolute folder
    /// `library` and relative paths resolve against (default: the folder of `file`, made absolute).
    package static func parse(_ text: String, file: String, directory: String? = nil) throws(ManifestRejection)
        -> Manifest
    {
        try parse(bytes: Array(text.utf8), file: file, directory: directory)
    }

    /// Validates manifest bytes (UTF-8). See `parse(_:file:directory:)`.
    package static func parse(bytes: [UInt8], file: String, directory: String? = nil) throws(ManifestRejection)
        -> Manifest
    {
        let folder =
            directory
            ?? ManifestFileSystem.absolute(
                ManifestFileSystem.directoryName(file), base: ManifestFileSystem.currentDirectory())
        var validator = ManifestValidator(file: file)
        let document = YAMLReader.read(bytes)
        let manifest = validator.validate(document, directory: folder, schemaReference: schemaReference(in: bytes))
        if let manifest, validator.diagnostics.isEmpty { return manifest }
        // In file order, like a compiler (the sort is stable for equal positions).
        let sorted = validator.diagnostics.enumerated().sorted {
            ($0.element.line, $0.element.column, $0.offset) < ($1.element.line, $1.element.column, $1.offset)
        }.map(\.element)
        throw ManifestRejection(path: file, id: validator.id, diagnostics: sorted)
    }

    /// The `$schema=` value of a first-line `# yaml-language-server: $schema=…` comment.
    static func schemaReference(in bytes: [UInt8]) -> String? {
        var line = bytes.prefix { $0 != 0x0A && $0 != 0x0D }
        if line.starts(with: [0xEF, 0xBB, 0xBF]) { line = line.dropFirst(3) }
        let text = String(decoding: line, as: UTF8.self)
        guard text.hasPrefix("#") else { return nil }
        let comment = text.dropFirst().drop { $0 == " " }
        guard comment.hasPrefix("yaml-language-server:") else { return nil }
        var rest = comment.dropFirst("yaml-language-server:".count)
        while !rest.isEmpty, !rest.hasPrefix("$schema=") { rest = rest.dropFirst() }
        guard !rest.isEmpty else { return nil }
        let value = rest.dropFirst("$schema=".count).prefix { $0 != " " && $0 != "\t" }
        return value.isEmpty ? nil : String(value)
    }
}

/// Turns a YAML tree into a `Manifest`, collecting every problem.
package struct ManifestValidator {
    let file: String
    var diagnostics: [ManifestDiagnostic] = []
    var locations: [String: Manifest.SourceLocation] = [:]
    /// The id, once read (even if other fields are wrong), for listings of rejected manifests.
    var id: String?

    init(file: String) {
        self.file = file
    }

    // MARK: Reporting

    mutating func report(
        _ code: ManifestErrorCode, line: Int, column: Int, _ path: String, _ message: String, hint: String
    ) {
        diagnostics.append(
            ManifestDiagnostic(
                file: file, line: line, column: column, fieldPath: path, code: code, message: message, hint: hint))
    }

    mutating func report(_ code: ManifestErrorCode, at node: YAMLNode, _ path: String, _ message: String, hint: String)
    {
        report(code, line: node.line, column: node.column, path, message, hint: hint)
    }

    static func describe(_ node: YAMLNode) -> String {
        switch node.content {
        case .sequence: return "a list"
        case .mapping: return "a mapping"
        case .scalar(let text, _):
            let value = node.scalarValue ?? .string(text)
            let shown = text.count > 40 ? String(text.prefix(40)) + "…" : text
            switch value {
            case .null: return "null (an empty value)"
            case .string: return "the string '\(shown)'"
            default: return "the \(value.typeName) \(shown)"
            }
        }
    }

    mutating func wrongType(_ node: YAMLNode, _ path: String, expected: String, hint: String? = nil) {
        var fix = hint ?? "write \(expected) here"
        if hint == nil, case .scalar(let text, let style) = node.content, style != .plain,
            expected.contains("integer") || expected.contains("number") || expected.contains("boolean"),
            YAMLNode.resolvePlain(text) != .string(text)
        {
            fix = "remove the quotes: \(text)"
        } else if hint == nil, node.scalarValue == .null {
            fix = "give '\(Self.leaf(path))' a value, or remove the line"
        }
        report(.wrongType, at: node, path, "expected \(expected), found \(Self.describe(node))", hint: fix)
    }

    static func leaf(_ path: String) -> String {
        String(path.split(separator: ".").last ?? Substring(path))
    }

    static func join(_ path: String, _ key: String) -> String {
        path.isEmpty ? key : "\(path).\(key)"
    }

    // MARK: Typed readers

    /// A strict string (a quoted scalar, or a plain one that is not a number, boolean or null).
    mutating func string(_ node: YAMLNode, _ path: String, nonEmpty: Bool = true) -> String? {
        guard case .string(let text) = node.scalarValue else {
            var hint: String?
            if case .scalar(let text, _) = node.content, node.scalarValue != .null {
                hint = "quote it: '\(text)'"
            }
            wrongType(node, path, expected: "a string", hint: hint)
            return nil
        }
        if nonEmpty, text.allSatisfy(\.isWhitespace) {
            report(.invalidValue, at: node, path, "'\(Self.leaf(path))' is empty", hint: "write a non-empty value")
            return nil
        }
        return text
    }

    /// The text of any non-null scalar (for fields validated by their own syntax: versions, hashes).
    mutating func scalarText(_ node: YAMLNode, _ path: String, expected: String) -> String? {
        switch node.scalarValue {
        case nil, .null?:
            wrongType(node, path, expected: expected)
            return nil
        case .bool?:
            wrongType(node, path, expected: expected)
            return nil
        default:
            return node.scalarText
        }
    }

    mutating func integer(_ node: YAMLNode, _ path: String) -> Int? {
        switch node.scalarValue {
        case .int(let value)?: return value
        case .float(let value)?:
            report(
                .wrongType, at: node, path, "expected an integer, found the number \(node.scalarText ?? "\(value)")",
                hint: "write a whole number")
            return nil
        default:
            wrongType(node, path, expected: "an integer")
            return nil
        }
    }

    mutating func boolean(_ node: YAMLNode, _ path: String) -> Bool? {
        if case .bool(let value)? = node.scalarValue { return value }
        var hint: String?
        if case .string(let text)? = node.scalarValue,
            ["yes", "no", "on", "off", "y", "n"].contains(text.lowercased())
        {
            hint = "write true or false ('\(text)' is a string in YAML 1.2)"
        }
        wrongType(node, path, expected: "a boolean (true or false)", hint: hint)
        return nil
    }

    mutating func oneOf<E: RawRepresentable & CaseIterable>(_ node: YAMLNode, _ path: String, _: E.Type) -> E?
    where E.RawValue == String {
        guard let text = string(node, path) else { return nil }
        if let value = E(rawValue: text) { return value }
        let allowed = E.allCases.map(\.rawValue)
        var message = "'\(text)' is not one of \(allowed.joined(separator: ", "))"
        var hint = "use one of: \(allowed.joined(separator: ", "))"
        if let match = closestMatch(to: text, in: allowed) {
            message += "; did you mean '\(match)'?"
            hint = "write '\(match)'"
        }
        report(.invalidValue, at: node, path, message, hint: hint)
        return nil
    }

    /// The pairs of a mapping keyed by their scalar keys, after reporting unknown and non-scalar keys.
    mutating func fields(
        _ node: YAMLNode, _ path: String, known: [String]?, elsewhere: [String: String] = [:],
        expected: String = "a mapping"
    ) -> [String: YAMLNode.Pair]? {
        guard let pairs = node.pairs else {
            if path.isEmpty {
                report(
                    .notAMapping, at: node, path,
                    "a manifest must be a mapping of fields, found \(Self.describe(node))",
                    hint: "start with 'manifestVersion: 1' and write one 'field: value' per line")
            } else {
                wrongType(node, path, expected: expected)
            }
            return nil
        }
        var result: [String: YAMLNode.Pair] = [:]
        for pair in pairs {
            // A number or boolean used as a key (`1: x`) counts by its text.
            guard let key = pair.key.scalarText else {
                report(
                    .wrongType, at: pair.key, path, "expected a field name, found \(Self.describe(pair.key)) as a key",
                    hint: "keys must be plain names")
                continue
            }
            result[key] = pair
            if let known { checkKnown(key, pair, path, known, elsewhere) }
        }
        return result
    }

    private mutating func checkKnown(
        _ key: String, _ pair: YAMLNode.Pair, _ path: String, _ known: [String], _ elsewhere: [String: String]
    ) {
        guard !known.contains(key) else { return }
        let fieldPath = Self.join(path, key)
        if let match = closestMatch(to: key, in: known) {
            report(
                .unknownField, at: pair.key, fieldPath, "unknown field '\(key)'; did you mean '\(match)'?",
                hint: "rename it to '\(match)'")
        } else if let home = elsewhere[key] {
            report(
                .unknownField, at: pair.key, fieldPath, "unknown field '\(key)'; did you mean '\(home)'?",
                hint: "move it under '\(home.split(separator: ".").dropLast().joined(separator: "."))'")
        } else {
            let place = path.isEmpty ? "at the top level" : "in '\(path)'"
            report(
                .unknownField, at: pair.key, fieldPath, "unknown field '\(key)'",
                hint: "remove it; the fields allowed \(place) are: \(known.joined(separator: ", "))")
        }
    }

    mutating func missing(_ field: String, in node: YAMLNode, _ path: String, hint: String) {
        report(
            .missingField, at: node, Self.join(path, field),
            "missing required field '\(field)'" + (path.isEmpty ? "" : " in '\(path)'"), hint: hint)
    }

    mutating func record(_ path: String, _ node: YAMLNode) {
        locations[path] = Manifest.SourceLocation(line: node.line, column: node.column)
    }

    // MARK: The manifest

    mutating func validate(_ document: YAMLDocument, directory: String, schemaReference: String?) -> Manifest? {
        for problem in document.problems {
            report(problem.code, line: problem.line, column: problem.column, problem.fieldPath, problem.message,
                hint: problem.hint)
        }
        guard let root = document.root else {
            if document.problems.isEmpty {
                report(
                    .notAMapping, line: 1, column: 1, "", "the manifest is empty",
                    hint: "start with 'manifestVersion: 1', then 'id', 'title', 'iconName', 'version' and 'library'")
            }
            return nil
        }
        guard let top = fields(root, "", known: Manifest.topLevelFields, elsewhere: Self.nestedFieldHomes) else {
            return nil
        }
        for (key, pair) in top { record(key, pair.value) }

        // manifestVersion first: another version's fields are not ours to judge.
        var manifestVersion: Int?
        if let node = top["manifestVersion"]?.value {
            if let value = integer(node, "manifestVersion") {
                if value == Manifest.supportedManifestVersion {
                    manifestVersion = value
                } else {
                    diagnostics.removeAll { $0.code == .unknownField }
                    report(
                        .unsupportedVersion, at: node, "manifestVersion",
                        "manifestVersion \(value) is not supported; this host reads manifestVersion "
                            + "\(Manifest.supportedManifestVersion)",
                        hint: value > Manifest.supportedManifestVersion
                            ? "upgrade context-host, or ask the provider's author for a manifestVersion 1 manifest"
                            : "write 'manifestVersion: 1'")
                    return nil
                }
            }
        } else {
            missing("manifestVersion", in: root, "", hint: "add 'manifestVersion: 1' as the first line")
        }

        for field in Manifest.requiredFields where field != "manifestVersion" && top[field] == nil {
            missing(field, in: root, "", hint: Self.requiredFieldHints[field] ?? "add it")
        }

        // One library, or (a bundle's manifest) one per platform.
        if top["library"] == nil, top["libraries"] == nil {
            missing("library", in: root, "", hint: Self.requiredFieldHints["library"] ?? "add it")
        }

        let id = top["id"].flatMap { validateID($0.value) }
        self.id = id
        let title = top["title"].flatMap { validateTitle($0.value) }
        let summary = top["description"].flatMap { validateLocalized($0.value, field: "description", maximumLength: Self.maximumDescriptionLength) }
        let iconName = top["iconName"].flatMap { string($0.value, "iconName") }
        let version = top["version"].flatMap { pair -> Version? in
            guard let text = scalarText(pair.value, "version", expected: "a semantic version string") else {
                return nil
            }
            if let version = Version(text) { return version }
            report(
                .invalidVersion, at: pair.value, "version", "'\(text)' is not a semantic version (MAJOR.MINOR.PATCH)",
                hint: Self.versionHint(text))
            return nil
        }
        var library = top["library"].flatMap { validateLibrary($0.value) }
        var libraries: [PlatformLibrary] = []
        if let pair = top["libraries"] {
            libraries = validateLibraries(pair.value)
            if let single = top["library"] {
                report(
                    .invalidValue, at: single.value, "library", "'library' and 'libraries' are both given",
                    hint: "keep 'libraries' (one library per platform) and remove 'library'")
            } else if !libraries.isEmpty {
                library = libraryForThisPlatform(libraries, at: pair.value)
            }
        }
        let runtime = validateRuntime(top["runtime"]?.value, swiftVersion: top["swiftVersion"]?.value)
        var sha256: String?
        if let node = top["sha256"]?.value { sha256 = validateSHA256(node) }
        var priority = 0
        if let node = top["priority"]?.value { priority = integer(node, "priority") ?? 0 }
        var maximumAttachmentCount = 1
        if let node = top["maximumAttachmentCount"]?.value, let value = integer(node, "maximumAttachmentCount") {
            if value < 1 {
                report(
                    .invalidValue, at: node, "maximumAttachmentCount",
                    "maximumAttachmentCount must be at least 1, found \(value)",
                    hint: "write 1 or more (1 is the default)")
            }
            maximumAttachmentCount = value
        }
        var usesContainerPanel = false
        if let node = top["usesContainerPanel"]?.value {
            usesContainerPanel = boolean(node, "usesContainerPanel") ?? false
        }
        var collection = CollectionMode.form
        if let node = top["collection"]?.value { collection = oneOf(node, "collection", CollectionMode.self) ?? .form }
        var isolation = IsolationMode.process
        if let node = top["isolation"]?.value {
            isolation = oneOf(node, "isolation", IsolationMode.self) ?? .process
        }
        var availability = Availability()
        if let node = top["availability"]?.value { availability = validateAvailability(node) }
        var settings: [ManifestSetting] = []
        if let node = top["settings"]?.value { settings = validateSettings(node) }
        var network: NetworkPolicy?
        if let node = top["network"]?.value {
            record("network", node)
            network = validateNetwork(node)
        }
        checkNetworkReferences(network: network, settings: settings)
        var timeouts = Timeouts()
        if let node = top["timeouts"]?.value { timeouts = validateTimeouts(node) }

        guard diagnostics.isEmpty, let manifestVersion, let id, let title, let iconName, let version, let library
        else { return nil }
        var manifest = Manifest(
            manifestVersion: manifestVersion, id: id, title: title, iconName: iconName, version: version,
            library: library, sha256: sha256, priority: priority, maximumAttachmentCount: maximumAttachmentCount,
            usesContainerPanel: usesContainerPanel, collection: collection, isolation: isolation,
            availability: availability, settings: settings, timeouts: timeouts, manifestPath: file,
            directory: directory, schemaReference: schemaReference, sourceLocations: Manifest.SourceLocations(locations))
        manifest.libraries = libraries
        manifest.runtime = runtime
        manifest.summary = summary
        manifest.network = network
        return manifest
    }

    /// The longest `description` (in characters, per locale).
    static let maximumDescriptionLength = 1000

    static let requiredFieldHints: [String: String] = [
        "id": "add 'id: com.example.my-provider' (reverse-DNS, lowercase; it must never change)",
        "title": "add 'title: My Provider' (or a map of locale → text)",
        "iconName": "add 'iconName: doc.text' (a symbol name the client maps to an icon)",
        "version": "add 'version: 1.0.0' (the provider's semantic version)",
        "library": "add 'library: libMyProvider.so' (the provider's shared library, next to the manifest)",
    ]

    /// Nested fields written at the top level, for "did you mean 'availability.permissions'?".
    static let nestedFieldHomes: [String: String] = {
        var homes: [String: String] = [:]
        for key in Manifest.availabilityFields { homes[key] = "availability.\(key)" }
        for key in Manifest.timeoutFields { homes[key] = "timeouts.\(key)" }
        return homes
    }()

    static func versionHint(_ text: String) -> String {
        let numbers = text.split(separator: ".")
        if text.hasPrefix("v"), Version(String(text.dropFirst())) != nil {
            return "drop the 'v': \(text.dropFirst())"
        }
        if numbers.count < 3, numbers.allSatisfy({ Int($0) != nil }), !numbers.isEmpty {
            let padded = numbers.map(String.init) + Array(repeating: "0", count: 3 - numbers.count)
            return "write three numbers, e.g. \(padded.joined(separator: "."))"
        }
        return "write MAJOR.MINOR.PATCH with an optional -prerelease, e.g. 1.0.0 or 2.1.0-beta.1"
    }

    // MARK: Fields

    /// Lowercase letters, digits and `-`; labels separated by dots; at least two labels.
    package static func isValidID(_ id: String) -> Bool {
        guard id.utf8.count <= 255 else { return false }
        let labels = id.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return false }
        return labels.allSatisfy { label in
            !label.isEmpty && !label.hasPrefix("-") && !label.hasSuffix("-")
                && label.utf8.allSatisfy {
                    ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: "-")
                }
        }
    }

    mutating func validateID(_ node: YAMLNode) -> String? {
        guard let text = string(node, "id") else { return nil }
        if Self.isValidID(text) { return text }
        var hint = "use reverse-DNS: lowercase letters, digits and '-', at least two dot-separated labels, "
            + "e.g. com.example.my-provider"
        let suggestion = String(
            text.lowercased().map { $0 == "_" || $0 == " " ? "-" : $0 })
        if suggestion != text, Self.isValidID(suggestion) { hint = "write '\(suggestion)'" }
        let reason: String
        if !text.contains(".") {
            reason = "it needs at least two dot-separated labels"
        } else if text.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty) {
            reason = "it has an empty label"
        } else if text.contains(where: { $0.isUppercase }) {
            reason = "it has uppercase letters"
        } else {
            reason = "only lowercase letters, digits, '-' and '.' are allowed, and a label cannot start or end with '-'"
        }
        report(.invalidId, at: node, "id", "'\(text)' is not a valid reverse-DNS id: \(reason)", hint: hint)
        return nil
    }

    static func isValidLocale(_ locale: String) -> Bool {
        let parts = locale.split(separator: "-", omittingEmptySubsequences: false).flatMap {
            $0.split(separator: "_", omittingEmptySubsequences: false)
        }
        guard let language = parts.first, (2...3).contains(language.count),
            language.allSatisfy({ $0.isASCII && $0.isLetter })
        else { return false }
        return parts.dropFirst().allSatisfy { (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
    }

    mutating func validateTitle(_ node: YAMLNode) -> LocalizedText? {
        validateLocalized(node, field: "title")
    }

    /// A string, or a map of locale → string (`title`, `description`); each text at most
    /// `maximumLength` characters when given.
    mutating func validateLocalized(_ node: YAMLNode, field: String, maximumLength: Int? = nil) -> LocalizedText? {
        let text = validateLocalizedText(node, field: field)
        if let maximumLength, let text, let long = text.entries.first(where: { $0.text.count > maximumLength }) {
            report(
                .invalidValue, at: node, field, "the \(field) has \(long.text.count) characters; at most \(maximumLength) are allowed",
                hint: "shorten it to a sentence or two")
            return nil
        }
        return text
    }

    private mutating func validateLocalizedText(_ node: YAMLNode, field: String) -> LocalizedText? {
        let example = field == "title" ? "My Provider" : "What it gives, in a sentence"
        switch node.content {
        case .scalar:
            return string(node, field).map(LocalizedText.init)
        case .mapping:
            guard let pairs = node.pairs, !pairs.isEmpty else {
                report(.invalidValue, at: node, field, "the \(field) map is empty",
                    hint: "add at least one locale, e.g. 'en: \(example)'")
                return nil
            }
            var entries: [LocalizedText.Entry] = []
            var ok = true
            for pair in pairs {
                guard let locale = pair.key.scalarText else {
                    wrongType(pair.key, field, expected: "a locale name as the key")
                    ok = false
                    continue
                }
                let path = "\(field).\(locale)"
                if !Self.isValidLocale(locale) {
                    report(
                        .invalidValue, at: pair.key, path, "'\(locale)' is not a locale",
                        hint: "use a language code with an optional region or script, e.g. en, de, pt-BR, zh-Hans")
                    ok = false
                }
                guard let text = string(pair.value, path) else {
                    ok = false
                    continue
                }
                entries.append(LocalizedText.Entry(locale: locale, text: text))
            }
            return ok && !entries.isEmpty ? LocalizedText(entries: entries) : nil
        case .sequence:
            wrongType(
                node, field, expected: "a string or a map of locale → string",
                hint: "write '\(field): \(example)', or one 'locale: text' line per language under '\(field):'")
            return nil
        }
    }

    mutating func validateLibrary(_ node: YAMLNode) -> String? {
        guard let text = string(node, "library") else { return nil }
        let name = text.split(separator: "/").last.map(String.init) ?? text
        if text.hasSuffix("/") || !(name.hasSuffix(".so") || name.hasSuffix(".dylib")) || name.hasPrefix(".so")
            || text.contains("\0")
        {
            report(
                .invalidValue, at: node, "library", "'\(text)' is not a shared library file name (.so or .dylib)",
                hint: "name the library file, e.g. 'library: libMyProvider.so'")
            return nil
        }
        return text
    }

    /// A mapping entry's key under `field` and its path (`field.key`), where its value is
    /// recorded; `nil` (reported: `keyExpected` says what the key should be) when the key is not text.
    mutating func entry(_ pair: YAMLNode.Pair, of field: String, keyExpected: String) -> (key: String, path: String)? {
        guard let key = pair.key.scalarText else {
            wrongType(pair.key, field, expected: keyExpected)
            return nil
        }
        let path = "\(field).\(key)"
        record(path, pair.value)
        return (key, path)
    }

    /// `libraries`: a mapping of platform → library path, each a known platform and a library file name.
    mutating func validateLibraries(_ node: YAMLNode) -> [PlatformLibrary] {
        guard let pairs = node.pairs else {
            wrongType(
                node, "libraries", expected: "a mapping of platform → library",
                hint: "write one 'linux-x86_64: lib/linux-x86_64/libMyProvider.so' line per platform under 'libraries:'")
            return []
        }
        var result: [PlatformLibrary] = []
        let known = PlatformID.allCases.map(\.rawValue)
        for pair in pairs {
            guard let (platform, path) = entry(pair, of: "libraries", keyExpected: "a platform name as the key") else { continue }
            guard known.contains(platform) else {
                var hint = "use one of: \(known.joined(separator: ", "))"
                if let match = closestMatch(to: platform, in: known) { hint = "write '\(match)'" }
                report(.invalidValue, at: pair.key, path, "'\(platform)' is not a platform this host knows", hint: hint)
                continue
            }
            guard let text = string(pair.value, path) else { continue }
            let name = text.split(separator: "/").last.map(String.init) ?? text
            guard !text.hasSuffix("/"), name.hasSuffix(".so") || name.hasSuffix(".dylib"), !name.hasPrefix(".so"),
                !text.contains("\0")
            else {
                report(
                    .invalidValue, at: pair.value, path, "'\(text)' is not a shared library file name (.so or .dylib)",
                    hint: "name the library file, e.g. 'lib/\(platform)/libMyProvider.so'")
                continue
            }
            result.append(PlatformLibrary(platform: platform, path: text))
        }
        if pairs.isEmpty {
            report(
                .invalidValue, at: node, "libraries", "'libraries' is empty",
                hint: "add one 'PLATFORM: path' line per platform, e.g. 'linux-x86_64: lib/linux-x86_64/libMyProvider.so'")
        }
        return result
    }

    /// The entry of `libraries` for the machine this runs on, or a `no-library-for-platform` diagnostic.
    mutating func libraryForThisPlatform(_ libraries: [PlatformLibrary], at node: YAMLNode) -> String? {
        let current = PlatformID.current?.rawValue ?? "unknown"
        if let entry = libraries.first(where: { $0.platform == current }) { return entry.path }
        report(
            .noLibraryForPlatform, at: node, "libraries",
            "this provider has libraries for \(libraries.map(\.platform).joined(separator: ", ")) only, not for this machine (\(current))",
            hint: "ask the provider's author for a build for \(current), or build it yourself and add it under 'libraries'")
        return nil
    }

    /// The values of `runtime`.
    enum RuntimeKind: String, CaseIterable {
        case native
        case swiftStatic = "swift-static"
        case swiftDynamic = "swift-dynamic"
    }

    /// `runtime` (`native`, `swift-static` or `swift-dynamic`) and, for `swift-dynamic`, `swiftVersion`.
    mutating func validateRuntime(_ node: YAMLNode?, swiftVersion versionNode: YAMLNode?) -> ProviderRuntime? {
        guard let node else {
            if let versionNode {
                report(
                    .invalidValue, at: versionNode, "swiftVersion", "'swiftVersion' is given without 'runtime: swift-dynamic'",
                    hint: "remove 'swiftVersion', or add 'runtime: swift-dynamic'")
            }
            return nil
        }
        guard let kind = oneOf(node, "runtime", RuntimeKind.self) else { return nil }
        switch kind {
        case .native, .swiftStatic:
            if let versionNode {
                report(
                    .invalidValue, at: versionNode, "swiftVersion", "'swiftVersion' only goes with 'runtime: swift-dynamic'",
                    hint: "remove 'swiftVersion' (a \(kind.rawValue) library carries no Swift runtime dependency)")
            }
            return kind == .native ? .native : .swiftStatic
        case .swiftDynamic:
            guard let versionNode else {
                report(
                    .missingField, at: node, "swiftVersion", "'runtime: swift-dynamic' needs 'swiftVersion'",
                    hint: "add 'swiftVersion: \"6.3.1\"' (the Swift the library was built with); `context-host package` fills it in")
                return nil
            }
            guard let text = scalarText(versionNode, "swiftVersion", expected: "a Swift version like \"6.3.1\""),
                !text.isEmpty, text.utf8.count <= 32,
                text.split(separator: ".", omittingEmptySubsequences: false).allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isNumber) })
            else {
                report(
                    .invalidValue, at: versionNode, "swiftVersion", "'swiftVersion' must be numbers separated by dots",
                    hint: "write the Swift version the library was built with, e.g. \"6.3.1\"")
                return nil
            }
            return .swiftDynamic(swiftVersion: text)
        }
    }

    mutating func validateSHA256(_ node: YAMLNode) -> String? {
        guard let text = scalarText(node, "sha256", expected: "a string of 64 hexadecimal digits") else {
            return nil
        }
        let hex = text.lowercased()
        let isHex = hex.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
        if hex.utf8.count == 64, isHex { return hex }
        let reason =
            isHex
            ? "it has \(hex.utf8.count) digits, not 64"
            : "it has characters other than 0-9 and a-f"
        report(
            .invalidSHA256, at: node, "sha256", "'\(text.count > 70 ? text.prefix(70) + "…" : Substring(text))' is "
                + "not a SHA-256 digest: \(reason)",
            hint: "write the output of 'sha256sum <library>' (64 hex digits), or remove 'sha256' to skip the check")
        return nil
    }

    mutating func validateAvailability(_ node: YAMLNode) -> Availability {
        var availability = Availability()
        guard let fields = fields(node, "availability", known: Manifest.availabilityFields) else {
            return availability
        }
        for (key, pair) in fields { record("availability.\(key)", pair.value) }
        if let list = fields["platforms"]?.value {
            if let items = list.items {
                var platforms: [ManifestPlatform] = []
                if items.isEmpty {
                    report(
                        .invalidValue, at: list, "availability.platforms", "the platform list is empty",
                        hint: "list at least one of: linux, macos (or remove 'platforms' to allow both)")
                }
                for (index, item) in items.enumerated() {
                    if let platform = oneOf(item, "availability.platforms[\(index)]", ManifestPlatform.self),
                        !platforms.contains(platform)
                    {
                        platforms.append(platform)
                    }
                }
                availability.platforms = platforms
            } else {
                wrongType(list, "availability.platforms", expected: "a list of platforms",
                    hint: "write 'platforms: [linux, macos]'")
            }
        }
        if let rangeNode = fields["host"]?.value,
            let text = scalarText(rangeNode, "availability.host", expected: "a version range string")
        {
            do {
                availability.host = try VersionRange(parsing: text)
            } catch {
                report(.invalidVersionRange, at: rangeNode, "availability.host", error.message,
                    hint: error.hint)
            }
        }
        if let list = fields["permissions"]?.value {
            if let items = list.items {
                var permissions: [ManifestPermission] = []
                let known = ManifestPermission.known.map(\.rawValue)
                for (index, item) in items.enumerated() {
                    let path = "availability.permissions[\(index)]"
                    guard let text = string(item, path) else { continue }
                    let permission = ManifestPermission(rawValue: text)
                    if ManifestPermission.known.contains(permission) {
                        if !permissions.contains(permission) { permissions.append(permission) }
                        continue
                    }
                    var message = "unknown permission '\(text)'"
                    var hint = "use one of: \(known.joined(separator: ", "))"
                    if let match = closestMatch(to: text, in: known) {
                        message += "; did you mean '\(match)'?"
                        hint = "write '\(match)'; the known permissions are: \(known.joined(separator: ", "))"
                    }
                    report(.unknownPermission, at: item, path, message, hint: hint)
                }
                availability.permissions = permissions
            } else {
                wrongType(list, "availability.permissions", expected: "a list of permissions",
                    hint: "write 'permissions: [network]'")
            }
        }
        return availability
    }

    mutating func validateTimeouts(_ node: YAMLNode) -> Timeouts {
        var timeouts = Timeouts()
        guard let fields = fields(node, "timeouts", known: Manifest.timeoutFields) else { return timeouts }
        for key in Manifest.timeoutFields {
            guard let valueNode = fields[key]?.value else { continue }
            let path = "timeouts.\(key)"
            record(path, valueNode)
            guard let text = scalarText(valueNode, path, expected: "a duration like 30s, 500ms or 2m") else {
                continue
            }
            guard let duration = Duration(manifestText: text) else {
                var hint = "write a number and a unit: ms, s or m (e.g. 500ms, 2s, 1m)"
                if Double(text) != nil { hint = "add a unit, e.g. \(text)s or \(text)ms" }
                report(.invalidDuration, at: valueNode, path, "'\(text)' is not a duration", hint: hint)
                continue
            }
            if duration <= .zero {
                report(.invalidDuration, at: valueNode, path, "a timeout must be greater than zero",
                    hint: "write a positive duration, e.g. 1s")
                continue
            }
            if duration > Timeouts.maximum {
                report(
                    .invalidDuration, at: valueNode, path,
                    "'\(text)' is longer than the maximum timeout of \(Timeouts.maximum.manifestText)",
                    hint: "write at most 5m")
                continue
            }
            switch key {
            case "collect": timeouts.collect = duration
            case "preview": timeouts.preview = duration
            case "detail": timeouts.detail = duration
            default: timeouts.encode = duration
            }
        }
        return timeouts
    }

    static func isValidSettingName(_ name: String) -> Bool {
        guard let first = name.utf8.first, first == UInt8(ascii: "_") || (first | 0x20 >= 0x61 && first | 0x20 <= 0x7A)
        else { return false }
        return name.utf8.allSatisfy {
            ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: "_")
                || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
        }
    }

    mutating func validateSettings(_ node: YAMLNode) -> [ManifestSetting] {
        guard let pairs = node.pairs else {
            wrongType(node, "settings", expected: "a mapping of setting name → {type, default, description, required}")
            return []
        }
        var settings: [ManifestSetting] = []
        for pair in pairs {
            guard let (name, path) = entry(pair, of: "settings", keyExpected: "a setting name as the key") else { continue }
            if !Self.isValidSettingName(name) {
                report(
                    .invalidValue, at: pair.key, path, "'\(name)' is not a valid setting name",
                    hint: "start with a letter or '_', then letters, digits, '_', '-' or '.'")
            }
            guard
                let fields = fields(
                    pair.value, path, known: Manifest.settingFields,
                    expected: "a mapping like { type: string, default: … }")
            else { continue }
            guard let typeNode = fields["type"]?.value else {
                missing(
                    "type", in: pair.value, path,
                    hint: "add 'type:' with one of: \(SettingType.allCases.map(\.rawValue).joined(separator: ", "))")
                continue
            }
            record("\(path).type", typeNode)
            guard let type = oneOf(typeNode, "\(path).type", SettingType.self) else { continue }
            var setting = ManifestSetting(name: name, type: type)
            if let value = fields["default"]?.value {
                record("\(path).default", value)
                if type == .secret {
                    report(
                        .invalidValue, at: value, "\(path).default", "a secret setting has no default",
                        hint: "remove 'default'; the user sets the secret with 'context-host secrets set'")
                } else {
                    setting.defaultValue = settingValue(value, type: type, "\(path).default")
                }
            }
            if let value = fields["inject"]?.value {
                record("\(path).inject", value)
                if type == .secret {
                    setting.inject = validateInject(value, "\(path).inject")
                } else {
                    report(
                        .invalidValue, at: value, "\(path).inject", "'inject' is only for secret settings",
                        hint: "remove 'inject', or change 'type' to secret")
                }
            }
            if let value = fields["description"]?.value { setting.description = string(value, "\(path).description") }
            if let value = fields["required"]?.value { setting.isRequired = boolean(value, "\(path).required") ?? false }
            if setting.isRequired, type == .secret, let value = fields["required"]?.value {
                report(
                    .invalidValue, at: value, "\(path).required", "'required' is not used for secrets",
                    hint: "remove it; a fetch that needs an unset secret fails with 'secret-not-set' and says how to set it")
            }
            if let value = fields["access"]?.value {
                record("\(path).access", value)
                if let access = oneOf(value, "\(path).access", SettingAccess.self) {
                    if type == .secret {
                        report(
                            .invalidValue, at: value, "\(path).access", "'access' is not used for secrets",
                            hint: "remove it")
                    } else if access == .write, type != .path {
                        report(
                            .invalidValue, at: value, "\(path).access", "'access: write' is only for path settings",
                            hint: "remove 'access', or change 'type' to path")
                    }
                    setting.isWritable = access == .write && type == .path
                }
            }
            settings.append(setting)
        }
        return settings
    }

    /// A setting's default as JSON, checked against its type.
    mutating func settingValue(_ node: YAMLNode, type: SettingType, _ path: String) -> JSONValue? {
        let value = node.scalarValue
        switch (type, value) {
        case (.string, .string(let text)?), (.path, .string(let text)?): return .string(text)
        case (.number, .int(let v)?): return .number(Double(v))
        case (.number, .float(let v)?) where v.isFinite: return .number(v)
        case (.integer, .int(let v)?): return .number(Double(v))
        case (.bool, .bool(let v)?): return .bool(v)
        default:
            let expected =
                switch type {
                case .string: "a string"
                case .path: "a path string"
                case .number: "a number"
                case .integer: "an integer"
                case .bool: "true or false"
                case .secret: "nothing (a secret has no default)"
                }
            var hint = "write \(expected), or change 'type'"
            if case .scalar(let text, let style)? = Optional(node.content), style != .plain,
                type != .string, type != .path, YAMLNode.resolvePlain(text) != .string(text)
            {
                hint = "remove the quotes: \(text)"
            } else if type == .string || type == .path, case .scalar(let text, _) = node.content,
                value != .null
            {
                hint = "quote it: \"\(text)\""
            }
            report(
                .invalidSettingDefault, at: node, path,
                "the default does not match type '\(type.rawValue)': expected \(expected), found \(Self.describe(node))",
                hint: hint)
            return nil
        }
    }
}
