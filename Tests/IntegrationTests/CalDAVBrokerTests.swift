import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// A real Radicale CalDAV server over HTTPS (the venv's radicale with a test CA), on loopback with
/// Basic auth, its password in a file only this helper and the server read.
final class TLSRadicale: @unchecked Sendable {
    let folder: TemporaryDirectory
    let port: Int
    let user: String
    private let process: Process
    var caFile: String { folder.path + "/ca/ca.pem" }
    var baseURL: String { "https://localhost:\(port)" }

    init(user: String = "alice", password: String) throws {
        let python = BuildProducts.testVenvPython
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw SetupFailure(description: "the test-only Python venv is missing (\(python)): run scripts/test-venv.sh (scripts/test.sh and .ci/run do)")
        }
        let folder = try TemporaryDirectory()
        self.folder = folder
        self.user = user
        try TestCA.make(in: folder.path + "/ca")
        try FileManager.default.createDirectory(atPath: folder.path + "/collections", withIntermediateDirectories: true)
        _ = try folder.write("users", "\(user):\(password)\n")
        _ = try folder.write("password", password)
        port = try Radicale.freePort()
        _ = try folder.write(
            "config",
            Radicale.config(
                port: port, folder: folder.path,
                server: ["ssl = True", "certificate = \(folder.path)/ca/server.pem", "key = \(folder.path)/ca/server.key"]))
        let log = folder.path + "/radicale.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-m", "radicale", "--config", folder.path + "/config"]
        process.standardOutput = FileHandle(forWritingAtPath: log)
        process.standardError = FileHandle(forWritingAtPath: log)
        try process.run()
        self.process = process
        // Ready when it accepts a connection; bounded (20 s), then a failure with its log.
        let deadline = Date().addingTimeInterval(20)
        while !Self.accepts(port) {
            guard Date() < deadline, process.isRunning else {
                ChildProcess.stop(process)
                throw SetupFailure(description: "Radicale (TLS) did not start on port \(port): \(((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").suffix(1500))")
            }
            usleep(50_000)
        }
    }

    deinit { ChildProcess.stop(process) }

    /// Sends `ops` (Tests/Fixtures/caldav/dav_ops.py) as another client; throws on an unexpected status.
    func run(_ ops: [JSONValue]) throws {
        let file = try folder.write("ops-\(UUID().uuidString).json", JSONValue.array(ops).jsonString)
        let script = BuildProducts.packageRoot + "/Tests/Fixtures/caldav/dav_ops.py"
        let result = try Shell.run(
            "'\(BuildProducts.testVenvPython)' '\(script)' --base '\(baseURL)' --ca '\(caFile)' --user '\(user)' --password-file '\(folder.path)/password' '\(file)'",
            in: folder.path, timeout: 60)
        guard result.status == 0 else { throw SetupFailure(description: "dav_ops.py failed: \(result.output)") }
    }

    static func makeCalendar(_ user: String, _ name: String, displayName: String) -> [JSONValue] {
        [
            ["method": "MKCALENDAR", "path": .string("/\(user)/\(name)/"), "expect": [201]],
            [
                "method": "PROPPATCH", "path": .string("/\(user)/\(name)/"), "expect": [207],
                "body": .string(#"<?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:"><d:set><d:prop><d:displayname>\#(displayName)</d:displayname></d:prop></d:set></d:propertyupdate>"#),
            ],
        ]
    }

    static func putEvent(_ user: String, _ calendar: String, uid: String, summary: String, start: String, end: String) -> JSONValue {
        let ics = [
            "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//ContextHost tests//EN", "BEGIN:VEVENT", "UID:\(uid)",
            "DTSTAMP:20250101T000000Z", "DTSTART:\(start)", "DTEND:\(end)", "SUMMARY:\(summary)", "END:VEVENT", "END:VCALENDAR", "",
        ].joined(separator: "\r\n")
        return [
            "method": "PUT", "path": .string("/\(user)/\(calendar)/\(uid).ics"), "body": .string(ics),
            "contentType": "text/calendar; charset=utf-8", "expect": [201, 204],
        ]
    }

    static func deleteEvent(_ user: String, _ calendar: String, uid: String) -> JSONValue {
        ["method": "DELETE", "path": .string("/\(user)/\(calendar)/\(uid).ics"), "expect": [200, 204]]
    }

    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}

