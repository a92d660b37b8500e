import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// iCalendar reading through the real library: content lines, value types, time zones
/// (zoneinfo TZif files with their POSIX footer, embedded VTIMEZONEs, Windows names), recurrence
/// rules, and bad input that is reported with file and line and skipped.
@Suite("Calendar provider: iCalendar parsing and recurrence")
struct CalendarParsingTests {
    /// Every occurrence's (startDate, endDate) for a calendar body, in order.
    static func occurrences(
        _ body: String, now: String = "2025-03-01T00:00:00Z", windowDays: Int = 60, timeZone: String = "UTC",
        query: String = ""
    ) async throws -> [(String, String)] {
        let folder = try CalendarTest.folder(["test.ics": CalendarTest.calendar(body)])
        let harness = try CalendarTest.provider(calendars: folder.path, now: now, windowDays: windowDays, timeZone: timeZone)
        var result: [(String, String)] = []
        for option in try await CalendarTest.options(harness, query) {
            let item = try await CalendarTest.item(harness, value: option["value"] ?? .null)
            result.append((item["content"]?["startDate"]?.stringValue ?? "", item["content"]?["endDate"]?.stringValue ?? ""))
        }
        return result
    }

    static func starts(_ body: String, now: String = "2025-03-01T00:00:00Z", windowDays: Int = 60) async throws -> [String] {
        try await occurrences(body, now: now, windowDays: windowDays).map(\.0)
    }

    static func event(_ lines: String, uid: String = "e1", summary: String = "Event") -> String {
        "BEGIN:VEVENT\nUID:\(uid)\nSUMMARY:\(summary)\n\(lines)\nEND:VEVENT\n"
    }

    // MARK: Content lines

    @Test("line unfolding (space and tab), LF-only files, escaped text, quoted parameter values")
    func contentLines() async throws {
        let body = """
            BEGIN:VEVENT
            UID:fold-1
            SUMMARY:A very long title that was folded by the exporter at seventy-five o
             ctets\\, with a comma
            DESCRIPTION:Line one\\nLine two\\Nthree\\; four\\\\five
            LOCATION;ALTREP="http://example.com/a:b;c":Caf\u{E9} \u{201C}Zur Post\u{201D}
            X-APPLE-STRUCTURED-LOCATION;VALUE=URI;X-TITLE="Zur Post: Caf\u{E9}":geo:52.5,13.4
            ORGANIZER;CN="Doe, Jane":MAILTO:jane@example.com
            DTSTART:20250302T100000Z
            DTEND:20250302T110000Z
            END:VEVENT

            """
        let folder = try TemporaryDirectory()
        // LF line ends and a tab fold.
        try folder.write("lf.ics", CalendarTest.calendar(body.replacingOccurrences(of: "\n ctets", with: "\n\tctets")))
        let harness = try CalendarTest.provider(calendars: folder.path)
        let item = try await CalendarTest.item(harness, titled: "seventy-five")
        let content = try #require(item["content"])
        #expect(content["title"] == "A very long title that was folded by the exporter at seventy-five octets, with a comma")
        #expect(content["notes"] == "Line one\nLine two\nthree; four\\five")
        #expect(content["location"] == "Caf\u{E9} \u{201C}Zur Post\u{201D}")
        #expect(content["organizer"]?["name"] == "Doe, Jane")
        #expect(content["organizer"]?["email"] == "jane@example.com")
        let form = try await harness.call("collect/start", ["sessionId": "s"])
        #expect(form["fields"]?.arrayValue?.first?["help"]?.stringValue?.contains("Skipped") == false)
    }

