/// A DATE or DATE-TIME value as written, with how to place it on the time line.
struct EventTime: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        /// `VALUE=DATE`: a whole day.
        case date
        /// A DATE-TIME without `Z` or `TZID`: the same wall-clock time everywhere.
        case floating
        /// A DATE-TIME ending in `Z`.
        case utc
        /// A DATE-TIME with a `TZID`.
        case zoned(String)
    }

    var kind: Kind
    /// Wall-clock seconds since 1970-01-01 (for `utc`, UTC seconds; for `date`, midnight).
    var local: Int
    /// The zone of a `zoned` value.
    var zone: ZoneRules?

    static func == (a: EventTime, b: EventTime) -> Bool { a.kind == b.kind && a.local == b.local }
    func hash(into hasher: inout Hasher) {
        hasher.combine(kind)
        hasher.combine(local)
    }

    var isDate: Bool { kind == .date }

    /// The UTC instant; floating times and dates are read in `floatingZone`.
    func utc(_ floatingZone: ZoneRules) -> Int {
        switch kind {
        case .utc: local
        case .zoned: (zone ?? floatingZone).utc(fromLocal: local)
        case .date, .floating: floatingZone.utc(fromLocal: local)
        }
    }

    /// The same kind and zone at another wall-clock time.
    func with(local: Int) -> EventTime { EventTime(kind: kind, local: local, zone: zone) }

    /// The value for JSON and comparisons: `2025-03-10` (date), `2025-03-10T09:00:00` (floating),
    /// else the UTC instant `2025-03-10T08:00:00Z`.
    var isoString: String {
        switch kind {
        case .date: Civil.isoDate(days: Civil.split(local).days)
        case .floating: Civil.isoDateTime(local)
        case .zoned where zone == nil: Civil.isoDateTime(local)
        case .utc, .zoned: Civil.isoDateTime(utc(.utc)) + "Z"
        }
    }

    /// The iCalendar property (`DTSTART;TZID=Europe/Berlin:20250310T090000`).
    func icsProperty(_ name: String) -> String {
        switch kind {
        case .date: "\(name);VALUE=DATE:\(Civil.icsDate(days: Civil.split(local).days))"
        case .floating: "\(name):\(Civil.icsDateTime(local))"
        case .utc: "\(name):\(Civil.icsDateTime(local))Z"
        case .zoned(let tzid):
            zone == nil
                ? "\(name):\(Civil.icsDateTime(local))"
                : "\(name);TZID=\(tzid):\(Civil.icsDateTime(local))"
        }
    }
}

/// One person on an event.
struct Attendee: Sendable, Hashable {
    var name: String?
    var email: String?
    var status: String?

    var display: String {
        switch (name, email) {
        case (let name?, let email?): "\(name) <\(email)>"
        case (let name?, nil): name
        case (nil, let email?): email
        default: "unknown"
        }
    }
}

/// A `VEVENT`, read and checked. A class: snapshots and occurrences share events without copying.
final class CalendarEvent: Sendable {
    let uid: String
    let summary: String
    let location: String?
    let description: String?
    let organizer: Attendee?
    let attendees: [Attendee]
    let status: String?
    let url: String?
    let start: EventTime
    /// Wall-clock length (added to each occurrence's wall-clock start, as Python's datetime does).
    let duration: Int
    let rule: RecurrenceRule?
    let exdates: [EventTime]
    let rdates: [EventTime]
    let recurrenceID: EventTime?
    /// The calendar (file) it came from.
    let calendarIndex: Int
    /// Where it starts, for messages.
    let file: String
    let line: Int
    /// The source properties, for `text/calendar` export.
    let properties: [ICSProperty]

    init(
        uid: String, summary: String, location: String?, description: String?, organizer: Attendee?,
        attendees: [Attendee], status: String?, url: String?, start: EventTime, duration: Int, rule: RecurrenceRule?,
        exdates: [EventTime], rdates: [EventTime], recurrenceID: EventTime?, calendarIndex: Int, file: String, line: Int,
        properties: [ICSProperty]
    ) {
        self.uid = uid
        self.summary = summary
        self.location = location
        self.description = description
        self.organizer = organizer
        self.attendees = attendees
        self.status = status
        self.url = url
        self.start = start
        self.duration = duration
        self.rule = rule
        self.exdates = exdates
        self.rdates = rdates
        self.recurrenceID = recurrenceID
        self.calendarIndex = calendarIndex
        self.file = file
        self.line = line
        self.properties = properties
    }
}

