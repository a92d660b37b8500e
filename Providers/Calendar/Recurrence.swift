/// A parsed `RRULE` (RFC 5545 §3.3.10).
///
/// Every number in a rule comes from a file nobody checked: parts are range-checked when read,
/// and expansion uses checked arithmetic and a work budget, so no rule can trap, loop without
/// end or fill memory (a rule that needs more work than the budget is cut short and says so).
struct RecurrenceRule: Sendable, Hashable {
    enum Frequency: String, Sendable, Hashable {
        case secondly = "SECONDLY", minutely = "MINUTELY", hourly = "HOURLY"
        case daily = "DAILY", weekly = "WEEKLY", monthly = "MONTHLY", yearly = "YEARLY"

        /// The length of one period in seconds, for the frequencies shorter than a day.
        var seconds: Int? {
            switch self {
            case .secondly: 1
            case .minutely: 60
            case .hourly: 3600
            default: nil
            }
        }
    }

    /// A `BYDAY` entry: an optional ordinal (0 = every) and a weekday (0 = Monday).
    struct WeekdayNumber: Sendable, Hashable {
        var ordinal: Int
        var weekday: Int
    }

    var frequency: Frequency
    var interval = 1
    var count: Int?
    /// `UNTIL`, inclusive.
    var until: EventTime?
    var byDay: [WeekdayNumber] = []
    var byMonthDay: [Int] = []
    var byMonth: [Int] = []
    var byYearDay: [Int] = []
    var byWeekNo: [Int] = []
    var byHour: [Int] = []
    var byMinute: [Int] = []
    var bySecond: [Int] = []
    var bySetPos: [Int] = []
    /// The week start (0 = Monday).
    var weekStart = 0

