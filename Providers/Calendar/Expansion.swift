/// Expands events into the occurrences that overlap a window, with the semantics of
/// `recurring-ical-events` (which the tests compare against):
///
/// - Events are grouped into series by calendar and `UID`. Of several versions of the series'
///   main event (no `RECURRENCE-ID`), the one with the highest `SEQUENCE` wins (the first on a
///   tie); so does the highest version of each override, and duplicates collapse.
/// - The main event's instances are its `DTSTART` (unless it lies after every rule's `UNTIL`),
///   the instances of each of its `RRULE`s (COUNT counts a rule's own instances) and its
///   `RDATE`s (a `PERIOD` keeps its own length). `EXDATE`s remove instances (a DATE removes that
///   whole day).
/// - Overrides (`RECURRENCE-ID`) replace the instance they name, matched as an instant or as a
///   wall-clock time, whatever zone either is written in; an override that names no instance
///   stands on its own. `RANGE=THISANDFUTURE` moves and re-times every later instance as it
///   moved its own, and lends them its properties.
/// - An occurrence overlaps `[from, to)` when it starts before `to` and ends after `from` (a
///   zero-length one when `from <= start < to`).
///
/// Work and memory are bounded: each rule by `RecurrenceRule.workBudget`, each series by
/// `maximumPerSeries` and the whole expansion by `maximumOccurrences` (the earliest are kept), so
/// one hostile event cannot crowd the others out of the window.
enum Expansion {
    /// The most occurrences one expansion keeps (the earliest).
    static let maximumOccurrences = 50_000
    /// The most occurrences one series (one UID) contributes (the earliest in the window).
    static let maximumPerSeries = 10_000

    /// Occurrences in start order, and what was cut short, for the operator's log.
    struct Result: Sendable {
        var occurrences: [Occurrence] = []
        var notes: [Diagnostic] = []
    }

    static func occurrences(of events: [CalendarEvent], from: Int, to: Int, floatingZone: ZoneRules) -> [Occurrence] {
        expand(events, from: from, to: to, floatingZone: floatingZone).occurrences
    }

    static func expand(_ events: [CalendarEvent], from: Int, to: Int, floatingZone: ZoneRules) -> Result {
        var result = Result()
        // Series in order of their first event; most have one event, and only the others get a
        // list of members.
        var seriesIndex: [SeriesKey: Int] = [:]
        seriesIndex.reserveCapacity(events.count)
        var firstEvent: [Int] = []
        var memberCount: [Int] = []
        var members: [Int: [Int]] = [:]
        for index in events.indices {
            let key = SeriesKey(uid: events[index].uid, calendar: events[index].calendarIndex)
            if let found = seriesIndex[key] {
                if memberCount[found] == 1 { members[found] = [firstEvent[found]] }
                memberCount[found] += 1
                members[found, default: []].append(index)
            } else {
                seriesIndex[key] = firstEvent.count
                firstEvent.append(index)
                memberCount.append(1)
            }
        }
        var windowEnd = to
        var truncated = false
        for series in firstEvent.indices {
            // Most events stand alone: one VEVENT, no rule, no dates of its own, no override.
            let only = firstEvent[series]
            if memberCount[series] == 1, events[only].rules.isEmpty, events[only].rdates.isEmpty {
                let event = events[only]
                let start = event.start
                let end = start.with(local: start.local + event.duration)
                let (startUTC, endUTC) = (start.utc(floatingZone), end.utc(floatingZone))
                if overlaps(start: startUTC, end: endUTC, from: from, to: windowEnd) {
                    result.occurrences.append(
                        Occurrence(event: only, start: start, end: end, startUTC: startUTC, endUTC: endUTC, recurrenceID: event.recurrenceID))
                }
            } else {
                var builder = SeriesExpansion(events: events, members: members[series] ?? [only], floatingZone: floatingZone)
                builder.occurrences(from: from, to: windowEnd, into: &result)
            }
            if result.occurrences.count > 2 * maximumOccurrences {
                // Keep the earliest; later series need not look past the last one kept.
                sortOccurrences(&result.occurrences)
                result.occurrences.removeLast(result.occurrences.count - maximumOccurrences)
                windowEnd = min(windowEnd, (result.occurrences.last?.startUTC ?? to) + 1)
                truncated = true
            }
        }
        sortOccurrences(&result.occurrences)
        if result.occurrences.count > maximumOccurrences {
            result.occurrences.removeLast(result.occurrences.count - maximumOccurrences)
            truncated = true
        }
        if truncated {
            result.notes.append(
                Diagnostic(
                    file: "(all calendars)", line: 0,
                    message: "more than \(maximumOccurrences) occurrences in the window; the earliest \(maximumOccurrences) are offered (shorten windowDays)"))
        }
        return result
    }

