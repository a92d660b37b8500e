/// Dates and ranges in the client's language (English, German, else ISO 8601) and time zone.
struct EventFormatter: Sendable {
    enum Language: Sendable { case english, german, iso }

    var language: Language
    var zone: ZoneRules
    /// The year not spelled out (the current year in the display zone).
    var currentYear: Int

    /// `en*` → English, `de*` → German, anything else → ISO 8601.
    init(locale: String, zone: ZoneRules, now: Int) {
        let tag = locale.lowercased()
        language = tag.hasPrefix("en") ? .english : tag.hasPrefix("de") ? .german : .iso
        self.zone = zone
        currentYear = Civil.date(days: Civil.split(zone.local(fromUTC: now)).days).year
    }

    static let englishWeekdays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    static let englishMonths = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    static let germanWeekdays = ["Mo.", "Di.", "Mi.", "Do.", "Fr.", "Sa.", "So."]
    static let germanMonths = [
        "Jan.", "Feb.", "März", "Apr.", "Mai", "Juni", "Juli", "Aug.", "Sept.", "Okt.", "Nov.", "Dez.",
    ]

    /// A point in time as the reader sees it: a day number and the second of the day.
    struct Wall {
        var days: Int
        var second: Int
    }

    /// The wall-clock reading of a value in the display zone (floating values and dates as written).
    func wall(_ time: ItemTime) -> Wall {
        let local: Int
        switch time {
        case .date(let days): return Wall(days: days, second: 0)
        case .floating(let seconds): local = seconds
        case .instant(let utc): local = zone.local(fromUTC: utc)
        }
        let (days, second) = Civil.split(local)
        return Wall(days: days, second: second)
    }

    /// "Mon, Mar 10" / "Mo., 10. März" / "2025-03-10", with the year when it is not the current one.
    func day(_ days: Int, weekday: Bool = true) -> String {
        let d = Civil.date(days: days)
        let w = Civil.weekday(days: days)
        let showYear = d.year != currentYear
        switch language {
        case .english:
            let base = "\(weekday ? Self.englishWeekdays[w] + ", " : "")\(Self.englishMonths[d.month - 1]) \(d.day)"
            return showYear ? "\(base), \(d.year)" : base
        case .german:
            let base = "\(weekday ? Self.germanWeekdays[w] + ", " : "")\(d.day). \(Self.germanMonths[d.month - 1])"
            return showYear ? "\(base) \(d.year)" : base
        case .iso:
            return Civil.isoDate(days: days)
        }
    }

    /// "9:00 AM" / "09:00" / "09:00".
    func time(_ second: Int, meridiem: Bool = true) -> String {
        let hour = second / 3600
        let minute = Civil.pad(second / 60 % 60)
        switch language {
        case .english:
            let twelve = hour % 12 == 0 ? 12 : hour % 12
            return meridiem ? "\(twelve):\(minute) \(hour < 12 ? "AM" : "PM")" : "\(twelve):\(minute)"
        case .german, .iso:
            return "\(Civil.pad(hour)):\(minute)"
        }
    }

