/// A semantic version (semver 2.0.0): `MAJOR.MINOR.PATCH[-prerelease][+build]`.
package struct Version: Sendable, Hashable, Comparable, CustomStringConvertible {
    package var major: Int
    package var minor: Int
    package var patch: Int
    /// Dot-separated pre-release identifiers (`["beta", "2"]` for `-beta.2`).
    package var prerelease: [String]
    /// Dot-separated build metadata; ignored for ordering and equality.
    package var build: [String]

    package init(_ major: Int, _ minor: Int, _ patch: Int, prerelease: [String] = [], build: [String] = []) {
        self.major = major
        self.minor = minor
        self.patch = patch
        self.prerelease = prerelease
        self.build = build
    }

    /// Parses a semantic version; `nil` if `text` is not one.
    package init?(_ text: String) {
        var rest = Substring(text)
        var build: [String] = []
        if let plus = rest.firstIndex(of: "+") {
            build = rest[rest.index(after: plus)...].split(separator: ".", omittingEmptySubsequences: false)
                .map(String.init)
            rest = rest[..<plus]
            guard !build.isEmpty, build.allSatisfy({ !$0.isEmpty && $0.utf8.allSatisfy(Version.isIdentifierByte) })
            else { return nil }
        }
        var prerelease: [String] = []
        if let dash = rest.firstIndex(of: "-") {
            prerelease = rest[rest.index(after: dash)...].split(separator: ".", omittingEmptySubsequences: false)
                .map(String.init)
            rest = rest[..<dash]
            for identifier in prerelease {
                guard !identifier.isEmpty, identifier.utf8.allSatisfy(Version.isIdentifierByte) else { return nil }
                if identifier.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }), identifier.count > 1,
                    identifier.hasPrefix("0")
                {
                    return nil
                }
            }
        }
        let core = rest.split(separator: ".", omittingEmptySubsequences: false)
        guard core.count == 3 else { return nil }
        var numbers: [Int] = []
        for part in core {
            guard !part.isEmpty, part.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
                part == "0" || !part.hasPrefix("0"), let value = Int(part)
            else { return nil }
            numbers.append(value)
        }
        self.init(numbers[0], numbers[1], numbers[2], prerelease: prerelease, build: build)
    }

    private static func isIdentifierByte(_ byte: UInt8) -> Bool {
        (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
            || byte == UInt8(ascii: "-")
    }

    package var description: String {
        var text = "\(major).\(minor).\(patch)"
        if !prerelease.isEmpty { text += "-" + prerelease.joined(separator: ".") }
        if !build.isEmpty { text += "+" + build.joined(separator: ".") }
        return text
    }

    package static func == (lhs: Version, rhs: Version) -> Bool {
        lhs.major == rhs.major && lhs.minor == rhs.minor && lhs.patch == rhs.patch && lhs.prerelease == rhs.prerelease
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(major)
        hasher.combine(minor)
        hasher.combine(patch)
        hasher.combine(prerelease)
    }

    /// Semver precedence: a pre-release sorts before its release; identifiers compare numerically when
    /// both are numbers, numbers before words, and a shorter list first when one is a prefix of the other.
    package static func < (lhs: Version, rhs: Version) -> Bool {
        if lhs.major != rhs.major { return lhs.major < rhs.major }
        if lhs.minor != rhs.minor { return lhs.minor < rhs.minor }
        if lhs.patch != rhs.patch { return lhs.patch < rhs.patch }
        switch (lhs.prerelease.isEmpty, rhs.prerelease.isEmpty) {
        case (true, true), (true, false): return false
        case (false, true): return true
        case (false, false): break
        }
        for (a, b) in zip(lhs.prerelease, rhs.prerelease) where a != b {
            switch (Int(a), Int(b)) {
            case (let x?, let y?): return x < y
            case (.some, nil): return true
            case (nil, .some): return false
            case (nil, nil): return a < b
            }
        }
        return lhs.prerelease.count < rhs.prerelease.count
    }
}

