import Foundation
import Testing
@testable import CalendarProvider
import ContextProviderKit

/// The Calendar provider against a real CalDAV server (Radicale, from the test-only venv),
/// started on loopback with Basic auth. The provider code under test is the same module the
/// `.so` is built from; its requests go through a URLSession transport that lives only in this
/// test target (see docs/providers/calendar.md, "CalDAV", on the transport).
@Suite(.serialized)
struct CalDAVRadicaleTests {
    /// The fixed "now" of the provider: events are placed after it.
    static let now = "2025-03-01T08:00:00Z"
    static let twoHoursLater = "2025-03-01T10:00:00Z"

    static func provider(
        _ server: RadicaleServer, transport: URLSessionTransport, dataDirectory: String, password: String? = nil,
        now: String = now, url: String? = nil
    ) throws -> CalendarProvider {
        let settings: JSONObject = [
            "calendars": .string(dataDirectory + "/no-local-files"),
            "caldavURL": .string(url ?? server.baseURL),
            "caldavUser": .string(server.user),
            "caldavRefreshSeconds": 0,
            "windowDays": 30,
            "timeZone": "UTC",
            "now": .string(now),
        ]
        let context = ProviderContext(
            providerId: "com.contexthost.calendar", settings: ProviderSettings(settings), dataDirectory: dataDirectory)
        // The host injects the password in the shipped provider; without a host, the test adds it.
        let authenticated = BasicAuthTransport(inner: transport, origin: server.baseURL, user: server.user, password: password ?? server.password)
        return try CalendarProvider(context: context, transport: authenticated)
    }

    static func temporaryFolder() throws -> String {
        let path = NSTemporaryDirectory() + "caldav-data-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// (label, detail) of the start form's options, and its help text.
    static func options(_ provider: CalendarProvider) async throws -> (options: [(label: String, detail: String, value: String)], help: String) {
        let form = try await provider.startCollection(sessionId: "s")
        let field = form.json["fields"]?.arrayValue?.first
        let options = (field?["options"]?.arrayValue ?? []).map {
            ($0["label"]?.stringValue ?? "", $0["detail"]?.stringValue ?? "", $0["value"]?.stringValue ?? "")
        }
        return (options, field?["help"]?.stringValue ?? "")
    }

    /// A server with a "Work" calendar of three events on 3, 4 and 5 March 2025.
    static func seededServer(password: String = "correct horse battery") async throws -> RadicaleServer {
        let server = try await RadicaleServer(password: password)
        try await server.makeCalendar("work", displayName: "Work")
        try await server.putEvent("work", uid: "standup", summary: "Standup", start: "20250303T090000Z", end: "20250303T091500Z")
        try await server.putEvent("work", uid: "review", summary: "Design review", start: "20250304T130000Z", end: "20250304T140000Z")
        try await server.putEvent("work", uid: "retro", summary: "Retro", start: "20250305T150000Z", end: "20250305T160000Z")
        return server
    }

    @Test func discoveryAndFirstSync() async throws {
        let server = try await Self.seededServer()
        let data = try Self.temporaryFolder()
        let transport = URLSessionTransport()
        let provider = try Self.provider(server, transport: transport, dataDirectory: data)
        let (options, _) = try await Self.options(provider)
        #expect(options.map(\.label) == ["Standup", "Design review", "Retro"])
        #expect(options.allSatisfy { $0.detail.hasSuffix("· Work") })
        // Discovery as RFC 6764 + RFC 5397 + RFC 4791 describe it, from the bare server address.
        let sent = transport.sent.map { "\($0.method) \($0.url.replacingOccurrences(of: server.baseURL, with: ""))" }
        #expect(sent.first == "PROPFIND /.well-known/caldav")
        #expect(sent.contains("PROPFIND /\(server.user)/"))
        #expect(transport.sent.contains { $0.method == "PROPFIND" && $0.headers["Depth"] == "1" })
        let reports = transport.sent.filter { $0.method == "REPORT" }.map { String(decoding: $0.body ?? [], as: UTF8.self) }
        #expect(reports.contains { $0.contains("sync-collection") && $0.contains("<d:sync-token/>") })
        #expect(reports.contains { $0.contains("calendar-multiget") })
        // The cache in the data folder has the sync token and the three resources with ETags.
        let cache = try #require(CalDAVCache.load(folder: data))
        let work = try #require(cache.calendars.first)
        #expect(work.name == "Work")
        #expect(work.syncToken?.isEmpty == false)
        #expect(work.resources.count == 3)
        #expect(work.resources.values.allSatisfy { $0.etag?.isEmpty == false })
    }

    @Test func incrementalSyncSeesAddedChangedAndDeletedEvents() async throws {
        let server = try await Self.seededServer()
        let data = try Self.temporaryFolder()
        let transport = URLSessionTransport()
        let provider = try Self.provider(server, transport: transport, dataDirectory: data)
        _ = try await Self.options(provider)
        let firstToken = try #require(CalDAVCache.load(folder: data)?.calendars.first?.syncToken)

        try await server.putEvent("work", uid: "planning", summary: "Planning", start: "20250306T100000Z", end: "20250306T110000Z")
        try await server.putEvent("work", uid: "review", summary: "Design review (moved)", start: "20250307T130000Z", end: "20250307T140000Z")
        try await server.deleteEvent("work", uid: "retro")
        transport.clear()
        let (options, _) = try await Self.options(provider)
        #expect(options.map(\.label) == ["Standup", "Planning", "Design review (moved)"])

        // Incremental: sync-collection with the old token, then a multiget of the two changed
        // members only (not the unchanged standup).
        let reports = transport.sent.filter { $0.method == "REPORT" }.map { String(decoding: $0.body ?? [], as: UTF8.self) }
        #expect(reports.count == 2)
        #expect(reports.first?.contains("<d:sync-token>\(CalDAVClient.escape(firstToken))</d:sync-token>") == true)
        let multiget = try #require(reports.last)
        #expect(multiget.contains("planning.ics") && multiget.contains("review.ics"))
        #expect(!multiget.contains("standup.ics"))
        let cache = try #require(CalDAVCache.load(folder: data))
        #expect(cache.calendars.first?.resources.keys.sorted().map { $0.split(separator: "/").last.map(String.init) ?? "" }
            == ["planning.ics", "review.ics", "standup.ics"])
        #expect(cache.calendars.first?.syncToken != firstToken)

        // Nothing changed: one PROPFIND, no REPORT.
        transport.clear()
        _ = try await Self.options(provider)
        #expect(transport.sent.filter { $0.method == "REPORT" }.isEmpty)
    }