/// One occurrence of an event.
struct Occurrence: Sendable {
    var event: Int
    var start: EventTime
    var end: EventTime
    var startUTC: Int
    var endUTC: Int
    /// The original start (RECURRENCE-ID) of a recurring instance.
    var recurrenceID: EventTime?
}

/// Everything read from one calendar file.
struct CalendarFile: Sendable {
    var path: String
    var name: String
    var events: [CalendarEvent]
    var diagnostics: [Diagnostic]
}

/// Turns parsed components into events, resolving time zones.
struct CalendarReader {
    let file: String
    let calendarIndex: Int
    var diagnostics: [Diagnostic] = []
    /// The calendar's own VTIMEZONEs by TZID.
    var zones: [String: ZoneRules] = [:]
    var unknownZones: Set<String> = []
    var resolvedZones: [String: ZoneRules?] = [:]
    /// `X-WR-TIMEZONE` (Google, Apple): the zone of the calendar's floating date-times.
    var calendarZone: (name: String, rules: ZoneRules)?

    init(file: String, calendarIndex: Int) {
        self.file = file
        self.calendarIndex = calendarIndex
    }

    mutating func report(_ line: Int, _ message: String) {
        diagnostics.append(Diagnostic(file: file, line: line, message: message))
    }

    /// Reads a whole file.
    static func read(path: String, calendarIndex: Int) -> CalendarFile {
        let name = FileIO.baseName(path)
        var reader = CalendarReader(file: name, calendarIndex: calendarIndex)
        guard let bytes = FileIO.read(path) else {
            reader.report(0, "cannot be read (check the file's permissions)")
            return CalendarFile(path: path, name: name, events: [], diagnostics: reader.diagnostics)
        }
        var parser = ICSParser(file: name)
        let roots = parser.parse(bytes)
        reader.diagnostics = parser.diagnostics
        var events: [CalendarEvent] = []
        var calendarName: String?
        var sawCalendar = false
        for root in roots {
            guard root.name == "VCALENDAR" else {
                reader.report(root.line, "top-level \(root.name) is not inside a VCALENDAR; skipped")
                continue
            }
            sawCalendar = true
            if calendarName == nil { calendarName = root.property("X-WR-CALNAME")?.text }
            for child in root.children where child.name == "VTIMEZONE" { reader.readTimeZone(child) }
            if let property = root.property("X-WR-TIMEZONE"), !property.value.isEmpty {
                if let rules = ZoneResolver.system(property.value) ?? reader.zones[property.value] {
                    reader.calendarZone = (property.value, rules)
                } else {
                    reader.report(property.line, "unknown time zone X-WR-TIMEZONE:\(property.value); floating times stay floating")
                }
            }
            for child in root.children where child.name == "VEVENT" {
                if let event = reader.readEvent(child) { events.append(event) }
            }
        }
        if !sawCalendar { reader.report(1, "no BEGIN:VCALENDAR found; is this an iCalendar (.ics) file?") }
        var displayName = calendarName ?? name
        if calendarName == nil, displayName.lowercased().hasSuffix(".ics") { displayName.removeLast(4) }
        return CalendarFile(path: path, name: displayName, events: events, diagnostics: reader.diagnostics)
    }

    // MARK: Values

    /// `YYYYMMDD` → day number.
    static func parseDate(_ text: Substring) -> Int? {
        if let result = text.utf8.withContiguousStorageIfAvailable({ parseDate(bytes: $0) }) { return result }
        return Array(text.utf8).withUnsafeBufferPointer { parseDate(bytes: $0) }
    }

    static func parseDate(bytes b: UnsafeBufferPointer<UInt8>) -> Int? {
        guard b.count == 8 else { return nil }
        var digits = 0
        for i in 0..<8 {
            guard b[i] >= 48, b[i] <= 57 else { return nil }
            digits = digits * 10 + Int(b[i] - 48)
        }
        let year = digits / 10_000
        let month = digits / 100 % 100
        let day = digits % 100
        guard (1...12).contains(month), day >= 1, day <= Civil.daysInMonth(year: year, month: month) else { return nil }
        return Civil.days(year: year, month: month, day: day)
    }