    @Test("the content-line scanner: folds inside names, parameters and UTF-8 sequences, CR-only and CRLF files, lower-case names, quoted parameter values with ; : and ,, escapes, empty values")
    func contentLineEdges() async throws {
        // Byte by byte, so a fold can split a UTF-8 sequence (é = C3 A9, ü = C3 BC).
        var bytes: [UInt8] = []
        func line(_ text: String) { bytes += Array(text.utf8) + [13, 10] }
        line("BEGIN:VCALENDAR")
        line("VERSION:2.0")
        line("BEGIN:VEVENT")
        line("UID:edges-1")
        bytes += Array("SUMMARY:Caf".utf8) + [0xC3, 13, 10, 32, 0xA9] + Array(" \\N".utf8) + [13, 10, 9] + Array("ends with a backslash \\".utf8) + [13, 10]
        line("DTST")
        line(" ART;TZ")
        line(" ID=\"America/New_")
        line("\tYork\":20250302T100000")
        line("dtend;tzid=America/New_York:20250302T113000")
        line("ATTENDEE;DELEGATED-FROM=\"mailto:a@example.com\",\"mailto:b@example.com\";CN=\"Doe; Jane: Jr., III\";partstat=accepted:mailto:jane@example.com")
        line("ORGANIZER;CN=M\u{FC}ller:MAILTO:m@example.com")
        line("LOCATION:")
        line("DESCRIPTION;ALTREP=\"cid:part1.0001@example.org\":")
        line("")
        line("X-EMPTY:")
        line("END:VEVENT")
        line("BEGIN:VEVENT")
        line("UID:edges-2")
        line("SUMMARY:")
        line("DTSTART;VALUE=date:20250304")
        line("END:VEVENT")
        line("END:VCALENDAR")
        let folder = try TemporaryDirectory()
        try Data(bytes).write(to: URL(fileURLWithPath: folder.path + "/crlf.ics"))
        // The same file with bare CR line ends reads the same.
        let crOnly = bytes.enumerated().compactMap { index, byte in byte == 10 && index > 0 && bytes[index - 1] == 13 ? nil : byte }
        let crFolder = try TemporaryDirectory()
        try Data(crOnly).write(to: URL(fileURLWithPath: crFolder.path + "/cr.ics"))

        for path in [folder.path, crFolder.path] {
            let harness = try CalendarTest.provider(calendars: path)
            let options = try await CalendarTest.options(harness)
            #expect(options.count == 2, "\(path)")
            let item = try await CalendarTest.item(harness, titled: "Caf\u{E9}")
            let content = try #require(item["content"])
            #expect(content["title"] == "Caf\u{E9} \nends with a backslash \\")
            #expect(content["startDate"] == "2025-03-02T15:00:00Z")
            #expect(content["endDate"] == "2025-03-02T16:30:00Z")
            #expect(content["timeZone"] == "America/New_York")
            #expect(content["location"] == .null)
            #expect(content["notes"] == .null)
            #expect(content["organizer"]?["name"] == "M\u{FC}ller")
            #expect(content["organizer"]?["email"] == "m@example.com")
            let attendee = try #require(content["attendees"]?.arrayValue?.first)
            #expect(attendee["name"] == "Doe; Jane: Jr., III")
            #expect(attendee["email"] == "jane@example.com")
            #expect(attendee["status"] == "accepted")
            let form = try await harness.call("collect/start", ["sessionId": "s"])
            #expect(form["fields"]?.arrayValue?.first?["help"]?.stringValue?.contains("Skipped") == false)

            // An empty SUMMARY stays empty; VALUE=date (any case) is a DATE.
            let untitled = try #require(options.first { $0["label"]?.stringValue?.contains("Caf") == false })
            let allDay = try await CalendarTest.item(harness, value: untitled["value"] ?? .null)
            #expect(allDay["content"]?["title"] == "")
            #expect(allDay["content"]?["startDate"] == "2025-03-04")
            #expect(allDay["content"]?["isAllDay"] == true)

            // Export: names upper-cased, parameters exactly as written, values unchanged.
            let ics = try await harness.call("item/encode", ["item": item, "representation": "ics"])
            let text = String(decoding: Data(base64Encoded: ics["data"]?.stringValue ?? "") ?? Data(), as: UTF8.self)
            let unfolded = text.replacingOccurrences(of: "\r\n ", with: "")
            #expect(unfolded.contains("\r\nSUMMARY:Caf\u{E9} \\Nends with a backslash \\\r\n"), "\(unfolded)")
            #expect(unfolded.contains("\r\nATTENDEE;DELEGATED-FROM=\"mailto:a@example.com\",\"mailto:b@example.com\";CN=\"Doe; Jane: Jr., III\";partstat=accepted:mailto:jane@example.com\r\n"))
            #expect(unfolded.contains("\r\nLOCATION:\r\n"))
            #expect(unfolded.contains("\r\nDESCRIPTION;ALTREP=\"cid:part1.0001@example.org\":\r\n"))
            #expect(unfolded.contains("\r\nX-EMPTY:\r\n"))
        }
    }

