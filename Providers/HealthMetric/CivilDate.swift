import ContextProviderKit

/// Calendar arithmetic on proleptic Gregorian days, without Foundation.
///
/// A day is the number of days since 1970-01-01 (negative before). Records keep the local date
/// they were written with (`2024-01-02 08:00:00 +0100` is on 2024-01-02), which is how the Health
/// app groups them.
enum CivilDate {
    /// The day number of a calendar date.
    static func day(year: Int, month: Int, day: Int) -> Int { GregorianDays.days(year: year, month: month, day: day) }

    /// The calendar date of a day number.
    static func components(_ day: Int) -> (year: Int, month: Int, day: Int) { GregorianDays.date(days: day) }

    /// The number of days in a month.
    static func daysInMonth(year: Int, month: Int) -> Int { GregorianDays.daysInMonth(year: year, month: month) }

    /// 0 for Monday … 6 for Sunday.
    static func weekday(_ day: Int) -> Int { GregorianDays.weekday(days: day) }

    /// The short English weekday name.
    static func weekdayName(_ day: Int) -> String {
        ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"][weekday(day)]
    }

    /// `YYYY-MM-DD`.
    static func format(_ day: Int) -> String {
        let (year, month, dayOfMonth) = components(day)
        return pad(year, 4) + "-" + pad(month, 2) + "-" + pad(dayOfMonth, 2)
    }

    /// Parses `YYYY-MM-DD` naming a real date.
    static func parse(_ string: String) -> Int? {
        let bytes = Array(string.utf8)
        guard bytes.count == 10 else { return nil }
        return bytes.withUnsafeBufferPointer { parseDate($0.baseAddress!, count: 10) }
    }

    /// Parses `YYYY-MM-DD` at `pointer` (at least 10 bytes).
    @inline(__always)
    static func parseDate(_ pointer: UnsafePointer<UInt8>, count: Int) -> Int? {
        guard count >= 10, pointer[4] == 0x2D, pointer[7] == 0x2D,
            let year = digits(pointer, 4), let month = digits(pointer + 5, 2), let dayOfMonth = digits(pointer + 8, 2),
            (1...12).contains(month), dayOfMonth >= 1, dayOfMonth <= daysInMonth(year: year, month: month)
        else { return nil }
        return day(year: year, month: month, day: dayOfMonth)
    }

    /// A Health export timestamp, `YYYY-MM-DD HH:MM:SS ±HHMM` (also `T` and `Z`, `±HH:MM`, and a
    /// missing offset, read as UTC): the local day and the absolute time in seconds since 1970.
    @inline(__always)
    static func parseTimestamp(_ pointer: UnsafePointer<UInt8>, count: Int) -> (day: Int, seconds: Int)? {
        guard count >= 19, let day = parseDate(pointer, count: count),
            pointer[10] == 0x20 || pointer[10] == 0x54, pointer[13] == 0x3A, pointer[16] == 0x3A,
            let hour = digits(pointer + 11, 2), let minute = digits(pointer + 14, 2), let second = digits(pointer + 17, 2),
            hour < 24, minute < 60, second <= 60
        else { return nil }
        var index = 19
        while index < count, pointer[index] == 0x20 { index += 1 }
        var offset = 0
        if index < count {
            let sign = pointer[index]
            if sign == 0x5A {
                index += 1
            } else if sign == 0x2B || sign == 0x2D {
                guard index + 5 <= count, let offsetHour = digits(pointer + index + 1, 2) else { return nil }
                var minuteAt = index + 3
                if pointer[minuteAt] == 0x3A { minuteAt += 1 }
                guard minuteAt + 2 <= count, let offsetMinute = digits(pointer + minuteAt, 2) else { return nil }
                offset = (offsetHour * 3600 + offsetMinute * 60) * (sign == 0x2D ? -1 : 1)
                index = minuteAt + 2
            } else {
                return nil
            }
        }
        guard index == count else { return nil }
        let local = day * 86_400 + hour * 3600 + minute * 60 + second
        return (day, local - offset)
    }

    /// The local hour of a timestamp already known to be valid.
    @inline(__always)
    static func hour(_ pointer: UnsafePointer<UInt8>) -> Int { digits(pointer + 11, 2) ?? 0 }

    @inline(__always)
    static func digits(_ pointer: UnsafePointer<UInt8>, _ count: Int) -> Int? {
        var value = 0
        for index in 0..<count {
            let digit = pointer[index] &- 0x30
            guard digit < 10 else { return nil }
            value = value * 10 + Int(digit)
        }
        return value
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }
}