    @Test func wrongPasswordGivesAClearError() async throws {
        let server = try await Self.seededServer()
        let data = try Self.temporaryFolder()
        let provider = try Self.provider(server, transport: URLSessionTransport(), dataDirectory: data, password: "not-the-password")
        let error = try await #require(throws: ProviderError.self) { try await Self.options(provider) }
        // What, where, how to fix.
        #expect(error.message.contains("refused the user name or password for \"alice\" (HTTP 401)"))
        #expect(error.message.contains(server.baseURL))
        #expect(error.hint?.contains("caldavPassword") == true)
        #expect(!error.message.contains("not-the-password") && error.hint?.contains("not-the-password") == false)
        // Nothing cached for a refused account.
        #expect(CalDAVCache.load(folder: data) == nil)
    }

    /// The password (and its Basic form) never appears in anything the provider writes: items,
    /// views, forms, errors, its log (stderr) and the files in its data folder.
    @Test func passwordNeverAppearsInOutputOrFiles() async throws {
        let canary = "CANARY-7f3a9c-pw"
        let server = try await Self.seededServer(password: canary)
        let data = try Self.temporaryFolder()
        let transport = URLSessionTransport()
        let basic = Data("\(server.user):\(canary)".utf8).base64EncodedString()
        var outputs: [String] = []
        let stderrText = try await captureStandardError {
            let provider = try Self.provider(server, transport: transport, dataDirectory: data)
            let form = try await provider.startCollection(sessionId: "s")
            outputs.append(form.json.jsonString)
            let value = try #require(form.json["fields"]?.arrayValue?.first?["options"]?.arrayValue?.first?["value"]?.stringValue)
            let outcome = try await provider.submit(stepId: "event", values: ["event": .string(value)], sessionId: "s")
            outputs.append(outcome.json.jsonString)
            guard case .item(let item) = outcome else { throw TestFailure("no item") }
            outputs.append(try await provider.preview(item).json.jsonString)
            outputs.append(try await provider.detail(item).json.jsonString)
            outputs.append(try await provider.describe(item))
            outputs.append(try await provider.encode(item, representation: "ics").json.jsonString)
            outputs.append(try await provider.query("standup", fieldId: "event", stepId: "event", sessionId: "s", values: [:]).map(\.json.jsonString).joined())
            // The refusal path too (a wrong password, then the offline path with the cache).
            let wrong = try Self.provider(server, transport: transport, dataDirectory: try Self.temporaryFolder(), password: canary + "x")
            do { _ = try await Self.options(wrong) } catch { outputs.append("\(error)") }
            server.stop()
            let offline = try Self.provider(server, transport: transport, dataDirectory: data, now: Self.twoHoursLater)
            outputs.append(try await offline.startCollection(sessionId: "s").json.jsonString)
        }
        outputs.append(stderrText)
        for file in try FileManager.default.subpathsOfDirectory(atPath: data) {
            outputs.append((try? String(contentsOfFile: data + "/" + file, encoding: .utf8)) ?? "")
        }
        // The control: the canary really was used (sent to the server as Basic auth).
        #expect(transport.sent.contains { $0.headers["Authorization"] == "Basic " + basic })
        #expect(outputs.joined().contains("Standup"))
        for output in outputs {
            #expect(!output.contains(canary), "the password leaked: \(output.prefix(300))")
            #expect(!output.contains(basic), "the Basic credentials leaked: \(output.prefix(300))")
        }
    }

