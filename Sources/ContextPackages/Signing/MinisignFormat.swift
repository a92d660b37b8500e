import ContextHost
import ContextProviderKit

/// What the minisign files share: line splitting, Base64 lines, key ids and comments.
enum MinisignFormat {
    /// The first line of every minisign file starts with this.
    static let untrustedPrefix = "untrusted comment: "
    /// The third line of a signature file starts with this.
    static let trustedPrefix = "trusted comment: "
    /// The signature algorithm of keys and of legacy (not prehashed) signatures: "Ed".
    static let ed: [UInt8] = [0x45, 0x64]
    /// The signature algorithm of prehashed signatures (BLAKE2b-512 of the message): "ED".
    static let edPrehashed: [UInt8] = [0x45, 0x44]
    /// Key id size.
    static let keyIDBytes = 8
    /// The longest comment `sign` and `fileText` write (longer ones are cut at a character boundary).
    static let maxCommentBytes = 1024
    /// The longest trusted comment `sign` writes.
    static let maxTrustedCommentBytes = 4096

    /// The lines of `bytes` (split at LF; a CR before it and one final empty line dropped), or nil
    /// when the text is over `maxBytes` or holds a NUL byte.
    static func lines(_ bytes: [UInt8], maxBytes: Int) -> [ArraySlice<UInt8>]? {
        guard bytes.count <= maxBytes, !bytes.contains(0) else { return nil }
        var lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        if lines.last?.isEmpty == true { lines.removeLast() }
        return lines.map { $0.last == 0x0D ? $0.dropLast() : $0 }
    }

    /// Whether `line` starts with `prefix`.
    static func hasPrefix(_ line: ArraySlice<UInt8>, _ prefix: String) -> Bool {
        line.starts(with: prefix.utf8)
    }

    /// The bytes of a Base64 line (surrounding spaces and tabs ignored), or nil unless it is
    /// valid padded Base64 of exactly `count` bytes.
    static func base64(_ line: ArraySlice<UInt8>, count: Int) -> [UInt8]? {
        let trimmed = line.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
        // Base64 of `count` bytes is never longer than this; refuse before decoding.
        guard trimmed.count == Base64.encodedCount(count) else { return nil }
        guard let text = String(validating: trimmed, as: UTF8.self), let bytes = Base64.decode(text), bytes.count == count
        else { return nil }
        return bytes
    }

    /// A key id: the 8 bytes read as a little-endian number, 16 uppercase hex digits (how this
    /// host names keys; minisign's own comments drop leading zeros: `printedKeyIDString`).
    static func keyIDString(_ keyID: [UInt8]) -> String {
        let digits: [Character] = Array("0123456789ABCDEF")
        var text = ""
        for byte in keyID.reversed() {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return text
    }

    /// A key id as minisign writes it in its comments (`"%" PRIX64`): uppercase hex without
    /// leading zeros.
    static func printedKeyIDString(_ keyID: [UInt8]) -> String {
        let text = keyIDString(keyID)
        let significant = text.drop { $0 == "0" }
        return significant.isEmpty ? "0" : String(significant)
    }

    /// The key id bytes of an id of up to 16 hex digits (either case; minisign prints it without
    /// leading zeros), or nil.
    static func keyID(parsing text: String) -> [UInt8]? {
        var utf8 = Array(text.utf8)
        guard !utf8.isEmpty, utf8.count <= 2 * keyIDBytes else { return nil }
        utf8.insert(contentsOf: repeatElement(UInt8(ascii: "0"), count: 2 * keyIDBytes - utf8.count), at: 0)
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x41...0x46: c - 0x41 + 10
            case 0x61...0x66: c - 0x61 + 10
            default: nil
            }
        }
        var bytes: [UInt8] = []
        var index = 0
        while index + 1 < utf8.count {
            guard let high = nibble(utf8[index]), let low = nibble(utf8[index + 1]) else { return nil }
            bytes.append(high << 4 | low)
            index += 2
        }
        return bytes.reversed()
    }

    /// Whether `scalar` is a C0 or C1 control character or DEL, other than tab.
    static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value < 0x20 && scalar != "\t") || (0x7F...0x9F).contains(scalar.value)
    }

    /// A comment fit for one line: control characters (but tab) become spaces, and it is cut to
    /// `maxBytes` at a character boundary.
    static func oneLine(_ comment: String, maxBytes: Int) -> String {
        var result = ""
        var size = 0
        for scalar in comment.unicodeScalars {
            let clean: Unicode.Scalar = isControl(scalar) ? " " : scalar
            let length = String(clean).utf8.count
            if size + length > maxBytes { break }
            size += length
            result.unicodeScalars.append(clean)
        }
        return result
    }

    /// Whether a comment read from a file is printable: valid UTF-8 without control characters
    /// other than tab. Answers the text, or nil.
    static func printable(_ bytes: ArraySlice<UInt8>) -> String? {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        for scalar in text.unicodeScalars where isControl(scalar) { return nil }
        return text
    }
}