    static let weekdayCodes = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]

    /// The most periods and candidate instances one expansion of one rule looks at (a
    /// `FREQ=SECONDLY;COUNT=1000000000` rule, or a `COUNT` rule that starts centuries before
    /// the window, stops there).
    static let workBudget = 1_000_000

    /// What was left out of the rule text while reading it (junk parts), for a warning.
    var skipped: [String] = []

    /// Parses the rule text; throws a message naming the bad part.
    ///
    /// Damage the reference implementation reads through is read through too (see
    /// docs/providers/calendar.md, "Damaged and unusual data"): separators escaped as in TEXT
    /// (`FREQ=DAILY\;COUNT=10`, `BYDAY=MO\,TU`, as Exchange and some converters write), and
    /// parts that are not `NAME=value` (`RRULE:FREQ=WEEKLY;JUNK`) or that are `X-` extensions are
    /// left out (listed in `skipped`). An unknown part of another name (`RSCALE`, `SKIP`) still
    /// rejects the rule: it could change which dates the rule means.
    init(_ text: String, parseUntil: (String) -> EventTime?) throws(RecurrenceError) {
        var frequency: Frequency?
        var text = text
        if text.utf8.contains(UInt8(ascii: "\\")) {
            text = String(decoding: ICSText.unescapeSeparators(Array(text.utf8)), as: UTF8.self)
        }
        for part in text.split(separator: ";") where !part.isEmpty {
            let pieces = part.split(separator: "=", maxSplits: 1)
            guard pieces.count == 2 else {
                skipped.append(Self.excerpt(part))
                continue
            }
            let key = pieces[0].uppercased()
            if key.hasPrefix("X-") {
                skipped.append(Self.excerpt(part))
                continue
            }
            let value = String(pieces[1])
            func integers(_ range: ClosedRange<Int>, allowNegative: Bool) throws(RecurrenceError) -> [Int] {
                var result: [Int] = []
                for item in value.split(separator: ",") {
                    // `magnitude`, not `abs`: abs(Int.min) traps.
                    guard let number = Int(item.hasPrefix("+") ? item.dropFirst() : item),
                        number.magnitude >= UInt(range.lowerBound), number.magnitude <= UInt(range.upperBound),
                        allowNegative || number >= 0
                    else {
                        throw RecurrenceError("RRULE \(key) has an invalid value \"\(Self.excerpt(item))\"")
                    }
                    result.append(number)
                }
                return result
            }
            switch key {
            case "FREQ":
                guard let parsed = Frequency(rawValue: value.uppercased()) else {
                    throw RecurrenceError(
                        "RRULE FREQ=\(Self.excerpt(value)) is not a frequency (SECONDLY, MINUTELY, HOURLY, DAILY, WEEKLY, MONTHLY, YEARLY)")
                }
                frequency = parsed
            case "INTERVAL":
                guard let number = Int(value), number >= 1 else {
                    throw RecurrenceError("RRULE INTERVAL must be a positive integer, not \"\(Self.excerpt(value))\"")
                }
                interval = number
            case "COUNT":
                // A negative COUNT (seen from some exporters) is dropped, as recurring-ical-events does.
                guard let number = Int(value) else {
                    throw RecurrenceError("RRULE COUNT must be an integer, not \"\(Self.excerpt(value))\"")
                }
                if number >= 0 { count = number }
            case "UNTIL":
                guard let parsed = parseUntil(value) else {
                    throw RecurrenceError("RRULE UNTIL=\(Self.excerpt(value)) is not a DATE or DATE-TIME")
                }
                until = parsed
            case "BYDAY":
                for item in value.uppercased().split(separator: ",") {
                    let code = String(item.suffix(2))
                    guard let weekday = Self.weekdayCodes.firstIndex(of: code) else {
                        throw RecurrenceError("RRULE BYDAY has an invalid weekday \"\(Self.excerpt(item))\"")
                    }
                    let prefix = item.dropLast(2)
                    var ordinal = 0
                    if !prefix.isEmpty {
                        guard let number = Int(prefix.hasPrefix("+") ? prefix.dropFirst() : prefix),
                            number != 0, number.magnitude <= 53
                        else { throw RecurrenceError("RRULE BYDAY has an invalid ordinal \"\(Self.excerpt(item))\"") }
                        ordinal = number
                    }
                    byDay.append(WeekdayNumber(ordinal: ordinal, weekday: weekday))
                }
            case "BYMONTHDAY": byMonthDay = try integers(1...31, allowNegative: true)
            case "BYMONTH": byMonth = try integers(1...12, allowNegative: false)
            case "BYYEARDAY": byYearDay = try integers(1...366, allowNegative: true)
            case "BYWEEKNO": byWeekNo = try integers(1...53, allowNegative: true)
            case "BYHOUR": byHour = try integers(0...23, allowNegative: false)
            case "BYMINUTE": byMinute = try integers(0...59, allowNegative: false)
            case "BYSECOND": bySecond = try integers(0...60, allowNegative: false)
            case "BYSETPOS": bySetPos = try integers(1...366, allowNegative: true)
            case "WKST":
                guard let weekday = Self.weekdayCodes.firstIndex(of: value.uppercased()) else {
                    throw RecurrenceError("RRULE WKST=\(Self.excerpt(value)) is not a weekday (MO…SU)")
                }
                weekStart = weekday
            default:
                throw RecurrenceError("unknown RRULE part \"\(Self.excerpt(key))\"")
            }
        }
        guard let frequency else { throw RecurrenceError("RRULE has no FREQ") }
        self.frequency = frequency
        // Leap seconds are read as second 59 (as DATE-TIME values are).
        bySecond = bySecond.map { min($0, 59) }
    }

    /// At most 40 characters of a value, for messages.
    static func excerpt(_ text: some StringProtocol) -> String {
        text.count > 40 ? String(text.prefix(40)) + "…" : String(text)
    }

    /// The result of an expansion: instance starts in order, and whether the work budget ended
    /// it early.
    struct Expanded {
        var starts: [Int] = []
        var cutShort = false
    }

    /// Wall-clock starts (local seconds) of the rule's instances from `start` on, in order, while
    /// `accept` answers true; at most `count` of them when COUNT is set, none after `last`.
    /// `skipTo` (local seconds) lets rules without COUNT jump close to a window: instances before
    /// it may be left out.
    func expand(start: Int, skipTo: Int?, through last: Int, accept: (Int) -> Bool) -> Expanded {
        if frequency.seconds != nil { return expandSubDaily(start: start, skipTo: skipTo, through: last, accept: accept) }
        var out = Expanded()
        let (startDay, startSecond) = Civil.split(start)
        let startDate = Civil.date(days: startDay)
        let times = timesOfDay(startSecond)
        let lastDay = Civil.floorDiv(last, 86_400)
        var period = 0
        if count == nil, let skipTo, skipTo > start {
            let skipDays = Civil.floorDiv(skipTo, 86_400) - startDay
            let unit: Int
            switch frequency {
            case .weekly: unit = 7
            case .monthly: unit = 31
            case .yearly: unit = 366
            default: unit = 1
            }
            let (span, overflow) = unit.multipliedReportingOverflow(by: interval)
            period = overflow ? 0 : max(0, skipDays / span - 1)
        }
        var emitted = 0
        var misses = 0
        var work = 0
        var days: [Int] = []
        var candidates: [Int] = []
        while true {
            // The first day of the period, or nil when it is past any representable date.
            guard let step = period.multipliedReportingOverflow(by: interval).overflow ? nil : period * interval,
                let periodFirst = periodDays(step, startDay: startDay, startDate: startDate, into: &days)
            else { break }
            if periodFirst > lastDay { break }
            work += 1 + days.count * times.count
            if work > Self.workBudget {
                out.cutShort = true
                break
            }
            candidates.removeAll(keepingCapacity: true)
            Self.sortUnique(&days)
            for day in days {
                for time in times { candidates.append(day * 86_400 + time) }
            }
            if !bySetPos.isEmpty { candidates = Self.select(bySetPos, from: candidates) }
            misses = candidates.isEmpty ? misses + 1 : 0
            if misses > 4000 { break }  // a rule that can never match (e.g. 30 February)
            for instance in candidates where instance >= start {
                if instance > last || !accept(instance) { return out }
                out.starts.append(instance)
                emitted += 1
                if let count, emitted >= count { return out }
            }
            period += 1
        }
        return out
    }

    /// HOURLY, MINUTELY and SECONDLY: periods are `interval` hours, minutes or seconds from
    /// `start`; days that BYMONTH, BYYEARDAY, BYMONTHDAY or BYDAY rule out are skipped whole.
    private func expandSubDaily(start: Int, skipTo: Int?, through last: Int, accept: (Int) -> Bool) -> Expanded {
        var out = Expanded()
        guard let unit = frequency.seconds else { return out }
        let (step, overflow) = unit.multipliedReportingOverflow(by: interval)
        // A step longer than any calendar: only the first period.
        let stride = overflow || step > 400 * 366 * 86_400 ? Int.max / 4 : step
        let startSecond = Civil.split(start).secondOfDay
        let minutes = byMinute.isEmpty ? [startSecond / 60 % 60] : byMinute.sorted()
        let seconds = bySecond.isEmpty ? [startSecond % 60] : bySecond.sorted()
        var cursor = count == nil ? max(start, skipTo ?? start) : start
        var emitted = 0
        var work = 0
        var candidates: [Int] = []
        while cursor <= last {
            work += 1
            if work > Self.workBudget {
                out.cutShort = true
                break
            }
            // The first period start at or after the cursor.
            let periods = (cursor - start + stride - 1) / stride
            let (offset, tooFar) = periods.multipliedReportingOverflow(by: stride)
            if tooFar || offset > last - start { break }
            let periodStart = start + offset
            let (day, secondOfDay) = Civil.split(periodStart)
            guard matchesDay(day) else {
                cursor = (day + 1) * 86_400
                continue
            }
            candidates.removeAll(keepingCapacity: true)
            let hour = secondOfDay / 3600
            if byHour.isEmpty || byHour.contains(hour) {
                switch frequency {
                case .hourly:
                    let hourStart = periodStart - secondOfDay % 3600
                    for minute in minutes {
                        for second in seconds { candidates.append(hourStart + minute * 60 + second) }
                    }
                case .minutely:
                    if byMinute.isEmpty || byMinute.contains(secondOfDay / 60 % 60) {
                        let minuteStart = periodStart - secondOfDay % 60
                        for second in seconds { candidates.append(minuteStart + second) }
                    }
                default:
                    if (byMinute.isEmpty || byMinute.contains(secondOfDay / 60 % 60))
                        && (bySecond.isEmpty || bySecond.contains(secondOfDay % 60))
                    {
                        candidates.append(periodStart)
                    }
                }
            }
            work += candidates.count
            if !bySetPos.isEmpty { candidates = Self.select(bySetPos, from: candidates) }
            for instance in candidates where instance >= start {
                if instance > last || !accept(instance) { return out }
                out.starts.append(instance)
                emitted += 1
                if let count, emitted >= count { return out }
            }
            let (next, nextOverflow) = periodStart.addingReportingOverflow(stride)
            if nextOverflow { break }
            cursor = next
        }
        return out
    }

    /// The seconds of the day an instance can start at, for the frequencies of a day or longer:
    /// BYHOUR × BYMINUTE × BYSECOND, each defaulting to the start's own.
    private func timesOfDay(_ startSecond: Int) -> [Int] {
        if byHour.isEmpty, byMinute.isEmpty, bySecond.isEmpty { return [startSecond] }
        let hours = byHour.isEmpty ? [startSecond / 3600] : byHour
        let minutes = byMinute.isEmpty ? [startSecond / 60 % 60] : byMinute
        let seconds = bySecond.isEmpty ? [startSecond % 60] : bySecond
        var times: [Int] = []
        times.reserveCapacity(hours.count * minutes.count * seconds.count)
        for hour in hours {
            for minute in minutes {
                for second in seconds { times.append(hour * 3600 + minute * 60 + second) }
            }
        }
        Self.sortUnique(&times)
        return times
    }

    /// The candidate days of period number `step` (already multiplied by the interval) into
    /// `days`; returns the period's first day, or nil past the year 9999.
    private func periodDays(_ step: Int, startDay: Int, startDate: (year: Int, month: Int, day: Int), into days: inout [Int])
        -> Int?
    {
        days.removeAll(keepingCapacity: true)
        switch frequency {
        case .weekly:
            let (weeks, overflow) = step.multipliedReportingOverflow(by: 7)
            guard !overflow, weeks < 4_000_000 else { return nil }
            let startWeekday = Civil.weekday(days: startDay)
            let weekFirst = startDay - (startWeekday - weekStart + 7) % 7 + weeks
            if byDay.isEmpty {
                let day = weekFirst + (startWeekday - weekStart + 7) % 7
                if matchesMonth(day) { days.append(day) }
            } else {
                for entry in byDay {
                    let day = weekFirst + (entry.weekday - weekStart + 7) % 7
                    if matchesMonth(day) { days.append(day) }
                }
            }
            return weekFirst
        case .monthly:
            guard step < 120_000 else { return nil }
            let index = startDate.year * 12 + startDate.month - 1 + step
            let year = Civil.floorDiv(index, 12)
            let month = index - year * 12 + 1
            guard year <= 9999 else { return nil }
            if byMonth.isEmpty || byMonth.contains(month) { days = monthCandidates(year, month, startDate.day) }
            return Civil.days(year: year, month: month, day: 1)
        case .yearly:
            guard step < 10_000 else { return nil }
            let year = startDate.year + step
            guard year <= 9999 else { return nil }
            days = yearCandidates(year, startDate.month, startDate.day, Civil.weekday(days: startDay))
            return Civil.days(year: year, month: 1, day: 1)
        default:  // daily
            guard step < 4_000_000 else { return nil }
            let day = startDay + step
            if matchesDay(day) { days.append(day) }
            return day
        }
    }

    /// Sorts and drops repeats.
    private static func sortUnique(_ values: inout [Int]) {
        guard values.count > 1 else { return }
        values.sort()
        var kept = 1
        for index in 1..<values.count where values[index] != values[kept - 1] {
            values[kept] = values[index]
            kept += 1
        }
        values.removeSubrange(kept...)
    }

    /// BYSETPOS: the listed positions of a period's sorted instances.
    private static func select(_ positions: [Int], from candidates: [Int]) -> [Int] {
        let n = candidates.count
        var picked = positions.compactMap { pos -> Int? in
            let i = pos > 0 ? pos - 1 : n + pos
            return i >= 0 && i < n ? candidates[i] : nil
        }
        sortUnique(&picked)
        return picked
    }

    /// The day filters of the DAILY and shorter frequencies.
    private func matchesDay(_ day: Int) -> Bool {
        matchesMonth(day) && matchesMonthDay(day) && matchesWeekday(day) && matchesYearDay(day)
    }

    private func matchesMonth(_ day: Int) -> Bool {
        byMonth.isEmpty || byMonth.contains(Civil.date(days: day).month)
    }

    private func matchesMonthDay(_ day: Int) -> Bool {
        guard !byMonthDay.isEmpty else { return true }
        let d = Civil.date(days: day)
        let length = Civil.daysInMonth(year: d.year, month: d.month)
        return byMonthDay.contains { $0 > 0 ? $0 == d.day : length + $0 + 1 == d.day }
    }

    private func matchesYearDay(_ day: Int) -> Bool {
        guard !byYearDay.isEmpty else { return true }
        let year = Civil.date(days: day).year
        let jan1 = Civil.days(year: year, month: 1, day: 1)
        let length = Civil.isLeap(year) ? 366 : 365
        return byYearDay.contains { $0 > 0 ? jan1 + $0 - 1 == day : jan1 + length + $0 == day }
    }

    private func matchesWeekday(_ day: Int) -> Bool {
        byDay.isEmpty || byDay.contains { $0.weekday == Civil.weekday(days: day) }
    }

    /// Days in `first...last` picked by BYDAY (ordinals count within the range).
    private func weekdayDays(_ first: Int, _ last: Int) -> [Int] {
        var result: [Int] = []
        for entry in byDay {
            let firstMatch = first + (entry.weekday - Civil.weekday(days: first) + 7) % 7
            if entry.ordinal == 0 {
                var day = firstMatch
                while day <= last {
                    result.append(day)
                    day += 7
                }
            } else if entry.ordinal > 0 {
                let day = firstMatch + (entry.ordinal - 1) * 7
                if day <= last { result.append(day) }
            } else {
                let lastMatch = last - (Civil.weekday(days: last) - entry.weekday + 7) % 7
                let day = lastMatch + (entry.ordinal + 1) * 7
                if day >= first { result.append(day) }
            }
        }
        return result
    }

    private func monthDayDays(_ year: Int, _ month: Int) -> [Int] {
        let length = Civil.daysInMonth(year: year, month: month)
        let first = Civil.days(year: year, month: month, day: 1)
        return byMonthDay.compactMap { value in
            let day = value > 0 ? value : length + value + 1
            return day >= 1 && day <= length ? first + day - 1 : nil
        }
    }

    private func monthCandidates(_ year: Int, _ month: Int, _ startDayOfMonth: Int) -> [Int] {
        let first = Civil.days(year: year, month: month, day: 1)
        let last = first + Civil.daysInMonth(year: year, month: month) - 1
        if !byMonthDay.isEmpty {
            return monthDayDays(year, month).filter(matchesWeekday)
        }
        if !byDay.isEmpty { return weekdayDays(first, last) }
        return startDayOfMonth <= Civil.daysInMonth(year: year, month: month) ? [first + startDayOfMonth - 1] : []
    }

    /// The first day of ISO-style week 1 of `year` with weeks starting on WKST (the first week
    /// with at least four days in the year).
    private func firstWeekStart(_ year: Int) -> Int {
        let jan1 = Civil.days(year: year, month: 1, day: 1)
        let back = (Civil.weekday(days: jan1) - weekStart + 7) % 7
        let weekStartDay = jan1 - back
        return 7 - back >= 4 ? weekStartDay : weekStartDay + 7
    }

    /// BYWEEKNO: the days of the listed weeks of `year` (within the year), on BYDAY's weekdays or
    /// else the start's weekday.
    private func weekNumberDays(_ year: Int, _ startWeekday: Int) -> [Int] {
        let first = firstWeekStart(year)
        let weeks = (firstWeekStart(year + 1) - first) / 7
        let jan1 = Civil.days(year: year, month: 1, day: 1)
        let dec31 = Civil.days(year: year, month: 12, day: 31)
        let weekdays = byDay.isEmpty ? [startWeekday] : byDay.map(\.weekday)
        var result: [Int] = []
        for number in byWeekNo {
            let week = number > 0 ? number : weeks + number + 1
            guard week >= 1, week <= weeks else { continue }
            let weekFirst = first + (week - 1) * 7
            for weekday in weekdays {
                let day = weekFirst + (weekday - weekStart + 7) % 7
                if day >= jan1, day <= dec31 { result.append(day) }
            }
        }
        return result
    }

    private func yearCandidates(_ year: Int, _ startMonth: Int, _ startDayOfMonth: Int, _ startWeekday: Int) -> [Int] {
        let jan1 = Civil.days(year: year, month: 1, day: 1)
        let dec31 = Civil.days(year: year, month: 12, day: 31)
        if !byWeekNo.isEmpty {
            return weekNumberDays(year, startWeekday).filter { matchesMonth($0) && matchesMonthDay($0) && matchesYearDay($0) }
        }
        if !byYearDay.isEmpty {
            let length = dec31 - jan1 + 1
            return byYearDay.compactMap { value in
                let index = value > 0 ? value - 1 : length + value
                return index >= 0 && index < length ? jan1 + index : nil
            }.filter { matchesMonth($0) && matchesWeekday($0) && matchesMonthDay($0) }
        }
        let months = byMonth.isEmpty ? nil : byMonth
        if !byMonthDay.isEmpty {
            return (months ?? Array(1...12)).flatMap { monthDayDays(year, $0) }.filter(matchesWeekday)
        }
        if !byDay.isEmpty {
            if let months {
                return months.flatMap { month in
                    let first = Civil.days(year: year, month: month, day: 1)
                    return weekdayDays(first, first + Civil.daysInMonth(year: year, month: month) - 1)
                }
            }
            return weekdayDays(jan1, dec31)
        }
        return (months ?? [startMonth]).compactMap { month in
            startDayOfMonth <= Civil.daysInMonth(year: year, month: month)
                ? Civil.days(year: year, month: month, day: startDayOfMonth) : nil
        }
    }
}