    static func sortOccurrences(_ occurrences: inout [Occurrence]) {
        occurrences.sort { ($0.startUTC, $0.endUTC, $0.event) < ($1.startUTC, $1.endUTC, $1.event) }
    }

    struct SeriesKey: Hashable {
        var uid: String
        var calendar: Int
    }

    static func overlaps(start: Int, end: Int, from: Int, to: Int) -> Bool {
        end == start ? (start >= from && start < to) : (start < to && end > from)
    }

    /// The keys a time is recognised by as a recurrence id: its UTC instant and its wall-clock
    /// time (as recurring-ical-events compares them, both as naive date-times); a date, a
    /// floating time or a time in an unknown zone only by its wall-clock time.
    static func ids(_ time: EventTime, _ floatingZone: ZoneRules) -> [Int] {
        switch time.kind {
        case .zoned where time.zone != nil:
            let instant = time.utc(floatingZone)
            return instant == time.local ? [instant] : [instant, time.local]
        default: return [time.local]
        }
    }
}

/// One series (the events of one UID in one calendar), expanded.
private struct SeriesExpansion {
    let events: [CalendarEvent]
    let floatingZone: ZoneRules
    /// The main event (highest SEQUENCE without RECURRENCE-ID), if any.
    var core: Int?
    /// Overrides by each of their recurrence ids.
    var overrideByID: [Int: Int] = [:]
    /// The winning overrides, in file order.
    var overrides: [Int] = []
    /// THISANDFUTURE overrides: their first recurrence id, sorted.
    var thisAndFuture: [(id: Int, event: Int)] = []

    init(events: [CalendarEvent], members: [Int], floatingZone: ZoneRules) {
        self.events = events
        self.floatingZone = floatingZone
        var futureIDs: [Int] = []
        for index in members {
            let event = events[index]
            if let recurrenceID = event.recurrenceID {
                let ids = Expansion.ids(recurrenceID, floatingZone)
                for id in ids {
                    if let current = overrideByID[id], events[current].sequence >= event.sequence { continue }
                    overrideByID[id] = index
                }
                if event.thisAndFuture, let primary = ids.first { futureIDs.append(primary) }
            } else if let current = core {
                if events[current].sequence < event.sequence { core = index }
            } else {
                core = index
            }
        }
        overrides = Set(overrideByID.values).sorted()
        for id in Set(futureIDs).sorted() {
            if let event = overrideByID[id] { thisAndFuture.append((id, event)) }
        }
    }

    /// How far a THISANDFUTURE override moves the instances after it (seconds).
    func move(_ index: Int) -> Int {
        let event = events[index]
        guard event.thisAndFuture, let recurrenceID = event.recurrenceID else { return 0 }
        return event.start.utc(floatingZone) - recurrenceID.utc(floatingZone)
    }

    /// The event whose properties the instance with this recurrence id takes: the core, or the
    /// latest THISANDFUTURE override before it.
    func component(for id: Int, core: Int) -> Int {
        var component = core
        for entry in thisAndFuture {
            guard entry.id < id else { break }
            component = entry.event
        }
        return component
    }

    func occurrence(_ index: Int, start: EventTime, length: Int, recurrenceID: EventTime?) -> Occurrence {
        let end = start.with(local: start.local + length)
        return Occurrence(
            event: index, start: start, end: end, startUTC: start.utc(floatingZone), endUTC: end.utc(floatingZone),
            recurrenceID: recurrenceID)
    }