    /// `YYYYMMDDTHHMMSS[Z]` → (wall-clock seconds, is UTC).
    static func parseDateTime(_ text: Substring) -> (Int, Bool)? {
        if let result = text.utf8.withContiguousStorageIfAvailable({ parseDateTime(bytes: $0) }) { return result }
        return Array(text.utf8).withUnsafeBufferPointer { parseDateTime(bytes: $0) }
    }

    static func parseDateTime(bytes b: UnsafeBufferPointer<UInt8>) -> (Int, Bool)? {
        guard b.count == 15 || b.count == 16, b[8] == UInt8(ascii: "T"),
            let days = parseDate(bytes: UnsafeBufferPointer(rebasing: b[0..<8]))
        else { return nil }
        let isUTC = b.count == 16
        if isUTC, b[15] != UInt8(ascii: "Z") { return nil }
        for i in 9..<15 where b[i] < 48 || b[i] > 57 { return nil }
        let hour = Int(b[9] - 48) * 10 + Int(b[10] - 48)
        let minute = Int(b[11] - 48) * 10 + Int(b[12] - 48)
        let second = Int(b[13] - 48) * 10 + Int(b[14] - 48)
        guard hour < 24, minute < 60, second <= 60 else { return nil }
        return (days * 86_400 + hour * 3600 + minute * 60 + min(second, 59), isUTC)
    }

    /// A date or date-time value with its TZID.
    mutating func time(_ text: Substring, tzid: String?, forceDate: Bool, line: Int) -> EventTime? {
        if forceDate || text.utf8.count == 8 {
            guard let days = Self.parseDate(text) else { return nil }
            return EventTime(kind: .date, local: days * 86_400)
        }
        guard let (local, isUTC) = Self.parseDateTime(text) else { return nil }
        if isUTC { return EventTime(kind: .utc, local: local) }
        guard let tzid else {
            if let calendarZone { return EventTime(kind: .zoned(calendarZone.name), local: local, zone: calendarZone.rules) }
            return EventTime(kind: .floating, local: local)
        }
        if let zone = resolve(tzid) {
            return EventTime(kind: .zoned(tzid), local: local, zone: zone)
        }
        if !unknownZones.contains(tzid) {
            unknownZones.insert(tzid)
            report(
                line,
                "unknown time zone TZID=\(tzid) (no VTIMEZONE in the file, not an IANA or Windows zone name); its times are read as floating (in the display time zone)"
            )
        }
        return EventTime(kind: .zoned(tzid), local: local, zone: nil)
    }

    /// A TZID's rules, looked up once per file: an IANA name from zoneinfo first (as icalendar
    /// does), then the file's own VTIMEZONE, then Windows and vendor-prefixed names.
    mutating func resolve(_ tzid: String) -> ZoneRules? {
        if let cached = resolvedZones[tzid] { return cached }
        let rules: ZoneRules?
        if let system = SystemZones.shared.rules(tzid) {
            rules = system
        } else if let own = zones[tzid] {
            rules = own
        } else {
            rules = ZoneResolver.system(tzid)
        }
        resolvedZones[tzid] = .some(rules)
        return rules
    }

    /// A property's date or date-time.
    mutating func time(_ property: ICSProperty) -> EventTime? {
        let forceDate = property.parameter("VALUE")?.uppercased() == "DATE"
        guard let value = time(Substring(property.value), tzid: property.parameter("TZID"), forceDate: forceDate, line: property.line)
        else {
            report(property.line, "\(property.name) has a bad date \"\(property.value)\" (expected YYYYMMDD or YYYYMMDDTHHMMSS[Z])")
            return nil
        }
        return value
    }

    /// A list property (EXDATE, RDATE): comma-separated values; PERIOD values keep their start.
    mutating func times(_ property: ICSProperty) -> [EventTime] {
        let forceDate = property.parameter("VALUE")?.uppercased() == "DATE"
        var result: [EventTime] = []
        for item in property.value.split(separator: ",") {
            let start = item.split(separator: "/").first ?? item
            if let value = time(start, tzid: property.parameter("TZID"), forceDate: forceDate, line: property.line) {
                result.append(value)
            } else {
                report(property.line, "\(property.name) has a bad date \"\(item)\"; that value is skipped")
            }
        }
        return result
    }