/// The bundled Calendar provider's CalDAV account through the real `context-host`, its broker and
/// a real Radicale over HTTPS: the password is a `type: secret` setting the host injects as Basic
/// auth (the provider never holds it), the origin comes from the caldavURL setting, and loopback
/// is allowed only because the test's copy of the manifest says `privateAddresses: true`.
@Suite(.serialized) struct CalDAVBrokerTests {
    static let canary = "CANARY-caldav-9d41e7"
    static let now = "2025-03-01T08:00:00Z"

    final class Setup: @unchecked Sendable {
        let root: TemporaryDirectory
        let server: TLSRadicale
        var manifests: String { root.path + "/manifests" }
        var environment: [String: String] { TestCA.hostEnvironment(root: root.path, caFile: server.caFile) }

        /// `allowLoopback`: the manifest copy declares caldavURL's origin with
        /// `privateAddresses: true` (the bundled one does not, so loopback is refused).
        init(allowLoopback: Bool = true) throws {
            root = try TemporaryDirectory()
            server = try TLSRadicale(password: CalDAVBrokerTests.canary)
            try server.run(
                TLSRadicale.makeCalendar("alice", "work", displayName: "Work") + [
                    TLSRadicale.putEvent("alice", "work", uid: "standup", summary: "Standup", start: "20250303T090000Z", end: "20250303T091500Z"),
                    TLSRadicale.putEvent("alice", "work", uid: "review", summary: "Design review", start: "20250304T130000Z", end: "20250304T140000Z"),
                    TLSRadicale.putEvent("alice", "work", uid: "retro", summary: "Retro", start: "20250305T150000Z", end: "20250305T160000Z"),
                ])
            var manifest = try String(contentsOfFile: BuildProducts.packageRoot + "/manifests/calendar.yaml", encoding: .utf8)
            let declared = "- { setting: caldavURL }"
            guard manifest.contains(declared) else { throw SetupFailure(description: "manifests/calendar.yaml no longer declares '\(declared)'") }
            if allowLoopback { manifest = manifest.replacingOccurrences(of: declared, with: "- { setting: caldavURL, privateAddresses: true }") }
            _ = try root.write("manifests/calendar.yaml", manifest)
            try FileManager.default.createDirectory(atPath: root.path + "/no-local-calendars", withIntermediateDirectories: true)
        }

        func setPassword(_ value: String) throws {
            let process = try HostProcess(
                arguments: ["secrets", "set", "--manifests", manifests, "--no-installed", "com.contexthost.calendar", "caldavPassword"],
                environment: environment)
            process.write(value)
            process.closeInput()
            let status = process.waitForExit(timeout: 20)
            guard status == 0 else { throw SetupFailure(description: "secrets set exited \(String(describing: status)): \(process.standardError)") }
        }

        func serve() throws -> RPCClient {
            let config = try root.write("config.yaml", """
                providers:
                  com.contexthost.calendar:
                    settings:
                      calendars: "\(root.path)/no-local-calendars"
                      caldavURL: "\(server.baseURL)/"
                      caldavUser: alice
                      caldavRefreshSeconds: 0
                      timeZone: UTC
                      now: "\(CalDAVBrokerTests.now)"

                """)
            let client = try RPCClient(host: HostProcess(
                arguments: ["serve", "--no-watch", "--no-installed", "--manifests", manifests, "--config", config, "--log-level", "info"],
                environment: environment))
            try client.initialize()
            return client
        }
    }

    /// The start form's option labels, or the error.
    static func start(_ client: RPCClient) throws -> (labels: [String], help: String, answer: JSONValue) {
        let id = client.send("collect/start", ["providerId": "com.contexthost.calendar"])
        let response = try client.response(to: id, timeout: 30)
        if let error = response["error"] { return ([], "", error) }
        let field = response["result"]?["form"]?["fields"]?.arrayValue?.first
        let labels = (field?["options"]?.arrayValue ?? []).compactMap { $0["label"]?.stringValue }
        return (labels, field?["help"]?.stringValue ?? "", response["result"] ?? .null)
    }

