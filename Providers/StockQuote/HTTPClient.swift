#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// What went wrong with an HTTP request, in words an operator can act on.
struct HTTPError: Error, CustomStringConvertible, Sendable {
    var description: String
}

/// A parsed `http://` URL.
struct HTTPURL: Sendable, Hashable {
    var host: String
    var port: Int
    /// Path and query, e.g. `/q/d/l/?s=acme.us`.
    var target: String

    /// Parses `http://host[:port][/path][?query]`; `https` is refused (no TLS here).
    init(_ text: String) throws(HTTPError) {
        let lower = text.lowercased()
        if lower.hasPrefix("https://") {
            throw HTTPError(description: "\(text): https is not supported (this client has no TLS); use an http:// URL, e.g. a local mirror")
        }
        guard lower.hasPrefix("http://") else {
            throw HTTPError(description: "\(text): not an http:// URL")
        }
        var rest = Substring(text.dropFirst(7))
        if let hash = rest.firstIndex(of: "#") { rest = rest[..<hash] }
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" } ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let path = rest[authorityEnd...]
        target = path.isEmpty ? "/" : (path.first == "?" ? "/" + path : String(path))
        guard !authority.isEmpty, !authority.contains("@") else {
            throw HTTPError(description: "\(text): expected http://host[:port]/path (no user name or password)")
        }
        var hostPart = authority
        var portPart: Substring? = nil
        if authority.first == "[" {
            guard let close = authority.firstIndex(of: "]") else { throw HTTPError(description: "\(text): unclosed [ in the host") }
            hostPart = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if after.first == ":" { portPart = after.dropFirst() } else if !after.isEmpty {
                throw HTTPError(description: "\(text): unexpected text after the host")
            }
        } else if let colon = authority.lastIndex(of: ":") {
            hostPart = authority[..<colon]
            portPart = authority[authority.index(after: colon)...]
        }
        host = String(hostPart)
        if let portPart {
            guard let port = Int(portPart), (1...65535).contains(port) else {
                throw HTTPError(description: "\(text): port \"\(portPart)\" is not a number from 1 to 65535")
            }
            self.port = port
        } else {
            port = 80
        }
        guard !host.isEmpty else { throw HTTPError(description: "\(text): no host") }
    }

    /// The `Host` header value.
    var hostHeader: String {
        let name = host.contains(":") ? "[\(host)]" : host
        return port == 80 ? name : "\(name):\(port)"
    }
}

/// A response: status, headers (names lowercased) and the decoded body.
struct HTTPResponse: Sendable {
    var status: Int
    var reason: String
    var headers: [(name: String, value: String)]
    var body: [UInt8]
}

