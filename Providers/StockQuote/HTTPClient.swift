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
        // Parsing resumes where it stopped, so the work stays linear in the answer's size.
        var headerSearchFrom = 0
        var chunked = ChunkedState()
        var finished = false
        while !finished {
            if head == nil {
                if let end = headerEnd(buffer, from: headerSearchFrom) {
                    var parsed = try parseHead(Array(buffer[..<end]), url: url)
                    parsed.bodyStart = end + 4
                    head = parsed
                    chunked.index = end + 4
                } else {
                    guard buffer.count <= maximumHeaderBytes else {
                        throw HTTPError(description: "\(url): the answer's header is longer than \(maximumHeaderBytes >> 10) KiB")
                    }
                    headerSearchFrom = max(0, buffer.count - 3)
                }
            }
            if let head, let body = try completeBody(buffer, head: head, chunked: &chunked, atEOF: false, url: url) {
                return try response(head, body, url: url)
            }
            guard buffer.count <= maximumBytes else {
                throw HTTPError(description: "\(url): the answer is larger than \(maximumBytes >> 20) MiB")
            }
            try wait(socket, events: Int16(POLLIN), deadline: deadline, url: url, phase: "reading the answer")
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            if count > 0 {
                buffer.append(contentsOf: chunk[0..<min(count, chunk.count)])
            } else if count == 0 {
                finished = true
            } else if errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK {
                throw HTTPError(description: "\(url): reading failed: \(errorText())")
            }
        }
        guard let head else {
            throw HTTPError(description: "\(url): the server closed the connection before a complete HTTP header")
        }
        guard let body = try completeBody(buffer, head: head, chunked: &chunked, atEOF: true, url: url) else {
            throw HTTPError(description: "\(url): the server closed the connection before the end of the body")
        }
        return try response(head, body, url: url)
    }

    /// The longest header accepted.
    static let maximumHeaderBytes = 64 << 10

    private static func response(
        _ head: (status: Int, reason: String, headers: [(name: String, value: String)], bodyStart: Int), _ body: [UInt8],
        url: String
    ) throws(HTTPError) -> HTTPResponse {
        if let encoding = head.headers.first(where: { $0.name == "content-encoding" })?.value.lowercased(),
            encoding != "identity"
        {
            throw HTTPError(description: "\(url): the body is \(Limits.quote(encoding))-compressed, which this client does not decode")
        }
        guard head.status == 200 else {
            var message = "\(url): HTTP \(head.status) \(Limits.quote(head.reason))"
            if (300..<400).contains(head.status), let location = head.headers.first(where: { $0.name == "location" }) {
                message += " (redirects to \(Limits.quote(location.value, limit: 400)); put that URL in the template)"
            }
            throw HTTPError(description: message)
        }
        return HTTPResponse(status: head.status, reason: head.reason, headers: head.headers, body: body)
    }

    // MARK: Framing

    private static func headerEnd(_ buffer: [UInt8], from start: Int) -> Int? {
        guard buffer.count >= 4, start <= buffer.count - 4 else { return nil }
        for index in start...(buffer.count - 4)
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
        _ buffer: [UInt8], head: (status: Int, reason: String, headers: [(name: String, value: String)], bodyStart: Int),
        chunked: inout ChunkedState, atEOF: Bool, url: String
    ) throws(HTTPError) -> [UInt8]? {
        let headers = head.headers
        let bytes = buffer[min(head.bodyStart, buffer.count)...]
        if let encoding = headers.first(where: { $0.name == "transfer-encoding" })?.value.lowercased(),
            encoding.contains("chunked")
        {
            return try dechunk(buffer, state: &chunked, url: url)
        }
        if let lengthText = headers.first(where: { $0.name == "content-length" })?.value {
            guard let length = Int(lengthText.trimmingSpaces), length >= 0 else {
                throw HTTPError(description: "\(url): bad Content-Length \"\(Limits.quote(lengthText))\"")
            }
            if bytes.count >= length { return Array(bytes.prefix(length)) }
            return nil
        }
        return atEOF ? Array(bytes) : nil
    }

    /// Where decoding a chunked body stopped: the next unread byte of the buffer and the body so far.
    struct ChunkedState {
        var index = 0
        var body: [UInt8] = []
    }

    /// Decodes a chunked body (RFC 9112 §7.1) from `buffer`, resuming at `state.index`: `nil` while
    /// incomplete. Chunk-size lines and the trailer section are bounded; a chunk size that does not
    /// fit the answer's limit is an error (never an overflow).
    static func dechunk(_ buffer: [UInt8], state: inout ChunkedState, url: String) throws(HTTPError) -> [UInt8]? {
        /// The line starting at `from` (without its CRLF) and the index after it, or `nil`.
        func line(from start: Int, limit: Int) throws(HTTPError) -> (ArraySlice<UInt8>, Int)? {
            var end = start
            while end + 1 < buffer.count {
                if buffer[end] == 0x0D && buffer[end + 1] == 0x0A { return (buffer[start..<end], end + 2) }
                end += 1
                if end - start > limit {
                    throw HTTPError(description: "\(url): a line of the chunked body is longer than \(limit) bytes")
                }
            }
            return nil
        }
        while true {
            guard let (sizeLine, afterSize) = try line(from: state.index, limit: 1024) else { return nil }
            let sizeText = String(decoding: sizeLine.prefix { $0 != UInt8(ascii: ";") }, as: UTF8.self).trimmingSpaces
            guard sizeText.utf8.count <= 16, let size = Int(sizeText, radix: 16), size >= 0, size <= 64 << 20 else {
                throw HTTPError(description: "\(url): bad chunk size \"\(sizeText.prefix(20))\" in a chunked body")
            }
            if size == 0 {
                var index = afterSize
                while true {  // trailers, up to the empty line (64 KiB at most)
                    guard let (trailer, next) = try line(from: index, limit: maximumHeaderBytes) else { return nil }
                    if trailer.isEmpty { return state.body }
                    index = next
                    if index - afterSize > maximumHeaderBytes {
                        throw HTTPError(description: "\(url): the trailers of the chunked body are longer than \(maximumHeaderBytes >> 10) KiB")
                    }
                }
            }
            guard buffer.count - afterSize >= size + 2 else { return nil }
            guard buffer[afterSize + size] == 0x0D, buffer[afterSize + size + 1] == 0x0A else {
                throw HTTPError(description: "\(url): a chunk of a chunked body does not end with CRLF")
            }
            state.body.append(contentsOf: buffer[afterSize..<(afterSize + size)])
            state.index = afterSize + size + 2
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
