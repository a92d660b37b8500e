import Foundation
import Testing

@testable import ContextWeb

#if canImport(Glibc)
import Glibc
#endif

/// The composer's static files (`StaticSite`): a fixed table read from the web root with
/// `O_NOFOLLOW`, and nothing else reachable by any request path. Hostile web roots really try the
/// escape; each has a control showing it works without the defence.
@Suite("serve --listen: the composer's static files")
struct StaticSiteTests {
    /// A web root holding every file of the table (`name` → its own name as content).
    static func makeRoot() throws -> String {
        let root = NSTemporaryDirectory() + "static-site-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        for (name, _) in StaticSite.table {
            try Data("content of \(name)".utf8).write(to: URL(fileURLWithPath: root + "/" + name))
        }
        return root
    }

    @Test("every file of the table is served under its path, index.html also at /; extra files in memory")
    func table() throws {
        let root = try Self.makeRoot()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let extra = StaticSite.File(contentType: "text/css; charset=utf-8", bytes: Array("body{}".utf8))
        let site = try StaticSite(root: root, extra: ["/ctxui.css": extra])
        for (name, contentType) in StaticSite.table {
            #expect(site.file(forPath: "/" + name) == StaticSite.File(contentType: contentType, bytes: Array("content of \(name)".utf8)))
        }
        #expect(site.file(forPath: "/")?.bytes == Array("content of index.html".utf8))
        #expect(site.file(forPath: "/composer.js?v=2")?.contentType == "text/javascript; charset=utf-8")
        #expect(site.file(forPath: "/ctxui.css") == extra)
        #expect(site.paths == Set(StaticSite.table.map { "/" + $0.name } + ["/", "/ctxui.css"]))
    }

    @Test("request paths outside the table find nothing, though the files exist beside the root")
    func traversal() throws {
        let parent = NSTemporaryDirectory() + "static-parent-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let root = try Self.makeRoot()
        try FileManager.default.moveItem(atPath: root, toPath: parent + "/web")
        try Data("secret".utf8).write(to: URL(fileURLWithPath: parent + "/secret.txt"))
        try Data("hidden".utf8).write(to: URL(fileURLWithPath: parent + "/web/hidden.txt"))
        // Control: the paths a traversal would reach exist and are readable.
        #expect(FileManager.default.contents(atPath: parent + "/web/../secret.txt") == Data("secret".utf8))
        let site = try StaticSite(root: parent + "/web")
        for path in ["/../secret.txt", "/%2e%2e/secret.txt", "/..%2fsecret.txt", "/hidden.txt", "//secret.txt", parent + "/secret.txt",
                     "/index.html/../../secret.txt", "/./index.html", "/INDEX.HTML", "index.html", "/index.html%00", "/.."] {
            #expect(site.file(forPath: path) == nil, "\(path)")
        }
    }

    @Test("a file of the table that is a symbolic link out of the root is refused (ELOOP), not followed")
    func symbolicLink() throws {
        let root = try Self.makeRoot()
        defer { try? FileManager.default.removeItem(atPath: root) }
        let secret = root + ".secret"
        try Data("the user's secret".utf8).write(to: URL(fileURLWithPath: secret))
        defer { try? FileManager.default.removeItem(atPath: secret) }
        try FileManager.default.removeItem(atPath: root + "/composer.js")
        try FileManager.default.createSymbolicLink(atPath: root + "/composer.js", withDestinationPath: secret)
        // Control: opening the name the ordinary way follows the link to the secret.
        #expect(FileManager.default.contents(atPath: root + "/composer.js") == Data("the user's secret".utf8))
        #expect(throws: StaticSiteError.symbolicLink(path: root + "/composer.js")) { try StaticSite(root: root) }
    }

    @Test("a FIFO, a folder, a missing file or one over the size limit is refused with a clear error")
    func notServable() throws {
        let root = try Self.makeRoot()
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.removeItem(atPath: root + "/ctxui.js")
        #expect(mkfifo(root + "/ctxui.js", 0o600) == 0)
        #expect(throws: StaticSiteError.notRegularFile(path: root + "/ctxui.js")) { try StaticSite(root: root) }
        try FileManager.default.removeItem(atPath: root + "/ctxui.js")
        try FileManager.default.createDirectory(atPath: root + "/ctxui.js", withIntermediateDirectories: false)
        #expect(throws: StaticSiteError.notRegularFile(path: root + "/ctxui.js")) { try StaticSite(root: root) }
        try FileManager.default.removeItem(atPath: root + "/ctxui.js")
        #expect(throws: StaticSiteError.open(path: root + "/ctxui.js", errno: ENOENT)) { try StaticSite(root: root) }
        try Data(count: StaticSite.maximumFileBytes + 1).write(to: URL(fileURLWithPath: root + "/ctxui.js"))
        #expect(throws: StaticSiteError.tooLarge(path: root + "/ctxui.js", limit: StaticSite.maximumFileBytes)) { try StaticSite(root: root) }
        try Data(count: StaticSite.maximumFileBytes).write(to: URL(fileURLWithPath: root + "/ctxui.js"))
        #expect(try StaticSite(root: root).file(forPath: "/ctxui.js")?.bytes.count == StaticSite.maximumFileBytes)
        #expect(throws: StaticSiteError.root(path: root + "/none", errno: ENOENT)) { try StaticSite(root: root + "/none") }
        #expect(StaticSiteError.symbolicLink(path: "/w/a.js").description.contains("copy the file instead"))
    }

    @Test("the CSP allows only the listener's own scripts, styles and WebSocket; no inline script")
    func contentSecurityPolicy() {
        let policy = StaticSite.contentSecurityPolicy
        #expect(policy.hasPrefix("default-src 'none';"))
        #expect(policy.contains("script-src 'self';") && policy.contains("connect-src 'self';") && policy.contains("frame-ancestors 'none'"))
        #expect(!policy.contains("unsafe") && !policy.contains("*") && !policy.contains("http"))
        let headers = Dictionary(uniqueKeysWithValues: StaticSite.securityHeaders)
        #expect(headers["X-Content-Type-Options"] == "nosniff")
        #expect(headers.keys.allSatisfy { !$0.lowercased().hasPrefix("access-control") })
    }

    @Test("public files need no token, but Host and Origin are checked all the same")
    func tokenExemption() throws {
        let token = try BearerToken(text: String(repeating: "a", count: 40))
        let policy = AccessPolicy(address: try ListenAddress(parsing: "192.168.1.5:8765"), port: 8765, extraHosts: [], extraOrigins: [], token: token)
        let host = ["192.168.1.5:8765"]
        #expect(policy.decide(host: host, origin: [], authorization: [], webSocketProtocols: []).status == 401)
        #expect(policy.decide(host: host, origin: [], authorization: [], webSocketProtocols: [], tokenExempt: true) == .allow)
        #expect(policy.decide(host: host, origin: ["http://evil.example"], authorization: [], webSocketProtocols: [], tokenExempt: true).status == 403)
        #expect(policy.decide(host: ["evil.example:8765"], origin: [], authorization: [], webSocketProtocols: [], tokenExempt: true).status == 403)
    }
}
