import ContextProviderKit
import ProviderSupport
import Synchronization

/// The Calendar provider: upcoming events from iCalendar (RFC 5545) files.
///
/// Settings (see `manifests/calendar.yaml` and `docs/providers/calendar.md`): `calendars` (a
/// folder of `.ics` files or one file), `moreCalendars` (more paths, `:`-separated),
/// `windowDays`, `timeZone` (display zone, default the system's), `now` (RFC 3339, for tests),
/// and a CalDAV account: `caldavURL`, `caldavUser`, `caldavRefreshSeconds`, and the
/// `caldavPassword` secret, which the host keeps and injects into its brokered fetches (the
/// provider never reads it).
///
/// Items have type `event`; their content carries the seed's calendar fields (`identifier`,
/// `title`, `location`, `notes`, `startDate`, `endDate`, `isAllDay`, `formattedDateRange`) plus
/// the calendar, organizer, attendees, recurrence in words, and the occurrence as a `VEVENT`.
public struct CalendarProvider: ContextProvider {
    public static let metadata = ProviderMetadata(
        id: "com.contexthost.calendar", title: "Calendar", version: "1.0.0", iconName: "calendar")

    /// The most options one query answers.
    static let maximumResults = 500
    /// Options offered on the start form before the user types.
    static let startOptions = 50

    let context: ProviderContext
    let store: CalendarStore
    let windowDays: Int
    let fixedNow: Int?
    let timeZoneName: String?
    let zone: ZoneHolder
    let sourceDescription: String

    public init(context: ProviderContext) throws {
        try self.init(context: context, transport: HostFetchTransport(context: context))
    }

    /// A provider whose CalDAV requests go through `transport` (the library passes the host's
    /// fetch; the library tests pass their own, with the password added by `BasicAuthTransport`).
    init(context: ProviderContext, transport: any CalDAVTransport) throws {
        self.context = context
        let settings = context.settings
        var sources: [String] = []
        if let path = settings.path("calendars"), !path.isEmpty { sources.append(path) }
        if let more = settings.string("moreCalendars") {
            for part in more.split(separator: ":") where !part.isEmpty {
                sources.append(ProviderSettings.expandTilde(String(part)))
            }
        }
        let days = settings.int("windowDays") ?? 30
        guard (1...3660).contains(days) else {
            throw ProviderError("windowDays is \(days); it must be from 1 to 3660", hint: "set windowDays to e.g. 30")
        }
        windowDays = days
        let remote = try Self.account(context: context, transport: transport, windowDays: days)
        var description = sources.isEmpty ? "(no calendars setting)" : sources.joined(separator: ", ")
        if let remote { description += " and the CalDAV account \(remote.user)@\(remote.url.string)" }
        sourceDescription = description
        store = CalendarStore(sources: sources, remote: remote)
        if let now = settings.string("now"), !now.isEmpty {
            guard let parsed = Civil.parseRFC3339(now) else {
                throw ProviderError(
                    "now \"\(now)\" is not an RFC 3339 date-time",
                    hint: "write it like 2025-03-10T09:00:00Z, or leave it empty to use the clock (it is meant for tests)")
            }
            fixedNow = parsed
        } else {
            fixedNow = nil
        }
        if let name = settings.string("timeZone"), !name.isEmpty {
            // Checked cheaply here (a stat); read on first use.
            let known =
                name == "UTC" || ZoneResolver.windowsNames[name] != nil
                || ZoneInfo.path(of: name) != nil
            guard known else {
                throw ProviderError(
                    "unknown time zone \"\(name)\" in the timeZone setting",
                    hint: "use an IANA name from \(TZif.zoneinfo) such as Europe/Berlin, or leave it empty for the system zone")
            }
            timeZoneName = name
        } else {
            timeZoneName = nil
        }
        zone = ZoneHolder(name: timeZoneName)
    }

