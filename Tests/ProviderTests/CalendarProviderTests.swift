import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// The Calendar provider through its real library: settings, availability, the collector
/// (window, search, day grouping), makeContext, chip, detail and encodings.
@Suite("Calendar provider")
struct CalendarProviderTests {
    @Test("provider/info and availability with the bundled samples")
    func infoAndAvailability() async throws {
        let harness = try CalendarTest.provider()
        let info = try await harness.call("provider/info")
        #expect(info["id"] == "com.contexthost.calendar")
        #expect(info["iconName"] == "calendar")
        let availability = try await harness.call("provider/availability")
        #expect(availability["available"] == true)
    }

    @Test("unavailable, with a reason, when no calendar file is found")
    func unavailableWithoutCalendars() async throws {
        let empty = try TemporaryDirectory()
        for path in [empty.path, empty.path + "/missing.ics", "/nonexistent/calendars"] {
            let harness = try CalendarTest.provider(calendars: path)
            let availability = try await harness.call("provider/availability")
            #expect(availability["available"] == false)
            let reason = try #require(availability["reason"]?.stringValue)
            #expect(reason.contains("No calendar file found in \(path)"))
            #expect(reason.contains(".ics"))
            // The collector says the same instead of showing an empty list.
            await #expect(throws: ProviderHarness.CallError.self) { try await harness.call("collect/start", ["sessionId": "s"]) }
        }
    }

    @Test("several calendars at once, one per file, named by X-WR-CALNAME")
    func severalCalendars() async throws {
        let harness = try CalendarTest.provider(windowDays: 60)
        let options = try await CalendarTest.options(harness)
        let calendars = Set(options.compactMap { $0["detail"]?.stringValue?.components(separatedBy: " · ").last })
        #expect(calendars == ["Work (Google)", "Personal (iCloud)", "Team (Outlook)", "Family (Fastmail)"])
        // moreCalendars adds files from elsewhere.
        let extra = try CalendarTest.folder([
            "club.ics": CalendarTest.calendar(
                "BEGIN:VEVENT\nUID:club-1\nDTSTART:20250302T180000Z\nDURATION:PT2H\nSUMMARY:Chess club\nEND:VEVENT\n")
        ])
        let both = try CalendarTest.provider(
            calendars: CalendarTest.samples + "/google-work.ics", extra: ["moreCalendars": .string(extra.path)])
        let labels = try await CalendarTest.options(both).compactMap { $0["label"]?.stringValue }
        #expect(labels.contains("Chess club"))
        #expect(labels.contains("Team standup"))
    }

