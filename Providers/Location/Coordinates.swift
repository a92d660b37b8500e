import ContextProviderKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A coordinate text the user typed that could not be read, with a message saying what to fix.
struct CoordinateError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong and how to write it instead.
    var message: String
    var description: String { message }
}

/// Reads latitude/longitude pairs in the common notations:
///
/// - decimal degrees: `47.37, 8.54`, `-33.87 151.21`, `geo:47.37,8.54` (RFC 5870);
/// - with hemisphere letters, before or after: `47.37N 8.54E`, `N 47.37, E 8.54`, `47.37° S 8.54° W`;
/// - degrees and minutes / degrees, minutes and seconds: `47°22.2'N 8°32.4'E`,
///   `47°22'12"N 8°32'24"E`, `47 22 12 N 8 32 24 E` (typographic ′ ″ and º are accepted too).
///
/// Both halves must use the same notation; latitude must lie in -90…90 and longitude in -180…180.
enum CoordinateParser {
    private enum Token: Equatable {
        case number(Double, text: String, hasFraction: Bool)
        case unit(Int)  // 0 = degrees, 1 = minutes, 2 = seconds
        case hemisphere(Character)
        case separator
        case space
    }

    /// One half of the input: numbers with their units, a sign, and a hemisphere letter.
    private struct Part {
        var components: [(value: Double, unit: Int?, hasFraction: Bool, text: String)] = []
        var negative = false
        var hemisphere: Character?
        var hemisphereFirst = false
        var usesDMS: Bool { components.count > 1 }
    }

    /// The longest text read as a coordinate, in UTF-8 bytes. The longest notation
    /// (`47°22′12.3456″N 8°32′24.5678″E` with spaces) is well under it; longer text (a huge
    /// settings value, a query of a megabyte) is refused before any work proportional to it.
    static let maximumLength = 200

    /// Parses `text`; throws `CoordinateError` with a message naming the problem.
    static func parse(_ text: String) throws(CoordinateError) -> Coordinate {
        guard text.utf8.count <= maximumLength else {
            throw CoordinateError(message: "\(Quote.short(text)) is too long for a coordinate (\(text.utf8.count) bytes; at most \(maximumLength)); write it like 47.37, 8.54.")
        }
        var input = text.trimmingWhitespace()
        if input.isEmpty { throw CoordinateError(message: "Enter a latitude and a longitude, like 47.37, 8.54.") }
        if input.lowercased().hasPrefix("geo:") { return try parseGeoURI(input) }
        input = input.replacingTypographicMarks()
        let tokens = try tokenize(input)
        let parts = try split(tokens)
        let (first, second) = (try read(parts.0), try read(parts.1))
        return try assemble(first, second)
    }

