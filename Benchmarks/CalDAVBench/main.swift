// caldav-bench: the Calendar provider's CalDAV sync against a real Radicale (test-only venv).
//
//   swift build -c release --product caldav-bench
//   .build/release/caldav-bench [RUNS] [EVENTS]      # defaults 5 runs, 5,000 events
//
// Per run: a fresh data folder, a first sync of EVENTS events (discovery, calendar list,
// sync-collection, calendar-multiget, parsing, writing the cache), then 10 events changed on the
// server and an incremental sync (sync-collection with the token, a multiget of the 10). Beside
// each: the server's own time, i.e. the wall time of the HTTP exchanges (Radicale answering, on
// loopback) measured around each request in the transport; the provider's share is the rest.
// Then the same requests are sent again by a plain client that does nothing with the answers
// (replay), as a second reading of the server's time.
import CalendarProvider
import ContextHostTestSupport
import Foundation
#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

struct Failure: Error, CustomStringConvertible {
    var description: String
}

final class TimedTransport: NSObject, CalDAVTransport, @unchecked Sendable {
    private let lock = NSLock()
    private var seconds = 0.0
    private var requests: [CalDAVRequest] = []
    private var session: URLSession!

    override init() {
        super.init()
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
    }

    func reset() -> (seconds: Double, requests: [CalDAVRequest]) {
        lock.withLock {
            defer {
                seconds = 0
                requests = []
            }
            return (seconds, requests)
        }
    }

    func send(_ request: CalDAVRequest) async throws -> CalDAVResponse {
        let start = DispatchTime.now().uptimeNanoseconds
        guard let url = URL(string: request.url) else { throw Failure(description: "bad URL") }
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if let body = request.body { urlRequest.httpBody = Data(body) }
        urlRequest.timeoutInterval = 600
        let response: CalDAVResponse = try await withCheckedThrowingContinuation { continuation in
            session.dataTask(with: urlRequest) { data, response, error in
                if let error { return continuation.resume(throwing: error) }
                guard let http = response as? HTTPURLResponse else {
                    return continuation.resume(throwing: Failure(description: "not HTTP"))
                }
                var headers: [String: String] = [:]
                for (name, value) in http.allHeaderFields {
                    if let name = name as? String, let value = value as? String { headers[name.lowercased()] = value }
                }
                continuation.resume(returning: CalDAVResponse(status: http.statusCode, headers: headers, body: Array(data ?? Data())))
            }.resume()
        }
        let elapsed = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
        lock.withLock {
            seconds += elapsed
            requests.append(request)
        }
        return response
    }

}

func now() -> Double { Double(DispatchTime.now().uptimeNanoseconds) / 1e9 }

func event(_ index: Int, version: Int) -> String {
    let day = 1 + index % 28
    let hour = 8 + index % 10
    return [
        "BEGIN:VEVENT", "UID:bench-\(index)", "DTSTAMP:20250101T000000Z",
        "DTSTART:202503\(day < 10 ? "0" : "")\(day)T\(hour < 10 ? "0" : "")\(hour)0000Z",
        "DTEND:202503\(day < 10 ? "0" : "")\(day)T\(hour < 10 ? "0" : "")\(hour)3000Z",
        "SUMMARY:Event \(index) v\(version)", "DESCRIPTION:Benchmark event \(index)\\, with some notes to read.",
        "LOCATION:Room \(index % 40)", index % 5 == 0 ? "RRULE:FREQ=WEEKLY;COUNT=10" : nil, "END:VEVENT",
    ].compactMap { $0 }.joined(separator: "\r\n")
}

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

