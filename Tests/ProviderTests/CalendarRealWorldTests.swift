import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// Defects found on real-world calendars from other projects' test data (issue 39): time zone
/// names with escaped commas (Outlook), `VTIMEZONE` rules from year 1 (eM Client), and damaged
/// data the reference implementation (icalendar + recurring-ical-events) reads through: junk in
/// an `RRULE`, a DATE-TIME marked `VALUE=DATE`, an indented first line. Every test goes through
/// the real `libCalendarProvider.so`; each failed on main before the fix.
@Suite("Calendar provider: real-world zone names, VTIMEZONE years and damaged data")
struct CalendarRealWorldTests {
    /// Every occurrence's (startDate, endDate) in a folder holding one file with exactly `text`.
    static func occurrences(
        file text: String, now: String = "2025-03-01T00:00:00Z", windowDays: Int = 60
    ) async throws -> [(start: String, end: String)] {
        let folder = try CalendarTest.folder(["test.ics": text])
        let harness = try CalendarTest.provider(calendars: folder.path, now: now, windowDays: windowDays)
        var result: [(start: String, end: String)] = []
        for option in try await CalendarTest.options(harness) {
            let item = try await CalendarTest.item(harness, value: option["value"] ?? .null)
            result.append((item["content"]?["startDate"]?.stringValue ?? "", item["content"]?["endDate"]?.stringValue ?? ""))
        }
        return result
    }

    /// Outlook's VTIMEZONE for "(UTC+08:00) Kuala Lumpur, Singapore": the TZID is TEXT, so its
    /// comma is escaped.
    static let kualaLumpur = """
        BEGIN:VTIMEZONE
        TZID:Kuala Lumpur\\, Singapore
        BEGIN:STANDARD
        DTSTART:16010101T000000
        TZOFFSETFROM:+0800
        TZOFFSETTO:+0800
        END:STANDARD
        END:VTIMEZONE

        """

    // MARK: Time zones

    @Test(
        "a TZID with an escaped comma finds its VTIMEZONE, quoted or not, escaped or not",
        arguments: [
            #"DTSTART;TZID="Kuala Lumpur\, Singapore":20250303T100000"#,
            #"DTSTART;TZID=Kuala Lumpur\, Singapore:20250303T100000"#,
            #"DTSTART;TZID="Kuala Lumpur, Singapore":20250303T100000"#,
        ])
    func escapedCommaInTZID(start: String) async throws {
        let event = "BEGIN:VEVENT\nUID:kl\nSUMMARY:Reboot\n\(start)\nDURATION:PT10M\nRRULE:FREQ=WEEKLY;COUNT=2\nEND:VEVENT\n"
        let found = try await Self.occurrences(file: CalendarTest.calendar(Self.kualaLumpur + event))
        // 10:00 at +08:00 is 02:00 UTC; on main the zone was not found and the times were floating.
        #expect(found.map(\.start) == ["2025-03-03T02:00:00Z", "2025-03-10T02:00:00Z"])
        #expect(found.map(\.end) == ["2025-03-03T02:10:00Z", "2025-03-10T02:10:00Z"])
    }

    /// eM Client's W. Europe Standard Time: rules from 0001-03-25 and 0001-10-28.
    static let emClientZone = """
        BEGIN:VTIMEZONE
        TZID:W. Europe Standard Time
        BEGIN:DAYLIGHT
        DTSTART:00010325T020000
        TZOFFSETFROM:+0100
        TZOFFSETTO:+0200
        RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=3
        END:DAYLIGHT
        BEGIN:STANDARD
        DTSTART:00011028T030000
        TZOFFSETFROM:+0200
        TZOFFSETTO:+0100
        RRULE:FREQ=YEARLY;BYDAY=-1SU;BYMONTH=10
        END:STANDARD
        END:VTIMEZONE

        """

