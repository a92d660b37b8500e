import ContextProviderKit

/// A calendar day (proleptic Gregorian), stored as days since 1970-01-01.
///
/// Price files carry dates only; the provider never needs time zones or Foundation's `Date`.
struct Day: Comparable, Hashable, Sendable {
    /// Days since 1970-01-01.
    var ordinal: Int

    /// The day for a valid year, month (1–12) and day of month.
    init(year: Int, month: Int, day: Int) {
        ordinal = GregorianDays.days(year: year, month: month, day: day)
    }

    init(ordinal: Int) { self.ordinal = ordinal }

    /// Year, month and day of month.
    var components: (year: Int, month: Int, day: Int) { GregorianDays.date(days: ordinal) }

    /// `YYYY-MM-DD`.
    var iso: String {
        let (year, month, day) = components
        return "\(Self.pad(year, 4))-\(Self.pad(month, 2))-\(Self.pad(day, 2))"
    }

    /// The same day of the month `months` months earlier, clamped to the end of a shorter month
    /// (2024-03-31 minus one month is 2024-02-29).
    func monthsBack(_ months: Int) -> Day {
        let (year, month, day) = components
        let index = year * 12 + (month - 1) - months
        let newYear = index >= 0 ? index / 12 : (index - 11) / 12
        let newMonth = index - newYear * 12 + 1
        return Day(year: newYear, month: newMonth, day: min(day, Self.daysIn(year: newYear, month: newMonth)))
    }

    static func < (lhs: Day, rhs: Day) -> Bool { lhs.ordinal < rhs.ordinal }

    static func daysIn(year: Int, month: Int) -> Int { GregorianDays.daysInMonth(year: year, month: month) }

    /// Parses `YYYY-MM-DD` (optionally followed by a time, as pandas/yfinance write
    /// `2024-01-31 00:00:00-05:00`), `YYYY/MM/DD`, or Stooq's `YYYYMMDD`.
    static func parse<Bytes: Collection>(_ bytes: Bytes) -> Day? where Bytes.Element == UInt8 {
        let text = Array(bytes)
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for index in range {
                let byte = text[index]
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            return value
        }
        let year: Int?, month: Int?, day: Int?
        if text.count == 8 {
            (year, month, day) = (number(0..<4), number(4..<6), number(6..<8))
        } else if text.count >= 10, text[4] == text[7], text[4] == UInt8(ascii: "-") || text[4] == UInt8(ascii: "/"),
            text.count == 10 || text[10] == UInt8(ascii: " ") || text[10] == UInt8(ascii: "T")
        {
            (year, month, day) = (number(0..<4), number(5..<7), number(8..<10))
        } else {
            return nil
        }
        guard let year, let month, let day, year >= 1800, (1...12).contains(month), day >= 1,
            day <= daysIn(year: year, month: month)
        else { return nil }
        return Day(year: year, month: month, day: day)
    }

    /// Parses a string date (see `parse(_:)` for bytes).
    static func parse(_ string: String) -> Day? { parse(Array(string.utf8)) }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return String(repeating: "0", count: max(0, width - digits.count)) + digits
    }
}
