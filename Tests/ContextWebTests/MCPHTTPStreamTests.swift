#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ContextHost
import ContextMCP
import ContextProtocol
import Foundation
import Logging
import Synchronization
import Testing

@testable import ContextWeb

/// `mcp --http`'s SSE streams against clients that do not read: the server in this process (so
/// the test can make its bridge send as much as it likes) and a raw socket for the client. The
/// transport's other hostile cases run through the real binary (IntegrationTests/MCPHTTPTests).
@Suite("mcp --http: SSE stream cap and pings")
struct MCPHTTPStreamTests {
    /// A client opens the session's GET stream with a tiny receive buffer and never reads while
    /// the bridge sends 40,000 messages of ~1 KB (40 MB). The stream keeps only the newest
    /// `streamBuffer` (4096); the socket's buffers hold a few thousand more. Without the cap every
    /// message would wait in memory and all 40,000 arrive once the client reads.
    @Test("a client that never reads its GET stream: the newest 4096 messages are kept, the rest dropped")
    func streamCap() async throws {
        let server = try await Server.start()
        defer { server.stop() }
        let session = try server.initialize()
        let sink = try #require(server.lastSink())

        let hostile = try RawClient(port: server.port, receiveBuffer: 4096)
        try hostile.send(server.getRequest(session: session))
        let opened = try hostile.read(until: ": stream open", timeout: 10)
        #expect(opened.contains("200 OK") && opened.contains("text/event-stream"), "\(opened)")

        // A second session whose client reads: unaffected by the flood.
        let other = try server.initialize()
        let otherSink = try #require(server.lastSink())
        let reader = try RawClient(port: server.port, receiveBuffer: nil)
        try reader.send(server.getRequest(session: other))
        _ = try reader.read(until: ": stream open", timeout: 10)

        let count = 40_000
        let padding = String(repeating: "x", count: 1000)
        for index in 0..<count {
            sink(["jsonrpc": "2.0", "method": "notifications/message", "params": ["data": .string(Self.marker(index)), "pad": .string(padding)]], nil)
        }
        otherSink(["jsonrpc": "2.0", "method": "notifications/message", "params": ["data": "for the reader"]], nil)
        let control = try reader.read(until: "for the reader", timeout: 10)
        #expect(control.contains("for the reader"))

        // Now read everything: up to the last message sent, which must be there.
        let text = try hostile.read(until: Self.marker(count - 1), timeout: 60)
        let received = Self.markers(in: text)
        #expect(received.last == count - 1, "the newest message arrives")
        #expect(received == received.sorted() && Set(received).count == received.count, "in order, none twice")
        #expect(received.count >= MCPHTTPServer.streamBuffer, "at least the newest \(MCPHTTPServer.streamBuffer) kept: \(received.count)")
        // 4096 kept + what the kernel's socket buffers (≤ 4 MB send, the 4 KB receive) and NIO's
        // write buffer (64 KB) held: well under half of what was sent.
        #expect(received.count < count / 2, "\(received.count) of \(count) messages arrived: the stream kept them all")
        let tail = Array(received.suffix(MCPHTTPServer.streamBuffer))
        #expect(tail == Array((count - MCPHTTPServer.streamBuffer)..<count), "the newest 4096 arrive, without a gap")
    }

    /// An open GET stream gets a `: ping` comment every `pingInterval` (30 s by default; 100 ms
    /// here), so a client that vanished fails a write in the end and its session can expire.
    @Test("an open GET stream gets a ': ping' comment every pingInterval")
    func pings() async throws {
        let server = try await Server.start(pingInterval: .milliseconds(100))
        defer { server.stop() }
        let session = try server.initialize()
        let client = try RawClient(port: server.port, receiveBuffer: nil)
        try client.send(server.getRequest(session: session))
        // (Each write is its own HTTP chunk, so the two comments are never adjacent.)
        let first = try client.read(until: ": ping\n\n", timeout: 10)
        let second = try client.read(until: ": ping\n\n", timeout: 10)
        #expect(first.contains(": stream open\n\n"))
        #expect(!(first + second).contains("data:"), "pings are comments, no events: \(first + second)")
    }

    static func marker(_ index: Int) -> String {
        let digits = String(index)
        return "seq-" + String(repeating: "0", count: 6 - digits.count) + digits
    }

    /// The numbers of the `seq-NNNNNN` markers in `text`, in order (a byte scan: the text is
    /// megabytes long).
    static func markers(in text: String) -> [Int] {
        let bytes = Array(text.utf8)
        let prefix = Array("seq-".utf8)
        var found: [Int] = []
        var index = 0
        while index + prefix.count + 6 <= bytes.count {
            guard bytes[index] == prefix[0], bytes[index + 1] == prefix[1], bytes[index + 2] == prefix[2], bytes[index + 3] == prefix[3] else {
                index += 1
                continue
            }
            var value = 0
            var digits = 0
            while digits < 6 {
                let byte = bytes[index + 4 + digits]
                guard byte >= 0x30, byte <= 0x39 else { break }
                value = value * 10 + Int(byte - 0x30)
                digits += 1
            }
            if digits == 6 { found.append(value) }
            index += 4 + digits
        }
        return found
    }
}

