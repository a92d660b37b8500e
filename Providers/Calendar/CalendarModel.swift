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
    /// Every RRULE (repeated rule texts once).
    let rules: [RecurrenceRule]
    /// The first RRULE, for words.
    var rule: RecurrenceRule? { rules.first }
    let exdates: [EventTime]
    let rdates: [EventTime]
    /// The lengths of `RDATE;VALUE=PERIOD` instances, by their wall-clock start.
    let rdateLengths: [Int: Int]
    let recurrenceID: EventTime?
    /// `RECURRENCE-ID;RANGE=THISANDFUTURE`: this change applies to the later instances too.
    let thisAndFuture: Bool
    /// `SEQUENCE` (-1 without): of several versions of one event, the highest wins.
    let sequence: Int
    /// The calendar (file) it came from.
    let calendarIndex: Int
    /// Where it starts, for messages.
    let file: String
    let line: Int
    /// The source properties, for `text/calendar` export, and the bytes they point into.
    let properties: [ICSProperty]
    let source: ICSSource

    init(
        uid: String, summary: String, location: String?, description: String?, organizer: Attendee?,
        attendees: [Attendee], status: String?, url: String?, start: EventTime, duration: Int, rules: [RecurrenceRule],
        exdates: [EventTime], rdates: [EventTime], rdateLengths: [Int: Int] = [:], recurrenceID: EventTime?,
        thisAndFuture: Bool = false, sequence: Int = -1, calendarIndex: Int, file: String, line: Int,
        properties: [ICSProperty], source: ICSSource
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
        self.rules = rules
        self.exdates = exdates
        self.rdates = rdates
        self.rdateLengths = rdateLengths
        self.recurrenceID = recurrenceID
        self.thisAndFuture = thisAndFuture
        self.sequence = sequence
        self.calendarIndex = calendarIndex
        self.file = file
        self.line = line
        self.properties = properties
        self.source = source
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
    /// The unfolded bytes the properties point into.
    let source: ICSSource
    var diagnostics: [Diagnostic] = []
    /// The calendar's own VTIMEZONEs by TZID.
    var zones: [String: ZoneRules] = [:]
    var unknownZones: Set<String> = []
    /// Whether a DATE-TIME marked `VALUE=DATE` was reported (once per file).
    var reportedMistypedDate = false
    var resolvedZones: [String: ZoneRules?] = [:]
    /// `X-WR-TIMEZONE` (Google, Apple): the zone of the calendar's floating date-times.
    var calendarZone: (name: String, rules: ZoneRules)? {
        didSet { parsedRules.removeAll() }
    }
    /// RRULEs already read, by their text: events often repeat the same rule. (A floating UNTIL
    /// is read in `calendarZone`, so they are forgotten when it changes.)
    private var parsedRules: [String: RecurrenceRule] = [:]

    /// A time zone name as written, and what it was resolved to (see `zone(_:)`).
    private var recentZones: [(bytes: [UInt8], tzid: String, rules: ZoneRules?)] = []

    init(file: String, calendarIndex: Int, source: ICSSource) {
        self.file = file
        self.calendarIndex = calendarIndex
        self.source = source
    }

    mutating func report(_ line: Int, _ message: String) {
        diagnostics.append(Diagnostic(file: file, line: line, message: message))
    }

    /// Reads a whole file.
    static func read(path: String, calendarIndex: Int) -> CalendarFile {
        let name = FileIO.baseName(path)
        let bytes: [UInt8]
        do {
            bytes = try FileIO.readChecked(path)
        } catch {
            let message: String
            switch error {
            case .unreadable: message = "cannot be read (check the file's permissions)"
            case .notRegular: message = "is not a regular file (a folder, pipe or device); skipped"
            case .tooLarge(let size):
                message = "is \(size >> 20) MB; calendar files over \(FileIO.maximumFileBytes >> 20) MB are not read (split it, or export a shorter range)"
            }
            return CalendarFile(path: path, name: name, events: [], diagnostics: [Diagnostic(file: name, line: 0, message: message)])
        }
        return read(bytes: bytes, name: name, path: path, calendarIndex: calendarIndex)
    }

    /// Reads a calendar held in memory (a file's bytes, or a CalDAV resource); `name` is the
    /// file name diagnostics carry, and the calendar's name unless it has an `X-WR-CALNAME`.
    static func read(bytes: consuming [UInt8], name: String, path: String, calendarIndex: Int) -> CalendarFile {
        var parser = ICSParser(file: name)
        let (source, roots) = parser.parse(consume bytes)
        var reader = CalendarReader(file: name, calendarIndex: calendarIndex, source: source)
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
            if calendarName == nil { calendarName = root.property(.calendarName).map(source.text) }
            for child in root.children where child.name == "VTIMEZONE" { reader.readTimeZone(child) }
            if let property = root.property(.calendarTimeZone), !property.valueRange.isEmpty {
                let zoneName = source.value(property)
                if let rules = ZoneResolver.system(zoneName) ?? reader.zones[zoneName] {
                    reader.calendarZone = (zoneName, rules)
                } else {
                    reader.report(property.line, "unknown time zone X-WR-TIMEZONE:\(zoneName); floating times stay floating")
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

    /// A date or date-time value; `tzid` is where its TZID parameter's value is in the source.
    ///
    /// Read as the reference implementation reads them (see docs/providers/calendar.md, "Damaged
    /// and unusual data"): a DATE-TIME marked `VALUE=DATE` is the DATE-TIME; a UTC value with a
    /// `TZID` is that wall-clock time in the zone; with `calendarUTC`, a UTC value in a calendar
    /// with `X-WR-TIMEZONE` is moved into that zone, as x-wr-timezone does for `DTSTART`,
    /// `DTEND`, `RDATE`, `EXDATE` and `RECURRENCE-ID` (its wall-clock time then recurs there).
    mutating func time(
        _ text: UnsafeBufferPointer<UInt8>, tzid: Range<Int>?, forceDate: Bool, line: Int, calendarUTC: Bool = false
    ) -> EventTime? {
        if text.count == 8 || (forceDate && text.count != 15 && text.count != 16) {
            guard let days = Self.parseDate(bytes: text) else { return nil }
            return EventTime(kind: .date, local: days * 86_400)
        }
        guard let (local, isUTC) = Self.parseDateTime(bytes: text) else { return nil }
        if forceDate, !reportedMistypedDate {
            reportedMistypedDate = true
            report(line, "a DATE-TIME value is marked VALUE=DATE (\"\(String(decoding: text, as: UTF8.self))\"); it is read as the DATE-TIME (reported once per file)")
        }
        if isUTC {
            if let tzid, case let (name, rules?) = zone(tzid) {
                return EventTime(kind: .zoned(name), local: local, zone: rules)
            }
            if calendarUTC, let calendarZone {
                return EventTime(kind: .zoned(calendarZone.name), local: calendarZone.rules.local(fromUTC: local), zone: calendarZone.rules)
            }
            return EventTime(kind: .utc, local: local)
        }
        guard let tzid else {
            if let calendarZone { return EventTime(kind: .zoned(calendarZone.name), local: local, zone: calendarZone.rules) }
            return EventTime(kind: .floating, local: local)
        }
        let (name, rules) = zone(tzid)
        if let rules {
            return EventTime(kind: .zoned(name), local: local, zone: rules)
        }
        if !unknownZones.contains(name) {
            unknownZones.insert(name)
            report(
                line,
                "unknown time zone TZID=\(name) (no VTIMEZONE in the file, not an IANA or Windows zone name); its times are read as floating (in the display time zone)"
            )
        }
        return EventTime(kind: .zoned(name), local: local, zone: nil)
    }

    /// A date or date-time value without a TZID (an RRULE's UNTIL).
    mutating func time(_ text: String, line: Int) -> EventTime? {
        var text = text
        return text.withUTF8 { time($0, tzid: nil, forceDate: false, line: line) }
    }

    /// The TZID written at `range` of the source and its rules. A file names the same few zones
    /// over and over: the last ones seen are matched by their bytes, without making a string.
    mutating func zone(_ range: Range<Int>) -> (tzid: String, rules: ZoneRules?) {
        let found = source.withBytes(range) { bytes in recentZones.firstIndex { $0.bytes.elementsEqual(bytes) } }
        if let found { return (recentZones[found].tzid, recentZones[found].rules) }
        let tzid = source.parameterValue(range)
        let rules = resolve(tzid)
        if recentZones.count == 16 { recentZones.removeFirst() }
        recentZones.append((Array(source.bytes[range]), tzid, rules))
        return (tzid, rules)
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

    /// Whether a property has `VALUE=DATE`.
    func isDateValue(_ property: ICSProperty) -> Bool {
        guard let range = source.parameterRange("VALUE", of: property) else { return false }
        return source.withBytes(range) { ICSText.equalsIgnoringCase($0, "DATE") }
    }

    /// A property's date or date-time.
    mutating func time(_ property: ICSProperty) -> EventTime? {
        let forceDate = isDateValue(property)
        let tzid = source.parameterRange("TZID", of: property)
        let value = source.withBytes(property.valueRange) {
            time($0, tzid: tzid, forceDate: forceDate, line: property.line, calendarUTC: true)
        }
        guard let value else {
            report(
                property.line,
                "\(source.name(property)) has a bad date \"\(source.value(property))\" (expected YYYYMMDD or YYYYMMDDTHHMMSS[Z])")
            return nil
        }
        return value
    }

    /// A list property (EXDATE, RDATE): comma-separated values; PERIOD values keep their start.
    mutating func times(_ property: ICSProperty) -> [EventTime] { periods(property).map(\.start) }

    /// A list property's values with the length of each PERIOD (`start/end` or
    /// `start/duration`, RFC 5545 §3.3.9); plain dates and date-times have no length.
    mutating func periods(_ property: ICSProperty) -> [(start: EventTime, length: Int?)] {
        let forceDate = isDateValue(property)
        let tzid = source.parameterRange("TZID", of: property)
        var result: [(start: EventTime, length: Int?)] = []
        var reported = 0
        for item in Self.pieces(of: property.valueRange, separatedBy: UInt8(ascii: ","), in: source.bytes) {
            let parts = Self.pieces(of: item, separatedBy: UInt8(ascii: "/"), in: source.bytes)
            let start = parts.first ?? item
            guard let value = source.withBytes(start, { time($0, tzid: tzid, forceDate: forceDate, line: property.line, calendarUTC: true) })
            else {
                // One message per property is enough: a line of a million bad values is one problem.
                if reported == 0 {
                    report(
                        property.line,
                        "\(source.name(property)) has a bad date \"\(RecurrenceRule.excerpt(source.string(item)))\"; that value is skipped")
                }
                reported += 1
                continue
            }
            var length: Int?
            if parts.count == 2 {
                let second = source.string(parts[1])
                if let duration = Self.parseDuration(second) {
                    length = duration
                } else if let end = source.withBytes(parts[1], { time($0, tzid: tzid, forceDate: false, line: property.line) }) {
                    length = end.kind == value.kind ? end.local - value.local : end.utc(.utc) - value.utc(.utc)
                }
                if let found = length, found < 0 { length = nil }
            }
            result.append((value, length))
        }
        return result
    }

    /// The non-empty pieces of `range` between separators (as `split(separator:)` gives them).
    static func pieces(of range: Range<Int>, separatedBy separator: UInt8, in bytes: [UInt8]) -> [Range<Int>] {
        var result: [Range<Int>] = []
        var start = range.lowerBound
        for index in range where bytes[index] == separator {
            if index > start { result.append(start..<index) }
            start = index + 1
        }
        if range.upperBound > start { result.append(start..<range.upperBound) }
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
        // Lengths past ~10,000 years are not durations but data errors (and would overflow).
        let limit = 10_000 * 366 * 86_400
        for c in b {
            switch c {
            case 48...57:
                let value = (number ?? 0) * 10 + Int(c - 48)
                guard value <= limit else { return nil }
                number = value
            case UInt8(ascii: "T"):
                guard number == nil, !inTime else { return nil }
                inTime = true
            case UInt8(ascii: "W"), UInt8(ascii: "D"), UInt8(ascii: "H"), UInt8(ascii: "M"), UInt8(ascii: "S"):
                guard let value = number else { return nil }
                let unit: Int
                switch (c, inTime) {
                case (UInt8(ascii: "W"), false): unit = 7 * 86_400
                case (UInt8(ascii: "D"), false): unit = 86_400
                case (UInt8(ascii: "H"), true): unit = 3600
                case (UInt8(ascii: "M"), true): unit = 60
                case (UInt8(ascii: "S"), true): unit = 1
                default: return nil
                }
                // value ≤ limit, so value × unit cannot overflow; the sum is checked.
                total += value * unit
                guard total <= limit else { return nil }
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

    /// The most offset changes one STANDARD or DAYLIGHT part contributes.
    static let maximumZoneOnsets = 2_000

    /// A VTIMEZONE part's DTSTART: a DATE-TIME, or a DATE (midnight), as some exporters write.
    static func parseZoneStart(_ text: String) -> Int? {
        if let (local, _) = parseDateTime(Substring(text)) { return local }
        var text = text
        return text.withUTF8 { parseDate(bytes: $0) }.map { $0 * 86_400 }
    }

    /// The transition table of an embedded VTIMEZONE covers 1900 to 2200 (see `RecurringZone`).
    static let zoneTableStart = Civil.days(year: 1900, month: 1, day: 1) * 86_400
    static let zoneTableEnd = Civil.days(year: 2200, month: 1, day: 1) * 86_400

    /// Builds the rules of an embedded VTIMEZONE (STANDARD/DAYLIGHT with DTSTART, offsets, RRULE,
    /// RDATE): a transition table from 1900 (or the first DTSTART) through 2200, and the yearly
    /// rules themselves for instants outside it. A rule from year 1 (eM Client) or 1601 (Outlook)
    /// costs the same as one from 1990: its expansion jumps to the table's start.
    mutating func readTimeZone(_ component: ICSComponent) {
        // The TZID is TEXT: Outlook writes `TZID:Kuala Lumpur\, Singapore`.
        guard let tzid = component.property(.tzid).map(source.text), !tzid.isEmpty else {
            report(component.line, "VTIMEZONE without TZID; skipped")
            return
        }
        var onsets: [(utc: Int, offset: Int)] = []
        var parts: [RecurringZone.Part] = []
        var earliest: (utc: Int, offsetFrom: Int)?
        // The table answers from `coveredFrom` through `coveredThrough`; it is complete there.
        var coveredFrom = Int.min
        var coveredThrough = Self.zoneTableEnd
        for part in component.children where part.name == "STANDARD" || part.name == "DAYLIGHT" {
            guard let startProperty = part.property(.dtstart),
                let startLocal = Self.parseZoneStart(source.value(startProperty)),
                let fromText = part.property(.tzoffsetfrom).map(source.value), let from = Self.parseOffset(fromText),
                let toText = part.property(.tzoffsetto).map(source.value), let to = Self.parseOffset(toText)
            else {
                report(part.line, "\(part.name) in VTIMEZONE \(tzid) needs DTSTART, TZOFFSETFROM and TZOFFSETTO; skipped")
                continue
            }
            var fixed = [startLocal]
            var ruleLocals: [Int] = []
            var onDemand: RecurrenceRule?
            if let ruleProperty = part.property(.rrule) {
                do {
                    let rule = try RecurrenceRule(source.value(ruleProperty)) { text in
                        Self.parseDateTime(Substring(text)).map { EventTime(kind: $0.1 ? .utc : .floating, local: $0.0) }
                    }
                    // A rule that ends before the table starts is tabulated whole, as it is.
                    let endsEarly = rule.until.map { $0.local < Self.zoneTableStart } ?? false
                    let isOnDemand = RecurringZone.Part.isOnDemand(rule) && !endsEarly
                    // A rule found on demand is tabulated from the table's start only (from a year
                    // before it, so the change in force at the start is in the table too).
                    let skipTo = isOnDemand && startLocal < Self.zoneTableStart ? Self.zoneTableStart - 400 * 86_400 : nil
                    var seen = 0
                    let expanded = rule.expand(start: startLocal, skipTo: skipTo, through: Self.zoneTableEnd) { local in
                        // Zones change a few times a year: a rule that changes more is not a zone.
                        seen += 1
                        guard seen <= Self.maximumZoneOnsets else { return false }
                        guard let until = rule.until else { return true }
                        return until.kind == .utc ? local - from <= until.local : local <= until.local
                    }
                    ruleLocals = expanded.starts.filter { $0 != startLocal }
                    let capped = seen > Self.maximumZoneOnsets || expanded.cutShort
                    if isOnDemand, !ruleLocals.isEmpty {
                        // Before and after the table (and past a cap), the rule answers itself.
                        onDemand = rule
                        if skipTo != nil { coveredFrom = max(coveredFrom, Self.zoneTableStart - 86_400) }
                        if capped, let last = ruleLocals.last { coveredThrough = min(coveredThrough, last - from - 1) }
                    } else if capped {
                        report(ruleProperty.line, "RRULE in VTIMEZONE \(tzid) changes the offset more than \(Self.maximumZoneOnsets) times; later changes are ignored")
                    }
                } catch {
                    report(ruleProperty.line, "\(error.message) in VTIMEZONE \(tzid); only its DTSTART is used")
                }
            }
            for rdate in part.properties(.rdate) {
                for item in source.value(rdate).split(separator: ",") where fixed.count < Self.maximumZoneOnsets {
                    if let local = Self.parseZoneStart(String(item)) { fixed.append(local) }
                }
            }
            if onDemand == nil {
                fixed += ruleLocals
                ruleLocals = []
            }
            for local in fixed + ruleLocals {
                onsets.append((local - from, to))
            }
            parts.append(
                RecurringZone.Part(start: startLocal, from: from, to: to, rule: onDemand, fixed: fixed.map { $0 - from }.sorted()))
            if let known = earliest, known.utc <= startLocal - from {} else { earliest = (startLocal - from, from) }
        }
        guard !onsets.isEmpty else {
            report(component.line, "VTIMEZONE \(tzid) has no usable STANDARD or DAYLIGHT; skipped")
            return
        }
        var recurring: RecurringZone?
        if parts.contains(where: { $0.rule != nil }) {
            let zone = RecurringZone(parts: parts, covered: coveredFrom...max(coveredFrom, coveredThrough))
            // The change in force where the table starts, for each part found on demand.
            if coveredFrom != Int.min {
                for part in parts where part.rule != nil {
                    if let change = part.lastChange(atOrBefore: coveredFrom) { onsets.append((change, part.to)) }
                }
            }
            recurring = zone
        }
        onsets.sort { $0.utc < $1.utc }
        zones[tzid] = ZoneRules(
            name: tzid, transitions: onsets.map(\.utc), offsets: onsets.map(\.offset),
            initialOffset: earliest?.offsetFrom ?? onsets[0].offset, tail: nil, recurring: recurring)
    }

    func attendee(_ property: ICSProperty) -> Attendee {
        var email: String?
        let value = property.valueRange
        let isMailto = source.withBytes(value) { bytes in
            bytes.count >= 7 && ICSText.equalsIgnoringCase(UnsafeBufferPointer(rebasing: bytes[0..<7]), "MAILTO:")
        }
        if isMailto {
            email = source.string((value.lowerBound + 7)..<value.upperBound)
        } else if !value.isEmpty {
            email = source.string(value)
        }
        return Attendee(
            name: source.parameter("CN", of: property), email: email, status: source.parameter("PARTSTAT", of: property))
    }

    /// One VEVENT, or `nil` (reported) when it lacks a usable start.
    mutating func readEvent(_ component: ICSComponent) -> CalendarEvent? {
        guard let startProperty = component.property(.dtstart) else {
            report(component.line, "VEVENT without DTSTART; skipped")
            return nil
        }
        guard var start = time(startProperty) else {
            report(component.line, "VEVENT skipped because its DTSTART is unusable")
            return nil
        }
        var duration = start.isDate ? 86_400 : 0
        if let endProperty = component.property(.dtend) {
            if var end = time(endProperty) {
                // Mixed kinds are read as recurring-ical-events reads them: a date next to a
                // date-time is midnight in that date-time's zone, and a floating time next to a
                // zoned one is in that zone.
                func isAware(_ time: EventTime) -> Bool {
                    switch time.kind {
                    case .utc: true
                    case .zoned: time.zone != nil
                    default: false
                    }
                }
                if start.isDate != end.isDate || isAware(start) != isAware(end) {
                    if !isAware(start), isAware(end) || start.isDate {
                        start = EventTime(kind: end.kind, local: start.local, zone: end.zone)
                    } else {
                        end = EventTime(kind: start.kind, local: end.local, zone: start.zone)
                    }
                }
                if end.kind == start.kind || (start.isDate == end.isDate && end.zone === start.zone) {
                    duration = end.local - start.local
                } else {
                    duration = end.utc(.utc) - start.utc(.utc)
                }
                if duration < 0 {
                    // As recurring-ical-events does: the earlier value is the start.
                    report(endProperty.line, "DTEND is before DTSTART; the two are read the other way round")
                    start = end
                    duration = -duration
                }
            }
        } else if let durationProperty = component.property(.duration) {
            if let parsed = Self.parseDuration(source.value(durationProperty)), parsed >= 0 {
                duration = parsed
                // A date with a length in hours is a floating date-time from midnight.
                // (`DTSTART;TZID=Europe/Paris:20130903` with `PT1H`: midnight in Paris.)
                if start.isDate, parsed % 86_400 != 0 {
                    if let tzid = source.parameterRange("TZID", of: startProperty), case let (name, rules?) = zone(tzid) {
                        start = EventTime(kind: .zoned(name), local: start.local, zone: rules)
                    } else {
                        start = EventTime(kind: .floating, local: start.local)
                    }
                }
            } else {
                report(
                    durationProperty.line,
                    "bad DURATION \"\(RecurrenceRule.excerpt(source.value(durationProperty)))\" (expected e.g. PT1H30M or P2D, at most 10,000 years); ignored")
            }
        }
        // Every RRULE counts (RFC 5545 allows one, but exporters write several); a rule written
        // twice is one rule.
        var rules: [RecurrenceRule] = []
        var ruleTexts: Set<String> = []
        for ruleProperty in component.properties(.rrule) {
            let text = source.value(ruleProperty)
            guard ruleTexts.insert(text).inserted else { continue }
            if let parsed = parsedRules[text] {
                rules.append(parsed)
            } else {
                do {
                    let rule = try RecurrenceRule(text) { text in time(text, line: ruleProperty.line) }
                    parsedRules[text] = rule
                    rules.append(rule)
                    if !rule.skipped.isEmpty {
                        let parts = rule.skipped.prefix(3).map { "\"\($0)\"" }.joined(separator: ", ")
                        report(ruleProperty.line, "RRULE has parts that are not NAME=value or are extensions (\(parts)); they are left out and the rest of the rule is used")
                    }
                } catch {
                    report(ruleProperty.line, "\(error.message); this rule is ignored and the event's other dates are used")
                }
            }
        }
        let uid = component.property(.uid).map(source.value) ?? "\(file)#\(component.line)"
        var exdates: [EventTime] = []
        var rdates: [EventTime] = []
        var rdateLengths: [Int: Int] = [:]
        var recurrenceID: EventTime?
        var thisAndFuture = false
        var sequence = -1
        var summary: String?
        var location: String?
        var description: String?
        var organizer: Attendee?
        var attendees: [Attendee] = []
        var status: String?
        var url: String?
        for property in component.properties {
            switch property.name {
            case .exdate: exdates += times(property)
            case .rdate:
                for (value, length) in periods(property) {
                    rdates.append(value)
                    if let length { rdateLengths[value.local] = length }
                }
            case .recurrenceID:
                if recurrenceID == nil {
                    recurrenceID = time(property)
                    thisAndFuture = source.parameter("RANGE", of: property)?.uppercased() == "THISANDFUTURE"
                }
            case .sequence:
                if let value = Int(source.value(property).trimmingSpaces), value >= 0 { sequence = value }
            case .summary: if summary == nil { summary = source.text(property) }
            case .location: if location == nil { location = source.text(property).nonEmpty }
            case .description: if description == nil { description = source.text(property).nonEmpty }
            case .organizer: if organizer == nil { organizer = attendee(property) }
            case .attendee: attendees.append(attendee(property))
            case .status: if status == nil { status = source.value(property).uppercased() }
            case .url: if url == nil { url = source.value(property) }
            default: break
            }
        }
        return CalendarEvent(
            uid: uid, summary: summary ?? "(No title)", location: location, description: description,
            organizer: organizer, attendees: attendees, status: status, url: url, start: start, duration: duration,
            rules: rules, exdates: exdates, rdates: rdates, rdateLengths: rdateLengths, recurrenceID: recurrenceID,
            thisAndFuture: thisAndFuture, sequence: sequence, calendarIndex: calendarIndex,
            file: file, line: component.line, properties: component.properties, source: source)
    }
}

extension String {
    var nonEmpty: String? { isEmpty ? nil : self }
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: Substring {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return self[first...last]
    }
}