    /// A compact range: "Mon, Mar 10, 9:00 – 9:30 AM", "Mar 10 – 12", "Mo., 10. März, 09:00–09:30".
    func range(start: ItemTime, end: ItemTime, allDay: Bool) -> String {
        let a = wall(start)
        let b = wall(end)
        if allDay {
            // DTEND of an all-day event is exclusive.
            let lastDay = max(a.days, b.days - 1)
            if lastDay == a.days { return day(a.days) }
            let s = Civil.date(days: a.days)
            let e = Civil.date(days: lastDay)
            switch language {
            case .english:
                if s.year == e.year, s.month == e.month, s.year == currentYear {
                    return "\(Self.englishMonths[s.month - 1]) \(s.day) – \(e.day)"
                }
                return "\(day(a.days, weekday: false)) – \(day(lastDay, weekday: false))"
            case .german:
                if s.year == e.year, s.month == e.month, s.year == currentYear {
                    return "\(s.day).–\(e.day). \(Self.germanMonths[s.month - 1])"
                }
                return "\(day(a.days, weekday: false)) – \(day(lastDay, weekday: false))"
            case .iso:
                return "\(Civil.isoDate(days: a.days)) – \(Civil.isoDate(days: lastDay))"
            }
        }
        let sameDay = a.days == b.days || (b.days == a.days + 1 && b.second == 0 && a.second > 0)
        if start == end { return "\(day(a.days)), \(time(a.second))".isoJoined(language) }
        if sameDay {
            let endSecond = b.days == a.days ? b.second : 86_400
            switch language {
            case .english:
                let samePeriod = (a.second < 43_200) == (endSecond < 43_200) && endSecond < 86_400
                return "\(day(a.days)), \(time(a.second, meridiem: !samePeriod)) – \(time(endSecond % 86_400))"
            case .german:
                return "\(day(a.days)), \(time(a.second))–\(endSecond == 86_400 ? "24:00" : time(endSecond))"
            case .iso:
                return "\(Civil.isoDate(days: a.days)) \(time(a.second))–\(endSecond == 86_400 ? "24:00" : time(endSecond))"
            }
        }
        switch language {
        case .iso:
            return "\(Civil.isoDate(days: a.days)) \(time(a.second)) – \(Civil.isoDate(days: b.days)) \(time(b.second))"
        default:
            return "\(day(a.days)), \(time(a.second)) – \(day(b.days)), \(time(b.second))"
        }
    }

    /// A full date and time for the detail view: "Mon, Mar 10, 2025, 9:00 AM".
    func full(_ value: ItemTime) -> String {
        let w = wall(value)
        let d = Civil.date(days: w.days)
        let dayText: String
        switch language {
        case .english: dayText = "\(Self.englishWeekdays[Civil.weekday(days: w.days)]), \(Self.englishMonths[d.month - 1]) \(d.day), \(d.year)"
        case .german: dayText = "\(Self.germanWeekdays[Civil.weekday(days: w.days)]), \(d.day). \(Self.germanMonths[d.month - 1]) \(d.year)"
        case .iso: dayText = Civil.isoDate(days: w.days)
        }
        if case .date = value { return dayText }
        return language == .iso ? "\(dayText) \(time(w.second))" : "\(dayText), \(time(w.second))"
    }
}

extension String {
    /// ISO output uses a space between date and time, not ", ".
    fileprivate func isoJoined(_ language: EventFormatter.Language) -> String {
        language == .iso ? replacingFirst(", ", with: " ") : self
    }

    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else { return self }
        return String(self[..<range.lowerBound]) + replacement + String(self[range.upperBound...])
    }
}

/// An item's `startDate`/`endDate` value: `2025-03-10`, `2025-03-10T09:00:00` (floating) or
/// `2025-03-10T08:00:00Z`.
enum ItemTime: Sendable, Hashable {
    case date(Int)
    case floating(Int)
    case instant(Int)

    init?(_ text: String) {
        if text.utf8.count == 10 {
            guard let seconds = Civil.parseRFC3339(text) else { return nil }
            self = .date(seconds / 86_400)
        } else if text.hasSuffix("Z") || text.hasSuffix("z") || text.dropFirst(19).contains(where: { $0 == "+" || $0 == "-" }) {
            guard let seconds = Civil.parseRFC3339(text) else { return nil }
            self = .instant(seconds)
        } else {
            guard let seconds = Civil.parseRFC3339(text + "Z") else { return nil }
            self = .floating(seconds)
        }
    }

    init(_ time: EventTime) {
        switch time.kind {
        case .date: self = .date(Civil.split(time.local).days)
        case .floating: self = .floating(time.local)
        case .zoned where time.zone == nil: self = .floating(time.local)
        case .utc, .zoned: self = .instant(time.utc(.utc))
        }
    }
}