    @Test("a VTIMEZONE whose rules start in year 0001 (eM Client) is right in 2025, 2150, 1850 and 9998")
    func vtimezoneFromYearOne() async throws {
        func starts(_ local: String, now: String) async throws -> [String] {
            let event = "BEGIN:VEVENT\nUID:em\nSUMMARY:Meeting\nDTSTART;TZID=\"W. Europe Standard Time\":\(local)\nDURATION:PT1H\nEND:VEVENT\n"
            return try await Self.occurrences(file: CalendarTest.calendar(Self.emClientZone + event), now: now, windowDays: 2)
                .map(\.start)
        }
        // Summer time (+02:00) and winter time (+01:00) today: on main, the 2,000-change cap of
        // each part ended the table around the year 2000 in winter time, so summer was an hour off.
        #expect(try await starts("20250601T100000", now: "2025-06-01T00:00:00Z") == ["2025-06-01T08:00:00Z"])
        #expect(try await starts("20251201T100000", now: "2025-12-01T00:00:00Z") == ["2025-12-01T09:00:00Z"])
        // Past the table (2200) and before it (1900) the rules answer themselves.
        #expect(try await starts("21500601T100000", now: "2150-06-01T00:00:00Z") == ["2150-06-01T08:00:00Z"])
        #expect(try await starts("18500601T100000", now: "1850-06-01T00:00:00Z") == ["1850-06-01T08:00:00Z"])
        #expect(try await starts("18501201T100000", now: "1850-12-01T00:00:00Z") == ["1850-12-01T09:00:00Z"])
        #expect(try await starts("99980601T100000", now: "9998-06-01T00:00:00Z") == ["9998-06-01T08:00:00Z"])
    }

    @Test("a VTIMEZONE rule from year 1 with more changes than the table holds is bounded and still answers")
    func crowdedVTimezoneRule() async throws {
        // Four changes a month from year 1: each part passes its 2,000-change cap in the 1980s,
        // so 2025 is answered from the rules themselves.
        let zone = """
            BEGIN:VTIMEZONE
            TZID:Crowded
            BEGIN:DAYLIGHT
            DTSTART:00010101T000000
            TZOFFSETFROM:+0100
            TZOFFSETTO:+0200
            RRULE:FREQ=YEARLY;BYMONTH=1,2,3,4,5,6,7,8,9,10,11,12;BYMONTHDAY=1,15
            END:DAYLIGHT
            BEGIN:STANDARD
            DTSTART:00010108T000000
            TZOFFSETFROM:+0200
            TZOFFSETTO:+0100
            RRULE:FREQ=YEARLY;BYMONTH=1,2,3,4,5,6,7,8,9,10,11,12;BYMONTHDAY=8,22
            END:STANDARD
            END:VTIMEZONE

            """
        let event = "BEGIN:VEVENT\nUID:d\nSUMMARY:Weekly\nDTSTART;TZID=Crowded:20250603T120000\nRRULE:FREQ=WEEKLY;COUNT=2\nEND:VEVENT\n"
        let clock = ContinuousClock()
        let began = clock.now
        let found = try await Self.occurrences(file: CalendarTest.calendar(zone + event), now: "2025-06-01T00:00:00Z", windowDays: 14)
        // The 3rd is after the 1st's change to +02:00, the 10th after the 8th's back to +01:00.
        #expect(found.map(\.start) == ["2025-06-03T10:00:00Z", "2025-06-10T11:00:00Z"])
        #expect(clock.now - began < .seconds(20), "reading a crowded zone took \(clock.now - began)")
    }

    // MARK: Damaged data the reference reads through

