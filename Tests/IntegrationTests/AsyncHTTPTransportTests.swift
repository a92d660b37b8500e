import ContextHost
import ContextHostTestSupport
import ContextNetwork
import Foundation
import Testing

/// `AsyncHTTPTransport`'s callback form (`perform(_:completion:)`, the broker's form for
/// `host/fetch`) against the loopback HTTPS server with a test CA: it answers on the NIO event
/// loop that read the response (no hop through the task pool), and keeps the size and time caps.
@Suite(.serialized, .timeLimit(.minutes(2))) struct AsyncHTTPTransportTests {
    static func request(_ server: LoopbackHTTPS, _ path: String, cap: Int = 1 << 20, within: Duration = .seconds(10)) -> BrokeredRequest {
        BrokeredRequest(
            providerID: "com.example.transport-test", method: "GET", url: server.baseURL + path, host: "localhost",
            port: server.port, address: "127.0.0.1", headers: [], body: nil, deadline: ContinuousClock.now.advanced(by: within),
            maximumResponseBytes: cap)
    }

    /// The calling thread's name (NIO names its event loop threads `NIO-…`: `NIO-SGLTN-…` for the singleton group the transport uses).
    static func threadName() -> String {
        ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The callback form's answer, and the name of the thread it came on.
    static func callback(_ transport: AsyncHTTPTransport, _ request: BrokeredRequest) async -> (Result<BrokeredResponse, BrokeredTransportError>, String) {
        await withCheckedContinuation { continuation in
            transport.perform(request) { result in continuation.resume(returning: (result, threadName())) }
        }
    }

    @Test func callbackFormAnswersOnTheEventLoop() async throws {
        let server = try LoopbackHTTPS()
        let transport = try AsyncHTTPTransport(extraCAFile: server.caFile)
        for _ in 0..<3 {
            let (result, thread) = await Self.callback(transport, Self.request(server, "/huge/10240"))
            let response = try result.get()
            #expect(response.status == 200)
            #expect(response.body == Array(repeating: UInt8(ascii: "x"), count: 10240))
            #expect(response.headers.contains { $0.0 == "content-length" && $0.1 == "10240" })
            // Where the response was read, not on a task-pool thread.
            #expect(thread.hasPrefix("NIO-"), "answered on thread '\(thread)'")
        }
        // The async form gives the same answer.
        let again = try await transport.perform(Self.request(server, "/huge/10240"))
        #expect(again.status == 200)
        #expect(again.body.count == 10240)
    }

    @Test func callbackFormKeepsTheCaps() async throws {
        let server = try LoopbackHTTPS()
        let transport = try AsyncHTTPTransport(extraCAFile: server.caFile)
        // Larger than the cap (announced by Content-Length): refused, not read.
        let (large, _) = await Self.callback(transport, Self.request(server, "/huge/4096", cap: 1024))
        guard case .failure(.tooLarge) = large else {
            Issue.record("a 4 KB body with a 1 KB cap: \(large)")
            return
        }
        // Control: the same body within the cap.
        let (fits, _) = await Self.callback(transport, Self.request(server, "/huge/4096", cap: 4096))
        #expect((try? fits.get())?.body.count == 4096)
        // A server slower than the deadline: a timeout when the deadline passes, not when it answers.
        let started = ContinuousClock.now
        let (slow, _) = await Self.callback(transport, Self.request(server, "/slow/5000", within: .milliseconds(300)))
        guard case .failure(.timeout) = slow else {
            Issue.record("a 5-s answer with a 300-ms deadline: \(slow)")
            return
        }
        #expect(ContinuousClock.now - started < .seconds(4))
        // A deadline already past: refused before connecting.
        let (late, _) = await Self.callback(transport, Self.request(server, "/huge/1", within: .zero))
        guard case .failure(.timeout) = late else {
            Issue.record("a request past its deadline: \(late)")
            return
        }
    }
}