    /// `DURATION` (RFC 5545 §3.3.6) in seconds; days and weeks count as 86,400 s of wall clock.
    static func parseDuration(_ text: String) -> Int? {
        var b = Array(text.utf8)[...]
        var sign = 1
        if b.first == UInt8(ascii: "-") {
            sign = -1
            b = b.dropFirst()
        } else if b.first == UInt8(ascii: "+") {
            b = b.dropFirst()
        }
        guard b.first == UInt8(ascii: "P") else { return nil }
        b = b.dropFirst()
        var total = 0
        var number: Int?
        var inTime = false
        var any = false
        for c in b {
            switch c {
            case 48...57: number = (number ?? 0) * 10 + Int(c - 48)
            case UInt8(ascii: "T"):
                guard number == nil, !inTime else { return nil }
                inTime = true
            case UInt8(ascii: "W"), UInt8(ascii: "D"), UInt8(ascii: "H"), UInt8(ascii: "M"), UInt8(ascii: "S"):
                guard let value = number else { return nil }
                switch (c, inTime) {
                case (UInt8(ascii: "W"), false): total += value * 7 * 86_400
                case (UInt8(ascii: "D"), false): total += value * 86_400
                case (UInt8(ascii: "H"), true): total += value * 3600
                case (UInt8(ascii: "M"), true): total += value * 60
                case (UInt8(ascii: "S"), true): total += value
                default: return nil
                }
                number = nil
                any = true
            default: return nil
            }
        }
        guard any, number == nil else { return nil }
        return sign * total
    }

    /// A UTC offset `+0100`, `-0530`, `+013000`.
    static func parseOffset(_ text: String) -> Int? {
        let b = Array(text.utf8)
        guard b.count == 5 || b.count == 7, b[0] == 43 || b[0] == 45, b.dropFirst().allSatisfy({ $0 >= 48 && $0 <= 57 })
        else { return nil }
        func n(_ i: Int) -> Int { Int(b[i] - 48) * 10 + Int(b[i + 1] - 48) }
        let seconds = n(1) * 3600 + n(3) * 60 + (b.count == 7 ? n(5) : 0)
        return b[0] == 43 ? seconds : -seconds
    }

    // MARK: Components

    /// Builds the rules of an embedded VTIMEZONE (STANDARD/DAYLIGHT with DTSTART, offsets, RRULE,
    /// RDATE) as a transition table through 2200.
    mutating func readTimeZone(_ component: ICSComponent) {
        guard let tzid = component.property("TZID")?.value, !tzid.isEmpty else {
            report(component.line, "VTIMEZONE without TZID; skipped")
            return
        }
        var onsets: [(utc: Int, offset: Int)] = []
        var earliest: (utc: Int, offsetFrom: Int)?
        let limitDay = Civil.days(year: 2200, month: 1, day: 1)
        for part in component.children where part.name == "STANDARD" || part.name == "DAYLIGHT" {
            guard let startProperty = part.property("DTSTART"),
                let (startLocal, _) = Self.parseDateTime(Substring(startProperty.value)),
                let fromText = part.property("TZOFFSETFROM")?.value, let from = Self.parseOffset(fromText),
                let toText = part.property("TZOFFSETTO")?.value, let to = Self.parseOffset(toText)
            else {
                report(part.line, "\(part.name) in VTIMEZONE \(tzid) needs DTSTART, TZOFFSETFROM and TZOFFSETTO; skipped")
                continue
            }
            var locals = [startLocal]
            if let ruleProperty = part.property("RRULE") {
                do {
                    let rule = try RecurrenceRule(ruleProperty.value) { text in
                        Self.parseDateTime(Substring(text)).map { EventTime(kind: $0.1 ? .utc : .floating, local: $0.0) }
                    }
                    let (startDay, secondOfDay) = Civil.split(startLocal)
                    let days = rule.occurrenceDays(startDay: startDay, skipToDay: nil, through: limitDay) { day in
                        guard let until = rule.until else { return true }
                        let local = day * 86_400 + secondOfDay
                        return until.kind == .utc ? local - from <= until.local : local <= until.local
                    }
                    locals = days.map { $0 * 86_400 + secondOfDay }
                } catch {
                    report(ruleProperty.line, "\(error.message) in VTIMEZONE \(tzid); only its DTSTART is used")
                }
            }
            for rdate in part.properties("RDATE") {
                for item in rdate.value.split(separator: ",") {
                    if let (local, _) = Self.parseDateTime(item) { locals.append(local) }
                }
            }
            for local in locals {
                onsets.append((local - from, to))
            }
            if earliest == nil || startLocal - from < earliest!.utc { earliest = (startLocal - from, from) }
        }
        guard !onsets.isEmpty else {
            report(component.line, "VTIMEZONE \(tzid) has no usable STANDARD or DAYLIGHT; skipped")
            return
        }
        onsets.sort { $0.utc < $1.utc }
        zones[tzid] = ZoneRules(
            name: tzid, transitions: onsets.map(\.utc), offsets: onsets.map(\.offset),
            initialOffset: earliest?.offsetFrom ?? onsets[0].offset, tail: nil)
    }