/// A set of versions: space-separated comparators that must all hold, e.g. `>=0.1.0 <1.0.0`.
///
/// Operators: `>=`, `>`, `<=`, `<`, `=` (a bare version means `=`); `*` matches every version.
package struct VersionRange: Sendable, Hashable, CustomStringConvertible {
    package enum Operator: String, Sendable, Hashable, CaseIterable {
        case greaterOrEqual = ">="
        case greater = ">"
        case lessOrEqual = "<="
        case less = "<"
        case equal = "="
    }

    package struct Comparator: Sendable, Hashable, CustomStringConvertible {
        package var op: Operator
        package var version: Version

        package init(_ op: Operator, _ version: Version) {
            self.op = op
            self.version = version
        }

        package func matches(_ candidate: Version) -> Bool {
            switch op {
            case .greaterOrEqual: candidate >= version
            case .greater: candidate > version
            case .lessOrEqual: candidate <= version
            case .less: candidate < version
            case .equal: candidate == version
            }
        }

        package var description: String { "\(op.rawValue)\(version)" }
    }

    /// Why a range could not be parsed.
    package struct ParseError: Error, Sendable, Hashable {
        package var message: String
        package var hint: String
    }

    /// All must match; empty means any version.
    package var comparators: [Comparator]

    package init(_ comparators: [Comparator]) {
        self.comparators = comparators
    }

    /// Parses a range such as `>=0.1.0 <1.0.0`.
    package init(parsing text: String) throws(ParseError) {
        let tokens = text.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        let example = "write comparators separated by spaces, e.g. \">=0.1.0 <1.0.0\""
        guard !tokens.isEmpty else {
            throw ParseError(message: "the version range is empty", hint: example + ", or \"*\" for any version")
        }
        if tokens == ["*"] {
            self.init([])
            return
        }
        var comparators: [Comparator] = []
        var index = 0
        while index < tokens.count {
            var token = tokens[index]
            index += 1
            if token.contains("||") || token == "-" {
                throw ParseError(
                    message: "'\(token)': alternatives and hyphen ranges are not supported",
                    hint: example)
            }
            var op = Operator.equal
            for candidate in [Operator.greaterOrEqual, .lessOrEqual, .greater, .less, .equal]
            where token.hasPrefix(candidate.rawValue) {
                op = candidate
                token.removeFirst(candidate.rawValue.count)
                break
            }
            if token.isEmpty {
                // An operator followed by a space: `>= 1.0.0`.
                guard index < tokens.count else {
                    throw ParseError(message: "'\(op.rawValue)' is not followed by a version", hint: example)
                }
                token = tokens[index]
                index += 1
            }
            if token.hasPrefix("v"), Version(String(token.dropFirst())) != nil {
                throw ParseError(message: "'\(token)' has a 'v' prefix", hint: "write '\(token.dropFirst())'")
            }
            guard let version = Version(token) else {
                throw ParseError(
                    message: "'\(token)' is not a semantic version (MAJOR.MINOR.PATCH)", hint: example)
            }
            comparators.append(Comparator(op, version))
        }
        self.init(comparators)
        if let reason = emptinessReason {
            throw ParseError(message: "'\(text)' matches no version: \(reason)", hint: example)
        }
    }

    /// Whether `version` satisfies every comparator.
    package func contains(_ version: Version) -> Bool {
        comparators.allSatisfy { $0.matches(version) }
    }

    /// Why the range can match no version, if it cannot.
    private var emptinessReason: String? {
        var lower: (Version, inclusive: Bool)?
        var upper: (Version, inclusive: Bool)?
        for comparator in comparators {
            let v = comparator.version
            switch comparator.op {
            case .greaterOrEqual, .greater:
                let inclusive = comparator.op == .greaterOrEqual
                if let current = lower, current.0 > v || (current.0 == v && !current.inclusive) { continue }
                lower = (v, inclusive)
            case .lessOrEqual, .less:
                let inclusive = comparator.op == .lessOrEqual
                if let current = upper, current.0 < v || (current.0 == v && !current.inclusive) { continue }
                upper = (v, inclusive)
            case .equal:
                if !comparators.allSatisfy({ $0.matches(v) }) {
                    return "'=\(v)' contradicts another comparator"
                }
                return nil
            }
        }
        if let lower, let upper {
            if lower.0 > upper.0 || (lower.0 == upper.0 && !(lower.inclusive && upper.inclusive)) {
                return "the lower bound is not below the upper bound"
            }
        }
        return nil
    }

    package var description: String {
        comparators.isEmpty ? "*" : comparators.map(\.description).joined(separator: " ")
    }
}