    /// The CalDAV account of the settings (`caldavURL` empty: none).
    static func account(context: ProviderContext, transport: any CalDAVTransport, windowDays: Int) throws -> CalDAVAccount? {
        let settings = context.settings
        guard let text = settings.string("caldavURL").map({ String($0.trimmingSpaces) }), !text.isEmpty else { return nil }
        guard let url = DAVURL(text) else {
            throw ProviderError(
                "caldavURL \"\(text.prefix(100))\" is not an http(s) address",
                hint: "write the server's address, e.g. https://caldav.fastmail.com/ or https://cloud.example.org/remote.php/dav/ (no user name or password in it: use caldavUser, and context-host secrets set com.contexthost.calendar caldavPassword)")
        }
        let refresh = settings.int("caldavRefreshSeconds") ?? 300
        guard (0...86_400).contains(refresh) else {
            throw ProviderError(
                "caldavRefreshSeconds is \(refresh); it must be from 0 to 86400", hint: "set caldavRefreshSeconds to e.g. 300")
        }
        let user = settings.string("caldavUser") ?? ""
        if context.dataDirectory == nil {
            Log.warning("the host gave no data folder: the CalDAV calendars are kept in memory only (no offline copy)")
        }
        return CalDAVAccount(
            url: url, user: user, transport: transport, folder: context.dataDirectory, refreshSeconds: refresh,
            windowDays: windowDays)
    }

    // MARK: Time

    var now: Int {
        fixedNow ?? ItemIdentity.nowSecondsSince1970()
    }

    var formatter: EventFormatter { EventFormatter(locale: context.locale, zone: zone.rules, now: now) }

    /// The upcoming occurrences: overlapping `[now, now + windowDays)`.
    func upcoming() async -> (CalendarStore.Snapshot, [Occurrence]) {
        if let remote = store.remote { await remote.refreshIfDue(now: now) }
        let snapshot = store.snapshot()
        // With the real clock the window moves by whole minutes, so repeated queries (one per
        // keystroke) reuse the cached expansion.
        let start = fixedNow ?? Civil.floorDiv(now, 60) * 60
        return (snapshot, store.occurrences(in: snapshot, from: start, to: start + windowDays * 86_400, zone: zone.rules))
    }

    // MARK: Availability

    public func availability() async throws -> Availability {
        let paths = store.calendarPaths()
        guard !paths.isEmpty || store.remote != nil else {
            return .unavailable(
                "No calendar file found in \(sourceDescription): put .ics files there or set the calendars setting to a folder or .ics file")
        }
        return .available
    }

    // MARK: Collector

    static let stepId = "event"

    public func startCollection(sessionId: String) async throws -> ContextForm {
        let (snapshot, occurrences) = await upcoming()
        let remoteStatus = store.remote?.status
        guard !snapshot.files.isEmpty else {
            if let error = remoteStatus?.error { throw ProviderError(error.message, hint: error.hint) }
            throw ProviderError(
                "No calendar file found in \(sourceDescription)",
                hint: "put .ics files there or set the calendars setting")
        }
        let formatter = formatter
        let options = occurrences.prefix(Self.startOptions).map { option(for: $0, in: snapshot, formatter) }
        var help = "Upcoming events in the next \(windowDays) days from \(snapshot.files.count) \(snapshot.files.count == 1 ? "calendar" : "calendars"); type to search titles, places and notes."
        if !snapshot.diagnostics.isEmpty {
            let shown = snapshot.diagnostics.prefix(10).map(\.description).joined(separator: "; ")
            let more = snapshot.diagnostics.count > 10 ? " (and \(snapshot.diagnostics.count - 10) more)" : ""
            help += " Skipped malformed calendar data: \(shown)\(more)."
        }
        if let remoteStatus, let error = remoteStatus.error {
            if let syncedAt = remoteStatus.syncedAt {
                help += " Offline: the CalDAV calendars are the copy from \(Self.age(now - syncedAt)) ago. \(error.message); \(error.hint)."
            } else {
                help += " \(error.message); \(error.hint)."
            }
        }
        let list = options.prefix(10).map { "\($0.label) (\($0.detail ?? ""))" }.joined(separator: "; ")
        return ContextForm(
            stepId: Self.stepId, title: "Attach an Event", submitLabel: "Attach",
            fields: [
                .choice(
                    id: "event", label: "Event", required: true, options: options,
                    search: ChoiceSearch(minQueryLength: 1), placeholder: "Search upcoming events", help: help)
            ],
            fallbackText: options.isEmpty
                ? "No upcoming events in the next \(windowDays) days."
                : "Choose an upcoming event: \(list)")
    }

    public func query(_ query: String, fieldId: String, stepId: String, sessionId: String, values: FormValues)
        async throws -> [FormOption]
    {
        guard fieldId == "event" else { return [] }
        let (snapshot, occurrences) = await upcoming()
        let words = query.lowercased().split(whereSeparator: \.isWhitespace).map { Array($0.utf8) }
        let index = words.isEmpty ? [] : store.searchIndex(snapshot)
        let formatter = formatter
        var options: [FormOption] = []
        for occurrence in occurrences {
            if !words.isEmpty {
                let haystack = index[occurrence.event]
                guard words.allSatisfy({ CalendarStore.contains(haystack, $0) }) else { continue }
            }
            options.append(option(for: occurrence, in: snapshot, formatter))
            if options.count >= Self.maximumResults { break }
        }
        return options
    }

