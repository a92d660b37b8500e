/// A parsed `RRULE` (RFC 5545 §3.3.10).
struct RecurrenceRule: Sendable, Hashable {
    enum Frequency: String, Sendable, Hashable {
        case daily = "DAILY", weekly = "WEEKLY", monthly = "MONTHLY", yearly = "YEARLY"
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
    var bySetPos: [Int] = []
    /// The week start (0 = Monday).
    var weekStart = 0

    static let weekdayCodes = ["MO", "TU", "WE", "TH", "FR", "SA", "SU"]

    /// Parses the rule text; throws a message naming the bad part.
    init(_ text: String, parseUntil: (String) -> EventTime?) throws(RecurrenceError) {
        var frequency: Frequency?
        for part in text.split(separator: ";") where !part.isEmpty {
            let pieces = part.split(separator: "=", maxSplits: 1)
            guard pieces.count == 2 else { throw RecurrenceError("malformed RRULE part \"\(part)\"") }
            let key = pieces[0].uppercased()
            let value = String(pieces[1])
            func integers(_ range: ClosedRange<Int>, allowNegative: Bool) throws(RecurrenceError) -> [Int] {
                var result: [Int] = []
                for item in value.split(separator: ",") {
                    guard let number = Int(item), range.contains(abs(number)), allowNegative || number > 0 else {
                        throw RecurrenceError("RRULE \(key) has an invalid value \"\(item)\"")
                    }
                    result.append(number)
                }
                return result
            }
            switch key {
            case "FREQ":
                guard let parsed = Frequency(rawValue: value.uppercased()) else {
                    throw RecurrenceError("RRULE FREQ=\(value) is not supported (DAILY, WEEKLY, MONTHLY, YEARLY are)")
                }
                frequency = parsed
            case "INTERVAL":
                guard let number = Int(value), number >= 1 else {
                    throw RecurrenceError("RRULE INTERVAL must be a positive integer, not \"\(value)\"")
                }
                interval = number
            case "COUNT":
                guard let number = Int(value), number >= 1 else {
                    throw RecurrenceError("RRULE COUNT must be a positive integer, not \"\(value)\"")
                }
                count = number
            case "UNTIL":
                guard let parsed = parseUntil(value) else {
                    throw RecurrenceError("RRULE UNTIL=\(value) is not a DATE or DATE-TIME")
                }
                until = parsed
            case "BYDAY":
                for item in value.uppercased().split(separator: ",") {
                    let code = String(item.suffix(2))
                    guard let weekday = Self.weekdayCodes.firstIndex(of: code) else {
                        throw RecurrenceError("RRULE BYDAY has an invalid weekday \"\(item)\"")
                    }
                    let prefix = item.dropLast(2)
                    var ordinal = 0
                    if !prefix.isEmpty {
                        guard let number = Int(prefix.hasPrefix("+") ? String(prefix.dropFirst()) : String(prefix)),
                            number != 0, abs(number) <= 53
                        else { throw RecurrenceError("RRULE BYDAY has an invalid ordinal \"\(item)\"") }
                        ordinal = number
                    }
                    byDay.append(WeekdayNumber(ordinal: ordinal, weekday: weekday))
                }
            case "BYMONTHDAY": byMonthDay = try integers(1...31, allowNegative: true)
            case "BYMONTH": byMonth = try integers(1...12, allowNegative: false)
            case "BYYEARDAY": byYearDay = try integers(1...366, allowNegative: true)
            case "BYSETPOS": bySetPos = try integers(1...366, allowNegative: true)
            case "WKST":
                guard let weekday = Self.weekdayCodes.firstIndex(of: value.uppercased()) else {
                    throw RecurrenceError("RRULE WKST=\(value) is not a weekday (MO…SU)")
                }
                weekStart = weekday
            case "BYHOUR", "BYMINUTE", "BYSECOND", "BYWEEKNO":
                throw RecurrenceError("RRULE \(key) is not supported")
            default:
                throw RecurrenceError("unknown RRULE part \"\(key)\"")
            }
        }
        guard let frequency else { throw RecurrenceError("RRULE has no FREQ") }
        self.frequency = frequency
    }