    @Test("the collector: a search-backed choice of upcoming events, grouped by day, in order")
    func collectorForm() async throws {
        let harness = try CalendarTest.provider(now: "2025-03-03T00:00:00Z", windowDays: 7)
        let form = try await harness.call("collect/start", ["sessionId": "s"])
        #expect(form["stepId"] == "event")
        let field = try #require(form["fields"]?.arrayValue?.first)
        #expect(field["id"] == "event")
        #expect(field["kind"] == "choice")
        #expect(field["required"] == true)
        #expect(field["search"]?["minQueryLength"] == 1)
        #expect(field["help"]?.stringValue?.contains("next 7 days from 4 calendars") == true)
        let options = field["options"]?.arrayValue ?? []
        #expect(!options.isEmpty)
        // First the Monday events, each option's detail starting with its day.
        #expect(options.first?["label"] == "Morning run" || options.first?["label"] == "Video call with Grandma"
            || options.first?["label"] == "Team standup" || options.first?["label"] == "Pay bills")
        let details = options.compactMap { $0["detail"]?.stringValue }
        let days = details.map { $0.components(separatedBy: ",").prefix(2).joined(separator: ",") }
        let order = ["Mon, Mar 3", "Tue, Mar 4", "Wed, Mar 5", "Thu, Mar 6", "Fri, Mar 7", "Sat, Mar 8", "Sun, Mar 9"]
        let indices = days.map { day in order.firstIndex { day.hasPrefix($0) } ?? -1 }
        #expect(!indices.contains(-1), "\(days)")
        #expect(indices == indices.sorted(), "options are grouped by day in order")
        #expect(form["fallbackText"]?.stringValue?.hasPrefix("Choose an upcoming event: ") == true)
    }

    @Test("the window: windowDays and the injectable now decide what is upcoming")
    func window() async throws {
        let oneDay = try CalendarTest.provider(now: "2025-03-24T00:00:00Z", windowDays: 1)
        let labels = try await CalendarTest.options(oneDay).compactMap { $0["label"]?.stringValue }
        #expect(labels.contains("Team offsite"))  // all-day, 24–26 March
        #expect(labels.contains("Team standup"))  // Monday 24 March
        #expect(!labels.contains("Roadmap review"))  // 1 April
        // An event in progress at "now" is still upcoming (it has not ended).
        let midOffsite = try CalendarTest.provider(now: "2025-03-25T12:00:00Z", windowDays: 1)
        #expect(try await CalendarTest.options(midOffsite, "offsite").count == 1)
        // Bad windowDays is refused when the provider opens.
        #expect(throws: (any Error).self) { try CalendarTest.provider(windowDays: 0) }
    }

    @Test("collect/query searches titles, places, notes and calendar names; every word must match")
    func search() async throws {
        let harness = try CalendarTest.provider(windowDays: 60)
        let standups = try await CalendarTest.options(harness, "STANDUP")
        #expect(!standups.isEmpty)
        #expect(standups.allSatisfy { ($0["label"]?.stringValue ?? "").contains("standup") })
        let potsdam = try await CalendarTest.options(harness, "potsdam").compactMap { $0["label"]?.stringValue }
        #expect(Set(potsdam) == ["Team offsite", "Team standup (moved)"])
        let notes = try await CalendarTest.options(harness, "XKCD42").compactMap { $0["label"]?.stringValue }
        #expect(notes == ["Trip to Lisbon ✈️"])
        let teamOffsite = try await CalendarTest.options(harness, "team offsite").compactMap { $0["label"]?.stringValue }
        #expect(Set(teamOffsite) == ["Team offsite", "Team standup (moved)"])  // the moved standup is at the offsite
        #expect(try await CalendarTest.options(harness, "no such thing anywhere").isEmpty)
        let other = try await harness.call(
            "collect/query", ["sessionId": "s", "stepId": "event", "fieldId": "other", "query": "x"])
        #expect(other["options"]?.arrayValue?.isEmpty == true)
    }

    @Test("collect/submit turns the chosen occurrence into an item; a stale choice is invalid")
    func submit() async throws {
        let harness = try CalendarTest.provider()
        let item = try await CalendarTest.item(harness, titled: "Team offsite")
        #expect(item["type"] == "event")
        #expect(item["providerId"] == "com.contexthost.calendar")
        #expect(item["displayName"] == "Team offsite")
        let content = try #require(item["content"])
        #expect(content["identifier"] == "offsite-2025@google.com")
        #expect(content["startDate"] == "2025-03-24")
        #expect(content["endDate"] == "2025-03-27")
        #expect(content["isAllDay"] == true)
        #expect(content["location"] == "Hotel am Luisenplatz, Potsdam")
        #expect(content["formattedDateRange"] == "Mar 24 – 26")
        #expect(content["calendar"] == "Work (Google)")
        let stale = try await harness.call(
            "collect/submit", ["sessionId": "s", "stepId": "event", "values": ["event": "0||gone@example.com"]])
        #expect(stale["outcome"] == "invalid")
        #expect(stale["fieldErrors"]?["event"]?.stringValue?.contains("search again") == true)
        let missing = try await harness.call("collect/submit", ["sessionId": "s", "stepId": "event", "values": [:]])
        #expect(missing["outcome"] == "invalid")
    }

    @Test("provider/makeContext gives the next upcoming event")
    func makeContext() async throws {
        let harness = try CalendarTest.provider(now: "2025-03-24T07:00:00Z", windowDays: 2)
        let result = try await harness.call("provider/makeContext")
        // 24 March 08:30 UTC standup is the first event starting after 07:00 (the all-day offsite
        // started at midnight).
        #expect(result["item"]?["displayName"] == "Team standup")
        #expect(result["item"]?["content"]?["startDate"] == "2025-03-24T08:30:00Z")
        let nothing = try CalendarTest.provider(calendars: CalendarTest.samples + "/outlook-team.ics", now: "2030-01-01T00:00:00Z", windowDays: 1)
        #expect(try await nothing.call("provider/makeContext")["item"] == .null)
    }

    @Test("the chip: title and a compact range in the client's locale and the display time zone")
    func chipLocalesAndZones() async throws {
        let utc = try CalendarTest.provider()
        let standup = try await CalendarTest.item(utc, titled: "Team standup")
        let english = try await utc.call("item/preview", ["item": standup])
        #expect(english["title"] == "Team standup")
        #expect(english["subtitle"] == "Mon, Mar 3, 8:30 – 8:45 AM")
        #expect(english["icon"] == "calendar")
        #expect(english["fallbackText"] == "Team standup (Mon, Mar 3, 8:30 – 8:45 AM)")

        let berlin = try CalendarTest.provider(timeZone: "Europe/Berlin")
        #expect(try await berlin.call("item/preview", ["item": standup])["subtitle"] == "Mon, Mar 3, 9:30 – 9:45 AM")
        let german = try CalendarTest.provider(timeZone: "Europe/Berlin", locale: "de-DE")
        #expect(try await german.call("item/preview", ["item": standup])["subtitle"] == "Mo., 3. März, 09:30–09:45")
        let iso = try CalendarTest.provider(timeZone: "America/New_York", locale: "fr-FR")
        #expect(try await iso.call("item/preview", ["item": standup])["subtitle"] == "2025-03-03 03:30–03:45")

        // All-day, multi-day; across months; another year.
        let offsite = try await CalendarTest.item(utc, titled: "Team offsite")
        #expect(try await german.call("item/preview", ["item": offsite])["subtitle"] == "24.–26. März")
        #expect(try await iso.call("item/preview", ["item": offsite])["subtitle"] == "2025-03-24 – 2025-03-26")
        let trip = try await CalendarTest.item(try CalendarTest.provider(windowDays: 60), titled: "Lisbon")
        #expect(try await utc.call("item/preview", ["item": trip])["subtitle"] == "Apr 14 – 21")
        let later = try CalendarTest.provider(now: "2024-12-30T00:00:00Z")
        #expect(try await later.call("item/preview", ["item": trip])["subtitle"] == "Apr 14, 2025 – Apr 21, 2025")
        // A timed event spanning days.
        let swim = try await CalendarTest.item(utc, titled: "Swim meet")
        #expect(try await utc.call("item/preview", ["item": swim])["subtitle"] == "Thu, Mar 20, 7:00 AM – Sat, Mar 22, 3:30 PM")
        // A morning-to-afternoon event shows both halves of the day.
        let launch = try await CalendarTest.item(try CalendarTest.provider(windowDays: 60), titled: "Q2 launch")
        #expect(try await berlin.call("item/preview", ["item": launch])["subtitle"] == "Thu, Apr 10, 5:00 – 6:30 PM")
        let newYork = try CalendarTest.provider(timeZone: "America/New_York")
        #expect(try await newYork.call("item/preview", ["item": launch])["subtitle"] == "Thu, Apr 10, 11:00 AM – 12:30 PM")
    }

    @Test("the detail: title, start and end, location, organizer, attendees, notes, recurrence in words")
    func detail() async throws {
        let harness = try CalendarTest.provider(timeZone: "Europe/Berlin")
        let item = try await CalendarTest.item(harness, titled: "Team standup")
        let detail = try await harness.call("item/detail", ["item": item])
        #expect(detail["title"] == "Team standup")
        let blocks = detail["blocks"]?.arrayValue ?? []
        let facts = Dictionary(
            uniqueKeysWithValues: (blocks.first { $0["type"] == "facts" }?["facts"]?.arrayValue ?? []).compactMap { fact in
                fact["label"]?.stringValue.map { ($0, fact["value"]?.stringValue ?? "") }
            })
        #expect(facts["Starts"] == "Mon, Mar 3, 2025, 9:30 AM")
        #expect(facts["Ends"] == "Mon, Mar 3, 2025, 9:45 AM")
        #expect(facts["Time zone"] == "Europe/Berlin (event: Europe/Berlin)")
        #expect(facts["Location"] == "Room 4.12 (Spree), Alexanderplatz 1, Berlin")
        #expect(facts["Organizer"] == "Lena Fischer <lena.fischer@example.com>")
        #expect(facts["Repeats"] == "Every week on Monday, Wednesday and Friday")
        #expect(facts["Calendar"] == "Work (Google)")
        #expect(facts["Status"] == "confirmed")
        let attendees = blocks.first { $0["type"] == "list" }?["items"]?.arrayValue ?? []
        #expect(attendees == [
            "Lena Fischer <lena.fischer@example.com> (accepted)", "Müller, Jonas <jonas.mueller@example.com> (needs-action)",
        ])
        let notes = blocks.compactMap { $0["type"] == "text" ? $0["text"]?.stringValue : nil }
        #expect(notes.contains(
            "Daily-ish standup. Agenda:\n1) yesterday, today\n2) blockers; nothing else.\n\nJoin with Google Meet: https://meet.google.com/abc-defg-hij"))
        #expect(detail["fallbackText"]?.stringValue?.contains("Team standup") == true)

        let describe = try await harness.call("item/describe", ["item": item])
        #expect(describe["text"] == "Event \u{201C}Team standup\u{201D}, Mon, Mar 3, 9:30 – 9:45 AM, at Room 4.12 (Spree), Alexanderplatz 1, Berlin")

        // All-day detail, and a link block for URL.
        let offsite = try await harness.call("item/detail", ["item": try await CalendarTest.item(harness, titled: "Team offsite")])
        let offsiteFacts = offsite["blocks"]?.arrayValue?.first { $0["type"] == "facts" }?["facts"]?.arrayValue ?? []
        #expect(offsiteFacts.first?["value"] == "Mon, Mar 24, 2025 (all day)")
        #expect(offsiteFacts.dropFirst().first?["value"] == "Wed, Mar 26, 2025 (all day)")
        let concert = try await harness.call("item/detail", ["item": try await CalendarTest.item(harness, titled: "Symphony")])
        #expect(concert["blocks"]?.arrayValue?.contains { $0["type"] == "link" && $0["url"] == "https://www.sfsymphony.org/" } == true)
    }

    @Test("recurrence in words", arguments: [
        ("FREQ=WEEKLY;INTERVAL=2;COUNT=10;BYDAY=MO,WE", "Every 2 weeks on Monday and Wednesday, 10 times"),
        ("FREQ=DAILY", "Daily"),
        ("FREQ=DAILY;INTERVAL=3;COUNT=1", "Every 3 days, once"),
        ("FREQ=MONTHLY;BYDAY=2TU", "Every month on the 2nd Tuesday"),
        ("FREQ=MONTHLY;BYDAY=-1FR", "Every month on the last Friday"),
        ("FREQ=MONTHLY;BYMONTHDAY=1,15", "Every month on the 1st and 15th days"),
        ("FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", "Every month on Monday, Tuesday, Wednesday, Thursday and Friday (the last of those)"),
        ("FREQ=YEARLY;BYMONTH=5;BYDAY=2SU", "Every year in May on the 2nd Sunday"),
        ("FREQ=WEEKLY;UNTIL=20250331T220000Z", "Weekly, until Mon, Mar 31, 2025, 10:00 PM"),
    ])
    func recurrenceWords(rule: String, words: String) async throws {
        let folder = try CalendarTest.folder([
            "r.ics": CalendarTest.calendar(
                "BEGIN:VEVENT\nUID:r1\nDTSTART:20250303T090000Z\nDURATION:PT1H\nRRULE:\(rule)\nSUMMARY:Rule\nEND:VEVENT\n")
        ])
        let harness = try CalendarTest.provider(calendars: folder.path, windowDays: 400)
        let item = try await CalendarTest.item(harness, titled: "Rule")
        #expect(item["content"]?["recurrence"]?.stringValue == words)
    }

    @Test("encode: the seed's JSON fields, and the VEVENT as text/calendar")
    func encode() async throws {
        let harness = try CalendarTest.provider()
        let item = try await CalendarTest.item(harness, titled: "Team standup")
        let json = try await harness.call("item/encode", ["item": item, "representation": "json"])
        #expect(json["contentType"] == "application/json")
        let bytes = try #require(Data(base64Encoded: json["data"]?.stringValue ?? ""))
        let seed = try JSONValue(parsing: Array(bytes))
        #expect(Set(seed.objectValue?.keys.map { $0 } ?? []) == [
            "identifier", "title", "location", "notes", "startDate", "endDate", "isAllDay", "formattedDateRange",
        ])
        #expect(seed["identifier"] == "7kq2m1c0s9b3v8d5r4t6y1u2i3@google.com")
        #expect(seed["startDate"] == "2025-03-03T08:30:00Z")
        #expect(seed["endDate"] == "2025-03-03T08:45:00Z")
        #expect(seed["isAllDay"] == false)
        #expect(seed["formattedDateRange"] == "Mon, Mar 3, 8:30 – 8:45 AM")
        #expect(json["metadata"]?["title"] == "Team standup")
        let defaultRepresentation = try await harness.call("item/encode", ["item": item])
        #expect(defaultRepresentation["contentType"] == "application/json")

        for representation in ["ics", "text"] {
            let ics = try await harness.call("item/encode", ["item": item, "representation": .string(representation)])
            #expect(ics["contentType"] == "text/calendar; charset=utf-8")
            #expect(ics["representation"] == "text")
            let text = String(decoding: Data(base64Encoded: ics["data"]?.stringValue ?? "") ?? Data(), as: UTF8.self)
            #expect(text.hasPrefix("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:"))
            #expect(text.hasSuffix("END:VEVENT\r\nEND:VCALENDAR\r\n"))
            #expect(text.contains("\r\nUID:7kq2m1c0s9b3v8d5r4t6y1u2i3@google.com\r\n"))
            #expect(text.contains("\r\nDTSTART:20250303T083000Z\r\nDTEND:20250303T084500Z\r\nRECURRENCE-ID:20250303T083000Z\r\n"))
            #expect(text.contains("\r\nSUMMARY:Team standup\r\n"))
            #expect(!text.contains("RRULE"))
            // Folded at 75 octets; unfolded, the source properties come back with their parameters.
            for line in text.components(separatedBy: "\r\n") { #expect(line.utf8.count <= 75, "\(line)") }
            let unfolded = text.replacingOccurrences(of: "\r\n ", with: "")
            #expect(unfolded.contains("\r\nATTENDEE;CUTYPE=INDIVIDUAL;ROLE=REQ-PARTICIPANT;PARTSTAT=NEEDS-ACTION;CN=\"Müller, Jonas\";X-NUM-GUESTS=0:mailto:jonas.mueller@example.com\r\n"))
            #expect(unfolded.contains("DESCRIPTION:Daily-ish standup. Agenda:\\n1) yesterday\\, today\\n2) blockers\\; nothing else.\\n\\nJoin with Google Meet: https://meet.google.com/abc-defg-hij\r\n"))
        }
        // All-day stays a DATE.
        let offsite = try await CalendarTest.item(harness, titled: "Team offsite")
        let encoded = try await harness.call("item/encode", ["item": offsite, "representation": "ics"])
        let text = String(decoding: Data(base64Encoded: encoded["data"]?.stringValue ?? "") ?? Data(), as: UTF8.self)
        #expect(text.contains("DTSTART;VALUE=DATE:20250324\r\nDTEND;VALUE=DATE:20250327\r\n"))

        await #expect(throws: ProviderHarness.CallError.self) {
            try await harness.call("item/encode", ["item": item, "representation": "pdf"])
        }
    }

    @Test("views refuse item content that is not an event, naming the member")
    func badItems() async throws {
        let harness = try CalendarTest.provider()
        let item: JSONValue = [
            "id": "00000000-0000-0000-0000-000000000001", "providerId": "com.contexthost.calendar", "type": "event",
            "displayName": "Bad", "content": ["title": "Bad", "startDate": "tomorrow", "endDate": "2025-03-03"],
        ]
        let error = try await harness.callError("item/preview", ["item": item])
        #expect(error.code == -32602)
        #expect(error.message.contains("startDate"))
        let noTitle: JSONValue = [
            "id": "00000000-0000-0000-0000-000000000002", "providerId": "com.contexthost.calendar", "type": "event",
            "displayName": "Bad", "content": ["startDate": "2025-03-03", "endDate": "2025-03-04"],
        ]
        await #expect(throws: ProviderHarness.CallError.self) { try await harness.call("item/detail", ["item": noTitle]) }
    }

    @Test("unusable settings are refused when the provider opens, with what to fix")
    func badSettings() throws {
        #expect(throws: (any Error).self) { try CalendarTest.provider(timeZone: "Mars/Olympus_Mons") }
        #expect(throws: (any Error).self) { try CalendarTest.provider(timeZone: "../../etc/passwd") }
        #expect(throws: (any Error).self) { try CalendarTest.provider(now: "next Tuesday") }
        #expect(throws: (any Error).self) { try CalendarTest.provider(windowDays: 5000) }
        // The system zone (empty setting) and Windows names are fine.
        _ = try CalendarTest.provider(timeZone: "")
        _ = try CalendarTest.provider(timeZone: "W. Europe Standard Time")
    }

    @Test("a changed calendar file is read again")
    func reload() async throws {
        let folder = try CalendarTest.folder([
            "a.ics": CalendarTest.calendar("BEGIN:VEVENT\nUID:a\nDTSTART:20250302T100000Z\nSUMMARY:First\nEND:VEVENT\n")
        ])
        let harness = try CalendarTest.provider(calendars: folder.path)
        #expect(try await CalendarTest.options(harness).compactMap { $0["label"]?.stringValue } == ["First"])
        try folder.write(
            "a.ics",
            CalendarTest.calendar("BEGIN:VEVENT\nUID:a\nDTSTART:20250302T100000Z\nSUMMARY:Second title\nEND:VEVENT\n"))
        try folder.write(
            "b.ics", CalendarTest.calendar("BEGIN:VEVENT\nUID:b\nDTSTART:20250303T100000Z\nSUMMARY:New file\nEND:VEVENT\n"))
        #expect(try await CalendarTest.options(harness).compactMap { $0["label"]?.stringValue } == ["Second title", "New file"])
    }
}