    /// `<calendar index>|<UID>|<original start (UTC seconds) or empty>`.
    static func key(_ occurrence: Occurrence, _ event: CalendarEvent) -> String {
        let recurrence = occurrence.recurrenceID.map { String($0.utc(.utc)) } ?? ""
        return "\(event.calendarIndex)|\(recurrence)|\(event.uid)"
    }

    /// An option grouped by day: the detail starts with the day, then the time and calendar.
    func option(for occurrence: Occurrence, in snapshot: CalendarStore.Snapshot, _ formatter: EventFormatter)
        -> FormOption
    {
        let range = formatter.range(
            start: ItemTime(occurrence.start), end: ItemTime(occurrence.end), allDay: occurrence.start.isDate)
        let calendar = snapshot.events[occurrence.event].calendarIndex
        return FormOption(
            value: Self.key(occurrence, snapshot.events[occurrence.event]), label: snapshot.events[occurrence.event].summary,
            detail: "\(range) · \(snapshot.files[calendar].name)")
    }

    public func submit(stepId: String, values: FormValues, sessionId: String) async throws -> SubmitOutcome {
        guard stepId == Self.stepId else {
            throw ProviderError.invalidParams("params.stepId: unknown step \"\(stepId)\"; expected event")
        }
        let key = values.string("event") ?? ""
        let (snapshot, occurrences) = await upcoming()
        for occurrence in occurrences where Self.key(occurrence, snapshot.events[occurrence.event]) == key {
            return .item(item(for: occurrence, in: snapshot))
        }
        return .invalid(
            fieldErrors: ["event": "That event is not among the upcoming events any more; search again and pick one from the list."])
    }

    public func makeContext() async throws -> ContextItem? {
        let (snapshot, occurrences) = await upcoming()
        let start = now
        guard let next = occurrences.first(where: { $0.startUTC >= start }) else { return nil }
        return item(for: next, in: snapshot)
    }

    // MARK: Items

    func item(for occurrence: Occurrence, in snapshot: CalendarStore.Snapshot) -> ContextItem {
        let event = snapshot.events[occurrence.event]
        let allDay = occurrence.start.isDate
        let formatter = formatter
        var content: JSONObject = [
            "identifier": .string(event.uid),
            "title": .string(event.summary),
            "location": event.location.map(JSONValue.string) ?? .null,
            "notes": event.description.map(JSONValue.string) ?? .null,
            "startDate": .string(occurrence.start.isoString),
            "endDate": .string(occurrence.end.isoString),
            "isAllDay": .bool(allDay),
            "formattedDateRange": .string(
                formatter.range(start: ItemTime(occurrence.start), end: ItemTime(occurrence.end), allDay: allDay)),
            "calendar": .string(snapshot.calendarNames[event.calendarIndex]),
        ]
        if case .zoned(let tzid) = occurrence.start.kind { content["timeZone"] = .string(tzid) }
        if let recurrenceID = occurrence.recurrenceID { content["recurrenceId"] = .string(recurrenceID.isoString) }
        if let organizer = event.organizer { content["organizer"] = organizer.json }
        if !event.attendees.isEmpty { content["attendees"] = .array(event.attendees.map(\.json)) }
        if let rule = event.rule {
            let untilText = rule.until.map { EventFormatter(locale: "en", zone: zone.rules, now: now).full(ItemTime($0)) }
            content["recurrence"] = .string(RecurrenceWords.describe(rule, untilText: untilText))
        }
        if let status = event.status { content["status"] = .string(status) }
        if let url = event.url { content["url"] = .string(url) }
        if snapshot.files[event.calendarIndex].path.hasPrefix("caldav:"), let remote = store.remote {
            let status = remote.status
            content["source"] = "caldav"
            if let syncedAt = status.syncedAt { content["syncedAt"] = .string(Civil.isoDateTime(syncedAt) + "Z") }
            if status.error != nil { content["offline"] = true }
        }
        content["ics"] = .string(Self.vevent(event, occurrence))
        return context.makeItem(type: "event", displayName: event.summary, content: .object(content))
    }