    @Test("line numbers count physical lines: a problem after folded lines and blank lines is reported where it is")
    func lineNumbersAfterFolds() async throws {
        let body = """
            BEGIN:VEVENT
            UID:lines
            DESCRIPTION:one
             two
             three

            SUMMARY;X-BAD:oops
            DTSTART:20250302T100000Z
            END:VEVENT

            """
        // VCALENDAR, VERSION and PRODID take lines 1–3; the bad line is line 10.
        let folder = try CalendarTest.folder(["lines.ics": CalendarTest.calendar(body)])
        let harness = try CalendarTest.provider(calendars: folder.path)
        let form = try await harness.call("collect/start", ["sessionId": "s"])
        let help = try #require(form["fields"]?.arrayValue?.first?["help"]?.stringValue)
        #expect(help.contains("lines.ics:10: malformed parameter in SUMMARY"), "\(help)")
        let item = try await CalendarTest.item(harness, titled: "(No title)")
        #expect(item["content"]?["notes"] == "onetwothree")
    }

    // MARK: Value types and time zones

    @Test("DATE-TIME in UTC, floating, TZID from zoneinfo, X-WR-TIMEZONE, and DATE")
    func valueKinds() async throws {
        let body =
            Self.event("DTSTART:20250302T100000Z\nDTEND:20250302T103000Z", uid: "utc", summary: "utc")
            + Self.event("DTSTART:20250303T100000\nDTEND:20250303T110000", uid: "floating", summary: "floating")
            + Self.event("DTSTART;TZID=America/Sao_Paulo:20250304T100000\nDURATION:PT1H30M", uid: "sp", summary: "saopaulo")
            + Self.event("DTSTART;VALUE=DATE:20250305", uid: "date", summary: "allday")
            + Self.event("DTSTART;VALUE=DATE:20250306\nDURATION:P2D", uid: "date2", summary: "twodays")
            + Self.event("DTSTART:20250307T090000Z", uid: "instant", summary: "instant")
        let result = try await Self.occurrences(body)
        #expect(result.map(\.0) == ["2025-03-02T10:00:00Z", "2025-03-03T10:00:00", "2025-03-04T13:00:00Z", "2025-03-05", "2025-03-06", "2025-03-07T09:00:00Z"])
        #expect(result.map(\.1) == ["2025-03-02T10:30:00Z", "2025-03-03T11:00:00", "2025-03-04T14:30:00Z", "2025-03-06", "2025-03-08", "2025-03-07T09:00:00Z"])

        // Floating times keep their wall-clock time in every display zone.
        let folder = try CalendarTest.folder(["f.ics": CalendarTest.calendar(body)])
        let tokyo = try CalendarTest.provider(calendars: folder.path, timeZone: "Asia/Tokyo")
        let floating = try await CalendarTest.item(tokyo, titled: "floating")
        #expect(try await tokyo.call("item/preview", ["item": floating])["subtitle"] == "Mon, Mar 3, 10:00 – 11:00 AM")
        let utc = try await CalendarTest.item(tokyo, titled: "utc")
        #expect(try await tokyo.call("item/preview", ["item": utc])["subtitle"] == "Sun, Mar 2, 7:00 – 7:30 PM")

        // X-WR-TIMEZONE (Google, Apple) places the calendar's floating times.
        let wr = try CalendarTest.folder([
            "wr.ics": "BEGIN:VCALENDAR\nVERSION:2.0\nX-WR-TIMEZONE:Asia/Kolkata\n" + Self.event("DTSTART:20250303T100000") + "END:VCALENDAR\n"
        ])
        let kolkata = try await CalendarTest.item(try CalendarTest.provider(calendars: wr.path), titled: "Event")
        #expect(kolkata["content"]?["startDate"] == "2025-03-03T04:30:00Z")
    }

