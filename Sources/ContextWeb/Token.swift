#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The bearer token of a listener: required on every non-loopback address (and on loopback when
/// `--token-file` is given), compared in constant time.
package struct BearerToken: Sendable {
    package let value: String

    /// Characters a token may have: they fit an `Authorization: Bearer` value and a
    /// `Sec-WebSocket-Protocol` entry (an HTTP token) unescaped.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"): true
        default: false
        }
    }

    /// The shortest token accepted from a file.
    package static let minimumLength = 32
    /// The longest token accepted from a file (and compared).
    package static let maximumLength = 512

    /// A token from `text` (a file's contents; surrounding white space is dropped).
    package init(text: String) throws(TokenError) {
        var bytes = Array(text.utf8)
        while let last = bytes.last, last == 0x0A || last == 0x0D || last == 0x20 || last == 0x09 { bytes.removeLast() }
        while let first = bytes.first, first == 0x0A || first == 0x0D || first == 0x20 || first == 0x09 { bytes.removeFirst() }
        guard bytes.count >= Self.minimumLength, bytes.count <= Self.maximumLength else {
            throw TokenError("the token must be \(Self.minimumLength) to \(Self.maximumLength) characters long (it is \(bytes.count)); generate one with: head -c 32 /dev/urandom | xxd -p -c 64")
        }
        guard bytes.allSatisfy(Self.isTokenCharacter) else {
            throw TokenError("the token may contain only letters, digits and - . _ ~ (it goes into an HTTP header and a WebSocket subprotocol unescaped)")
        }
        value = String(decoding: bytes, as: UTF8.self)
    }

    /// A new random token: 32 bytes from the system's generator, as 64 hex digits.
    package static func generate() -> BearerToken {
        var generator = SystemRandomNumberGenerator()
        let hex = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        for _ in 0..<32 {
            let byte = UInt8.random(in: 0...255, using: &generator)
            text.append(hex[Int(byte >> 4)])
            text.append(hex[Int(byte & 0x0F)])
        }
        return BearerToken(checkedValue: String(decoding: text, as: UTF8.self))
    }

    private init(checkedValue: String) { value = checkedValue }

    /// Reads the token from a file, refusing one that other users can read.
    package static func read(file path: String) throws(TokenError) -> BearerToken {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw TokenError("cannot read --token-file \(path): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & 0o170000) == 0o100000 else { throw TokenError("--token-file \(path) is not a regular file") }
        guard info.st_mode & 0o077 == 0 else {
            throw TokenError("--token-file \(path) can be read by other users (mode \(String(info.st_mode & 0o777, radix: 8))); run: chmod 600 \(path)")
        }
        guard info.st_size <= 4096 else { throw TokenError("--token-file \(path) is larger than 4096 bytes; it should hold only the token") }
        guard let file = fopen(path, "r") else {
            throw TokenError("cannot open --token-file \(path): \(String(cString: strerror(errno)))")
        }
        defer { fclose(file) }
        var buffer = [UInt8](repeating: 0, count: 4097)
        let count = fread(&buffer, 1, 4096, file)
        do {
            return try BearerToken(text: String(decoding: buffer[0..<count], as: UTF8.self))
        } catch {
            throw TokenError("--token-file \(path): \(error.description)")
        }
    }

    /// Whether `candidate` is the token. The time taken depends only on the candidate's length
    /// (capped) and the token's, never on where they first differ.
    package func matches<C: Collection<UInt8>>(_ candidate: C) -> Bool {
        let expected = Array(value.utf8)
        var difference = UInt8(candidate.count == expected.count ? 0 : 1)
        var index = candidate.startIndex
        for position in 0..<expected.count {
            let byte: UInt8
            if index != candidate.endIndex {
                byte = candidate[index]
                index = candidate.index(after: index)
            } else {
                byte = 0
            }
            difference |= byte ^ expected[position]
        }
        return difference == 0
    }
}

/// A token that cannot be used, with what to do about it.
package struct TokenError: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}
