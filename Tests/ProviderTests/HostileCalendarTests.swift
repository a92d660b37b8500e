import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// Calendars a stranger can send, through the real `context-host` with the Calendar provider
/// **in-process** (its bundled manifest's mode, where a trap would end the host): every request
/// gets a result (or the provider's own error) within its timeout — a timeout is a failure — the
/// provider really read the hostile file (inotify), the host still answers `ping`, and its peak
/// memory (VmHWM) stays bounded.
@Suite("Calendar provider: hostile calendars through the real host")
struct HostileCalendarTests {
    /// One event around a hostile line.
    static func event(_ lines: String, uid: String = "x") -> String {
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:\(uid)\r\nSUMMARY:Hostile\r\nDTSTART:20250302T100000Z\r\n"
            + lines.replacingOccurrences(of: "\n", with: "\r\n") + "\r\nEND:VEVENT\r\n"
            + "BEGIN:VEVENT\r\nUID:after\r\nSUMMARY:Still here\r\nDTSTART:20250303T100000Z\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    }

    /// Inputs, by name: each is written as the only calendar file.
    static let inputs: [(String, @Sendable () -> [UInt8])] = [
        ("DURATION in weeks past Int.max", { Array(event("DURATION:P999999999999999999W").utf8) }),
        ("a 20-digit DURATION", { Array(event("DURATION:PT99999999999999999999S").utf8) }),
        ("INTERVAL=Int.max", { Array(event("RRULE:FREQ=DAILY;INTERVAL=9223372036854775807").utf8) }),
        ("BYSETPOS=Int.min", { Array(event("RRULE:FREQ=MONTHLY;BYDAY=MO;BYSETPOS=-9223372036854775808").utf8) }),
        ("BYMONTHDAY=Int.min", { Array(event("RRULE:FREQ=MONTHLY;BYMONTHDAY=-9223372036854775808").utf8) }),
        ("BYDAY ordinal Int.min", { Array(event("RRULE:FREQ=MONTHLY;BYDAY=-9223372036854775808MO").utf8) }),
        ("SECONDLY with COUNT=1000000000", { Array(event("RRULE:FREQ=SECONDLY;COUNT=1000000000").utf8) }),
        ("MINUTELY from the year 1 with COUNT", {
            Array(event("RRULE:FREQ=MINUTELY;COUNT=999999999").replacingOccurrences(of: "DTSTART:20250302T100000Z", with: "DTSTART:00010101T000000Z").utf8)
        }),
        ("a 5 MB folded SUMMARY", {
            let text = String(repeating: "x", count: 5_000_000)
            var folded = "SUMMARY:"
            var index = text.startIndex
            while index < text.endIndex {
                let end = text.index(index, offsetBy: 74, limitedBy: text.endIndex) ?? text.endIndex
                folded += String(text[index..<end]) + "\r\n "
                index = end
            }
            return Array(event(folded + "x").utf8)
        }),
        ("600 KB of open-ended daily rules over ten years", {
            var text = "BEGIN:VCALENDAR\r\n"
            for index in 0..<5_000 {
                text += "BEGIN:VEVENT\r\nUID:d\(index)\r\nSUMMARY:Daily \(index)\r\nDTSTART:20200101T0900\(String(format: "%02d", index % 60))Z\r\nRRULE:FREQ=DAILY\r\nEND:VEVENT\r\n"
            }
            text += "BEGIN:VEVENT\r\nUID:after\r\nSUMMARY:Still here\r\nDTSTART:20250303T100000Z\r\nEND:VEVENT\r\n"
            return Array((text + "END:VCALENDAR\r\n").utf8)
        }),
        ("100,000 nested components", {
            var text = "BEGIN:VCALENDAR\r\n"
            for index in 0..<100_000 { text += "BEGIN:X\(index)\r\n" }
            return Array((text + "END:VCALENDAR\r\n").utf8)
        }),
        ("a VTIMEZONE that changes every second", {
            Array(("BEGIN:VCALENDAR\r\nBEGIN:VTIMEZONE\r\nTZID:Churn\r\nBEGIN:STANDARD\r\nDTSTART:19700101T000000\r\nRRULE:FREQ=SECONDLY\r\nTZOFFSETFROM:+0100\r\nTZOFFSETTO:+0200\r\nEND:STANDARD\r\nEND:VTIMEZONE\r\n"
                + "BEGIN:VEVENT\r\nUID:z\r\nSUMMARY:Still here\r\nDTSTART;TZID=Churn:20250303T100000\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n").utf8)
        }),
        ("200,000 RDATE values on one line", {
            let values = (0..<200_000).map { "2025\(String(format: "%02d", 3 + $0 % 9))\(String(format: "%02d", 1 + $0 % 28))T\(String(format: "%02d", $0 % 24))0000Z" }
            return Array(event("RRULE:FREQ=DAILY\nRDATE:" + values.joined(separator: ",")).utf8)
        }),
        ("1 MB of random bytes", {
            var generator = SystemRandomNumberGenerator()
            return (0..<1_000_000).map { _ in UInt8.random(in: 0...255, using: &generator) }
        }),
        ("dates at the ends of the calendar", {
            Array(event("DTEND:99991231T235959Z\nRRULE:FREQ=YEARLY;UNTIL=99991231T235959Z\nEXDATE:00000101T000000Z\nRDATE:99991231T235959Z").utf8)
        }),
        ("10,000 versions of one event (SEQUENCE)", {
            var text = "BEGIN:VCALENDAR\r\n"
            for index in 0..<10_000 {
                text += "BEGIN:VEVENT\r\nUID:same\r\nSEQUENCE:\(index)\r\nSUMMARY:Version \(index)\r\nDTSTART:20250302T100000Z\r\nRRULE:FREQ=DAILY\r\nEND:VEVENT\r\n"
            }
            text += "BEGIN:VEVENT\r\nUID:after\r\nSUMMARY:Still here\r\nDTSTART:20250303T100000Z\r\nEND:VEVENT\r\n"
            return Array((text + "END:VCALENDAR\r\n").utf8)
        }),
        ("a misspelt END before the events", {
            Array(("BEGIN:VCALENDAR\r\nBEGIN:VTODO\r\nUID:t\r\nEND:VTODDO\r\n" + event("").dropFirst("BEGIN:VCALENDAR\r\n".count)).utf8)
        }),
        ("a BYSECOND × BYMINUTE × BYHOUR daily rule", {
            Array(event("RRULE:FREQ=DAILY;BYHOUR=\((0..<24).map(String.init).joined(separator: ","));BYMINUTE=\((0..<60).map(String.init).joined(separator: ","));BYSECOND=\((0..<60).map(String.init).joined(separator: ","))").utf8)
        }),
    ]

    /// Writes `host.yaml` into `folder`: the Calendar provider reads the calendars in `folder` at
    /// a fixed now, in UTC, with the `more` settings lines; answers its path.
    static func config(_ folder: TemporaryDirectory, _ more: [String]) throws -> String {
        let settings = [#"calendars: "\#(folder.path)""#, #"now: "2025-03-01T00:00:00Z""#, "timeZone: UTC"] + more
        return try folder.write(
            "host.yaml", "providers:\n  com.contexthost.calendar:\n    settings:\n" + settings.map { "      \($0)\n" }.joined() + "\n")
    }

    @Test("every request answers, the host keeps answering ping, memory stays bounded", arguments: 0..<inputs.count)
    func hostile(index: Int) throws {
        let (name, contents) = Self.inputs[index]
        let folder = try TemporaryDirectory()
        try Data(contents()).write(to: URL(fileURLWithPath: folder.path + "/hostile.ics"))
        let config = try Self.config(folder, ["windowDays: 3660"])
        // Reads of the file (IN_ACCESS): the provider must have read it, not skipped it.
        let reads = try FolderWatch(folder.path, events: UInt32(IN_ACCESS))
        let client = try RPCClient(arguments: ["serve", "--no-watch", "--no-state", "--isolation", "in-process", "--config", config])
        defer { client.host.terminate() }
        try client.initialize()
        // collect/start reads and expands the file; collect/query searches it; collect/make picks
        // the next event. Each answers a result, or for collect/make the provider's own error
        // (-32013); a timeout (-32015, the provider's timeout is 10 s for collection) fails.
        let start = client.send("collect/start", ["providerId": "com.contexthost.calendar"])
        let started = try client.response(to: start, timeout: 30)
        #expect(started["result"]?["sessionId"] != nil, "\(name): \(started)")
        #expect(reads.opened().contains("hostile.ics"), "\(name): the provider did not read hostile.ics")
        if let session = started["result"]?["sessionId"] {
            let query = try client.response(
                to: client.send("collect/query", ["sessionId": session, "fieldId": "event", "query": "still"]), timeout: 30)
            #expect(query["result"] != nil, "\(name): \(query)")
            if name != "1 MB of random bytes", name != "100,000 nested components", name != "a VTIMEZONE that changes every second" {
                let labels = query["result"]?["options"]?.arrayValue?.compactMap { $0["label"]?.stringValue } ?? []
                #expect(labels.contains("Still here"), "\(name): the events after the hostile one are still offered")
            }
        }
        let make = try client.response(to: client.send("collect/make", ["providerId": "com.contexthost.calendar"]), timeout: 30)
        #expect(make["result"] != nil || make["error"]?["code"] == -32013, "\(name): \(make)")
        let ping = try client.call("ping")
        #expect(ping.objectValue != nil, "\(name): the host answers ping")
        let memory = try #require(client.host.peakResidentMiB)
        #expect(memory < 400, "\(name): host peak resident memory (VmHWM) \(memory) MB")
        #expect(client.host.process.isRunning, "\(name): the host is still running")
    }

    @Test("a pipe, a device and a 65 MB file among the calendars are skipped with a reason; the rest is read")
    func notRegularOrTooLarge() throws {
        let folder = try TemporaryDirectory()
        try folder.write("good.ics", Self.event("DURATION:PT1H"))
        #expect(mkfifo(folder.path + "/pipe.ics", 0o600) == 0)
        // Sparse: 65 MB on paper, nothing on disk.
        let big = open(folder.path + "/big.ics", O_CREAT | O_WRONLY, 0o600)
        #expect(big >= 0 && ftruncate(big, 65 << 20) == 0)
        close(big)
        let config = try Self.config(folder, [#"moreCalendars: "/dev/zero""#])
        let client = try RPCClient(arguments: ["serve", "--no-watch", "--no-state", "--isolation", "in-process", "--config", config])
        defer { client.host.terminate() }
        try client.initialize()
        let start = try client.response(to: client.send("collect/start", ["providerId": "com.contexthost.calendar"]), timeout: 30)
        let help = start["result"]?["form"]?["fields"]?.arrayValue?.first?["help"]?.stringValue ?? ""
        #expect(help.contains("pipe.ics:0: is not a regular file"), "\(help)")
        #expect(help.contains("big.ics:0: is 65 MB; calendar files over 64 MB are not read"), "\(help)")
        #expect(help.contains("zero:0: is not a regular file"), "\(help)")
        let labels = start["result"]?["form"]?["fields"]?.arrayValue?.first?["options"]?.arrayValue?.compactMap { $0["label"]?.stringValue } ?? []
        #expect(labels.contains("Still here"))
        #expect(try client.call("ping").objectValue != nil)
        #expect((client.host.peakResidentMiB ?? .infinity) < 400)
    }

    @Test("forged items: bad dates, huge strings and wrong types answer results or invalid-params errors")
    func forgedItems() throws {
        let client = try RPCClient(arguments: ["serve", "--no-watch", "--no-state", "--isolation", "in-process"])
        defer { client.host.terminate() }
        try client.initialize()
        let contents: [JSONValue] = [
            ["title": "x", "startDate": "99999-99-99", "endDate": "-1", "isAllDay": true],
            ["title": "x", "startDate": "2025-03-02T10:00:00Z", "endDate": "0000-01-01T00:00:00Z", "isAllDay": false],
            ["title": "x", "startDate": .number(1e308), "endDate": .number(-1e308)],
            ["title": .string(String(repeating: "é", count: 100_000)), "startDate": "2025-03-02", "endDate": "2025-03-03"],
            ["title": "x", "startDate": "2025-03-02T10:00:00+99:99", "endDate": "2025-03-02T10:00:00-99:99", "timeZone": "../../etc/passwd"],
            ["title": "x", "startDate": "2025-03-02T10:00:00Z", "endDate": "2025-03-02T11:00:00Z", "recurrence": .number(9e18)],
        ]
        for content in contents {
            let item: JSONValue = ["providerId": "com.contexthost.calendar", "type": "event", "content": content]
            for method in ["items/preview", "items/detail", "items/describe", "items/encode"] {
                let response = try client.response(to: client.send(method, ["item": item]), timeout: 15)
                let code = response["error"]?["code"]?.intValue
                // A documented answer: a result, invalid params, or the provider's own error; not a
                // reply the host had to refuse (-32014) nor a timeout (-32015).
                #expect(response["result"] != nil || [-32602, -32013].contains(code ?? 0), "\(method) \(content): \(response)")
            }
        }
        #expect(try client.call("ping").objectValue != nil)
    }
}
