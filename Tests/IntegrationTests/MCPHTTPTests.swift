import ContextHostTestSupport
import Foundation
import Testing

/// `context-host mcp --http` against hostile requests through the real binary: a foreign
/// `Origin`, a rebinding `Host`, no or a wrong token on a non-loopback bind, an unknown or missing
/// session id, an oversized body, 2026-07-28 routing headers unlike the body. The checks are in
/// Tests/Fixtures/mcp/mcp_http_check.py, one scenario per test, one line per check (PASS or
/// FAIL); each refusal asserts its specific status and has a control that succeeds without the
/// trigger. The protocol itself over HTTP is checked by the official SDK (MCPBridgeTests).
@Suite("mcp --http (Streamable HTTP, hostile requests)")
struct MCPHTTPTests {
    /// Each scenario and the checks it must pass (by name, so a check that silently stops
    /// running fails too).
    static let scenarios: [(String, Int)] = [
        ("origin", 8),  // foreign Origin, Origin null → 403; no Origin, own, --allow-origin → 200
        ("rebinding", 4),  // rebinding Host → 403, no Host → 400; localhost, 127.0.0.1 → 200
        ("token", 8),  // 0.0.0.0: no or wrong token → 401; the right one → 200, the SDK client with it
        ("session", 12),  // unknown session → 404, none → 400, DELETE → 204 then 404; 406, 415; GET stream
        ("oversize", 3),  // body over --max-message-bytes → 413 (Content-Length and chunked); under → 200
        ("stateless", 5),  // 2026-07-28: header unlike the body → 400 -32020; unknown version → -32022
    ]

    @Test("scenario", arguments: scenarios.map(\.0))
    func scenario(_ name: String) throws {
        let expected = try #require(Self.scenarios.first { $0.0 == name }?.1)
        let problems = try CheckScript.scenario("Tests/Fixtures/mcp/mcp_http_check.py", name).problems(expectedPasses: expected)
        #expect(problems.isEmpty, "\(problems)")
    }
}