    /// Start days (day numbers) of the occurrences from `startDay` on, in order, while `keepGoing`
    /// answers true for the period's first day; at most `count` of them when COUNT is set.
    /// `skipToDay` lets DAILY and WEEKLY rules without COUNT jump close to a window.
    func occurrenceDays(startDay: Int, skipToDay: Int?, through lastDay: Int, accept: (Int) -> Bool) -> [Int] {
        var result: [Int] = []
        var emitted = 0
        let start = Civil.date(days: startDay)
        var period = 0
        if count == nil, let skipToDay, skipToDay > startDay {
            switch frequency {
            case .daily: period = max(0, (skipToDay - startDay) / interval - 1)
            case .weekly: period = max(0, (skipToDay - startDay) / (7 * interval) - 1)
            case .monthly: period = max(0, (skipToDay - startDay) / (31 * interval) - 1)
            case .yearly: period = max(0, (skipToDay - startDay) / (366 * interval) - 1)
            }
        }
        var misses = 0
        var candidates: [Int] = []
        while true {
            let periodFirst: Int
            switch frequency {
            case .daily:
                let day = startDay + period * interval
                periodFirst = day
                candidates.removeAll(keepingCapacity: true)
                if matchesMonth(day) && matchesMonthDay(day) && matchesWeekday(day) { candidates.append(day) }
            case .weekly:
                let weekFirst = startDay - (Civil.weekday(days: startDay) - weekStart + 7) % 7 + period * 7 * interval
                periodFirst = weekFirst
                candidates.removeAll(keepingCapacity: true)
                if byDay.isEmpty {
                    let day = weekFirst + (Civil.weekday(days: startDay) - weekStart + 7) % 7
                    if matchesMonth(day) { candidates.append(day) }
                } else {
                    for entry in byDay {
                        let day = weekFirst + (entry.weekday - weekStart + 7) % 7
                        if matchesMonth(day) { candidates.append(day) }
                    }
                }
            case .monthly:
                let index = start.year * 12 + start.month - 1 + period * interval
                let year = Civil.floorDiv(index, 12)
                let month = index - year * 12 + 1
                periodFirst = Civil.days(year: year, month: month, day: 1)
                candidates = byMonth.isEmpty || byMonth.contains(month) ? monthCandidates(year, month, start.day) : []
            case .yearly:
                let year = start.year + period * interval
                periodFirst = Civil.days(year: year, month: 1, day: 1)
                candidates = yearCandidates(year, start.month, start.day)
            }
            if periodFirst > lastDay { break }
            Self.sortUnique(&candidates)
            if !bySetPos.isEmpty {
                let n = candidates.count
                candidates = bySetPos.compactMap { pos -> Int? in
                    let i = pos > 0 ? pos - 1 : n + pos
                    return i >= 0 && i < n ? candidates[i] : nil
                }
                Self.sortUnique(&candidates)
            }
            misses = candidates.isEmpty ? misses + 1 : 0
            if misses > 4000 { break }  // a rule that can never match (e.g. 30 February)
            for day in candidates where day >= startDay {
                if day > lastDay || !accept(day) { return result }
                result.append(day)
                emitted += 1
                if let count, emitted >= count { return result }
            }
            period += 1
        }
        return result
    }

    /// Sorts the days and drops repeats.
    private static func sortUnique(_ days: inout [Int]) {
        guard days.count > 1 else { return }
        days.sort()
        var kept = 1
        for index in 1..<days.count where days[index] != days[kept - 1] {
            days[kept] = days[index]
            kept += 1
        }
        days.removeSubrange(kept...)
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

    private func yearCandidates(_ year: Int, _ startMonth: Int, _ startDayOfMonth: Int) -> [Int] {
        let jan1 = Civil.days(year: year, month: 1, day: 1)
        let dec31 = Civil.days(year: year, month: 12, day: 31)
        if !byYearDay.isEmpty {
            let length = dec31 - jan1 + 1
            return byYearDay.compactMap { value in
                let index = value > 0 ? value - 1 : length + value
                return index >= 0 && index < length ? jan1 + index : nil
            }.filter { matchesMonth($0) && matchesWeekday($0) }
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
        case .daily: unit = ("Daily", "days")
        case .weekly: unit = ("Weekly", "weeks")
        case .monthly: unit = ("Monthly", "months")
        case .yearly: unit = ("Yearly", "years")
        }
        var text = rule.interval == 1 ? unit.0 : "Every \(rule.interval) \(unit.1)"
        if rule.interval == 1, !rule.byDay.isEmpty || !rule.byMonthDay.isEmpty || !rule.byMonth.isEmpty {
            switch rule.frequency {
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
