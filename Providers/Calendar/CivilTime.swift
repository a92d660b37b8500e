import ContextProviderKit

/// Proleptic Gregorian calendar arithmetic on plain integers, without Foundation.
///
/// Days are counted from 1970-01-01 (day 0); "local seconds" are wall-clock seconds counted the
/// same way (`days * 86400 + seconds of the day`) and carry no time zone.
enum Civil {
    /// Days since 1970-01-01 of a calendar date (month 1…12; the day may overflow the month).
    static func days(year: Int, month: Int, day: Int) -> Int { GregorianDays.days(year: year, month: month, day: day) }

    /// The calendar date of a day number.
    static func date(days: Int) -> (year: Int, month: Int, day: Int) { GregorianDays.date(days: days) }

    /// The weekday of a day number: 0 = Monday … 6 = Sunday.
    static func weekday(days: Int) -> Int { GregorianDays.weekday(days: days) }

    /// Whether `year` has a 29 February.
    static func isLeap(_ year: Int) -> Bool { GregorianDays.isLeapYear(year) }

    /// The number of days in a month.
    static func daysInMonth(year: Int, month: Int) -> Int { GregorianDays.daysInMonth(year: year, month: month) }

    /// Floor division.
    static func floorDiv(_ a: Int, _ b: Int) -> Int { a >= 0 ? a / b : (a + 1) / b - 1 }

    /// Splits local seconds into a day number and the seconds of that day.
    static func split(_ seconds: Int) -> (days: Int, secondOfDay: Int) {
        let days = floorDiv(seconds, 86_400)
        return (days, seconds - days * 86_400)
    }

    /// `YYYY-MM-DD`.
    static func isoDate(days: Int) -> String { dateText(days: days, separator: "-") }

    /// `YYYY-MM-DDTHH:MM:SS` of local seconds.
    static func isoDateTime(_ seconds: Int) -> String { dateTimeText(seconds, dateSeparator: "-", timeSeparator: ":") }

    /// `YYYYMMDD` (iCalendar DATE).
    static func icsDate(days: Int) -> String { dateText(days: days, separator: "") }

    /// `YYYYMMDDTHHMMSS` (iCalendar DATE-TIME without the `Z`).
    static func icsDateTime(_ seconds: Int) -> String { dateTimeText(seconds, dateSeparator: "", timeSeparator: "") }

    /// The year, month and day of a day number, zero-padded, with `separator` between them.
    private static func dateText(days: Int, separator: String) -> String {
        let d = date(days: days)
        return pad(d.year, 4) + separator + pad(d.month) + separator + pad(d.day)
    }

    /// `dateText`, `T`, then hours, minutes and seconds with `timeSeparator` between them.
    private static func dateTimeText(_ seconds: Int, dateSeparator: String, timeSeparator: String) -> String {
        let (days, second) = split(seconds)
        return dateText(days: days, separator: dateSeparator) + "T" + pad(second / 3600) + timeSeparator + pad(second / 60 % 60)
            + timeSeparator + pad(second % 60)
    }

    /// Zero-padded decimal.
    static func pad(_ value: Int, _ width: Int = 2) -> String {
        let digits = String(abs(value))
        let padded = digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
        return value < 0 ? "-" + padded : padded
    }

    /// Parses RFC 3339 (`2025-03-10T09:00:00Z`, `…+01:00`, fractional seconds ignored) into UTC
    /// seconds; also accepts a bare date (midnight UTC).
    static func parseRFC3339(_ text: String) -> Int? {
        let b = Array(text.utf8)
        func num(_ from: Int, _ count: Int) -> Int? {
            guard from + count <= b.count else { return nil }
            var value = 0
            for i in from..<(from + count) {
                guard b[i] >= 48, b[i] <= 57 else { return nil }
                value = value * 10 + Int(b[i] - 48)
            }
            return value
        }
        guard let year = num(0, 4), b.count >= 10, b[4] == 45, let month = num(5, 2), b[7] == 45,
            let day = num(8, 2), (1...12).contains(month), day >= 1, day <= daysInMonth(year: year, month: month)
        else { return nil }
        let days = self.days(year: year, month: month, day: day)
        if b.count == 10 { return days * 86_400 }
        guard b.count >= 16, b[10] == 84 || b[10] == 116 || b[10] == 32, let hour = num(11, 2), hour < 24,
            b[13] == 58, let minute = num(14, 2), minute < 60
        else { return nil }
        var index = 16
        var second = 0
        if index < b.count, b[index] == 58 {
            guard let s = num(index + 1, 2), s <= 60 else { return nil }
            second = s
            index += 3
            if index < b.count, b[index] == 46 {
                index += 1
                while index < b.count, b[index] >= 48, b[index] <= 57 { index += 1 }
            }
        }
        let local = days * 86_400 + hour * 3600 + minute * 60 + second
        guard index < b.count else { return nil }  // an offset is required
        switch b[index] {
        case 90, 122: return index + 1 == b.count ? local : nil
        case 43, 45:
            guard index + 6 == b.count, let oh = num(index + 1, 2), b[index + 3] == 58, let om = num(index + 4, 2)
            else { return nil }
            let offset = (oh * 3600 + om * 60) * (b[index] == 43 ? 1 : -1)
            return local - offset
        default: return nil
        }
    }
}