    /// Reads a `geo:` URI (RFC 5870): `geo:lat,lon[,alt][;crs=wgs84][;u=…]`.
    static func parseGeoURI(_ text: String) throws(CoordinateError) -> Coordinate {
        let body = text.dropFirst(4)
        let main = body.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false)
        if main.count > 1 {
            for parameter in main[1].split(separator: ";") {
                let pair = parameter.split(separator: "=", maxSplits: 1)
                if pair.first?.lowercased() == "crs", pair.count == 2, pair[1].lowercased() != "wgs84" {
                    throw CoordinateError(message: "geo: URI uses crs=\(pair[1]); only WGS 84 coordinates are supported.")
                }
            }
        }
        let numbers = main[0].split(separator: ",", omittingEmptySubsequences: false)
        // RFC 5870 numbers only (`-47.37`): not `nan`, `inf`, `1e300` or hexadecimal, which
        // `Double(_:)` would accept.
        guard numbers.count == 2 || numbers.count == 3,
            let latitude = decimal(numbers[0]), let longitude = decimal(numbers[1]),
            numbers.count == 2 || decimal(numbers[2]) != nil
        else {
            throw CoordinateError(message: "\(Quote.short(text)) is not a geo: URI; write it like geo:47.37,8.54.")
        }
        return try validated(latitude: latitude, longitude: longitude)
    }

    /// `[-+]digits[.digits]` (RFC 5870 `num`, with an optional plus sign), else `nil`.
    static func decimal(_ text: Substring) -> Double? {
        var digits = 0, points = 0
        for (offset, byte) in text.utf8.enumerated() {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits += 1
            case UInt8(ascii: "."):
                guard digits > 0 else { return nil }
                points += 1
            case UInt8(ascii: "-"), UInt8(ascii: "+"):
                guard offset == 0 else { return nil }
            default: return nil
            }
        }
        guard digits > 0, points <= 1, text.utf8.last != UInt8(ascii: ".") else { return nil }
        guard let value = Double(text), value.isFinite else { return nil }
        return value
    }

    private static func tokenize(_ input: String) throws(CoordinateError) -> [Token] {
        var tokens: [Token] = []
        let characters = Array(input)
        var index = 0
        while index < characters.count {
            let character = characters[index]
            if character.isNumber || character == "." || character == "-" || character == "+" {
                var end = index
                if character == "-" || character == "+" { end += 1 }
                while end < characters.count, characters[end].isASCII, characters[end].isNumber || characters[end] == "." {
                    end += 1
                }
                let text = String(characters[index..<end])
                guard let value = Double(text), value.isFinite else {
                    throw CoordinateError(message: "\(Quote.short(text)) is not a number.")
                }
                tokens.append(.number(value, text: text, hasFraction: text.contains(".")))
                index = end
                continue
            }
            switch character {
            case "°": tokens.append(.unit(0))
            case "'": tokens.append(.unit(1))
            case "\"": tokens.append(.unit(2))
            case ",", ";", "/": tokens.append(.separator)
            case "N", "n", "S", "s", "E", "e", "W", "w":
                // A hemisphere letter must stand alone, not begin a word ("North" is not accepted).
                if index + 1 < characters.count, characters[index + 1].isLetter {
                    throw CoordinateError(message: "Unexpected text \(Quote.short(word(characters, from: index))); use the letters N, S, E and W for hemispheres.")
                }
                tokens.append(.hemisphere(Character(character.uppercased())))
            default:
                if character.isWhitespace {
                    if tokens.last != .space { tokens.append(.space) }
                } else if character.isLetter {
                    throw CoordinateError(message: "Unexpected text \(Quote.short(word(characters, from: index))); enter numbers, like 47.37, 8.54 or 47°22'12\"N 8°32'24\"E.")
                } else {
                    throw CoordinateError(message: "Unexpected character \"\(character)\"; enter numbers, like 47.37, 8.54.")
                }
            }
            index += 1
        }
        return tokens
    }

    private static func word(_ characters: [Character], from start: Int) -> String {
        var end = start
        while end < characters.count, characters[end].isLetter { end += 1 }
        return String(characters[start..<end])
    }

    /// Splits the tokens into the two halves.
    private static func split(_ tokens: [Token]) throws(CoordinateError) -> ([Token], [Token]) {
        let letters = tokens.indices.filter { if case .hemisphere = tokens[$0] { true } else { false } }
        let meaningful = tokens.filter { $0 != .space && $0 != .separator }
        if letters.count > 2 { throw CoordinateError(message: "Too many hemisphere letters; give one of N/S and one of E/W.") }
        if letters.count == 1 {
            throw CoordinateError(message: "Mixed notations: only one coordinate has a hemisphere letter (N, S, E or W); give both, or use signed decimal degrees like -33.87, 151.21.")
        }
        if letters.count == 2 {
            if case .hemisphere = meaningful.first, case .hemisphere = meaningful.last {
                throw CoordinateError(message: "Mixed notations: put the hemisphere letters either all before or all after the numbers.")
            }
            if case .hemisphere = meaningful.first {
                // Prefix style: N 47.37 E 8.54.
                guard case .hemisphere = tokens.first(where: { $0 != .space }) else {
                    throw CoordinateError(message: "Mixed notations: put the hemisphere letters either all before or all after the numbers.")
                }
                return (Array(tokens[..<letters[1]]), Array(tokens[letters[1]...]))
            }
            guard case .hemisphere = meaningful.last else {
                throw CoordinateError(message: "Mixed notations: put the hemisphere letters either all before or all after the numbers.")
            }
            return (Array(tokens[...letters[0]]), Array(tokens[(letters[0] + 1)...]))
        }
        // No letters: a comma, semicolon or slash separates the halves when present.
        let separators = tokens.indices.filter { tokens[$0] == .separator }
        if separators.count > 1 {
            throw CoordinateError(message: "Too many separators; write one comma between latitude and longitude, like 47.37, 8.54 (use a point for decimals).")
        }
        if let separator = separators.first {
            return (Array(tokens[..<separator]), Array(tokens[(separator + 1)...]))
        }
        // Units: a new half starts at the second degree mark's number.
        let degreeMarks = tokens.indices.filter { tokens[$0] == .unit(0) }
        if degreeMarks.count == 2 {
            var cut = degreeMarks[1] - 1
            while cut > 0, tokens[cut] == .space { cut -= 1 }
            return (Array(tokens[..<cut]), Array(tokens[cut...]))
        }
        let numbers = meaningful.filter { if case .number = $0 { true } else { false } }
        if numbers.count == 2, meaningful.count == 2,
            let second = tokens.lastIndex(where: { if case .number = $0 { true } else { false } })
        {
            return (Array(tokens[..<second]), Array(tokens[second...]))
        }
        if numbers.count < 2 {
            throw CoordinateError(message: "Enter both a latitude and a longitude, like 47.37, 8.54.")
        }
        throw CoordinateError(message: "Cannot tell where the latitude ends; separate the two with a comma, like 47 22 12, 8 32 24, or add N/S and E/W.")
    }

    /// Reads one half.
    private static func read(_ tokens: [Token]) throws(CoordinateError) -> Part {
        var part = Part()
        var sawNumber = false
        for token in tokens {
            switch token {
            case .space, .separator: continue
            case .hemisphere(let letter):
                part.hemisphere = letter
                part.hemisphereFirst = !sawNumber
            case .number(var value, let text, let hasFraction):
                if text.hasPrefix("-") || text.hasPrefix("+") {
                    guard !sawNumber else {
                        throw CoordinateError(message: "A sign may only come before the degrees (\"\(text)\").")
                    }
                    if text.hasPrefix("-") { part.negative = true }
                    value = abs(value)
                }
                if part.hemisphere != nil, !part.hemisphereFirst {
                    throw CoordinateError(message: "Unexpected number \(text) after a hemisphere letter.")
                }
                sawNumber = true
                part.components.append((value, nil, hasFraction, text))
            case .unit(let unit):
                guard let last = part.components.last, last.unit == nil else {
                    throw CoordinateError(message: "A \(unitName(unit)) mark must follow a number.")
                }
                part.components[part.components.count - 1].unit = unit
            }
        }
        guard !part.components.isEmpty else {
            throw CoordinateError(message: "Enter both a latitude and a longitude, like 47.37, 8.54.")
        }
        guard part.components.count <= 3 else {
            throw CoordinateError(message: "Too many numbers in one coordinate; write degrees, minutes and seconds at most.")
        }
        // Units, when given, must be in order and start at degrees; bare numbers take the next unit.
        for (position, component) in part.components.enumerated() {
            let unit = component.unit ?? position
            guard unit == position else {
                throw CoordinateError(message: "Expected \(unitName(position)) where \(component.text) is marked as \(unitName(unit)).")
            }
        }
        if part.components.count > 1 {
            if part.negative, part.hemisphere != nil {
                throw CoordinateError(message: "Mixed notations: a minus sign and a hemisphere letter together are ambiguous; use one of them.")
            }
            for (position, component) in part.components.enumerated() {
                if position < part.components.count - 1, component.hasFraction {
                    throw CoordinateError(message: "Only the last number may have decimals (\(component.text) \(unitName(position))).")
                }
                if position > 0, component.value >= 60 {
                    throw CoordinateError(message: "\(unitName(position).capitalizedFirst) must be less than 60 (got \(component.text)).")
                }
            }
        }
        if part.negative, part.hemisphere != nil {
            throw CoordinateError(message: "Mixed notations: a minus sign and a hemisphere letter together are ambiguous; use one of them.")
        }
        return part
    }

    private static func assemble(_ first: Part, _ second: Part) throws(CoordinateError) -> Coordinate {
        if first.usesDMS != second.usesDMS {
            throw CoordinateError(message: "Mixed notations: one coordinate is in degrees-minutes-seconds and the other in decimal degrees; write both the same way.")
        }
        var latitude: Double
        var longitude: Double
        switch (first.hemisphere, second.hemisphere) {
        case (nil, nil):
            latitude = degrees(first)
            longitude = degrees(second)
        case (let a?, let b?):
            let aIsLatitude = a == "N" || a == "S"
            let bIsLatitude = b == "N" || b == "S"
            guard aIsLatitude != bIsLatitude else {
                throw CoordinateError(message: aIsLatitude
                    ? "Both coordinates are latitudes (\(a) and \(b)); give one of N/S and one of E/W."
                    : "Both coordinates are longitudes (\(a) and \(b)); give one of N/S and one of E/W.")
            }
            if first.hemisphereFirst != second.hemisphereFirst {
                throw CoordinateError(message: "Mixed notations: put the hemisphere letters either all before or all after the numbers.")
            }
            let (latitudePart, longitudePart) = aIsLatitude ? (first, second) : (second, first)
            latitude = degrees(latitudePart) * (latitudePart.hemisphere == "S" ? -1 : 1)
            longitude = degrees(longitudePart) * (longitudePart.hemisphere == "W" ? -1 : 1)
        default:
            throw CoordinateError(message: "Mixed notations: only one coordinate has a hemisphere letter; give both.")
        }
        return try validated(latitude: latitude, longitude: longitude)
    }

    private static func degrees(_ part: Part) -> Double {
        var value = 0.0
        for (position, component) in part.components.enumerated() {
            value += component.value / [1.0, 60.0, 3600.0][position]
        }
        return part.negative ? -value : value
    }

    /// Checks the ranges.
    static func validated(latitude: Double, longitude: Double) throws(CoordinateError) -> Coordinate {
        guard latitude.isFinite, (-90...90).contains(latitude) else {
            throw CoordinateError(message: "Latitude \(Geo.trimmed(latitude, digits: 6)) is out of range; it must be from -90 (south pole) to 90 (north pole).")
        }
        guard longitude.isFinite, (-180...180).contains(longitude) else {
            throw CoordinateError(message: "Longitude \(Geo.trimmed(longitude, digits: 6)) is out of range; it must be from -180 (west) to 180 (east).")
        }
        return Coordinate(latitude: latitude == 0 ? 0 : latitude, longitude: longitude == 0 ? 0 : longitude)
    }

    private static func unitName(_ unit: Int) -> String { ["degrees", "minutes", "seconds"][unit] }
}

