import ContextHost
import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Synchronization
import Testing

@testable import ContextHost

/// An in-process instance gets the C ABI's `close` once when its connection goes away, and every
/// request it was sent is still answered. Observed through the misbehaving C fixture, which
/// appends "closed <closeTag>" to the file named by its `closeLog` setting.
@Suite("Closing in-process instances")
struct InstanceCloseTests {
    private func open(log: String, tag: String) throws -> InProcessConnection {
        try BuildProducts.checkBuilt()
        let library = try ProviderLibrary.load(path: BuildProducts.library("FixtureMisbehavingProvider"), sha256: nil)
        let context = ProviderContext(providerID: "com.contexthost.misbehaving", settings: ["closeLog": .string(log), "closeTag": .string(tag)])
        return try InProcessConnection(library: library, initJSON: context.initBytes)
    }

    /// The log's lines once it has at least `count` of them, or what it has after 10 s.
    private func lines(_ path: String, atLeast count: Int) -> [String] {
        let deadline = Date().addingTimeInterval(10)
        while true {
            let text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
            let lines = text.split(separator: "\n").map(String.init)
            if lines.count >= count || Date() > deadline { return lines }
            usleep(5_000)
        }
    }

    private func preview(_ content: JSONValue) -> ParamsWriter {
        { JSONWriter.append(["item": ["providerId": "com.contexthost.misbehaving", "content": content]], to: &$0) }
    }

    @Test("releasing the connection closes its instance once, and only that instance")
    func closesOnce() throws {
        let directory = try TemporaryDirectory()
        let log = directory.path + "/close.log"
        let kept = try open(log: log, tag: "kept")
        var released: InProcessConnection? = try open(log: log, tag: "released")
        let answered = DispatchSemaphore(value: 0)
        released?.send(method: "item/preview", params: preview(["misbehave": "none"])) { response in
            #expect(response.error == nil)
            answered.signal()
        }
        #expect(answered.wait(timeout: .now() + 10) == .success)
        #expect(!FileManager.default.fileExists(atPath: log))  // nothing closed while in use
        released = nil
        #expect(lines(log, atLeast: 1) == ["closed released"])
        usleep(200_000)
        #expect(lines(log, atLeast: 0) == ["closed released"])  // once, and `kept` stays open
        withExtendedLifetime(kept) {}
    }

    @Test("the last reference dropped inside a reply callback, on the provider's thread, still closes")
    func closesFromReplyCallback() throws {
        let directory = try TemporaryDirectory()
        let log = directory.path + "/close.log"
        let holder = Mutex<InProcessConnection?>(try open(log: log, tag: "callback"))
        let answered = DispatchSemaphore(value: 0)
        // `slow` answers from a thread of the provider's own, after 50 ms.
        holder.withLock { $0 }?.send(method: "item/preview", params: preview(["misbehave": "slow", "slowMs": 50])) { response in
            #expect(response.error == nil)
            holder.withLock { $0 = nil }  // the last reference: the connection goes here
            answered.signal()
        }
        #expect(answered.wait(timeout: .now() + 10) == .success)
        #expect(lines(log, atLeast: 1) == ["closed callback"])
    }

    @Test("a request still waiting when its connection goes is answered -32011, once")
    func owedRequestAnswered() throws {
        let directory = try TemporaryDirectory()
        let log = directory.path + "/close.log"
        var connection: InProcessConnection? = try open(log: log, tag: "owed")
        let answers = Mutex<[ProviderResponse.Summary]>([])
        // The completion does not hold the connection (the host's always do, through a deadline).
        // The provider answers after 3 s, from a thread of its own.
        let sent = Date()
        connection?.send(method: "item/preview", params: preview(["misbehave": "slow", "slowMs": 3000])) { response in
            answers.withLock { $0.append(ProviderResponse.Summary(response)) }
        }
        connection = nil  // the last reference once the call thread is done with the request
        let deadline = sent.addingTimeInterval(2.5)
        while answers.withLock({ $0.isEmpty }), Date() < deadline { usleep(5_000) }
        #expect(answers.withLock { $0 } == [.init(code: -32011, fromHost: true)])
        #expect(lines(log, atLeast: 1) == ["closed owed"])
        // Past the provider's late answer, which is dropped.
        let late = sent.addingTimeInterval(3.5).timeIntervalSinceNow
        if late > 0 { usleep(UInt32(late * 1_000_000)) }
        #expect(answers.withLock { $0 } == [.init(code: -32011, fromHost: true)])
        #expect(lines(log, atLeast: 0) == ["closed owed"])
    }
}

extension ProviderResponse {
    /// What a test compares of a response: its error code (nil for a result) and who made it.
    struct Summary: Equatable {
        var code: Int?
        var fromHost: Bool

        init(code: Int?, fromHost: Bool) {
            self.code = code
            self.fromHost = fromHost
        }

        init(_ response: ProviderResponse) {
            self.init(code: response.error?.code.rawValue, fromHost: response.errorIsFromHost)
        }
    }
}
