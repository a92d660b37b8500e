import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One address a host name resolved to, with whether it is public.
package struct EgressAddress: Sendable, Hashable, CustomStringConvertible {
    /// The canonical text (`93.184.216.34`, `2606:2800::1`).
    package var text: String
    package var isIPv6: Bool
    /// Why it is not public (`loopback`, `private`, `link-local`, …); nil for a public address.
    package var nonPublicKind: String?

    package var description: String { text }

    /// Classifies an IPv4 address given as four bytes.
    package static func classifyIPv4(_ b: [UInt8]) -> String? {
        guard b.count == 4 else { return "invalid" }
        switch (b[0], b[1]) {
        case (0, _): return "unspecified (0.0.0.0/8)"
        case (10, _): return "private (10.0.0.0/8)"
        case (100, 64...127): return "shared (100.64.0.0/10)"
        case (127, _): return "loopback (127.0.0.0/8)"
        case (169, 254): return "link-local (169.254.0.0/16)"
        case (172, 16...31): return "private (172.16.0.0/12)"
        case (192, 168): return "private (192.168.0.0/16)"
        case (192, 0) where b[2] == 0: return "reserved (192.0.0.0/24)"
        case (192, 0) where b[2] == 2: return "documentation (192.0.2.0/24)"
        case (198, 18...19): return "benchmarking (198.18.0.0/15)"
        case (198, 51) where b[2] == 100: return "documentation (198.51.100.0/24)"
        case (203, 0) where b[2] == 113: return "documentation (203.0.113.0/24)"
        case (224...239, _): return "multicast (224.0.0.0/4)"
        case (240...255, _): return "reserved (240.0.0.0/4)"
        default: return nil
        }
    }

    /// Classifies an IPv6 address given as sixteen bytes; IPv4 embedded in it (mapped,
    /// compatible, NAT64, 6to4) is classified as that IPv4 address.
    package static func classifyIPv6(_ b: [UInt8]) -> String? {
        guard b.count == 16 else { return "invalid" }
        let zeros10 = b[0..<10].allSatisfy { $0 == 0 }
        if zeros10, b[10] == 0xFF, b[11] == 0xFF {
            return classifyIPv4(Array(b[12..<16])).map { "IPv4-mapped \($0)" } ?? nil
        }
        if b[0..<15].allSatisfy({ $0 == 0 }) {
            return b[15] == 1 ? "loopback (::1)" : "unspecified (::)"
        }
        if zeros10, b[10] == 0, b[11] == 0 { return "IPv4-compatible (::/96, deprecated)" }
        if b[0] == 0x00, b[1] == 0x64, b[2] == 0xFF, b[3] == 0x9B, b[4..<12].allSatisfy({ $0 == 0 }) {
            return classifyIPv4(Array(b[12..<16])).map { "NAT64 \($0)" } ?? nil
        }
        if b[0] == 0x20, b[1] == 0x02 {
            return classifyIPv4(Array(b[2..<6])).map { "6to4 \($0)" } ?? nil
        }
        if b[0] & 0xFE == 0xFC { return "unique-local (fc00::/7)" }
        if b[0] == 0xFE, b[1] & 0xC0 == 0x80 { return "link-local (fe80::/10)" }
        if b[0] == 0xFE, b[1] & 0xC0 == 0xC0 { return "site-local (fec0::/10)" }
        if b[0] == 0xFF { return "multicast (ff00::/8)" }
        if b[0] == 0x20, b[1] == 0x01, b[2] == 0x0D, b[3] == 0xB8 { return "documentation (2001:db8::/32)" }
        if b[0] == 0x01, b[1..<8].allSatisfy({ $0 == 0 }) { return "discard (100::/64)" }
        return nil
    }

    /// The address of an IP literal (canonical text), classified.
    package static func literal(_ text: String, isIPv6: Bool) -> EgressAddress? {
        if isIPv6 {
            var address = in6_addr()
            guard inet_pton(AF_INET6, text, &address) == 1 else { return nil }
            let bytes = withUnsafeBytes(of: &address) { Array($0) }
            return EgressAddress(text: text, isIPv6: true, nonPublicKind: classifyIPv6(bytes))
        }
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        let bytes = withUnsafeBytes(of: &address) { Array($0) }
        return EgressAddress(text: text, isIPv6: false, nonPublicKind: classifyIPv4(bytes))
    }

    /// How long a name's addresses are reused (`resolved(_:)`): a burst of fetches to one
    /// origin resolves it once, and its fetches need not wait for getaddrinfo. Each use is
    /// checked against the origin's rules again; only what the host itself resolved is kept.
    package static let cacheLifetime: Duration = .seconds(2)
    /// Most names kept (only declared origins are ever resolved; past this the cache is emptied).
    static let cacheLimit = 64
    private static let cache = Mutex<[String: (addresses: [EgressAddress], at: ContinuousClock.Instant)]>([:])

    /// The addresses `host` resolved to within `cacheLifetime`, if it did.
    package static func resolved(_ host: String) -> [EgressAddress]? {
        let now = ContinuousClock.now
        return cache.withLock { cache in
            guard let entry = cache[host] else { return nil }
            guard now - entry.at < cacheLifetime else {
                cache[host] = nil
                return nil
            }
            return entry.addresses
        }
    }

    /// Every address `host` resolves to (getaddrinfo, TCP), classified; at most 32. Blocks
    /// while the resolver works; a success is kept for `cacheLifetime` (`resolved(_:)`).
    package static func resolve(_ host: String) -> Result<[EgressAddress], EgressRefusal> {
        let result = lookUp(host)
        if case .success(let addresses) = result {
            let now = ContinuousClock.now
            cache.withLock { cache in
                if cache.count >= cacheLimit { cache.removeAll() }
                cache[host] = (addresses, now)
            }
        }
        return result
    }

    private static func lookUp(_ host: String) -> Result<[EgressAddress], EgressRefusal> {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, nil, &hints, &list)
        guard status == 0, let first = list else {
            let reason = String(cString: gai_strerror(status))
            return .failure(EgressRefusal(code: .resolveFailed, message: "cannot resolve '\(host)': \(reason)", field: nil))
        }
        defer { freeaddrinfo(first) }
        var result: [EgressAddress] = []
        var node: UnsafeMutablePointer<addrinfo>? = first
        while let current = node, result.count < 32 {
            defer { node = current.pointee.ai_next }
            guard let address = current.pointee.ai_addr else { continue }
            if current.pointee.ai_family == AF_INET {
                let bytes = address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { pointer in
                    withUnsafeBytes(of: pointer.pointee.sin_addr) { Array($0) }
                }
                let text = bytes.map { String($0) }.joined(separator: ".")
                let entry = EgressAddress(text: text, isIPv6: false, nonPublicKind: classifyIPv4(bytes))
                if !result.contains(entry) { result.append(entry) }
            } else if current.pointee.ai_family == AF_INET6 {
                var raw = address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_addr }
                let bytes = withUnsafeBytes(of: &raw) { Array($0) }
                var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
                guard inet_ntop(AF_INET6, &raw, &buffer, socklen_t(buffer.count)) != nil else { continue }
                let entry = EgressAddress(text: String(cString: buffer), isIPv6: true, nonPublicKind: classifyIPv6(bytes))
                if !result.contains(entry) { result.append(entry) }
            }
        }
        if result.isEmpty {
            return .failure(EgressRefusal(code: .resolveFailed, message: "'\(host)' resolved to no IPv4 or IPv6 address", field: nil))
        }
        return .success(result)
    }
}