    @Test("IANA zones from /usr/share/zoneinfo: DST gaps and overlaps, and the POSIX footer past the table")
    func zoneinfo() async throws {
        let body =
            Self.event("DTSTART;TZID=Europe/Berlin:20250330T023000", uid: "gap", summary: "gap")  // does not exist
            + Self.event("DTSTART;TZID=Europe/Berlin:20251026T023000", uid: "overlap", summary: "overlap")  // twice
            + Self.event("DTSTART;TZID=Europe/Berlin:20900715T120000", uid: "b2090", summary: "berlin2090")
            + Self.event("DTSTART;TZID=Australia/Sydney:20900115T120000", uid: "s2090", summary: "sydney2090")
            + Self.event("DTSTART;TZID=Australia/Sydney:20900715T120000", uid: "s2090w", summary: "sydney2090winter")
            + Self.event("DTSTART;TZID=America/New_York:21000310T120000", uid: "ny2100", summary: "ny2100")
            + Self.event("DTSTART;TZID=Asia/Kathmandu:20250301T120000", uid: "ktm", summary: "kathmandu")
        // 2025-02-28 to 2100-12-31.
        let result = try await Self.starts(body, now: "2025-02-28T00:00:00Z", windowDays: 3660)
        #expect(result.contains("2025-03-30T01:30:00Z"))  // read with the offset before the gap (+01:00)
        #expect(result.contains("2025-10-26T00:30:00Z"))  // the first of the two (+02:00)
        #expect(result.contains("2025-03-01T06:15:00Z"))  // +05:45
        let far = try await Self.starts(body, now: "2089-01-01T00:00:00Z", windowDays: 3660)
        #expect(far == ["2090-01-15T01:00:00Z", "2090-07-15T02:00:00Z", "2090-07-15T10:00:00Z"])
        let century = try await Self.starts(body, now: "2100-01-01T00:00:00Z", windowDays: 365)
        #expect(century == ["2100-03-10T17:00:00Z"])  // before the second Sunday of March: EST
    }

    @Test("embedded VTIMEZONEs, Windows zone names, and Mozilla-prefixed TZIDs")
    func embeddedZones() async throws {
        let custom = """
            BEGIN:VTIMEZONE
            TZID:Custom Zone
            BEGIN:STANDARD
            DTSTART:19701101T020000
            RRULE:FREQ=YEARLY;BYMONTH=11;BYDAY=1SU
            TZOFFSETFROM:-0230
            TZOFFSETTO:-0330
            END:STANDARD
            BEGIN:DAYLIGHT
            DTSTART:19700301T020000
            RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU
            TZOFFSETFROM:-0330
            TZOFFSETTO:-0230
            END:DAYLIGHT
            END:VTIMEZONE

            """
        let body =
            custom + Self.event("DTSTART;TZID=Custom Zone:20250305T120000", uid: "c1", summary: "winter")
            + Self.event("DTSTART;TZID=\"Custom Zone\":20250312T120000", uid: "c2", summary: "summer")
            + Self.event("DTSTART;TZID=Tokyo Standard Time:20250306T090000", uid: "w1", summary: "windows")
            + Self.event("DTSTART;TZID=/mozilla.org/20050126_1/America/Chicago:20250307T090000", uid: "m1", summary: "mozilla")
        let result = try await Self.starts(body)
        #expect(result == ["2025-03-05T15:30:00Z", "2025-03-06T00:00:00Z", "2025-03-07T15:00:00Z", "2025-03-12T14:30:00Z"])
    }

    // MARK: Recurrence