    /// The core's instances whose wall-clock start is in `first...last`: (wall-clock start, its
    /// PERIOD length if an RDATE gave one), in order, without repeats or EXDATEs. Also whether a
    /// rule was cut short.
    func instances(of core: CalendarEvent, first: Int, last: Int) -> (starts: [(Int, Int?)], cutShort: Bool) {
        var starts: [(Int, Int?)] = []
        var cutShort = false
        let start = core.start
        // DTSTART is an instance unless it lies after every UNTIL.
        var lastUntil: EventTime?
        for rule in core.rules {
            guard let until = rule.until else { continue }
            if let known = lastUntil, !isAfter(until, known, start: start) { continue }
            lastUntil = until
        }
        if lastUntil.map({ !isAfter(start, $0, start: start) }) ?? true, start.local >= first, start.local <= last {
            starts.append((start.local, nil))
        }
        let startIsAware: Bool = {
            switch start.kind {
            case .utc: true
            case .zoned: start.zone != nil
            default: false
            }
        }()
        for rule in core.rules {
            var kept = 0
            let expanded = rule.expand(start: start.local, skipTo: first, through: last) { local in
                kept += 1
                guard kept <= Expansion.maximumPerSeries else { return false }
                guard let until = rule.until else { return true }
                // A DATE UNTIL ends at that midnight, in the event's own zone.
                if until.isDate { return local <= until.local }
                if until.kind == .utc, startIsAware { return start.with(local: local).utc(floatingZone) <= until.local }
                return local <= until.local
            }
            cutShort = cutShort || expanded.cutShort
            for local in expanded.starts where local >= first { starts.append((local, nil)) }
        }
        for rdate in core.rdates {
            // An RDATE in another zone is placed on the time line, then read in the event's zone.
            // A DATE next to date-times is midnight in the event's zone (as recurring-ical-events
            // reads mixed values).
            let local: Int
            if rdate.kind == start.kind || rdate.isDate || rdate.isDate == start.isDate && rdate.zone === start.zone {
                local = rdate.local
            } else if let zone = start.zone {
                local = zone.local(fromUTC: rdate.utc(floatingZone))
            } else {
                local = rdate.utc(floatingZone)
            }
            if local >= first, local <= last { starts.append((local, core.rdateLengths[rdate.local])) }
        }
        var excludedIDs: Set<Int> = []
        var excludedDays: Set<Int> = []
        for exdate in core.exdates {
            if exdate.isDate { excludedDays.insert(Civil.split(exdate.local).days) }
            excludedIDs.formUnion(Expansion.ids(exdate, floatingZone))
        }
        // In order; a start given twice (DTSTART and the rule, a rule and an RDATE) once, keeping
        // the PERIOD length of an RDATE.
        starts.sort { $0.0 < $1.0 || $0.0 == $1.0 && $0.1 != nil && $1.1 == nil }
        var result: [(Int, Int?)] = []
        result.reserveCapacity(starts.count)
        for entry in starts {
            if let previous = result.last, previous.0 == entry.0 { continue }
            if excludedDays.contains(Civil.split(entry.0).days) { continue }
            if !excludedIDs.isEmpty, Expansion.ids(start.with(local: entry.0), floatingZone).contains(where: excludedIDs.contains) {
                continue
            }
            result.append(entry)
        }
        return (result, cutShort)
    }

    /// Whether `a` is after `b`, compared as recurring-ical-events compares mixed values: dates
    /// by day, an instant with an instant, otherwise wall-clock times.
    func isAfter(_ a: EventTime, _ b: EventTime, start: EventTime) -> Bool {
        if a.isDate, b.isDate { return a.local > b.local }
        let aware: (EventTime) -> Bool = {
            switch $0.kind {
            case .utc: true
            case .zoned: $0.zone != nil
            default: false
            }
        }
        if aware(a), aware(b) { return a.utc(floatingZone) > b.utc(floatingZone) }
        return a.local > b.local
    }

