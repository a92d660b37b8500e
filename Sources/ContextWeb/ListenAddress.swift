/// The address `serve --listen` binds: an IP literal or `localhost`, and a port.
///
/// Accepted forms: `127.0.0.1:8765`, `[::1]:8765`, `localhost:8765`, `0.0.0.0:8765`, `[::]:0`
/// (port 0: the system picks one; the real port is printed). Host names other than `localhost`
/// are refused: which address a name binds is up to the resolver, and the `Host` header check
/// needs to know the listener's own names.
package struct ListenAddress: Sendable, Equatable {
    /// The address to bind, as an IP literal (`localhost` becomes `127.0.0.1`).
    package var bindHost: String
    /// The port (0: the system picks).
    package var port: Int
    /// `localhost` was given (its name is then an accepted `Host` too).
    package var namedLocalhost: Bool

    /// Parses `HOST:PORT`; the error says what is wrong and what is expected.
    package init(parsing text: String) throws(ListenAddressError) {
        let host: Substring
        let portText: Substring
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw ListenAddressError("'\(text)': an IPv6 address needs its closing ']', e.g. [::1]:8765.")
            }
            host = text[text.index(after: text.startIndex)..<close]
            let rest = text[text.index(after: close)...]
            guard rest.first == ":" else { throw ListenAddressError("'\(text)': expected ':PORT' after ']', e.g. [::1]:8765.") }
            portText = rest.dropFirst()
            guard IPAddressText.isIPv6(host) else { throw ListenAddressError("'\(text)': '\(host)' is not an IPv6 address.") }
        } else {
            guard let colon = text.lastIndex(of: ":") else {
                throw ListenAddressError("'\(text)': expected HOST:PORT, e.g. 127.0.0.1:8765, [::1]:8765 or localhost:8765.")
            }
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
            if host.contains(":") {
                throw ListenAddressError("'\(text)': write an IPv6 address in brackets, e.g. [::1]:8765.")
            }
        }
        guard !portText.isEmpty, portText.count <= 5, portText.allSatisfy({ $0.isASCII && $0.isNumber }),
            let port = Int(portText), port <= 65535
        else {
            throw ListenAddressError("'\(text)': the port must be a number from 0 to 65535 (0: any free port).")
        }
        self.port = port
        if host.lowercased() == "localhost" {
            bindHost = "127.0.0.1"
            namedLocalhost = true
        } else if IPAddressText.isIPv4(host) || IPAddressText.isIPv6(host) {
            bindHost = String(host).lowercased()
            namedLocalhost = false
        } else {
            throw ListenAddressError(
                "'\(text)': '\(host)' is not an IP address; listen on an address (127.0.0.1, ::1, 0.0.0.0) or 'localhost'.")
        }
    }

    /// Only processes on this machine can connect: 127.0.0.0/8 or ::1.
    package var isLoopback: Bool {
        if IPAddressText.isIPv4(bindHost[...]) { return bindHost.hasPrefix("127.") }
        return bindHost == "::1" || bindHost == "0:0:0:0:0:0:0:1"
    }

    /// Every interface: 0.0.0.0 or ::.
    package var isWildcard: Bool {
        bindHost == "0.0.0.0" || bindHost == "::" || bindHost == "0:0:0:0:0:0:0:0"
    }

    /// The host as it appears in a URL or a `Host` header (IPv6 in brackets).
    package var urlHost: String {
        bindHost.contains(":") ? "[\(bindHost)]" : bindHost
    }
}

/// A `--listen` value that cannot be used.
package struct ListenAddressError: Error, CustomStringConvertible {
    package var description: String
    init(_ description: String) { self.description = description }
}

/// Recognises IP address literals (no resolver involved).
package enum IPAddressText {
    /// Four decimal parts 0…255, no leading zeros beyond a lone 0.
    package static func isIPv4(_ text: Substring) -> Bool {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 4 else { return false }
        return parts.allSatisfy { part in
            guard (1...3).contains(part.count), part.allSatisfy({ $0.isASCII && $0.isNumber }),
                !(part.count > 1 && part.first == "0"), let value = Int(part)
            else { return false }
            return value <= 255
        }
    }

    /// Hex groups separated by ':', at most one '::', optionally ending in an IPv4 part.
    package static func isIPv6(_ text: Substring) -> Bool {
        guard text.count >= 2, text.count <= 45, text.contains(":"), !text.contains(":::") else { return false }
        let doubleColons = text.ranges(of: "::").count
        guard doubleColons <= 1 else { return false }
        var groups = text.split(separator: ":", omittingEmptySubsequences: true)
        var groupCount = 0
        if let last = groups.last, last.contains(".") {
            guard isIPv4(last) else { return false }
            groups.removeLast()
            groupCount += 2
        }
        for group in groups {
            guard (1...4).contains(group.count), group.allSatisfy({ $0.isHexDigit }) else { return false }
            groupCount += 1
        }
        // Empty groups are only allowed as the one '::'.
        if doubleColons == 0 {
            guard !text.hasPrefix(":"), !text.hasSuffix(":") else { return false }
            return groupCount == 8
        }
        return groupCount <= 7
    }
}
