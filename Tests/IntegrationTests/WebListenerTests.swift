import ContextHostTestSupport
import Foundation
import Testing

/// `context-host serve --listen` through the real binary and a real WebSocket client (PyPI
/// `websockets`, in the test-only venv). The checks are in Tests/Fixtures/web/ws_check.py, one
/// scenario per test, one line per check (PASS or FAIL); each hostile check has a control that
/// succeeds without the defence's trigger, and asserts the specific refusal (HTTP status, close
/// code).
@Suite("serve --listen (WebSocket, real client)")
struct WebListenerTests {
    /// Each scenario and the checks it must pass (by name, so a check that silently stops
    /// running fails too).
    static let scenarios: [(String, Int)] = [
        ("flow", 15),  // initialize → providers/list → Note collect → items/preview, 64 in flight, exit
        ("composers", 6),  // two connections, separate composers
        ("origin", 7),  // foreign Origin → 403
        ("rebinding", 7),  // rebinding Host → 403
        ("token", 12),  // non-loopback bind: no or wrong token → 401; --token-file
        ("oversize", 8),  // oversized frame → 1009, not UTF-8 → 1007, binary → 1003, peers unaffected
        ("many", 5),  // 500 connections past the cap → 503
        ("vanish", 6),  // a client that vanishes mid-collection: the shared worker serves the other; none left after both
        ("rate", 2),  // the per-connection rate limit
        ("slow", 4),  // a client that does not read its answers: dropped, others unaffected
        ("tlsproxy", 12),  // wss:// through nginx (docs/web.md "TLS"): test CA, Origin/Host 403 through it; controls
    ]

    @Test("scenario", arguments: scenarios.map(\.0))
    func scenario(_ name: String) throws {
        let expected = try #require(Self.scenarios.first { $0.0 == name }?.1)
        let problems = try CheckScript.scenario("Tests/Fixtures/web/ws_check.py", name).problems(expectedPasses: expected)
        #expect(problems.isEmpty, "\(problems)")
    }
}