    @Test("RRULE expansion", arguments: [
        // RFC 5545 §3.8.5.3 examples (New York).
        ("DTSTART;TZID=America/New_York:19970902T090000\nRRULE:FREQ=DAILY;COUNT=5", "1997-09-01T00:00:00Z", 30,
         ["1997-09-02T13:00:00Z", "1997-09-03T13:00:00Z", "1997-09-04T13:00:00Z", "1997-09-05T13:00:00Z", "1997-09-06T13:00:00Z"]),
        ("DTSTART;TZID=America/New_York:19970805T090000\nRRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=MO", "1997-08-01T00:00:00Z", 60,
         ["1997-08-05T13:00:00Z", "1997-08-10T13:00:00Z", "1997-08-19T13:00:00Z", "1997-08-24T13:00:00Z"]),
        ("DTSTART;TZID=America/New_York:19970805T090000\nRRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=4;BYDAY=TU,SU;WKST=SU", "1997-08-01T00:00:00Z", 60,
         ["1997-08-05T13:00:00Z", "1997-08-17T13:00:00Z", "1997-08-19T13:00:00Z", "1997-08-31T13:00:00Z"]),
        ("DTSTART;TZID=America/New_York:19970905T090000\nRRULE:FREQ=MONTHLY;COUNT=4;BYDAY=1FR", "1997-09-01T00:00:00Z", 200,
         ["1997-09-05T13:00:00Z", "1997-10-03T13:00:00Z", "1997-11-07T14:00:00Z", "1997-12-05T14:00:00Z"]),
        ("DTSTART;TZID=America/New_York:19970922T090000\nRRULE:FREQ=MONTHLY;COUNT=3;BYDAY=-2MO", "1997-09-01T00:00:00Z", 200,
         ["1997-09-22T13:00:00Z", "1997-10-20T13:00:00Z", "1997-11-17T14:00:00Z"]),
        ("DTSTART;TZID=America/New_York:19970928T090000\nRRULE:FREQ=MONTHLY;BYMONTHDAY=-3;COUNT=3", "1997-09-01T00:00:00Z", 200,
         ["1997-09-28T13:00:00Z", "1997-10-29T14:00:00Z", "1997-11-28T14:00:00Z"]),
        ("DTSTART;TZID=America/New_York:19970929T090000\nRRULE:FREQ=MONTHLY;COUNT=4;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-2", "1997-09-01T00:00:00Z", 200,
         ["1997-09-29T13:00:00Z", "1997-10-30T14:00:00Z", "1997-11-27T14:00:00Z", "1997-12-30T14:00:00Z"]),
        ("DTSTART;TZID=America/New_York:19970519T090000\nRRULE:FREQ=YEARLY;BYDAY=20MO;COUNT=3", "1997-05-01T00:00:00Z", 1200,
         ["1997-05-19T13:00:00Z", "1998-05-18T13:00:00Z", "1999-05-17T13:00:00Z"]),
        ("DTSTART;TZID=America/New_York:19970313T090000\nRRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=TH;COUNT=6", "1997-03-01T00:00:00Z", 400,
         ["1997-03-13T14:00:00Z", "1997-03-20T14:00:00Z", "1997-03-27T14:00:00Z", "1998-03-05T14:00:00Z", "1998-03-12T14:00:00Z", "1998-03-19T14:00:00Z"]),
        ("DTSTART;TZID=America/New_York:19970610T090000\nRRULE:FREQ=YEARLY;COUNT=4;BYMONTH=6,7", "1997-06-01T00:00:00Z", 800,
         ["1997-06-10T13:00:00Z", "1997-07-10T13:00:00Z", "1998-06-10T13:00:00Z", "1998-07-10T13:00:00Z"]),
        // UNTIL (inclusive, in UTC), INTERVAL, month ends and leap days.
        ("DTSTART:20250301T090000Z\nRRULE:FREQ=DAILY;INTERVAL=10;UNTIL=20250331T090000Z", "2025-03-01T00:00:00Z", 60,
         ["2025-03-01T09:00:00Z", "2025-03-11T09:00:00Z", "2025-03-21T09:00:00Z", "2025-03-31T09:00:00Z"]),
        ("DTSTART:20250131T090000Z\nRRULE:FREQ=MONTHLY;COUNT=4", "2025-01-01T00:00:00Z", 365,
         ["2025-01-31T09:00:00Z", "2025-03-31T09:00:00Z", "2025-05-31T09:00:00Z", "2025-07-31T09:00:00Z"]),
        ("DTSTART;VALUE=DATE:20240229\nRRULE:FREQ=YEARLY;COUNT=2", "2024-01-01T00:00:00Z", 3000,
         ["2024-02-29", "2028-02-29"]),
        ("DTSTART;VALUE=DATE:20250103\nRRULE:FREQ=MONTHLY;BYMONTHDAY=3,-1;UNTIL=20250228", "2025-01-01T00:00:00Z", 90,
         ["2025-01-03", "2025-01-31", "2025-02-03", "2025-02-28"]),
        ("DTSTART:20250106T090000Z\nRRULE:FREQ=WEEKLY;BYMONTH=1;BYDAY=MO", "2025-01-01T00:00:00Z", 365,
         ["2025-01-06T09:00:00Z", "2025-01-13T09:00:00Z", "2025-01-20T09:00:00Z", "2025-01-27T09:00:00Z"]),
    ] as [(String, String, Int, [String])])
    func rrule(lines: String, now: String, windowDays: Int, expected: [String]) async throws {
        let starts = try await Self.starts(Self.event(lines), now: now, windowDays: windowDays)
        #expect(starts == expected)
    }