    @Test func syncsThroughTheBrokerWithTheInjectedPasswordAndNeverShowsIt() throws {
        let setup = try Self.Setup()
        try setup.setPassword(Self.canary)
        let client = try setup.serve()
        var outputs: [String] = []

        // First sync: discovery, the calendar list, sync-collection and multiget, all brokered.
        let first = try Self.start(client)
        outputs.append(first.answer.jsonString)
        #expect(first.labels == ["Standup", "Design review", "Retro"], "\(first.answer)")

        // Added, changed and deleted on the server: seen after the next (incremental) sync.
        try setup.server.run([
            TLSRadicale.putEvent("alice", "work", uid: "planning", summary: "Planning", start: "20250306T100000Z", end: "20250306T110000Z"),
            TLSRadicale.putEvent("alice", "work", uid: "review", summary: "Design review (moved)", start: "20250307T130000Z", end: "20250307T140000Z"),
            TLSRadicale.deleteEvent("alice", "work", uid: "retro"),
        ])
        let second = try Self.start(client)
        outputs.append(second.answer.jsonString)
        #expect(second.labels == ["Standup", "Planning", "Design review (moved)"], "\(second.answer)")

        // An item, its chip, detail, text and encodings.
        let session = try #require(second.answer["sessionId"])
        let option = try #require(second.answer["form"]?["fields"]?.arrayValue?.first?["options"]?.arrayValue?.first?["value"])
        let submitted = try client.call("collect/submit", ["sessionId": session, "values": ["event": option]])
        outputs.append(submitted.jsonString)
        let item = try #require(submitted["item"])
        #expect(item["content"]?["source"] == "caldav")
        for method in ["items/preview", "items/detail", "items/describe", "items/encode"] {
            outputs.append(try client.call(method, ["item": item]).jsonString)
        }
        let list = try client.call("providers/list")
        outputs.append(list.jsonString)
        let entry = try #require(list["providers"]?.arrayValue?.first { $0["id"] == "com.contexthost.calendar" })
        #expect(entry["secrets"]?["caldavPassword"] == true)
        #expect(entry["origins"]?.arrayValue?.first?["origin"]?.stringValue == setup.server.baseURL)

        _ = try client.shutdown()
        let stderr = client.host.standardError
        outputs.append(stderr)
        // Each fetch is logged (method, origin, status), and the sync really went through the broker.
        #expect(stderr.contains("fetch com.contexthost.calendar PROPFIND \(setup.server.baseURL) 207"), "\(stderr.suffix(3000))")
        #expect(stderr.contains("fetch com.contexthost.calendar REPORT \(setup.server.baseURL) 207"))
        // The password, and its Basic form, in no answer, log or file of the host's folders.
        let basic = Base64.encode(Array("alice:\(Self.canary)".utf8))
        for output in outputs {
            #expect(!output.contains(Self.canary), "the password leaked: \(output.prefix(300))")
            #expect(!output.contains(basic), "the Basic credentials leaked: \(output.prefix(300))")
        }
        // (The secrets folder holds it sealed: searched too, for the plain text.)
        #expect(EgressTests.filesContaining(Self.canary, under: setup.root.path).isEmpty)
        #expect(EgressTests.filesContaining(basic, under: setup.root.path).isEmpty)
        // Control for the file search: the sync cache is there, with the events.
        #expect(!EgressTests.filesContaining("Design review (moved)", under: setup.root.path + "/data").isEmpty)
    }

    @Test func wrongOrMissingPasswordGivesAClearError() throws {
        let setup = try Self.Setup()
        // No secret set: the host refuses to fetch without it, naming the command that sets it.
        let unset = try setup.serve()
        let missing = try Self.start(unset)
        let missingText = missing.answer.jsonString
        #expect(missingText.contains("the secret 'caldavPassword' of com.contexthost.calendar is not set"), "\(missingText)")
        #expect(missingText.contains("context-host secrets set com.contexthost.calendar caldavPassword"), "\(missingText)")
        _ = try unset.shutdown()

        try setup.setPassword("not-the-password")
        let client = try setup.serve()
        let wrong = try Self.start(client)
        let text = wrong.answer.jsonString
        #expect(text.contains(#"refused the user name or password for \"alice\" (HTTP 401)"#), "\(text)")
        #expect(text.contains("caldavPassword"))
        #expect(!text.contains("not-the-password"))
        _ = try client.shutdown()
        #expect(!client.host.standardError.contains("not-the-password"))
    }

    @Test func loopbackIsRefusedUnlessTheManifestAllowsIt() throws {
        // The bundled manifest (no privateAddresses): localhost resolves to loopback → refused,
        // naming the field to change. (Control: the tests above, with privateAddresses: true.)
        let setup = try Self.Setup(allowLoopback: false)
        try setup.setPassword(Self.canary)
        let client = try setup.serve()
        let refused = try Self.start(client)
        let text = refused.answer.jsonString
        #expect(text.contains("a loopback address") || text.contains("loopback"), "\(text)")
        #expect(text.contains("privateAddresses: true"), "\(text)")
        #expect(refused.labels.isEmpty)
        _ = try client.shutdown()
        #expect(!client.host.standardError.contains("fetch com.contexthost.calendar PROPFIND \(setup.server.baseURL) 207"))
    }
}