    @Test func offlineServesTheCacheWithItsAgeOnTheChip() async throws {
        let server = try await Self.seededServer()
        let data = try Self.temporaryFolder()
        let online = try Self.provider(server, transport: URLSessionTransport(), dataDirectory: data)
        let (onlineOptions, onlineHelp) = try await Self.options(online)
        let onlineOutcome = try await online.submit(stepId: "event", values: ["event": .string(onlineOptions[0].value)], sessionId: "s")
        guard case .item(let onlineItem) = onlineOutcome else { throw TestFailure("no item") }
        let onlineChip = try await online.preview(onlineItem)
        #expect(onlineChip.subtitle?.contains("offline") == false)
        #expect(!onlineHelp.contains("Offline"))
        #expect(onlineItem.content["source"]?.stringValue == "caldav")
        #expect(onlineItem.content["offline"] == nil)

        server.stop()
        // A new instance two hours later (the host restarted): the server is unreachable.
        let offline = try Self.provider(server, transport: URLSessionTransport(), dataDirectory: data, now: Self.twoHoursLater)
        let (options, help) = try await Self.options(offline)
        #expect(options.map(\.label) == ["Standup", "Design review", "Retro"])
        #expect(help.contains("Offline: the CalDAV calendars are the copy from 2 h ago."))
        #expect(help.contains("cannot reach \(server.baseURL)"))
        let outcome = try await offline.submit(stepId: "event", values: ["event": .string(options[0].value)], sessionId: "s")
        guard case .item(let item) = outcome else { throw TestFailure("no item") }
        #expect(item.content["offline"]?.boolValue == true)
        #expect(item.content["syncedAt"]?.stringValue == "2025-03-01T08:00:00Z")
        let chip = try await offline.preview(item)
        #expect(chip.subtitle == "Mon, Mar 3, 9:00 – 9:15 AM · offline copy, 2 h old")
        #expect(chip.tone == .warning)
    }

    @Test func calendarQueryWithATimeRange() async throws {
        let server = try await Self.seededServer()
        let client = CalDAVClient(
            transport: BasicAuthTransport(inner: URLSessionTransport(), origin: server.baseURL, user: server.user, password: server.password),
            user: server.user)
        let home = try await client.discoverHome(try #require(DAVURL(server.baseURL)))
        #expect(home.path == "/alice/")
        let calendars = try await client.calendars(in: home)
        #expect(calendars.map(\.displayName) == ["Work"])
        #expect(calendars.first?.components.contains("VEVENT") == true)
        let work = try #require(calendars.first)
        let calendarURL = try #require(home.resolve(work.href))
        // 4 March 00:00 to 5 March 00:00 UTC: only the review.
        let found = try await client.calendarQuery(
            calendarURL, from: Civil.days(year: 2025, month: 3, day: 4) * 86_400, to: Civil.days(year: 2025, month: 3, day: 5) * 86_400)
        #expect(found.map(\.href) == ["/alice/work/review.ics"])
        let review = try #require(found.first)
        let text = String(decoding: review.data, as: UTF8.self)
        #expect(text.contains("SUMMARY:Design review"))
    }
}

/// Runs `body` with file descriptor 2 sent to a temporary file; returns what was written.
func captureStandardError(_ body: () async throws -> Void) async throws -> String {
    let path = NSTemporaryDirectory() + "caldav-stderr-" + UUID().uuidString
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard fd >= 0 else { throw TestFailure("cannot open \(path)") }
    let saved = dup(2)
    dup2(fd, 2)
    close(fd)
    do {
        try await body()
    } catch {
        dup2(saved, 2)
        close(saved)
        throw error
    }
    dup2(saved, 2)
    close(saved)
    defer { unlink(path) }
    return (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
}