/// Formatting and geometry on the WGS 84 sphere approximation.
enum Geo {
    /// The mean Earth radius in kilometres (IUGG).
    static let earthRadiusKilometres = 6371.0088

    /// `value` with exactly `digits` decimals, without Foundation.
    static func fixed(_ value: Double, digits: Int) -> String {
        // Out of the range where scaled digits fit a UInt64 (or not a number at all): Swift's own
        // spelling, never a trapping conversion. (Coordinates and distances are far inside it.)
        guard value.isFinite, abs(value) < 1e12, (0...6).contains(digits) else { return String(value) }
        var scale = 1.0
        for _ in 0..<digits { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        let negative = value < 0 && scaled != 0
        let whole = UInt64(scaled / scale)
        var fraction = String(UInt64(scaled - Double(whole) * scale))
        while fraction.count < digits { fraction = "0" + fraction }
        return (negative ? "-" : "") + String(whole) + (digits > 0 ? "." + fraction : "")
    }

    /// `value` with at most `digits` decimals, trailing zeros removed.
    static func trimmed(_ value: Double, digits: Int) -> String {
        var text = fixed(value, digits: digits)
        if text.contains(".") {
            while text.hasSuffix("0") { text.removeLast() }
            if text.hasSuffix(".") { text.removeLast() }
        }
        return text == "-0" ? "0" : text
    }

    /// `47.37690, 8.54170`.
    static func decimal(_ coordinate: Coordinate) -> String {
        "\(fixed(coordinate.latitude, digits: 5)), \(fixed(coordinate.longitude, digits: 5))"
    }

    /// `47°22′36.8″N 8°32′30.1″E`.
    static func dms(_ coordinate: Coordinate) -> String {
        "\(dms(coordinate.latitude, positive: "N", negative: "S")) \(dms(coordinate.longitude, positive: "E", negative: "W"))"
    }

    private static func dms(_ value: Double, positive: String, negative: String) -> String {
        guard value.isFinite, abs(value) <= 360 else { return String(value) }
        let tenths = Int((abs(value) * 36000).rounded())  // tenths of a second
        let degrees = tenths / 36000
        let minutes = (tenths % 36000) / 600
        let seconds = tenths % 600
        let secondsText = (seconds / 10 < 10 ? "0" : "") + "\(seconds / 10).\(seconds % 10)"
        let minutesText = (minutes < 10 ? "0" : "") + String(minutes)
        let hemisphere = tenths == 0 ? "" : (value < 0 ? negative : positive)
        return "\(degrees)°\(minutesText)′\(secondsText)″\(hemisphere)"
    }

    /// The `geo:` URI (RFC 5870) with up to 6 decimals (about 0.1 m); longitude 0 at the poles.
    static func geoURI(_ coordinate: Coordinate) -> String {
        let longitude = abs(coordinate.latitude) == 90 ? 0 : coordinate.longitude
        return "geo:\(trimmed(coordinate.latitude, digits: 6)),\(trimmed(longitude, digits: 6))"
    }

    /// A unit vector for a point.
    static func unitVector(latitude: Double, longitude: Double) -> (Double, Double, Double) {
        let phi = latitude * .pi / 180
        let lambda = longitude * .pi / 180
        let cosPhi = cos(phi)
        return (cosPhi * cos(lambda), cosPhi * sin(lambda), sin(phi))
    }

    /// Great-circle distance in kilometres for a squared chord length between unit vectors.
    static func kilometres(chordSquared: Double) -> Double {
        2 * asin(min(1, chordSquared.squareRoot() / 2)) * earthRadiusKilometres
    }

    /// Great-circle distance in kilometres (haversine).
    static func distance(_ a: Coordinate, _ b: Coordinate) -> Double {
        let phi1 = a.latitude * .pi / 180
        let phi2 = b.latitude * .pi / 180
        let dPhi = phi2 - phi1
        let dLambda = (b.longitude - a.longitude) * .pi / 180
        let h = sin(dPhi / 2) * sin(dPhi / 2) + cos(phi1) * cos(phi2) * sin(dLambda / 2) * sin(dLambda / 2)
        return 2 * asin(min(1, h.squareRoot())) * earthRadiusKilometres
    }

    /// The initial bearing from `a` to `b` as a 16-point compass name (`NE`, `SSW`, …).
    static func compass(from a: Coordinate, to b: Coordinate) -> String {
        let phi1 = a.latitude * .pi / 180
        let phi2 = b.latitude * .pi / 180
        let dLambda = (b.longitude - a.longitude) * .pi / 180
        let y = sin(dLambda) * cos(phi2)
        let x = cos(phi1) * sin(phi2) - sin(phi1) * cos(phi2) * cos(dLambda)
        var bearing = atan2(y, x) * 180 / .pi
        guard bearing.isFinite else { return "" }
        if bearing < 0 { bearing += 360 }
        let names = ["N", "NNE", "NE", "ENE", "E", "ESE", "SE", "SSE", "S", "SSW", "SW", "WSW", "W", "WNW", "NW", "NNW"]
        return names[Int((bearing / 22.5).rounded()) % 16]
    }

    /// `850 m`, `12.3 km`, `1,204 km`.
    static func distanceLabel(_ kilometres: Double) -> String {
        // Items are checked (0 up to half the Earth's circumference), but never trap on others.
        guard kilometres.isFinite, kilometres >= 0, kilometres < 1e9 else { return "? km" }
        if kilometres < 1 { return "\(Int((kilometres * 1000).rounded())) m" }
        if kilometres < 100 { return "\(fixed(kilometres, digits: 1)) km" }
        return "\(grouped(Int(kilometres.rounded()))) km"
    }

    /// `12,400,232`.
    static func grouped(_ value: Int) -> String {
        let digits = String(value.magnitude)
        var out = ""
        for (index, character) in digits.enumerated() {
            if index > 0, (digits.count - index) % 3 == 0 { out.append(",") }
            out.append(character)
        }
        return (value < 0 ? "-" : "") + out
    }
}

extension String {
    /// ′ ’ ‘ → ', ″ ” “ '' → ", º ˚ → °.
    func replacingTypographicMarks() -> String {
        var out = ""
        var previousApostrophe = false
        for character in self {
            switch character {
            case "′", "’", "‘", "´", "'":
                if previousApostrophe {
                    out.removeLast()
                    out.append("\"")
                    previousApostrophe = false
                } else {
                    out.append("'")
                    previousApostrophe = true
                }
                continue
            case "″", "”", "“": out.append("\"")
            case "º", "˚": out.append("°")
            default: out.append(character)
            }
            previousApostrophe = false
        }
        return out
    }

    var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}

/// Text from files and clients quoted in messages: at most `limit` bytes (cut at a character
/// boundary, `…` added), so a 64 MB line never ends up in an error several times over.
enum Quote {
    static let limit = 80

    /// `"text"`, or `"first 80 bytes…"`.
    static func short(_ text: some StringProtocol) -> String {
        "\"" + prefix(text) + "\""
    }

    /// The text itself, cut to at most `limit` bytes.
    static func prefix(_ text: some StringProtocol) -> String {
        guard text.utf8.count > limit else { return String(text) }
        var result = ""
        for character in text {
            if result.utf8.count + character.utf8.count > limit { break }
            result.append(character)
        }
        return result + "…"
    }

    /// The first `limit` bytes of `bytes` as text, quoted (a cut multi-byte character is repaired
    /// as U+FFFD by the decoding).
    static func short(bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> String {
        let cut = range.count > limit
        let end = cut ? range.lowerBound + limit : range.upperBound
        return "\"" + String(decoding: UnsafeBufferPointer(rebasing: bytes[range.lowerBound..<end]), as: UTF8.self) + (cut ? "…\"" : "\"")
    }
}