/// `MCPHTTPServer.run` in this process on 127.0.0.1, each session a real bridge over an
/// in-process host with no providers; the sink of each new session is kept for the test.
private final class Server: Sendable {
    typealias Sink = @Sendable (JSONValue, String?) -> Void
    let port: Int
    private let task: Task<Void, Never>
    private let sinks: Locked<[Sink]>

    private init(port: Int, task: Task<Void, Never>, sinks: Locked<[Sink]>) {
        self.port = port
        self.task = task
        self.sinks = sinks
    }

    static func start(pingInterval: Duration = .seconds(30)) async throws -> Server {
        var options = MCPHTTPOptions(listener: WebListenerOptions(address: try ListenAddress(parsing: "127.0.0.1:0")))
        options.pingInterval = pingInterval
        let logger = Logger(label: "mcp-http-stream-test")
        let sinks = Locked<[Sink]>([])
        let store = ItemStore(directory: nil, logger: logger)
        let factory: MCPBridgeFactory = { sink in
            sinks.value.withLock { $0.append(sink) }
            let host = try InProcessHost(configuration: HostConfiguration(), logger: logger)
            let bridge = MCPBridge(host: host, options: .init(itemsDirectory: nil), store: store, logger: logger, sink: sink)
            try await bridge.start()
            return bridge
        }
        let url = Locked<String?>(nil)
        let frozen = options
        let task = Task {
            do {
                try await MCPHTTPServer.run(options: frozen, factory: factory, logger: logger) { text in url.value.withLock { $0 = text } }
            } catch {
                Issue.record("the server stopped: \(error)")
            }
        }
        let deadline = ContinuousClock.now + .seconds(20)
        while url.value.withLock({ $0 }) == nil {
            guard ContinuousClock.now < deadline else {
                task.cancel()
                throw TestFailure("the server did not listen within 20 s")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let text = url.value.withLock { $0 } ?? ""
        // http://127.0.0.1:PORT/mcp
        guard let port = text.split(separator: ":").last?.split(separator: "/").first.flatMap({ Int($0) }) else {
            task.cancel()
            throw TestFailure("no port in \(text)")
        }
        return Server(port: port, task: task, sinks: sinks)
    }

    func lastSink() -> Sink? { sinks.value.withLock { $0.last } }

    func stop() { task.cancel() }

    /// `initialize` (2025-11-25) on a new connection: the new session's id.
    func initialize() throws -> String {
        let body = #"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#
        let client = try RawClient(port: port, receiveBuffer: nil)
        try client.send(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: application/json, text/event-stream\r\n"
                + "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body)
        let answer = try client.read(until: "\"protocolVersion\"", timeout: 20)
        let line = answer.split(separator: "\r\n").first { $0.lowercased().hasPrefix("mcp-session-id:") }
        guard let id = line?.split(separator: ":").last?.trimmingCharacters(in: .whitespaces), id.count == 32 else {
            throw TestFailure("initialize gave no session id: \(answer)")
        }
        return id
    }

    func getRequest(session: String) -> String {
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\nMcp-Session-Id: \(session)\r\n\r\n"
    }
}

/// A TCP client on 127.0.0.1 that reads only when told to.
private final class RawClient {
    let fd: Int32

    /// `receiveBuffer`: SO_RCVBUF set before connecting (nil: the kernel's default, auto-tuned).
    init(port: Int, receiveBuffer: Int32?) throws {
        #if canImport(Glibc)
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw TestFailure("socket: errno \(errno)") }
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(truncatingIfNeeded: port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            close(fd)
            throw TestFailure("connect to 127.0.0.1:\(port): errno \(errno)")
        }
    }

    deinit { close(fd) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw TestFailure("write: errno \(errno)") }
            sent += n
        }
    }

    /// Reads until `marker` is in what was read (since the last call), or fails at `timeout` seconds.
    func read(until marker: String, timeout: Double) throws -> String {
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 65536)
        let needle = Array(marker.utf8)
        let deadline = Date().addingTimeInterval(timeout)
        var searchFrom = 0
        while true {
            if data.count >= needle.count {
                let start = max(0, searchFrom - needle.count)
                if Self.find(needle, in: data, from: start) { return String(decoding: data, as: UTF8.self) }
                searchFrom = data.count
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else {
                throw TestFailure("no '\(marker)' within \(timeout) s; read \(data.count) bytes, ending: \(String(decoding: data.suffix(300), as: UTF8.self))")
            }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(left * 1000, 1000)))
            if ready <= 0 { continue }
            let n = buffer.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
            guard n > 0 else {
                throw TestFailure("the connection closed before '\(marker)' (read \(data.count) bytes): \(String(decoding: data.suffix(300), as: UTF8.self))")
            }
            data += buffer[0..<n]
        }
    }

    private static func find(_ needle: [UInt8], in data: [UInt8], from start: Int) -> Bool {
        guard data.count >= needle.count, start <= data.count - needle.count else { return false }
        var index = start
        while index <= data.count - needle.count {
            if data[index] == needle[0] && data[index..<(index + needle.count)].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }
}

/// A value behind a lock, shared by closures.
private final class Locked<Value: Sendable>: Sendable {
    let value: Mutex<Value>
    init(_ value: Value) { self.value = Mutex(value) }
}

#if canImport(Glibc)
private let systemRead = Glibc.read
#else
private let systemRead = Darwin.read
#endif

private struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