    /// The occurrence as one `VEVENT` (CRLF lines, folded at 75 octets): the source properties
    /// with the occurrence's own DTSTART/DTEND (zoned times written in UTC, so the text stands
    /// alone) and its RECURRENCE-ID.
    static func vevent(_ event: CalendarEvent, _ occurrence: Occurrence) -> String {
        func utcIfZoned(_ time: EventTime) -> EventTime {
            if case .zoned = time.kind, time.zone != nil { return EventTime(kind: .utc, local: time.utc(.utc)) }
            return time
        }
        let skipped: Set<ICSName> = [.begin, .end, .dtstart, .dtend, .duration, .rrule, .rdate, .exdate, .recurrenceID, .exrule]
        var text = "BEGIN:VEVENT\r\n"
        let source = event.source
        for property in event.properties where !skipped.contains(property.name) {
            // Parameters exactly as written (their quoting already valid).
            var line = source.name(property)
            if !property.parametersRange.isEmpty { line += ";" + source.rawParameters(property) }
            line += ":\(source.value(property))"
            text += ICSText.fold(line)
        }
        text += ICSText.fold(utcIfZoned(occurrence.start).icsProperty("DTSTART"))
        text += ICSText.fold(utcIfZoned(occurrence.end).icsProperty("DTEND"))
        if let recurrenceID = occurrence.recurrenceID {
            text += ICSText.fold(utcIfZoned(recurrenceID).icsProperty("RECURRENCE-ID"))
        }
        text += "END:VEVENT\r\n"
        return text
    }

    // MARK: Views

    public func preview(_ item: ContextItem) async throws -> ContextChip {
        let event = try EventContent(item)
        var range = formatter.range(start: event.start, end: event.end, allDay: event.isAllDay)
        var tone = Tone.neutral
        if event.offline, let syncedAt = event.syncedAt {
            // Read from the cache while the server could not be reached: say how old it is.
            range += " · offline copy, \(Self.age(now - syncedAt)) old"
            tone = .warning
        }
        return ContextChip(
            icon: Self.metadata.iconName, title: event.title, subtitle: range, tone: tone,
            accessibilityLabel: "Event: \(event.title), \(range)", fallbackText: "\(event.title) (\(range))")
    }

    /// `45 s`, `12 min`, `3 h`, `2 days`.
    static func age(_ seconds: Int) -> String {
        let seconds = max(seconds, 0)
        if seconds < 60 { return "\(seconds) s" }
        if seconds < 3600 { return "\(seconds / 60) min" }
        if seconds < 2 * 86_400 { return "\(seconds / 3600) h" }
        return "\(seconds / 86_400) days"
    }

    public func detail(_ item: ContextItem) async throws -> ContextDetail {
        let event = try EventContent(item)
        let formatter = formatter
        var facts: [Fact] = []
        if event.isAllDay {
            let lastDay: Int
            if case .date(let start) = event.start, case .date(let end) = event.end {
                lastDay = max(start, end - 1)
            } else {
                lastDay = 0
            }
            facts.append(Fact(label: "Starts", value: formatter.full(event.start) + " (all day)"))
            facts.append(Fact(label: "Ends", value: formatter.full(.date(lastDay)) + " (all day)"))
        } else {
            facts.append(Fact(label: "Starts", value: formatter.full(event.start)))
            facts.append(Fact(label: "Ends", value: formatter.full(event.end)))
            if case .floating = event.start {
                facts.append(Fact(label: "Time zone", value: "floating (local time wherever you are)"))
            } else {
                facts.append(Fact(label: "Time zone", value: zone.rules.name + (event.timeZone.map { " (event: \($0))" } ?? "")))
            }
        }
        if let location = event.location { facts.append(Fact(label: "Location", value: location)) }
        if let calendar = event.calendar { facts.append(Fact(label: "Calendar", value: calendar)) }
        if let organizer = event.organizer { facts.append(Fact(label: "Organizer", value: organizer)) }
        if let recurrence = event.recurrence { facts.append(Fact(label: "Repeats", value: recurrence)) }
        if let status = event.status { facts.append(Fact(label: "Status", value: status.lowercased())) }
        var blocks: [DetailBlock] = [.text(event.title, style: .heading), .facts(facts)]
        if !event.attendees.isEmpty { blocks.append(.list(event.attendees)) }
        if let notes = event.notes { blocks.append(.text(notes, style: .body)) }
        if let url = event.url, url.hasPrefix("http") { blocks.append(.link(url: url, title: "Event page")) }
        return ContextDetail(title: event.title, blocks: blocks)
    }