/// An `RRULE` that cannot be used.
struct RecurrenceError: Error, Sendable {
    var message: String
    init(_ message: String) { self.message = message }
}

/// Recurrence rules in words (English): "Every 2 weeks on Monday and Wednesday, 10 times".
enum RecurrenceWords {
    static let weekdayNames = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    static let monthNames = [
        "January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
        "November", "December",
    ]

    static func ordinal(_ n: Int) -> String {
        if n == -1 { return "last" }
        if n < 0 { return "\(ordinal(-n)) to last" }
        let suffix: String
        switch (n % 10, n % 100) {
        case (_, 11...13): suffix = "th"
        case (1, _): suffix = "st"
        case (2, _): suffix = "nd"
        case (3, _): suffix = "rd"
        default: suffix = "th"
        }
        return "\(n)\(suffix)"
    }

    static func list(_ items: [String]) -> String {
        switch items.count {
        case 0: ""
        case 1: items[0]
        default: items.dropLast().joined(separator: ", ") + " and " + items.last!
        }
    }

    /// The rule in words; `untilText` is the UNTIL date already formatted for the reader.
    static func describe(_ rule: RecurrenceRule, untilText: String?) -> String {
        let unit: (String, String)
        switch rule.frequency {
        case .secondly: unit = ("Every second", "seconds")
        case .minutely: unit = ("Every minute", "minutes")
        case .hourly: unit = ("Hourly", "hours")
        case .daily: unit = ("Daily", "days")
        case .weekly: unit = ("Weekly", "weeks")
        case .monthly: unit = ("Monthly", "months")
        case .yearly: unit = ("Yearly", "years")
        }
        var text = rule.interval == 1 ? unit.0 : "Every \(rule.interval) \(unit.1)"
        if rule.interval == 1, !rule.byDay.isEmpty || !rule.byMonthDay.isEmpty || !rule.byMonth.isEmpty {
            switch rule.frequency {
            case .secondly: text = "Every second"
            case .minutely: text = "Every minute"
            case .hourly: text = "Every hour"
            case .daily: text = "Every day"
            case .weekly: text = "Every week"
            case .monthly: text = "Every month"
            case .yearly: text = "Every year"
            }
        }
        var parts: [String] = []
        if !rule.byMonth.isEmpty { parts.append("in " + list(rule.byMonth.map { monthNames[$0 - 1] })) }
        if !rule.byDay.isEmpty {
            let days = rule.byDay.map { entry in
                entry.ordinal == 0 ? weekdayNames[entry.weekday] : "the \(ordinal(entry.ordinal)) \(weekdayNames[entry.weekday])"
            }
            parts.append("on " + list(days))
        }
        if !rule.byMonthDay.isEmpty {
            parts.append("on the " + list(rule.byMonthDay.map(ordinal)) + (rule.byMonthDay.count == 1 ? " day" : " days"))
        }
        if !rule.bySetPos.isEmpty {
            parts.append("(the " + list(rule.bySetPos.map(ordinal)) + " of those)")
        }
        if !parts.isEmpty { text += " " + parts.joined(separator: " ") }
        if let count = rule.count { text += count == 1 ? ", once" : ", \(count) times" }
        if let untilText { text += ", until \(untilText)" }
        return text
    }
}