@main
enum CalDAVBench {
    static func main() async throws {
        let arguments = CommandLine.arguments
        let runs = arguments.count > 1 ? Int(arguments[1]) ?? 5 : 5
        let count = arguments.count > 2 ? Int(arguments[2]) ?? 5000 : 5000
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
        let python = (ProcessInfo.processInfo.environment["CONTEXT_HOST_TEST_VENV"] ?? root + "/.build/test-venv") + "/bin/python"
        let folder = NSTemporaryDirectory() + "caldav-bench-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder + "/collections", withIntermediateDirectories: true)
        try "bench:secret\n".write(toFile: folder + "/users", atomically: true, encoding: .utf8)
        let port = try Radicale.freePort()
        try Radicale.config(port: port, folder: folder, server: ["max_content_length = 500000000"])
            .write(toFile: folder + "/config", atomically: true, encoding: .utf8)
        let server = Process()
        server.executableURL = URL(fileURLWithPath: python)
        server.arguments = ["-m", "radicale", "--config", folder + "/config"]
        server.standardError = FileHandle.nullDevice
        try server.run()
        defer {
            server.terminate()
            server.waitUntilExit()
            try? FileManager.default.removeItem(atPath: folder)
        }
        let base = "http://127.0.0.1:\(port)"
        let plain = TimedTransport()
        let auth = BasicAuthTransport(inner: plain, origin: base, user: "bench", password: "secret")
        func call(_ method: String, _ path: String, _ body: String? = nil) async throws -> Int {
            try await auth.send(
                CalDAVRequest(
                    method: method, url: base + path, headers: ["Content-Type": "text/calendar"], body: body.map { Array($0.utf8) },
                    timeoutSeconds: 600)
            ).status
        }
        var up = false
        for _ in 0..<200 where !up {
            up = (try? await call("OPTIONS", "/")) != nil
            if !up { try await Task.sleep(nanoseconds: 100_000_000) }
        }
        guard up else { throw Failure(description: "Radicale did not start (\(python))") }
        print("caldav-bench: Radicale on \(base), \(count) events, \(runs) runs")
        print("| run | first sync ms | of it server ms | provider ms | events | incremental (10 changed) ms | of it server ms | provider ms | replay of the incremental's requests ms |")
        print("|---|---|---|---|---|---|---|---|---|")
        var firsts: [Double] = []
        var incrementals: [Double] = []
        var firstServer: [Double] = []
        var incrementalServer: [Double] = []
        for run in 1...runs {
            let calendar = "/bench/cal\(run)/"
            guard try await call("MKCALENDAR", calendar) == 201 else { throw Failure(description: "MKCALENDAR failed") }
            let whole = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\n"
                + (0..<count).map { event($0, version: 1) }.joined(separator: "\r\n") + "\r\nEND:VCALENDAR\r\n"
            let put = try await call("PUT", calendar, whole)
            guard put == 201 || put == 204 else { throw Failure(description: "PUT of the calendar answered \(put)") }
            // Only this run's calendar: point the account at it (a calendar URL is its own home).
            let data = folder + "/data\(run)"
            try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
            guard let url = DAVURL(base + "/bench/") else { throw Failure(description: "URL") }
            let account = CalDAVAccount(url: url, user: "bench", transport: auth, folder: data, refreshSeconds: 0, windowDays: 30)
            _ = plain.reset()
            let start = now()
            await account.refreshIfDue(now: 1_740_816_000)
            let first = now() - start
            let firstTransport = plain.reset()
            if let error = account.status.errorText { throw Failure(description: "first sync failed: \(error)") }
            let events = account.eventCount
            for index in stride(from: 0, to: count, by: max(count / 10, 1)).prefix(10) {
                let body = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\n" + event(index, version: 2) + "\r\nEND:VCALENDAR\r\n"
                let status = try await call("PUT", calendar + "bench-\(index).ics", body)
                guard status == 201 || status == 204 else { throw Failure(description: "PUT answered \(status)") }
            }
            _ = plain.reset()
            let start2 = now()
            await account.refreshIfDue(now: 1_740_816_000 + 60)
            let incremental = now() - start2
            let incrementalTransport = plain.reset()
            if let error = account.status.errorText { throw Failure(description: "incremental sync failed: \(error)") }
            // The same requests again, answers thrown away.
            let replayStart = now()
            for request in incrementalTransport.requests { _ = try await plain.send(request) }
            let replay = now() - replayStart
            _ = plain.reset()
            firsts.append(first)
            incrementals.append(incremental)
            firstServer.append(firstTransport.seconds)
            incrementalServer.append(incrementalTransport.seconds)
            print(
                "| \(run) | \(String(format: "%.0f", first * 1000)) | \(String(format: "%.0f", firstTransport.seconds * 1000)) | \(String(format: "%.0f", (first - firstTransport.seconds) * 1000)) | \(events) | \(String(format: "%.1f", incremental * 1000)) | \(String(format: "%.1f", incrementalTransport.seconds * 1000)) | \(String(format: "%.1f", (incremental - incrementalTransport.seconds) * 1000)) | \(String(format: "%.1f", replay * 1000)) |"
            )
            _ = try await call("DELETE", calendar)
        }
        print(
            "median: first sync \(String(format: "%.0f", median(firsts) * 1000)) ms (server \(String(format: "%.0f", median(firstServer) * 1000)) ms); incremental \(String(format: "%.1f", median(incrementals) * 1000)) ms (server \(String(format: "%.1f", median(incrementalServer) * 1000)) ms); budget incremental ≤ 200 ms"
        )
    }
}