    @Test(
        "junk inside an RRULE does not drop the rule",
        arguments: [
            // Escaped separators (LinkeSOFT DIMEX, Exchange): on main "FREQ=DAILY\" was no frequency.
            (#"RRULE:FREQ=DAILY\;COUNT=3"#, ["2025-03-03T10:00:00Z", "2025-03-04T10:00:00Z", "2025-03-05T10:00:00Z"]),
            (#"RRULE:FREQ=WEEKLY\;COUNT=2\;BYDAY=MO\,WE"#, ["2025-03-03T10:00:00Z", "2025-03-05T10:00:00Z"]),
            // A part that is not NAME=value (a Google export with "RRULE:" twice).
            ("RRULE:RRULE:AnythingRandom;FREQ=WEEKLY;COUNT=2;BYDAY=MO,WE", ["2025-03-03T10:00:00Z", "2025-03-05T10:00:00Z"]),
            ("RRULE:FREQ=DAILY;COUNT=2;;JUNK;X-VENDOR=1", ["2025-03-03T10:00:00Z", "2025-03-04T10:00:00Z"]),
        ])
    func junkInRRule(rule: String, expected: [String]) async throws {
        let event = "BEGIN:VEVENT\nUID:r\nSUMMARY:Standup\nDTSTART:20250303T100000Z\n\(rule)\nEND:VEVENT\n"
        let found = try await Self.occurrences(file: CalendarTest.calendar(event))
        #expect(found.map(\.start) == expected)
    }

    @Test("an RRULE part that changes the dates' meaning (RSCALE) still rejects the rule")
    func rscaleStillRejected() async throws {
        let event = "BEGIN:VEVENT\nUID:r\nSUMMARY:Lunar\nDTSTART:20250303T100000Z\nRRULE:RSCALE=CHINESE;FREQ=DAILY;COUNT=3\nEND:VEVENT\n"
        let found = try await Self.occurrences(file: CalendarTest.calendar(event))
        #expect(found.map(\.start) == ["2025-03-03T10:00:00Z"])
    }

    @Test("a DATE-TIME marked VALUE=DATE is read as the DATE-TIME (festival feeds)")
    func dateTimeMarkedAsDate() async throws {
        let body = """
            BEGIN:VEVENT
            UID:f1
            SUMMARY:Doors open
            DTSTART;VALUE=DATE:20250304T120000Z
            DTEND;VALUE=DATE:20250304T130000Z
            END:VEVENT
            BEGIN:VEVENT
            UID:f2
            SUMMARY:Daily set
            DTSTART;TZID=Europe/Berlin;VALUE=DATE:20250305T100000
            DURATION:PT1H
            RRULE:FREQ=DAILY;COUNT=3
            EXDATE;TZID=Europe/Berlin;VALUE=DATE:20250306T100000
            END:VEVENT
            BEGIN:VEVENT
            UID:f3
            SUMMARY:Holiday
            DTSTART;VALUE=DATE:20250310
            END:VEVENT

            """
        let found = try await Self.occurrences(file: CalendarTest.calendar(body))
        // On main every one of the first two was skipped ("DTSTART has a bad date").
        #expect(found.map(\.start) == ["2025-03-04T12:00:00Z", "2025-03-05T09:00:00Z", "2025-03-07T09:00:00Z", "2025-03-10"])
        #expect(found.map(\.end) == ["2025-03-04T13:00:00Z", "2025-03-05T10:00:00Z", "2025-03-07T10:00:00Z", "2025-03-11"])
    }

    @Test(
        "an indented first line, or indented lines at the start, do not drop every event",
        arguments: [
            "                  BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:x\n",
            "  BEGIN:VCALENDAR\n  VERSION:2.0\n  PRODID:x\n",
            "\n\t BEGIN:VCALENDAR\nVERSION:2.0\n",
        ])
    func indentedFirstLine(head: String) async throws {
        let text = head + "BEGIN:VEVENT\nUID:i\nSUMMARY:Service\nDTSTART:20250309T100000Z\nDURATION:PT1H\nEND:VEVENT\nEND:VCALENDAR\n"
        let found = try await Self.occurrences(file: text)
        #expect(found.map(\.start) == ["2025-03-09T10:00:00Z"])
    }

    @Test("problems read through are reported once, with the line")
    func recoveriesAreReported() async throws {
        let text = """
              BEGIN:VCALENDAR
            VERSION:2.0
            BEGIN:VEVENT
            UID:a
            SUMMARY:A
            DTSTART;VALUE=DATE:20250304T120000Z
            RRULE:FREQ=DAILY;COUNT=2;JUNK
            END:VEVENT
            END:VCALENDAR

            """
        let folder = try CalendarTest.folder(["bad.ics": text])
        let harness = try CalendarTest.provider(calendars: folder.path)
        let form = try await harness.call("collect/start", ["sessionId": "s"])
        let help = try #require(form["fields"]?.arrayValue?.first?["help"]?.stringValue)
        #expect(help.contains("bad.ics:1: the line starts with spaces or tabs"), "\(help)")
        #expect(help.contains("bad.ics:6: a DATE-TIME value is marked VALUE=DATE"), "\(help)")
        #expect(help.contains("bad.ics:7: RRULE has parts that are not NAME=value"), "\(help)")
        #expect(try await CalendarTest.options(harness).count == 2)
    }
}
