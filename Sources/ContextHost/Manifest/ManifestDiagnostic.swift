/// A stable, machine-readable code for each kind of manifest problem. `docs/manifest.md` lists every
/// code with its meaning and fix; clients and CI may match on the raw value.
package struct ManifestErrorCode: RawRepresentable, Hashable, Sendable, CustomStringConvertible,
    ExpressibleByStringLiteral
{
    package var rawValue: String
    package init(rawValue: String) { self.rawValue = rawValue }
    package init(stringLiteral value: String) { self.rawValue = value }
    package var description: String { rawValue }

    // YAML level
    /// The file is not valid YAML (libyaml's message and position).
    package static let yamlSyntax: Self = "yaml-syntax"
    /// The file holds more than one YAML document.
    package static let multipleDocuments: Self = "multiple-documents"
    /// A mapping has the same key twice (reported at the second key).
    package static let duplicateKey: Self = "duplicate-key"
    /// The file (or a nested value that must be a mapping) is not a mapping.
    package static let notAMapping: Self = "not-a-mapping"
    // Fields
    /// A required field is absent (reported at the start of the mapping that lacks it).
    package static let missingField: Self = "missing-field"
    /// A field this manifest version does not define.
    package static let unknownField: Self = "unknown-field"
    /// A value of the wrong YAML type (e.g. a string where an integer belongs).
    package static let wrongType: Self = "wrong-type"
    /// A value of the right type that is not allowed (e.g. an unknown enum member, 0 where ≥ 1 is required).
    package static let invalidValue: Self = "invalid-value"
    /// `manifestVersion` is not one this host reads.
    package static let unsupportedVersion: Self = "unsupported-version"
    /// `id` is not reverse-DNS.
    package static let invalidId: Self = "invalid-id"
    /// Another manifest already declared this `id`.
    package static let duplicateId: Self = "duplicate-id"
    /// `version` (or a version inside `availability.host`) is not a semantic version.
    package static let invalidVersion: Self = "invalid-version"
    /// `availability.host` is not a valid version range.
    package static let invalidVersionRange: Self = "invalid-version-range"
    /// A timeout is not a duration like `30s`, `500ms`, `2m`, or is out of range.
    package static let invalidDuration: Self = "invalid-duration"
    /// A permission outside the known set.
    package static let unknownPermission: Self = "unknown-permission"
    /// `sha256` is not 64 hexadecimal digits.
    package static let invalidSHA256: Self = "invalid-sha256"
    /// The loaded library's bytes do not hash to the manifest's `sha256`.
    package static let sha256Mismatch: Self = "sha256-mismatch"
    /// A setting's `default` does not match its `type`.
    package static let invalidSettingDefault: Self = "invalid-setting-default"
    /// `libraries` has no entry for this machine's platform.
    package static let noLibraryForPlatform: Self = "no-library-for-platform"
    // Library resolution
    /// The library file was not found in any searched folder.
    package static let libraryNotFound: Self = "library-not-found"
    /// The library path leaves the folder it was resolved against.
    package static let libraryPathEscape: Self = "library-path-escape"
    // Discovery
    /// An explicitly given manifests folder does not exist or is not a folder.
    package static let directoryNotFound: Self = "directory-not-found"
    /// A manifest file could not be read.
    package static let unreadableFile: Self = "unreadable-file"
    // Settings resolution
    /// A setting value was given for a setting the manifest does not declare.
    package static let unknownSetting: Self = "unknown-setting"
    /// A setting value does not match the setting's type.
    package static let settingTypeMismatch: Self = "setting-type-mismatch"
    /// A required setting has neither a value nor a default.
    package static let missingSetting: Self = "missing-setting"

    /// Every code, in documentation order.
    package static let all: [ManifestErrorCode] = [
        .yamlSyntax, .multipleDocuments, .duplicateKey, .notAMapping, .missingField, .unknownField, .wrongType,
        .invalidValue, .unsupportedVersion, .invalidId, .duplicateId, .invalidVersion, .invalidVersionRange,
        .invalidDuration, .unknownPermission, .invalidSHA256, .sha256Mismatch, .invalidSettingDefault,
        .noLibraryForPlatform, .libraryNotFound, .libraryPathEscape, .directoryNotFound, .unreadableFile, .unknownSetting,
        .settingTypeMismatch, .missingSetting,
    ]
}

/// One problem in a manifest, positioned like a compiler diagnostic.
package struct ManifestDiagnostic: Error, Sendable, Hashable, CustomStringConvertible {
    /// The file as the user named it (or a folder, for catalog-level problems).
    package var file: String
    /// 1-based line, or 0 when the problem concerns the whole file or folder.
    package var line: Int
    /// 1-based column (characters), or 0.
    package var column: Int
    /// Path of the offending field, e.g. `availability.permissions[1]`; empty for the whole file.
    package var fieldPath: String
    package var code: ManifestErrorCode
    package var message: String
    /// How to fix it.
    package var hint: String

    package init(
        file: String, line: Int, column: Int, fieldPath: String, code: ManifestErrorCode, message: String,
        hint: String
    ) {
        self.file = file
        self.line = line
        self.column = column
        self.fieldPath = fieldPath
        self.code = code
        self.message = message
        self.hint = hint
    }

    /// `file:line:column: error: [code] field.path: message` and, on the next line, `  hint: …`.
    package var description: String {
        var text = file
        if line > 0 {
            text += ":\(line):\(column)"
        }
        text += ": error: [\(code.rawValue)] "
        if !fieldPath.isEmpty { text += "\(fieldPath): " }
        text += message
        if !hint.isEmpty { text += "\n  hint: \(hint)" }
        return text
    }
}

/// A manifest that was not accepted, with every reason.
package struct ManifestRejection: Error, Sendable, Equatable, CustomStringConvertible {
    /// The manifest file as the user named it.
    package var path: String
    /// The manifest's `id`, when it could be read.
    package var id: String?
    /// At least one diagnostic.
    package var diagnostics: [ManifestDiagnostic]

    package init(path: String, id: String?, diagnostics: [ManifestDiagnostic]) {
        self.path = path
        self.id = id
        self.diagnostics = diagnostics
    }

    package var description: String {
        diagnostics.map(\.description).joined(separator: "\n")
    }
}

/// Levenshtein distance, used for "did you mean" suggestions.
func editDistance(_ a: String, _ b: String) -> Int {
    let a = Array(a.lowercased().unicodeScalars)
    let b = Array(b.lowercased().unicodeScalars)
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = Array(repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        for j in 1...b.count {
            current[j] = Swift.min(
                previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}

/// The closest candidate within edit distance 2, if any.
func closestMatch(to word: String, in candidates: [String]) -> String? {
    var best: (String, Int)?
    for candidate in candidates {
        let distance = editDistance(word, candidate)
        if distance <= 2, distance < (best?.1 ?? Int.max) { best = (candidate, distance) }
    }
    return best?.0
}
