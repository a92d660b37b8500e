import ContextProviderKit

extension ManifestErrorCode {
    /// The host configuration names a provider id that no manifest declares (a warning).
    package static let unknownProvider: Self = "unknown-provider"

    /// Every code a host configuration file can report, in documentation order
    /// (`docs/configuration.md`).
    package static let configurationCodes: [ManifestErrorCode] = [
        .unreadableFile, .yamlSyntax, .multipleDocuments, .duplicateKey, .notAMapping, .unknownField, .wrongType,
        .invalidId, .unknownProvider, .unknownSetting, .settingTypeMismatch,
    ]
}

/// A host configuration file (`context-host --config FILE`): per-provider policy that overrides
/// the manifests. Read with the manifests' YAML reader, so every problem has a position.
///
/// ```yaml
/// providers:
///   com.contexthost.note:
///     priority: 80          # overrides the manifest's priority
///     enabled: false        # hides the provider (status "disabled")
///     settings:             # type-checked against the manifest's declared settings
///       quotesDirectory: ~/quotes
/// ```
package struct HostConfigFile: Sendable {
    /// A position in the configuration file.
    package typealias Location = Manifest.SourceLocation

    /// One setting value given for a provider.
    package struct SettingOverride: Sendable, Hashable {
        package var name: String
        package var value: JSONValue
        /// Where the key is (for `unknown-setting`).
        package var keyLocation: Location
        /// Where the value is (for `setting-type-mismatch`).
        package var valueLocation: Location
    }

    /// What the file says about one provider.
    package struct ProviderOverride: Sendable, Hashable {
        package var id: String
        /// Where the provider's id key is.
        package var location: Location
        package var priority: Int?
        package var enabled: Bool?
        /// Where `enabled` is (named in the `disabled` reason).
        package var enabledLocation: Location?
        /// In file order.
        package var settings: [SettingOverride]

        package init(
            id: String, location: Location = Location(line: 1, column: 1), priority: Int? = nil, enabled: Bool? = nil,
            enabledLocation: Location? = nil, settings: [SettingOverride] = []
        ) {
            self.id = id
            self.location = location
            self.priority = priority
            self.enabled = enabled
            self.enabledLocation = enabledLocation
            self.settings = settings
        }
    }

    /// Why a configuration file cannot be used: every problem, in file order.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        package var path: String
        package var diagnostics: [ManifestDiagnostic]
        package var description: String { diagnostics.map(\.description).joined(separator: "\n") }
    }

    /// Top-level fields.
    package static let topLevelFields = ["providers", "trust"]
    /// Fields of one provider's entry.
    package static let providerFields = ["priority", "enabled", "settings"]

    /// The file as the user named it (used in diagnostics).
    package var path: String
    /// Absolute folder of the file: relative `path` settings resolve against it.
    package var directory: String
    /// Per provider, in file order.
    package var providers: [ProviderOverride]
    /// Provider ids the operator trusts (`trust: [com.example.provider]`): their manifests'
    /// `isolation: in-process` is honoured; any other provider outside the bundled manifests runs
    /// in a sandboxed worker (docs/security.md, "Trust").
    package var trust: [String]

    package init(path: String, directory: String, providers: [ProviderOverride] = [], trust: [String] = []) {
        self.path = path
        self.directory = directory
        self.providers = providers
        self.trust = trust
    }

    /// What the file says about `id`, if anything.
    package func provider(_ id: String) -> ProviderOverride? {
        providers.first { $0.id == id }
    }

    // MARK: Reading

    /// Reads and validates the file at `path` (relative to the current directory).
    package static func load(file path: String) throws(Failure) -> HostConfigFile {
        switch ManifestFileSystem.readFile(path) {
        case .success(let bytes):
            return try parse(bytes: bytes, file: path)
        case .failure(let error):
            let missing = ManifestFileSystem.kind(of: path) == .missing
            throw Failure(
                path: path,
                diagnostics: [
                    ManifestDiagnostic(
                        file: path, line: 0, column: 0, fieldPath: "", code: .unreadableFile,
                        message: missing
                            ? "the configuration file does not exist"
                            : "cannot read the configuration file: \(error.message)",
                        hint: missing
                            ? "check the path given to --config"
                            : "check the file's permissions")
                ])
        }
    }

    /// Validates configuration text. `file` names it in diagnostics; `directory` is the absolute
    /// folder relative paths resolve against (default: the folder of `file`).
    package static func parse(_ text: String, file: String, directory: String? = nil) throws(Failure) -> HostConfigFile {
        try parse(bytes: Array(text.utf8), file: file, directory: directory)
    }

    /// Validates configuration bytes (UTF-8).
    package static func parse(bytes: [UInt8], file: String, directory: String? = nil) throws(Failure) -> HostConfigFile {
        let folder =
            directory
            ?? ManifestFileSystem.absolute(
                ManifestFileSystem.directoryName(file), base: ManifestFileSystem.currentDirectory())
        var reader = Reader(validator: ManifestValidator(file: file))
        let providers = reader.read(YAMLReader.read(bytes))
        let diagnostics = reader.validator.diagnostics
        guard diagnostics.isEmpty else {
            let sorted = diagnostics.enumerated().sorted {
                ($0.element.line, $0.element.column, $0.offset) < ($1.element.line, $1.element.column, $1.offset)
            }.map(\.element)
            throw Failure(path: file, diagnostics: sorted)
        }
        return HostConfigFile(path: file, directory: folder, providers: providers, trust: reader.trust)
    }

    /// Walks the YAML tree, reporting through the manifest validator's helpers.
    private struct Reader {
        var validator: ManifestValidator
        var trust: [String] = []

        mutating func readTrust(_ node: YAMLNode) {
            if node.scalarValue == .null { return }
            guard let items = node.items else {
                validator.wrongType(node, "trust", expected: "a list of provider ids", hint: "write 'trust: [com.example.provider]'")
                return
            }
            for (index, item) in items.enumerated() {
                guard case .string(let id)? = item.scalarValue, ManifestValidator.isValidID(id) else {
                    validator.report(
                        .invalidId, at: item, "trust[\(index)]",
                        "expected a reverse-DNS provider id, found \(ManifestValidator.describe(item))",
                        hint: "use the provider's id from its manifest, e.g. com.example.provider")
                    continue
                }
                if !trust.contains(id) { trust.append(id) }
            }
        }

        mutating func read(_ document: YAMLDocument) -> [ProviderOverride] {
            for problem in document.problems {
                var hint = problem.hint
                if problem.code == .multipleDocuments {
                    hint = "a configuration file is one document: remove the '---' separator and everything after it"
                } else if problem.code == .yamlSyntax, hint.hasPrefix("fix the YAML syntax") {
                    hint = "fix the YAML syntax at this position; the file is a mapping like 'providers:' with "
                        + "one indented entry per provider id"
                }
                validator.report(
                    problem.code, line: problem.line, column: problem.column, problem.fieldPath, problem.message,
                    hint: hint)
            }
            // An empty file (or only comments) configures nothing.
            guard let root = document.root, root.scalarValue != .null else { return [] }
            guard let pairs = root.pairs else {
                validator.report(
                    .notAMapping, at: root, "",
                    "a host configuration must be a mapping, found \(ManifestValidator.describe(root))",
                    hint: "start with 'providers:' and indent one entry per provider id under it")
                return []
            }
            var providers: [ProviderOverride] = []
            for pair in pairs {
                guard let key = pair.key.scalarText else {
                    validator.report(
                        .wrongType, at: pair.key, "", "expected a field name, found \(ManifestValidator.describe(pair.key)) as a key",
                        hint: "keys must be plain names")
                    continue
                }
                if key == "providers" {
                    providers = readProviders(pair.value)
                    continue
                }
                if key == "trust" {
                    readTrust(pair.value)
                    continue
                }
                if let match = closestMatch(to: key, in: HostConfigFile.topLevelFields) {
                    validator.report(
                        .unknownField, at: pair.key, key, "unknown field '\(key)'; did you mean '\(match)'?",
                        hint: "rename it to '\(match)'")
                } else if ManifestValidator.isValidID(key) {
                    validator.report(
                        .unknownField, at: pair.key, key,
                        "unknown field '\(key)'; provider entries belong under 'providers'",
                        hint: "add a 'providers:' line above it and indent '\(key):' under it")
                } else if HostConfigFile.providerFields.contains(key) {
                    validator.report(
                        .unknownField, at: pair.key, key,
                        "unknown field '\(key)'; '\(key)' is set per provider, under 'providers.<id>'",
                        hint: "move it under 'providers:' → the provider's id")
                } else {
                    validator.report(
                        .unknownField, at: pair.key, key, "unknown field '\(key)'",
                        hint: "remove it; the fields allowed at the top level are: "
                            + HostConfigFile.topLevelFields.joined(separator: ", "))
                }
            }
            return providers
        }

        mutating func readProviders(_ node: YAMLNode) -> [ProviderOverride] {
            if node.scalarValue == .null { return [] }
            guard let pairs = node.pairs else {
                validator.wrongType(
                    node, "providers", expected: "a mapping of provider id → { priority, enabled, settings }",
                    hint: "write one indented 'com.example.provider:' line per provider under 'providers:'")
                return []
            }
            var providers: [ProviderOverride] = []
            for pair in pairs {
                guard case .string(let id)? = pair.key.scalarValue else {
                    validator.report(
                        .wrongType, at: pair.key, "providers",
                        "expected a provider id as the key, found \(ManifestValidator.describe(pair.key))",
                        hint: "use the provider's reverse-DNS id from its manifest, e.g. com.contexthost.note")
                    continue
                }
                let path = "providers.\(id)"
                guard ManifestValidator.isValidID(id) else {
                    var hint = "use the provider's reverse-DNS id from its manifest, e.g. com.contexthost.note"
                    let suggestion = String(id.lowercased().map { $0 == "_" || $0 == " " ? "-" : $0 })
                    if suggestion != id, ManifestValidator.isValidID(suggestion) { hint = "write '\(suggestion)'" }
                    validator.report(
                        .invalidId, at: pair.key, path, "'\(id)' is not a valid reverse-DNS provider id", hint: hint)
                    continue
                }
                var provider = ProviderOverride(id: id, location: Location(line: pair.key.line, column: pair.key.column))
                if pair.value.scalarValue == .null {
                    providers.append(provider)
                    continue
                }
                guard
                    let fields = validator.fields(
                        pair.value, path, known: HostConfigFile.providerFields,
                        expected: "a mapping like { priority: 80, enabled: true, settings: { … } }")
                else { continue }
                if let node = fields["priority"]?.value {
                    provider.priority = validator.integer(node, "\(path).priority")
                }
                if let node = fields["enabled"]?.value {
                    provider.enabled = validator.boolean(node, "\(path).enabled")
                    provider.enabledLocation = Location(line: node.line, column: node.column)
                }
                if let node = fields["settings"]?.value {
                    provider.settings = readSettings(node, "\(path).settings")
                }
                providers.append(provider)
            }
            return providers
        }

        mutating func readSettings(_ node: YAMLNode, _ path: String) -> [SettingOverride] {
            if node.scalarValue == .null { return [] }
            guard let pairs = node.pairs else {
                validator.wrongType(node, path, expected: "a mapping of setting name → value")
                return []
            }
            var settings: [SettingOverride] = []
            for pair in pairs {
                guard case .string(let name)? = pair.key.scalarValue else {
                    validator.report(
                        .wrongType, at: pair.key, path,
                        "expected a setting name as the key, found \(ManifestValidator.describe(pair.key))",
                        hint: "use a setting name the provider's manifest declares under 'settings'")
                    continue
                }
                let valuePath = "\(path).\(name)"
                let value: JSONValue
                switch pair.value.scalarValue {
                case .string(let text)?: value = .string(text)
                case .int(let number)?: value = .number(Double(number))
                case .float(let number)? where number.isFinite: value = .number(number)
                case .bool(let flag)?: value = .bool(flag)
                default:
                    validator.wrongType(
                        pair.value, valuePath, expected: "a string, number or boolean",
                        hint: pair.value.scalarValue == .null
                            ? "give '\(name)' a value, or remove the line to use the manifest's default"
                            : "settings are single values: write a string, a number or true/false")
                    continue
                }
                settings.append(
                    SettingOverride(
                        name: name, value: value, keyLocation: Location(line: pair.key.line, column: pair.key.column),
                        valueLocation: Location(line: pair.value.line, column: pair.value.column)))
            }
            return settings
        }
    }

    // MARK: Applying

    /// Warnings for provider ids that no manifest in the catalog declares (accepted or rejected).
    package func unknownProviderWarnings(knownIDs: Set<String>) -> [ManifestDiagnostic] {
        providers.filter { !knownIDs.contains($0.id) }.map { provider in
            var message = "no manifest declares the provider '\(provider.id)'; its settings here are ignored"
            var hint = "check the id against 'context-host list', or remove the entry"
            if let match = closestMatch(to: provider.id, in: knownIDs.sorted()) {
                message += "; did you mean '\(match)'?"
                hint = "write '\(match)'"
            }
            return ManifestDiagnostic(
                file: path, line: provider.location.line, column: provider.location.column,
                fieldPath: "providers.\(provider.id)", code: .unknownProvider, message: message, hint: hint)
        }
    }

    /// `path:line:column: warning: [code] field: message` and the hint, for a diagnostic that does not
    /// stop anything.
    package static func warningText(_ diagnostic: ManifestDiagnostic) -> String {
        var text = diagnostic.file
        if diagnostic.line > 0 { text += ":\(diagnostic.line):\(diagnostic.column)" }
        text += ": warning: [\(diagnostic.code.rawValue)] "
        if !diagnostic.fieldPath.isEmpty { text += "\(diagnostic.fieldPath): " }
        text += diagnostic.message
        if !diagnostic.hint.isEmpty { text += "\n  hint: \(diagnostic.hint)" }
        return text
    }

    /// The reason a provider that `enabled: false` hides is unavailable.
    package func disabledReason(for id: String) -> Unavailability? {
        guard let provider = provider(id), provider.enabled == false else { return nil }
        let location = provider.enabledLocation ?? provider.location
        // Line 0: set by the embedding app (`HostConfiguration.providerOptions`), not in a file.
        let place = location.line > 0 ? "\(path):\(location.line)" : HostConfiguration.providerOptionsSource
        return Unavailability(code: "disabled", message: "disabled by the host configuration (\(place))")
    }

    /// The provider's settings with this file's values applied (see `Manifest.resolvedSettings`).
    ///
    /// Relative `path` values resolve against the configuration file's folder. Problems with a value
    /// from this file (`unknown-setting`, `setting-type-mismatch`) point at it: the key for an
    /// unknown setting, the value for a type mismatch.
    package func resolvedSettings(for manifest: Manifest, homeDirectory: String? = nil) throws(SettingsResolutionError)
        -> JSONObject
    {
        guard let provider = provider(manifest.id), !provider.settings.isEmpty else {
            return try manifest.resolvedSettings(overrides: [:], homeDirectory: homeDirectory)
        }
        var overrides: [String: JSONValue] = [:]
        var given: [String: SettingOverride] = [:]
        for setting in provider.settings {
            var value = setting.value
            if manifest.settings.first(where: { $0.name == setting.name })?.type == .path, case .string(let text) = value,
                !text.isEmpty, !text.hasPrefix("/"), text != "~", !text.hasPrefix("~/")
            {
                value = .string(ManifestFileSystem.join(directory, text))
            }
            overrides[setting.name] = value
            given[setting.name] = setting
        }
        do {
            return try manifest.resolvedSettings(overrides: overrides, homeDirectory: homeDirectory)
        } catch {
            var failure = error
            failure.diagnostics = error.diagnostics.map { diagnostic in
                guard diagnostic.code == .unknownSetting || diagnostic.code == .settingTypeMismatch,
                    diagnostic.fieldPath.hasPrefix("settings."),
                    let setting = given[String(diagnostic.fieldPath.dropFirst("settings.".count))]
                else { return diagnostic }
                var moved = diagnostic
                let location = diagnostic.code == .unknownSetting ? setting.keyLocation : setting.valueLocation
                moved.file = location.line > 0 ? path : HostConfiguration.providerOptionsSource
                moved.line = location.line
                moved.column = location.column
                moved.fieldPath = "providers.\(manifest.id).settings.\(setting.name)"
                if diagnostic.code == .unknownSetting, !diagnostic.hint.hasPrefix("write '") {
                    moved.hint = "remove it from the host configuration; " + diagnostic.hint
                }
                return moved
            }
            throw failure
        }
    }
}

extension HostConfiguration {
    /// The settings a provider is opened with: the manifest's defaults with the host configuration
    /// file's values applied.
    package func resolvedSettings(for manifest: Manifest) throws(SettingsResolutionError) -> JSONObject {
        if let overrides = providerOverrides { return try overrides.resolvedSettings(for: manifest) }
        return try manifest.resolvedSettings(overrides: [:])
    }
}