    static func attendee(_ property: ICSProperty) -> Attendee {
        var email: String?
        let value = property.value
        if value.utf8.count >= 7, value.utf8.prefix(7).elementsEqual("mailto:".utf8, by: { $0 | 0x20 == $1 }) {
            email = String(value.dropFirst(7))
        } else if !value.isEmpty {
            email = value
        }
        return Attendee(name: property.parameter("CN"), email: email, status: property.parameter("PARTSTAT"))
    }

    /// One VEVENT, or `nil` (reported) when it lacks a usable start.
    mutating func readEvent(_ component: ICSComponent) -> CalendarEvent? {
        guard let startProperty = component.property("DTSTART") else {
            report(component.line, "VEVENT without DTSTART; skipped")
            return nil
        }
        guard let start = time(startProperty) else {
            report(component.line, "VEVENT skipped because its DTSTART is unusable")
            return nil
        }
        var duration = start.isDate ? 86_400 : 0
        if let endProperty = component.property("DTEND") {
            if let end = time(endProperty) {
                if end.kind == start.kind || (start.isDate == end.isDate && end.zone === start.zone) {
                    duration = end.local - start.local
                } else {
                    duration = end.utc(.utc) - start.utc(.utc)
                }
                if duration < 0 {
                    report(endProperty.line, "DTEND is before DTSTART; the event is treated as having no length")
                    duration = start.isDate ? 86_400 : 0
                }
            }
        } else if let durationProperty = component.property("DURATION") {
            if let parsed = Self.parseDuration(durationProperty.value), parsed >= 0 {
                duration = parsed
            } else {
                report(durationProperty.line, "bad DURATION \"\(durationProperty.value)\" (expected e.g. PT1H30M or P2D); ignored")
            }
        }
        var rule: RecurrenceRule?
        if let ruleProperty = component.property("RRULE") {
            do {
                rule = try RecurrenceRule(ruleProperty.value) { text in
                    time(Substring(text), tzid: nil, forceDate: false, line: ruleProperty.line)
                }
            } catch {
                report(ruleProperty.line, "\(error.message); the event is read as a single occurrence")
            }
        }
        let uid = component.property("UID")?.value ?? "\(file)#\(component.line)"
        var exdates: [EventTime] = []
        var rdates: [EventTime] = []
        var recurrenceID: EventTime?
        var summary: String?
        var location: String?
        var description: String?
        var organizer: Attendee?
        var attendees: [Attendee] = []
        var status: String?
        var url: String?
        for index in component.properties.indices {
            // Switch on the name in place; only the properties used are copied out.
            switch component.properties[index].name {
            case "EXDATE": exdates += times(component.properties[index])
            case "RDATE": rdates += times(component.properties[index])
            case "RECURRENCE-ID": if recurrenceID == nil { recurrenceID = time(component.properties[index]) }
            case "SUMMARY": if summary == nil { summary = component.properties[index].text }
            case "LOCATION": if location == nil { location = component.properties[index].text.nonEmpty }
            case "DESCRIPTION": if description == nil { description = component.properties[index].text.nonEmpty }
            case "ORGANIZER": if organizer == nil { organizer = Self.attendee(component.properties[index]) }
            case "ATTENDEE": attendees.append(Self.attendee(component.properties[index]))
            case "STATUS": if status == nil { status = component.properties[index].value.uppercased() }
            case "URL": if url == nil { url = component.properties[index].value }
            default: break
            }
        }
        return CalendarEvent(
            uid: uid, summary: summary ?? "(No title)", location: location, description: description,
            organizer: organizer, attendees: attendees, status: status, url: url, start: start, duration: duration,
            rule: rule, exdates: exdates, rdates: rdates, recurrenceID: recurrenceID, calendarIndex: calendarIndex,
            file: file, line: component.line, properties: component.properties)
    }
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
}