    mutating func occurrences(from: Int, to: Int, into result: inout Expansion.Result) {
        var returned: Set<Int> = []
        if let coreIndex = core {
            let coreEvent = events[coreIndex]
            // Wall-clock bounds wide enough for any UTC offset, the event's length and any
            // THISANDFUTURE move.
            let moves = thisAndFuture.map { abs(move($0.event)) }.max() ?? 0
            let longest = ([coreEvent.duration] + thisAndFuture.map { events[$0.event].duration }).max() ?? 0
            let slack = 2 * 86_400 + moves
            let (first, firstOverflow) = from.subtractingReportingOverflow(longest + slack)
            let (last, lastOverflow) = to.addingReportingOverflow(slack)
            if !firstOverflow, !lastOverflow {
                let (starts, cutShort) = instances(of: coreEvent, first: first, last: last)
                if starts.count > Expansion.maximumPerSeries {
                    result.notes.append(
                        Diagnostic(
                            file: coreEvent.file, line: coreEvent.line,
                            message: "\"\(RecurrenceRule.excerpt(coreEvent.summary))\" has more than \(Expansion.maximumPerSeries) occurrences in the window; the first \(Expansion.maximumPerSeries) are offered"))
                }
                if cutShort {
                    result.notes.append(
                        Diagnostic(
                            file: coreEvent.file, line: coreEvent.line,
                            message: "the recurrence rule of \"\(RecurrenceRule.excerpt(coreEvent.summary))\" needs more than \(RecurrenceRule.workBudget) steps to reach the window; its later occurrences are not shown"))
                }
                for (local, periodLength) in starts.prefix(Expansion.maximumPerSeries) {
                    let instance = coreEvent.start.with(local: local)
                    var override: Int?
                    if !overrideByID.isEmpty {
                        for id in Expansion.ids(instance, floatingZone) { if let found = overrideByID[id] { override = found } }
                    }
                    if let override {
                        guard returned.insert(override).inserted else { continue }
                        let event = events[override]
                        let occurrence = occurrence(override, start: event.start, length: event.duration, recurrenceID: event.recurrenceID)
                        if Expansion.overlaps(start: occurrence.startUTC, end: occurrence.endUTC, from: from, to: to) {
                            result.occurrences.append(occurrence)
                        }
                        continue
                    }
                    let component =
                        thisAndFuture.isEmpty
                        ? coreIndex : self.component(for: Expansion.ids(instance, floatingZone)[0], core: coreIndex)
                    let moved = component == coreIndex ? instance : coreEvent.start.with(local: local + move(component))
                    let length = periodLength ?? events[component].duration
                    let occurrence = occurrence(component, start: moved, length: length, recurrenceID: instance)
                    if Expansion.overlaps(start: occurrence.startUTC, end: occurrence.endUTC, from: from, to: to) {
                        result.occurrences.append(occurrence)
                    }
                }
            }
        }
        // Overrides that replaced no instance stand on their own.
        var excludedIDs: Set<Int> = []
        if let coreIndex = core {
            for exdate in events[coreIndex].exdates { excludedIDs.formUnion(Expansion.ids(exdate, floatingZone)) }
        }
        for index in overrides where !returned.contains(index) {
            let event = events[index]
            guard let recurrenceID = event.recurrenceID else { continue }
            let ids = Expansion.ids(recurrenceID, floatingZone)
            if ids.contains(where: excludedIDs.contains) { continue }
            if skipStaleOverride(event, ids: ids) { continue }
            let occurrence = occurrence(index, start: event.start, length: event.duration, recurrenceID: recurrenceID)
            if Expansion.overlaps(start: occurrence.startUTC, end: occurrence.endUTC, from: from, to: to) {
                returned.insert(index)
                result.occurrences.append(occurrence)
            }
        }
    }

    /// An override that carries recurrence properties of its own and is older (lower SEQUENCE)
    /// than the main event is stale when its instance is no longer one of the main event's.
    func skipStaleOverride(_ event: CalendarEvent, ids: [Int]) -> Bool {
        guard let coreIndex = core, !event.rules.isEmpty || !event.rdates.isEmpty || !event.exdates.isEmpty,
            event.sequence < events[coreIndex].sequence, let recurrenceID = event.recurrenceID
        else { return false }
        let coreEvent = events[coreIndex]
        let day = Civil.split(recurrenceID.local).days
        let (starts, _) = instances(of: coreEvent, first: (day - 1) * 86_400, last: (day + 2) * 86_400)
        for (local, _) in starts where Expansion.ids(coreEvent.start.with(local: local), floatingZone).contains(where: ids.contains) {
            return false
        }
        return true
    }
}
