#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An `https://` URL read strictly, for the egress broker (docs/security.md, "Egress"): the only
/// URLs a provider may ask the host to fetch, and the only origins a manifest may declare.
///
/// Every byte comes from a provider or a manifest, so anything a lenient parser might read two
/// ways is refused rather than guessed: user info (`https://allowed@other`), IPv4 written other
/// than as four decimal parts (`2130706433`, `0x7f.1`, `0177.0.0.1`), percent-encoded or
/// non-ASCII host names, a trailing dot, control characters, spaces and backslashes anywhere.
package struct HTTPSURL: Sendable, Hashable, CustomStringConvertible {
    /// Lowercase host: a DNS name, a dotted-quad IPv4, or an IPv6 address in its canonical text
    /// (without brackets).
    package var host: String
    /// The port (443 unless written).
    package var port: Int
    /// The path and query, as written (`/` when empty); never a fragment.
    package var target: String
    /// Whether `host` is an IP address literal.
    package var hostIsIPLiteral: Bool
    /// Whether the IP literal is IPv6.
    package var hostIsIPv6: Bool

    /// `https://host[:port]`, the port only when not 443; IPv6 in brackets.
    package var origin: String {
        let shownHost = hostIsIPv6 ? "[\(host)]" : host
        return port == 443 ? "https://\(shownHost)" : "https://\(shownHost):\(port)"
    }

    /// The whole URL (origin and target).
    package var description: String { origin + target }

    /// Why a URL was refused, in words for the provider author.
    package struct ParseError: Error, Sendable, Hashable, CustomStringConvertible {
        package var message: String
        package var description: String { message }
    }

    /// The longest URL read.
    package static let maximumLength = 8192

    /// Parses `text`; `requireOriginOnly` refuses a path other than `/` (a manifest origin).
    package init(parsing text: String, requireOriginOnly: Bool = false) throws(ParseError) {
        let bytes = try Self.checkedCharacters(text)
        var index = Self.scheme.count
        while index < bytes.count, bytes[index] != UInt8(ascii: "/"), bytes[index] != UInt8(ascii: "?"), bytes[index] != UInt8(ascii: "#") {
            index += 1
        }
        let authority = Array(bytes[Self.scheme.count..<index])
        if authority.contains(UInt8(ascii: "@")) {
            throw ParseError(message: "the URL has user info before '@' (as in https://allowed@other): refused, since it hides the real host")
        }
        target = Self.target(bytes[index...])
        if requireOriginOnly, target != "/" {
            throw ParseError(message: "an origin is scheme, host and port only (https://api.example.com), without a path or query")
        }
        let portBytes: ArraySlice<UInt8>?
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else {
                throw ParseError(message: "an IPv6 host has no closing ']'")
            }
            let after = authority[(close + 1)...]
            if !after.isEmpty {
                guard after.first == UInt8(ascii: ":") else { throw ParseError(message: "unexpected text after the IPv6 host") }
                portBytes = after.dropFirst()
            } else {
                portBytes = nil
            }
            host = try Self.ipv6Host(authority[1..<close])
            hostIsIPLiteral = true
            hostIsIPv6 = true
        } else {
            let colon = authority.firstIndex(of: UInt8(ascii: ":"))
            portBytes = colon.map { authority[($0 + 1)...] }
            (host, hostIsIPLiteral) = try Self.nameOrIPv4Host(authority[..<(colon ?? authority.endIndex)])
            hostIsIPv6 = false
        }
        port = try portBytes.map(Self.port) ?? 443
    }

    private static let scheme = Array("https://".utf8)

    /// `text`'s bytes, once its length, characters and scheme are checked.
    private static func checkedCharacters(_ text: String) throws(ParseError) -> [UInt8] {
        let bytes = Array(text.utf8)
        guard bytes.count <= maximumLength else {
            throw ParseError(message: "the URL is \(bytes.count) bytes long (limit \(maximumLength))")
        }
        for byte in bytes where byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: "\\") {
            throw ParseError(message: "the URL contains a space, a control character, a backslash or a non-ASCII byte (percent-encode it)")
        }
        guard bytes.count >= scheme.count, zip(bytes, scheme).allSatisfy({ ($0 | 0x20) == $1 || $0 == $1 }) else {
            if bytes.starts(with: Array("http://".utf8)) {
                throw ParseError(message: "only https:// URLs are fetched; plain http:// is refused")
            }
            throw ParseError(message: "the URL must start with https://")
        }
        return bytes
    }

    /// The path and query after the authority: without a fragment, `/` when empty.
    private static func target(_ bytes: ArraySlice<UInt8>) -> String {
        var rest = Array(bytes)
        if let hash = rest.firstIndex(of: UInt8(ascii: "#")) { rest = Array(rest[..<hash]) }
        if rest.isEmpty { rest = [UInt8(ascii: "/")] }
        if rest.first == UInt8(ascii: "?") { rest.insert(UInt8(ascii: "/"), at: 0) }
        return String(decoding: rest, as: UTF8.self)
    }

    /// The canonical text of the IPv6 address between `[` and `]`.
    private static func ipv6Host(_ bytes: ArraySlice<UInt8>) throws(ParseError) -> String {
        let text = String(decoding: bytes, as: UTF8.self)
        guard let canonical = canonicalIPv6(text) else {
            throw ParseError(message: "'[\(text)]' is not an IPv6 address (zone ids are refused)")
        }
        return canonical
    }

    /// A DNS name (lower-cased, letters, digits, '-' and '.', labels of 1 to 63) or a canonical
    /// dotted-quad IPv4 address, and whether it is the latter.
    private static func nameOrIPv4Host(_ bytes: ArraySlice<UInt8>) throws(ParseError) -> (String, Bool) {
        let hostBytes = bytes.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        let name = String(decoding: hostBytes, as: UTF8.self)
        guard !hostBytes.isEmpty else { throw ParseError(message: "the URL has no host") }
        guard hostBytes.count <= 253 else { throw ParseError(message: "the host name is longer than 253 characters") }
        guard hostBytes.allSatisfy({ ($0 >= 0x61 && $0 <= 0x7A) || ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".") }) else {
            throw ParseError(message: "the host '\(name)' has characters other than letters, digits, '-' and '.' (write an IDN in its xn-- form)")
        }
        let labels = name.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.allSatisfy({ !$0.isEmpty && $0.count <= 63 }) else {
            throw ParseError(message: "the host '\(name)' has an empty or over-long label (or a trailing dot)")
        }
        // A last label that is numeric (or hex, `0x…`) makes resolvers read the name as an
        // IPv4 address: only the canonical dotted quad is accepted.
        let last = labels[labels.count - 1]
        guard last.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) || last.hasPrefix("0x") else { return (name, false) }
        guard let canonical = canonicalIPv4(name), canonical == name else {
            throw ParseError(message: "'\(name)' is an IPv4 address in a non-canonical form; write it as four decimal parts (127.0.0.1)")
        }
        return (name, true)
    }

    /// A written port: 1 to 5 digits, from 1 to 65535.
    private static func port(_ bytes: ArraySlice<UInt8>) throws(ParseError) -> Int {
        guard !bytes.isEmpty, bytes.count <= 5, bytes.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }),
            let value = Int(String(decoding: bytes, as: UTF8.self)), value >= 1, value <= 65535
        else {
            throw ParseError(message: "the port '\(String(decoding: bytes, as: UTF8.self))' is not a number from 1 to 65535")
        }
        return value
    }

    /// The canonical text of an IPv4 dotted quad, nil if `text` is not one `inet_pton` reads.
    package static func canonicalIPv4(_ text: String) -> String? {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
        guard inet_ntop(AF_INET, &address, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        return String(cString: buffer)
    }

    /// The canonical (RFC 5952) text of an IPv6 address, nil if `text` is not one.
    package static func canonicalIPv6(_ text: String) -> String? {
        guard !text.contains("%") else { return nil }
        var address = in6_addr()
        guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        guard inet_ntop(AF_INET6, &address, &buffer, socklen_t(buffer.count)) != nil else { return nil }
        return String(cString: buffer).lowercased()
    }
}