    @Test("a long-running rule is expanded only near the window (no COUNT), and COUNT is counted from DTSTART")
    func farWindow() async throws {
        let daily = Self.event("DTSTART;TZID=Europe/Berlin:19900101T080000\nRRULE:FREQ=DAILY")
        let starts = try await Self.starts(daily, now: "2025-07-01T00:00:00Z", windowDays: 2)
        #expect(starts == ["2025-07-01T06:00:00Z", "2025-07-02T06:00:00Z"])
        let counted = Self.event("DTSTART:19900101T080000Z\nRRULE:FREQ=WEEKLY;COUNT=1800")
        let last = try await Self.starts(counted, now: "2024-06-01T00:00:00Z", windowDays: 60)
        #expect(last == ["2024-06-03T08:00:00Z", "2024-06-10T08:00:00Z", "2024-06-17T08:00:00Z", "2024-06-24T08:00:00Z"])
    }

    @Test("EXDATE, RDATE and overridden instances (RECURRENCE-ID)")
    func exceptions() async throws {
        let body =
            Self.event(
                """
                DTSTART;TZID=Europe/Berlin:20250303T100000
                DTEND;TZID=Europe/Berlin:20250303T110000
                RRULE:FREQ=DAILY;COUNT=6
                EXDATE;TZID=Europe/Berlin:20250304T100000
                EXDATE;VALUE=DATE:20250306
                RDATE;TZID=Europe/Berlin:20250310T150000
                """, uid: "series", summary: "Series")
            + Self.event(
                """
                RECURRENCE-ID;TZID=Europe/Berlin:20250305T100000
                DTSTART;TZID=Europe/Berlin:20250305T160000
                DTEND;TZID=Europe/Berlin:20250305T170000
                """, uid: "series", summary: "Series (moved)")
            + Self.event(
                """
                RECURRENCE-ID;TZID=Europe/Berlin:20250307T100000
                DTSTART;TZID=Europe/Berlin:20250320T100000
                DTEND;TZID=Europe/Berlin:20250320T110000
                """, uid: "series", summary: "Series (postponed)")
        let result = try await Self.occurrences(body)
        #expect(result.map(\.0) == [
            "2025-03-03T09:00:00Z", "2025-03-05T15:00:00Z", "2025-03-08T09:00:00Z", "2025-03-10T14:00:00Z", "2025-03-20T09:00:00Z",
        ])
        #expect(result.map(\.1)[3] == "2025-03-10T15:00:00Z")
        // The override keeps its own title and carries the original start as recurrenceId.
        let folder = try CalendarTest.folder(["s.ics": CalendarTest.calendar(body)])
        let harness = try CalendarTest.provider(calendars: folder.path)
        let moved = try await CalendarTest.item(harness, titled: "moved")
        #expect(moved["content"]?["recurrenceId"] == "2025-03-05T09:00:00Z")
    }

    @Test("occurrences at the window's edges in zones far from UTC (+14, -12, a VTIMEZONE at +23:30), and zero-length ones")
    func windowEdges() async throws {
        let zone = """
            BEGIN:VTIMEZONE
            TZID:Test/Far-East
            BEGIN:STANDARD
            DTSTART:19700101T000000
            TZOFFSETFROM:+2330
            TZOFFSETTO:+2330
            END:STANDARD
            END:VTIMEZONE

            """
        // The window is 2025-03-01T00:00Z to 2025-03-02T00:00Z; wall-clock dates a day off are
        // still inside or outside depending on the zone.
        let body =
            zone
            + Self.event("DTSTART;TZID=Pacific/Kiritimati:20250302T120000", uid: "kir-in")  // 03-01 22:00Z
            + Self.event("DTSTART;TZID=Pacific/Kiritimati:20250303T000000", uid: "kir-out")  // 03-02 10:00Z
            + Self.event("DTSTART;TZID=Pacific/Kiritimati:20250302T100000\nRRULE:FREQ=DAILY;COUNT=3", uid: "kir-daily")
            + Self.event("DTSTART;TZID=Etc/GMT+12:20250228T130000", uid: "minus12-in")  // 03-01 01:00Z
            + Self.event("DTSTART;TZID=Etc/GMT+12:20250228T110000\nDTEND;TZID=Etc/GMT+12:20250228T120000", uid: "minus12-out")  // ends at the start
            + Self.event("DTSTART;TZID=Test/Far-East:20250302T220000", uid: "far-in")  // 03-01 22:30Z
            + Self.event("DTSTART;TZID=Test/Far-East:20250303T000000", uid: "far-out")  // 03-02 00:30Z
            + Self.event("DTSTART:20250301T000000Z", uid: "zero-at-start")
            + Self.event("DTSTART:20250302T000000Z", uid: "zero-at-end")
        let starts = try await Self.starts(body, now: "2025-03-01T00:00:00Z", windowDays: 1)
        #expect(starts == [
            "2025-03-01T00:00:00Z", "2025-03-01T01:00:00Z", "2025-03-01T20:00:00Z", "2025-03-01T22:00:00Z",
            "2025-03-01T22:30:00Z",
        ])
    }

    // MARK: Bad input

    @Test("malformed data is reported with file and line and skipped; the rest still loads", arguments: [
        ("THIS LINE HAS NO COLON\n", "bad.ics:4: malformed content line"),
        ("BEGIN:VEVENT\nUID:x\nSUMMARY;LANGUAGE:Broken\nDTSTART:20250302T100000Z\nEND:VEVENT\n", "bad.ics:6: malformed parameter in SUMMARY"),
        ("BEGIN:VEVENT\nUID:x\nLOCATION;ALTREP=\"http://x:Broken\nDTSTART:20250302T100000Z\nEND:VEVENT\n", "bad.ics:6: unterminated quoted value"),
        ("BEGIN:VEVENT\nUID:x\nSUMMARY:Never closed\nDTSTART:20250302T100000Z\n", "bad.ics:4: BEGIN:VEVENT has no END:VEVENT"),
        ("BEGIN:VEVENT\nUID:x\nSUMMARY:Bad date\nDTSTART:20251345T990000\nEND:VEVENT\n", "bad.ics:7: DTSTART has a bad date \"20251345T990000\""),
        ("BEGIN:VEVENT\nUID:x\nSUMMARY:Bad date\nDTSTART:2025-03-02\nEND:VEVENT\n", "bad.ics:7: DTSTART has a bad date"),
        ("BEGIN:VEVENT\nUID:x\nSUMMARY:No start\nEND:VEVENT\n", "bad.ics:4: VEVENT without DTSTART"),
        ("BEGIN:VEVENT\nUID:x\nSUMMARY:Mars\nDTSTART;TZID=Mars/Olympus_Mons:20250302T100000\nEND:VEVENT\n", "bad.ics:7: unknown time zone TZID=Mars/Olympus_Mons"),
        ("BEGIN:VEVENT\nUID:x\nSUMMARY:Fortnightly\nDTSTART:20250302T100000Z\nRRULE:FREQ=FORTNIGHTLY\nEND:VEVENT\n", "bad.ics:8: RRULE FREQ=FORTNIGHTLY is not a frequency"),
        ("BEGIN:VEVENT\nUID:x\nSUMMARY:Bad day\nDTSTART:20250302T100000Z\nRRULE:FREQ=WEEKLY;BYDAY=XX\nEND:VEVENT\n", "bad.ics:8: RRULE BYDAY has an invalid weekday"),
        ("BEGIN:VEVENT\nUID:x\nSUMMARY:Backwards\nDTSTART:20250302T100000Z\nDTEND:20250302T090000Z\nEND:VEVENT\n", "bad.ics:8: DTEND is before DTSTART"),
        ("BEGIN:VEVENT\nUID:x\nSUMMARY:Bad length\nDTSTART:20250302T100000Z\nDURATION:1 hour\nEND:VEVENT\n", "bad.ics:8: bad DURATION"),
        ("BEGIN:VEVENT\nUID:x\nSUMMARY:Bad exdate\nDTSTART:20250302T100000Z\nRRULE:FREQ=DAILY;COUNT=2\nEXDATE:2025030\nEND:VEVENT\n", "bad.ics:9: EXDATE has a bad date"),
        ("END:VTODO\n", "bad.ics:4: END:VTODO without a matching BEGIN"),
    ] as [(String, String)])
    func malformed(body: String, message: String) async throws {
        let good = Self.event("DTSTART:20250303T100000Z", uid: "good", summary: "Still here")
        let folder = try CalendarTest.folder(["bad.ics": CalendarTest.calendar(body + good)])
        let harness = try CalendarTest.provider(calendars: folder.path)
        let form = try await harness.call("collect/start", ["sessionId": "s"])
        let help = try #require(form["fields"]?.arrayValue?.first?["help"]?.stringValue)
        #expect(help.contains("Skipped malformed calendar data: "))
        #expect(help.contains(message), "\(help)")
        let labels = try await CalendarTest.options(harness).compactMap { $0["label"]?.stringValue }
        #expect(labels.contains("Still here"))
        #expect(!labels.contains("Never closed"))
        let availability = try await harness.call("provider/availability")
        #expect(availability["available"] == true)
    }

    @Test("an unknown TZID is read as floating, a bad RRULE leaves one occurrence, a bad EXDATE value is ignored")
    func recoveries() async throws {
        let body =
            Self.event("DTSTART;TZID=Mars/Olympus_Mons:20250302T100000", uid: "m", summary: "Mars")
            + Self.event("DTSTART:20250303T100000Z\nRRULE:FREQ=SECONDLY;BYDAY=XX", uid: "r", summary: "Rule")
            + Self.event("DTSTART:20250304T100000Z\nRRULE:FREQ=DAILY;COUNT=2\nEXDATE:nonsense,20250305T100000Z", uid: "x", summary: "Ex")
        let result = try await Self.starts(body)
        #expect(result == ["2025-03-02T10:00:00", "2025-03-03T10:00:00Z", "2025-03-04T10:00:00Z"])
    }

    @Test("files that are not calendars, empty files, and a missing END:VCALENDAR")
    func notCalendars() async throws {
        let folder = try CalendarTest.folder([
            "empty.ics": "",
            "notes.ics": "just some text\nnot a calendar\n",
            "open.ics": "BEGIN:VCALENDAR\nVERSION:2.0\n" + Self.event("DTSTART:20250302T100000Z", summary: "Unclosed calendar"),
        ])
        try Data([0xFF, 0xFE, 0x00, 0x42, 0x00, 0x0A]).write(to: URL(fileURLWithPath: folder.path + "/binary.ics"))
        let harness = try CalendarTest.provider(calendars: folder.path)
        let form = try await harness.call("collect/start", ["sessionId": "s"])
        let help = try #require(form["fields"]?.arrayValue?.first?["help"]?.stringValue)
        #expect(help.contains("notes.ics:1: malformed content line"))
        #expect(help.contains("open.ics:1: BEGIN:VCALENDAR has no END:VCALENDAR"))
        #expect(help.contains("empty.ics:1: no BEGIN:VCALENDAR found"))
        let labels = try await CalendarTest.options(harness).compactMap { $0["label"]?.stringValue }
        #expect(labels == ["Unclosed calendar"])
    }
}
