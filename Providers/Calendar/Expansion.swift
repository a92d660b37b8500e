/// Expands events into the occurrences that overlap a window, with the semantics of
/// `recurring-ical-events` (which the tests compare against): DTSTART is always an occurrence,
/// COUNT counts the rule's own instances, RDATEs are added, EXDATEs (a DATE removes that whole
/// day) and overridden instances (`RECURRENCE-ID`) are removed, overrides stand on their own, and
/// an occurrence overlaps `[from, to)` when it starts before `to` and ends after `from` (a
/// zero-length one when `from <= start < to`).
enum Expansion {
    static func occurrences(
        of events: [CalendarEvent], from: Int, to: Int, floatingZone: ZoneRules
    ) -> [Occurrence] {
        // Overridden instances, keyed by UID and original start.
        var overridden: Set<OverrideKey> = []
        for event in events {
            if let recurrenceID = event.recurrenceID {
                overridden.insert(OverrideKey(uid: event.uid, calendar: event.calendarIndex, instant: recurrenceID.utc(floatingZone)))
            }
        }
        var result: [Occurrence] = []
        for index in events.indices {
            occurrences(of: events[index], index: index, from: from, to: to, floatingZone: floatingZone,
                overridden: overridden, into: &result)
        }
        result.sort { ($0.startUTC, $0.endUTC, $0.event) < ($1.startUTC, $1.endUTC, $1.event) }
        return result
    }

    struct OverrideKey: Hashable {
        var uid: String
        var calendar: Int
        var instant: Int
    }

    static func overlaps(start: Int, end: Int, from: Int, to: Int) -> Bool {
        end == start ? (start >= from && start < to) : (start < to && end > from)
    }

    /// Whether an occurrence from wall-clock `start` to `end` certainly misses `[from, to)`,
    /// wherever its zone puts it: a quick test before placing it on the time line.
    static func certainlyOutside(start: Int, end: Int, slack: Int, from: Int, to: Int) -> Bool {
        start - slack >= to || end + slack < from
    }

    static func occurrences(
        of event: CalendarEvent, index: Int, from: Int, to: Int, floatingZone: ZoneRules,
        overridden: Set<OverrideKey>, into result: inout [Occurrence]
    ) {
        func make(_ start: EventTime, recurrenceID: EventTime?) -> Occurrence {
            let end = start.with(local: start.local + event.duration)
            return Occurrence(
                event: index, start: start, end: end, startUTC: start.utc(floatingZone), endUTC: end.utc(floatingZone),
                recurrenceID: recurrenceID)
        }
        // How far the event's wall-clock times can be from their UTC instants.
        let slack = event.start.kind == .utc ? 0 : (event.start.zone ?? floatingZone).largestOffset
        if event.recurrenceID != nil || (event.rule == nil && event.rdates.isEmpty) {
            let local = event.start.local
            if certainlyOutside(start: local, end: local + event.duration, slack: slack, from: from, to: to) { return }
            let occurrence = make(event.start, recurrenceID: event.recurrenceID)
            if overlaps(start: occurrence.startUTC, end: occurrence.endUTC, from: from, to: to) {
                result.append(occurrence)
            }
            return
        }
        // Candidate wall-clock starts.
        var starts: [Int] = [event.start.local]
        let (startDay, secondOfDay) = Civil.split(event.start.local)
        if let rule = event.rule {
            // Local day bounds with slack for any UTC offset and the event's length.
            let lastDay = Civil.floorDiv(to, 86_400) + 2
            let firstDay = Civil.floorDiv(from - max(event.duration, 0), 86_400) - 2
            let until = rule.until
            let startIsUTCAware: Bool = {
                switch event.start.kind {
                case .utc, .zoned: true
                default: false
                }
            }()
            let days = rule.occurrenceDays(startDay: startDay, skipToDay: firstDay, through: lastDay) { day in
                guard let until else { return true }
                let local = day * 86_400 + secondOfDay
                if until.isDate { return local <= until.local }
                if until.kind == .utc, startIsUTCAware {
                    return event.start.with(local: local).utc(floatingZone) <= until.local
                }
                return local <= until.local
            }
            for day in days where day >= firstDay { starts.append(day * 86_400 + secondOfDay) }
        }
        for rdate in event.rdates {
            // An RDATE in another zone is placed on the time line, then read in the event's zone.
            if rdate.kind == event.start.kind || rdate.isDate == event.start.isDate && rdate.zone === event.start.zone {
                starts.append(rdate.isDate && !event.start.isDate ? rdate.local + secondOfDay : rdate.local)
            } else if let zone = event.start.zone {
                starts.append(zone.local(fromUTC: rdate.utc(floatingZone)))
            } else {
                starts.append(rdate.utc(floatingZone))
            }
        }
        var excludedInstants: Set<Int> = []
        var excludedDays: Set<Int> = []
        for exdate in event.exdates {
            if exdate.isDate, !event.start.isDate {
                excludedDays.insert(Civil.split(exdate.local).days)
            } else {
                excludedInstants.insert(exdate.utc(floatingZone))
            }
        }
        var seen: Set<Int> = []
        for local in starts where seen.insert(local).inserted {
            if certainlyOutside(start: local, end: local + event.duration, slack: slack, from: from, to: to) { continue }
            let start = event.start.with(local: local)
            let instant = start.utc(floatingZone)
            if excludedInstants.contains(instant) || excludedDays.contains(Civil.split(local).days) { continue }
            if !overridden.isEmpty,
                overridden.contains(OverrideKey(uid: event.uid, calendar: event.calendarIndex, instant: instant))
            { continue }
            let occurrence = make(start, recurrenceID: start)
            if overlaps(start: occurrence.startUTC, end: occurrence.endUTC, from: from, to: to) {
                result.append(occurrence)
            }
        }
    }
}