/// A minimal HTTP/1.1 client over a plain TCP socket: one `GET`, `Connection: close`, bodies
/// framed by `Content-Length`, `Transfer-Encoding: chunked` or the end of the connection.
///
/// It blocks the calling thread (polling in short slices so a cancelled task stops early), honours
/// one overall deadline, and caps the body size. No TLS, redirects, proxies or compression.
enum HTTPClient {
    /// Fetches `url`; throws `HTTPError` for network problems and non-200 answers.
    static func get(_ url: String, timeout: Double, maximumBytes: Int = 32 << 20) throws -> HTTPResponse {
        let parsed = try HTTPURL(url)
        let deadline = now() + max(timeout, 0.01)
        let socket = try connect(parsed, deadline: deadline, url: url)
        defer { close(socket) }
        let request =
            "GET \(parsed.target) HTTP/1.1\r\nHost: \(parsed.hostHeader)\r\nUser-Agent: ContextHost-StockQuote/1.0\r\n"
            + "Accept: text/csv, text/plain;q=0.9, */*;q=0.5\r\nConnection: close\r\n\r\n"
        try send(Array(request.utf8), on: socket, deadline: deadline, url: url)

        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        var head: (status: Int, reason: String, headers: [(name: String, value: String)], bodyStart: Int)? = nil
        var finished = false
        while !finished {
            if head == nil, let end = headerEnd(buffer) {
                head = try parseHead(Array(buffer[..<end]), url: url)
                head!.bodyStart = end + 4
            }
            if let head, let body = try completeBody(buffer[head.bodyStart...], headers: head.headers, atEOF: false, url: url) {
                return try response(head, body, url: url)
            }
            guard buffer.count <= maximumBytes else {
                throw HTTPError(description: "\(url): the answer is larger than \(maximumBytes >> 20) MiB")
            }
            try wait(socket, events: Int16(POLLIN), deadline: deadline, url: url, phase: "reading the answer")
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<count])
            } else if count == 0 {
                finished = true
            } else if errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK {
                throw HTTPError(description: "\(url): reading failed: \(errorText())")
            }
        }
        guard let head else {
            throw HTTPError(description: "\(url): the server closed the connection before a complete HTTP header")
        }
        guard let body = try completeBody(buffer[head.bodyStart...], headers: head.headers, atEOF: true, url: url) else {
            throw HTTPError(description: "\(url): the server closed the connection before the end of the body")
        }
        return try response(head, body, url: url)
    }

    private static func response(
        _ head: (status: Int, reason: String, headers: [(name: String, value: String)], bodyStart: Int), _ body: [UInt8],
        url: String
    ) throws(HTTPError) -> HTTPResponse {
        if let encoding = head.headers.first(where: { $0.name == "content-encoding" })?.value.lowercased(),
            encoding != "identity"
        {
            throw HTTPError(description: "\(url): the body is \(encoding)-compressed, which this client does not decode")
        }
        guard head.status == 200 else {
            var message = "\(url): HTTP \(head.status) \(head.reason)"
            if (300..<400).contains(head.status), let location = head.headers.first(where: { $0.name == "location" }) {
                message += " (redirects to \(location.value); put that URL in the template)"
            }
            throw HTTPError(description: message)
        }
        return HTTPResponse(status: head.status, reason: head.reason, headers: head.headers, body: body)
    }

    // MARK: Framing

    private static func headerEnd(_ buffer: [UInt8]) -> Int? {
        guard buffer.count >= 4 else { return nil }
        for index in 0...(buffer.count - 4)
        where buffer[index] == 0x0D && buffer[index + 1] == 0x0A && buffer[index + 2] == 0x0D && buffer[index + 3] == 0x0A {
            return index
        }
        return nil
    }

    private static func parseHead(_ bytes: [UInt8], url: String) throws(HTTPError) -> (
        status: Int, reason: String, headers: [(name: String, value: String)], bodyStart: Int
    ) {
        let lines = String(decoding: bytes, as: UTF8.self).split(separator: "\r\n", omittingEmptySubsequences: false)
        let statusLine = lines.first ?? ""
        let parts = statusLine.split(separator: " ", maxSplits: 2, omittingEmptySubsequences: true)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), let status = Int(parts[1]), (100...599).contains(status) else {
            throw HTTPError(description: "\(url): not an HTTP/1.x answer (status line \"\(statusLine.prefix(80))\")")
        }
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else {
                throw HTTPError(description: "\(url): malformed header line \"\(line.prefix(80))\"")
            }
            let value = line[line.index(after: colon)...].drop { $0 == " " || $0 == "\t" }
            headers.append((line[..<colon].lowercased(), String(value)))
        }
        return (status, parts.count > 2 ? String(parts[2]) : "", headers, 0)
    }

    /// The body when complete, `nil` while more bytes are needed.
    private static func completeBody(
        _ bytes: ArraySlice<UInt8>, headers: [(name: String, value: String)], atEOF: Bool, url: String
    ) throws(HTTPError) -> [UInt8]? {
        if let encoding = headers.first(where: { $0.name == "transfer-encoding" })?.value.lowercased(),
            encoding.contains("chunked")
        {
            return try dechunk(bytes, url: url)
        }
        if let lengthText = headers.first(where: { $0.name == "content-length" })?.value {
            guard let length = Int(lengthText.trimmingSpaces), length >= 0 else {
                throw HTTPError(description: "\(url): bad Content-Length \"\(lengthText)\"")
            }
            if bytes.count >= length { return Array(bytes.prefix(length)) }
            return nil
        }
        return atEOF ? Array(bytes) : nil
    }

    /// Decodes a chunked body (RFC 9112 §7.1): `nil` if incomplete.
    static func dechunk(_ bytes: ArraySlice<UInt8>, url: String) throws(HTTPError) -> [UInt8]? {
        var body: [UInt8] = []
        var index = bytes.startIndex
        func line() -> ArraySlice<UInt8>? {
            var end = index
            while end + 1 < bytes.endIndex {
                if bytes[end] == 0x0D && bytes[end + 1] == 0x0A {
                    let result = bytes[index..<end]
                    index = end + 2
                    return result
                }
                end += 1
            }
            return nil
        }
        while true {
            guard let sizeLine = line() else { return nil }
            let sizeText = String(decoding: sizeLine.prefix { $0 != UInt8(ascii: ";") }, as: UTF8.self).trimmingSpaces
            guard let size = Int(sizeText, radix: 16), size >= 0 else {
                throw HTTPError(description: "\(url): bad chunk size \"\(sizeText.prefix(20))\" in a chunked body")
            }
            if size == 0 {
                while true {  // trailers, up to the empty line
                    guard let trailer = line() else { return nil }
                    if trailer.isEmpty { return body }
                }
            }
            guard bytes.endIndex - index >= size + 2 else { return nil }
            body.append(contentsOf: bytes[index..<(index + size)])
            index += size
            guard bytes[index] == 0x0D, bytes[index + 1] == 0x0A else {
                throw HTTPError(description: "\(url): a chunk of a chunked body does not end with CRLF")
            }
            index += 2
        }
    }

    // MARK: Sockets

    private static func connect(_ url: HTTPURL, deadline: Double, url text: String) throws -> Int32 {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc) || canImport(Musl)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
        hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>? = nil
        let status = getaddrinfo(url.host, String(url.port), &hints, &list)
        guard status == 0, let first = list else {
            throw HTTPError(description: "\(text): cannot resolve host \"\(url.host)\": \(String(cString: gai_strerror(status)))")
        }
        defer { freeaddrinfo(first) }
        var lastError = "no address"
        var current: UnsafeMutablePointer<addrinfo>? = first
        while let info = current {
            current = info.pointee.ai_next
            let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
            guard fd >= 0 else {
                lastError = errorText()
                continue
            }
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            #if canImport(Darwin)
            var one: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
            #endif
            if systemConnect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return fd }
            guard errno == EINPROGRESS else {
                lastError = errorText()
                close(fd)
                continue
            }
            do {
                try wait(fd, events: Int16(POLLOUT), deadline: deadline, url: text, phase: "connecting to \(url.hostHeader)")
            } catch {
                close(fd)
                throw error
            }
            var socketError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &socketError, &length)
            if socketError == 0 { return fd }
            lastError = String(cString: strerror(socketError))
            close(fd)
        }
        throw HTTPError(description: "\(text): cannot connect to \(url.hostHeader): \(lastError)")
    }

    private static func send(_ bytes: [UInt8], on fd: Int32, deadline: Double, url: String) throws {
        var offset = 0
        while offset < bytes.count {
            try wait(fd, events: Int16(POLLOUT), deadline: deadline, url: url, phase: "sending the request")
            #if canImport(Darwin)
            let flags: Int32 = 0
            #else
            let flags = Int32(MSG_NOSIGNAL)
            #endif
            let written = bytes[offset...].withUnsafeBytes { systemSend(fd, $0.baseAddress, $0.count, flags) }
            if written > 0 {
                offset += written
            } else if errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK {
                throw HTTPError(description: "\(url): sending the request failed: \(errorText())")
            }
        }
    }

    /// Waits until `fd` is ready, in slices of 50 ms so a cancelled task stops promptly.
    private static func wait(_ fd: Int32, events: Int16, deadline: Double, url: String, phase: String) throws {
        while true {
            try Task.checkCancellation()
            let remaining = deadline - now()
            guard remaining > 0 else { throw HTTPError(description: "\(url): timed out \(phase)") }
            var descriptor = pollfd(fd: fd, events: events, revents: 0)
            let result = poll(&descriptor, 1, Int32(min(remaining, 0.05) * 1000) + 1)
            if result > 0 { return }
            if result < 0, errno != EINTR { throw HTTPError(description: "\(url): poll failed: \(errorText())") }
        }
    }

    private static func now() -> Double {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
    }

    private static func errorText() -> String { String(cString: strerror(errno)) }
}

// Module-qualified names for the C functions that `HTTPClient`'s own methods shadow.
@inline(__always)
private func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>!, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}

@inline(__always)
private func systemSend(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int {
    send(fd, buffer, count, flags)
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
