import ContextProviderKit

/// Why a provider's settings could not be resolved: every problem, as diagnostics.
package struct SettingsResolutionError: Error, Sendable, CustomStringConvertible {
    package var manifestID: String
    package var diagnostics: [ManifestDiagnostic]

    package var description: String {
        diagnostics.map(\.description).joined(separator: "\n")
    }
}

extension Manifest {
    /// The settings JSON passed to the provider's `open`: each declared setting, in declaration
    /// order, with its override or default; settings with neither (and not required) are left out.
    ///
    /// - Overrides are type-checked. Host configuration often comes as text (`--setting k=v`), so a
    ///   string override is accepted for `number`, `integer` and `bool` when it parses as one.
    /// - `path` values expand a leading `~` to `homeDirectory` (default `$HOME`) and resolve
    ///   relative paths against the manifest's folder.
    /// - A required setting without a value, an override for an undeclared setting and a type
    ///   mismatch are errors (`missing-setting`, `unknown-setting`, `setting-type-mismatch`).
    package func resolvedSettings(
        overrides: [String: JSONValue] = [:], homeDirectory: String? = nil
    ) throws(SettingsResolutionError) -> JSONObject {
        var result = JSONObject()
        var problems: [ManifestDiagnostic] = []
        let names = settings.map(\.name)
        for name in overrides.keys.sorted() where !names.contains(name) {
            var message = "there is no setting '\(name)'"
            var hint =
                names.isEmpty
                ? "this provider declares no settings; remove the value"
                : "declared settings: \(names.joined(separator: ", "))"
            if let match = closestMatch(to: name, in: names) {
                message += "; did you mean '\(match)'?"
                hint = "write '\(match)'"
            }
            problems.append(
                ManifestDiagnostic(
                    file: manifestPath, line: sourceLocations["settings"]?.line ?? 0,
                    column: sourceLocations["settings"]?.column ?? 0, fieldPath: "settings.\(name)",
                    code: .unknownSetting, message: message, hint: hint))
        }
        for setting in settings {
            let path = "settings.\(setting.name)"
            var value: JSONValue?
            if setting.type == .secret {
                // Never in the provider's settings, and never from a configuration file.
                if overrides[setting.name] != nil {
                    problems.append(
                        diagnostic(
                            .settingTypeMismatch, at: path,
                            message: "'\(setting.name)' is a secret: it is never given in configuration",
                            hint: "remove it from the configuration and run: context-host secrets set \(id) \(setting.name)"))
                }
                continue
            }
            if let override = overrides[setting.name] {
                guard let checked = Self.coerce(override, to: setting.type) else {
                    problems.append(
                        diagnostic(
                            .settingTypeMismatch, at: path,
                            message: "the value \(Self.show(override)) for '\(setting.name)' is not \(Self.expected(setting.type))",
                            hint: "give '\(setting.name)' \(Self.expected(setting.type))"))
                    continue
                }
                value = checked
            } else {
                value = setting.defaultValue
            }
            guard var value else {
                if setting.isRequired {
                    problems.append(
                        diagnostic(
                            .missingSetting, at: path,
                            message: "the required setting '\(setting.name)' has no value and no default",
                            hint: "set '\(setting.name)' in the host configuration, or give it a 'default' in the "
                                + "manifest"))
                }
                continue
            }
            if setting.type == .path, case .string(let text) = value {
                guard let expanded = expandPath(text, homeDirectory: homeDirectory) else {
                    problems.append(
                        diagnostic(
                            .settingTypeMismatch, at: path,
                            message: "cannot expand '~' in '\(text)': the home folder is unknown",
                            hint: "set HOME, or use an absolute path"))
                    continue
                }
                value = .string(expanded)
            }
            result[setting.name] = value
        }
        if !problems.isEmpty { throw SettingsResolutionError(manifestID: id, diagnostics: problems) }
        return result
    }

    /// `~` → home, `~/x` → home/x, relative → against `directory`, absolute unchanged; empty
    /// stays empty (a `path` setting left empty means "none", never the manifest's own folder).
    /// `nil` if `~` is used and no home folder is known.
    func expandPath(_ text: String, homeDirectory: String?) -> String? {
        if text.isEmpty { return "" }
        if text == "~" || text.hasPrefix("~/") {
            guard let home = homeDirectory ?? ManifestFileSystem.homeDirectory() else { return nil }
            return ManifestFileSystem.normalize(home + text.dropFirst())
        }
        if text.hasPrefix("/") { return ManifestFileSystem.normalize(text) }
        return ManifestFileSystem.join(directory, text)
    }

    static func coerce(_ value: JSONValue, to type: SettingType) -> JSONValue? {
        switch (type, value) {
        case (.string, .string), (.path, .string): return value
        case (.number, .number(let v)) where v.isFinite: return value
        case (.integer, .number): return value.intValue != nil ? value : Optional.none
        case (.bool, .bool): return value
        case (.number, .string(let text)):
            guard let v = Double(text.trimmingWhitespace()), v.isFinite else { return nil }
            return .number(v)
        case (.integer, .string(let text)):
            guard let v = Int(text.trimmingWhitespace()) else { return nil }
            return .number(Double(v))
        case (.bool, .string(let text)):
            switch text.trimmingWhitespace() {
            case "true": return .bool(true)
            case "false": return .bool(false)
            default: return nil
            }
        default: return nil
        }
    }

    static func expected(_ type: SettingType) -> String {
        switch type {
        case .string: "a string"
        case .path: "a path (string)"
        case .number: "a number"
        case .integer: "an integer"
        case .bool: "true or false"
        case .secret: "a secret (set with 'context-host secrets set', never in configuration)"
        }
    }

    static func show(_ value: JSONValue) -> String {
        switch value {
        case .string(let s): "'\(s)'"
        case .number(let n): n.rounded() == n && abs(n) < 1e15 ? "\(Int(n))" : "\(n)"
        case .bool(let b): "\(b)"
        case .null: "null"
        case .array: "(an array)"
        case .object: "(an object)"
        }
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        String(drop(while: \.isWhitespace).reversed().drop(while: \.isWhitespace).reversed())
    }
}
