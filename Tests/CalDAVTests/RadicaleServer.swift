import ContextHostTestSupport
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
@testable import CalendarProvider

/// The package root (for scripts/ and the test venv).
let packageRoot: String = {
    var url = URL(fileURLWithPath: #filePath)
    for _ in 0..<3 { url.deleteLastPathComponent() }
    return url.path
}()

struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// A real Radicale CalDAV server (from the test-only venv, `scripts/test-venv.sh`), on a free
/// loopback port, with Basic auth from an htpasswd file (plain) and a temporary storage folder.
final class RadicaleServer: @unchecked Sendable {
    let port: Int
    let folder: String
    let user: String
    let password: String
    private var process: Process?
    let logPath: String

    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The venv's python with radicale; a clear error when it is missing.
    static func python() throws -> String {
        let venv = ProcessInfo.processInfo.environment["CONTEXT_HOST_TEST_VENV"] ?? packageRoot + "/.build/test-venv"
        let python = venv + "/bin/python"
        let check = Process()
        check.executableURL = URL(fileURLWithPath: python)
        check.arguments = ["-c", "import radicale"]
        check.standardError = FileHandle.nullDevice
        do { try check.run() } catch {
            throw TestFailure("the test-only Python venv is missing at \(venv): run scripts/test-venv.sh (scripts/test.sh does)")
        }
        check.waitUntilExit()
        guard check.terminationStatus == 0 else {
            throw TestFailure("radicale is not installed in \(venv): run scripts/test-venv.sh (it installs scripts/test-requirements.txt)")
        }
        return python
    }

    init(user: String = "alice", password: String) async throws {
        self.user = user
        self.password = password
        folder = NSTemporaryDirectory() + "caldav-test-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder + "/collections", withIntermediateDirectories: true)
        try "\(user):\(password)\n".write(toFile: folder + "/users", atomically: true, encoding: .utf8)
        port = try Radicale.freePort()
        logPath = folder + "/radicale.log"
        try await start()
    }

    /// Starts (or restarts) the server on the same port and storage.
    func start() async throws {
        let config = Radicale.config(port: port, folder: folder)
        try config.write(toFile: folder + "/config", atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.python())
        process.arguments = ["-m", "radicale", "--config", folder + "/config"]
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        log.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        try process.run()
        self.process = process
        // Ready when it answers; a server that never answers fails the test (20 s).
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if let response = try? await request("OPTIONS", "/", auth: false), response.status > 0 { return }
            guard process.isRunning else { break }
            try await Task.sleep(nanoseconds: 100_000_000)
        }
        let text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        stop()
        throw TestFailure("Radicale did not start on port \(port): \(text.suffix(2000))")
    }

    /// Kills the server at once (SIGKILL): Radicale's SIGTERM shutdown waits for open client
    /// connections, and URLSession keeps one alive; an unreachable server is what the tests want.
    func stop() {
        guard let process else { return }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()  // reaped even when already gone (`ChildProcess`)
        self.process = nil
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    // MARK: Requests the tests make as another client

    func request(_ method: String, _ path: String, body: String? = nil, headers: [String: String] = [:], auth: Bool = true)
        async throws -> CalDAVResponse
    {
        var allHeaders = headers
        if auth { allHeaders["Authorization"] = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString() }
        return try await URLSessionTransport.shared.send(
            CalDAVRequest(method: method, url: baseURL + path, headers: allHeaders, body: body.map { Array($0.utf8) }, timeoutSeconds: 30))
    }

    /// Makes a calendar collection with a display name.
    func makeCalendar(_ name: String, displayName: String) async throws {
        let made = try await request("MKCALENDAR", "/\(user)/\(name)/")
        guard made.status == 201 else { throw TestFailure("MKCALENDAR answered \(made.status)") }
        let patch = try await request(
            "PROPPATCH", "/\(user)/\(name)/",
            body: """
                <?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><d:displayname>\(displayName)</d:displayname></d:prop></d:set></d:propertyupdate>
                """, headers: ["Content-Type": "application/xml"])
        guard patch.status == 207 else { throw TestFailure("PROPPATCH answered \(patch.status)") }
    }

    /// PUTs one event (`start` as `YYYYMMDDTHHMMSSZ`).
    func putEvent(_ calendar: String, uid: String, summary: String, start: String, end: String) async throws {
        let ics = [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//ContextHost tests//EN", "BEGIN:VEVENT", "UID:\(uid)",
            "DTSTAMP:20250101T000000Z", "DTSTART:\(start)", "DTEND:\(end)", "SUMMARY:\(summary)", "END:VEVENT",
            "END:VCALENDAR", "",
        ].joined(separator: "\r\n")
        let answer = try await request(
            "PUT", "/\(user)/\(calendar)/\(uid).ics", body: ics, headers: ["Content-Type": "text/calendar; charset=utf-8"])
        guard answer.status == 201 || answer.status == 204 else { throw TestFailure("PUT \(uid) answered \(answer.status)") }
    }

    func deleteEvent(_ calendar: String, uid: String) async throws {
        let answer = try await request("DELETE", "/\(user)/\(calendar)/\(uid).ics")
        guard answer.status == 200 || answer.status == 204 else { throw TestFailure("DELETE \(uid) answered \(answer.status)") }
    }
}

/// A tiny test-only HTTP/1.1 client for the CalDAV transport (plain `http://` on loopback,
/// `Connection: close`, the answer read to the end) — in the test target only; the provider
/// never opens a socket. (FoundationNetworking's URLSession leaves its completion handler
/// uncalled on Radicale's 401 and on a refused redirect, so it cannot be used here.) Redirects
/// are not followed (the client follows them). Records what it sent, for assertions.
final class URLSessionTransport: CalDAVTransport, @unchecked Sendable {
    static let shared = URLSessionTransport()

    private let lock = NSLock()
    private var _sent: [CalDAVRequest] = []

    var sent: [CalDAVRequest] { lock.withLock { _sent } }
    func clear() { lock.withLock { _sent.removeAll() } }

    func send(_ request: CalDAVRequest) async throws -> CalDAVResponse {
        lock.withLock { _sent.append(request) }
        return try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread {
                continuation.resume(with: Result { try Self.exchange(request) })
            }
        }
    }

    static func exchange(_ request: CalDAVRequest) throws -> CalDAVResponse {
        guard let url = DAVURL(request.url), url.scheme == "http" else { throw TestFailure("not an http URL: \(request.url)") }
        let parts = url.authority.split(separator: ":")
        let port = parts.count > 1 ? UInt16(parts[1]) ?? 80 : 80
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket: \(errno)") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: Int(request.timeoutSeconds ?? 30), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = port.bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw TestFailure("connection to \(url.origin) refused (errno \(errno))") }
        var head = "\(request.method) \(url.path) HTTP/1.1\r\nHost: \(url.authority)\r\nConnection: close\r\n"
        for (name, value) in request.headers { head += "\(name): \(value)\r\n" }
        head += "Content-Length: \(request.body?.count ?? 0)\r\n\r\n"
        let out = Array(head.utf8) + (request.body ?? [])
        var written = 0
        while written < out.count {
            let count = out.withUnsafeBytes { write(fd, $0.baseAddress! + written, out.count - written) }
            guard count > 0 else { throw TestFailure("write failed (errno \(errno))") }
            written += count
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 { throw TestFailure("read failed (errno \(errno))") }
            if count == 0 { break }
            answer.append(contentsOf: buffer[0..<count])
        }
        guard let split = answer.firstRange(of: Array("\r\n\r\n".utf8)) else { throw TestFailure("no HTTP head") }
        let lines = String(decoding: answer[..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = (lines.first ?? "").split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw TestFailure("bad status line") }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return CalDAVResponse(status: status, headers: headers, body: Array(answer[split.upperBound...]))
    }
}