    public func describe(_ item: ContextItem) async throws -> String {
        let event = try EventContent(item)
        let range = formatter.range(start: event.start, end: event.end, allDay: event.isAllDay)
        return "Event \u{201C}\(event.title)\u{201D}, \(range)" + (event.location.map { ", at \($0)" } ?? "")
    }

    public func encode(_ item: ContextItem, representation: String?) async throws -> EncodedItem {
        let event = try EventContent(item)
        let metadata = ["title": event.title, "startDate": event.startText]
        switch representation ?? "json" {
        case "json":
            let reader = try JSONObjectReader(item.content, path: "params.item.content")
            var seed = JSONObject()
            for key in ["identifier", "title", "location", "notes", "startDate", "endDate", "isAllDay", "formattedDateRange"] {
                seed[key] = reader.object[key] ?? .null
            }
            return .json(.object(seed), metadata: metadata)
        case "text", "ics":
            guard let vevent = event.ics else {
                throw ProviderError.invalidParams("params.item.content.ics: missing; the item has no VEVENT text")
            }
            let calendar = "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//ContextHost//Calendar Provider 1.0//EN\r\n"
                + vevent + "END:VCALENDAR\r\n"
            return .text(calendar, contentType: "text/calendar; charset=utf-8", metadata: metadata)
        default:
            throw ProviderError.unknownRepresentation(representation ?? "", allowed: ["json", "text", "ics"])
        }
    }
}

/// The display time zone, read on first use.
final class ZoneHolder: Sendable {
    let name: String?
    private let cached = Mutex<ZoneRules?>(nil)

    init(name: String?) { self.name = name }

    var rules: ZoneRules {
        if let rules = cached.withLock({ $0 }) { return rules }
        let rules = name.flatMap { ZoneResolver.system($0) } ?? TZif.system()
        cached.withLock { $0 = rules }
        return rules
    }
}

extension Attendee {
    var json: JSONValue {
        var object = JSONObject()
        if let name { object["name"] = .string(name) }
        if let email { object["email"] = .string(email) }
        if let status { object["status"] = .string(status) }
        return .object(object)
    }

    init(json: JSONValue) {
        self.init(name: json["name"]?.stringValue, email: json["email"]?.stringValue, status: json["status"]?.stringValue)
    }
}

/// An event item's content, checked.
struct EventContent {
    var title: String
    var start: ItemTime
    var end: ItemTime
    var startText: String
    var isAllDay: Bool
    var location: String?
    var notes: String?
    var calendar: String?
    var timeZone: String?
    var organizer: String?
    var attendees: [String]
    var recurrence: String?
    var status: String?
    var url: String?
    var ics: String?
    /// CalDAV events: when the calendar was last read from the server, and whether the item was
    /// made from the cache while the server could not be reached.
    var syncedAt: Int?
    var offline: Bool

    init(_ item: ContextItem) throws {
        let reader = try JSONObjectReader(item.content, path: "params.item.content")
        title = try reader.string("title")
        startText = try reader.string("startDate")
        let endText = try reader.string("endDate")
        guard let start = ItemTime(startText) else {
            throw ProviderError.invalidParams(
                "params.item.content.startDate: \"\(startText)\" is not a date (2025-03-10) or date-time (2025-03-10T09:00:00Z)")
        }
        guard let end = ItemTime(endText) else {
            throw ProviderError.invalidParams(
                "params.item.content.endDate: \"\(endText)\" is not a date (2025-03-10) or date-time (2025-03-10T09:00:00Z)")
        }
        self.start = start
        self.end = end
        isAllDay = try reader.optionalBool("isAllDay") ?? false
        location = try reader.optionalString("location")
        notes = try reader.optionalString("notes")
        calendar = try reader.optionalString("calendar")
        timeZone = try reader.optionalString("timeZone")
        organizer = item.content["organizer"].map { Attendee(json: $0).display }
        attendees = (item.content["attendees"]?.arrayValue ?? []).map { attendee in
            let person = Attendee(json: attendee)
            return person.display + (person.status.map { " (\($0.lowercased()))" } ?? "")
        }
        recurrence = try reader.optionalString("recurrence")
        status = try reader.optionalString("status")
        url = try reader.optionalString("url")
        ics = try reader.optionalString("ics")
        syncedAt = try reader.optionalString("syncedAt").flatMap(Civil.parseRFC3339)
        offline = try reader.optionalBool("offline") ?? false
    }
}

/// The library's entry point (`context_provider.h`).
@_cdecl("context_provider_entry_v1")
public func contextProviderEntry() -> UnsafeRawPointer {
    ContextProviderExport.entry(for: CalendarProvider.self)
}
