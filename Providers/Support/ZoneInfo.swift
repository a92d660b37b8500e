import ContextProviderKit

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A zone's UTC offset at one instant.
package struct ZoneOffset: Sendable, Equatable {
    /// Seconds east of UTC.
    package var seconds: Int
    /// The abbreviation in force, e.g. `CET`, `CEST`, `+0530`.
    package var abbreviation: String
    /// Whether daylight-saving time is in force.
    package var isDaylightSaving: Bool

    /// `UTC+01:00`, `UTC−03:30`, `UTC±00:00`.
    package var label: String {
        if seconds == 0 { return "UTC±00:00" }
        let magnitude = seconds.magnitude / 60
        let hours = magnitude / 60, minutes = magnitude % 60
        return "UTC\(seconds < 0 ? "−" : "+")\(hours < 10 ? "0" : "")\(hours):\(minutes < 10 ? "0" : "")\(minutes)"
    }
}

/// The system's IANA time zone database (the zoneinfo folder): where it is and which names may be
/// looked up in it. Read without ICU or Foundation.
package enum ZoneInfo {
    /// Why a zone could not be read.
    package struct Failure: Error, Sendable {
        package var message: String
    }

    /// Where zone files live, first match wins (`TZDIR` overrides).
    package static var directories: [String] {
        var result: [String] = []
        if let directory = getenv("TZDIR") { result.append(String(cString: directory)) }
        result += ["/usr/share/zoneinfo", "/usr/lib/zoneinfo", "/usr/share/lib/zoneinfo"]
        return result
    }

    /// Zone files are a few KB; a larger one is not a zone file.
    package static let maximumFileBytes = 1 << 20

    /// Whether `name` looks like a zoneinfo name (printable ASCII, no `..`, no leading `/`).
    package static func isSafeName(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix("/") && !name.contains("..") && name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F }
    }

    /// The path of zone `name`'s file in the first folder that has it, or `nil`.
    package static func path(of name: String) -> String? {
        guard isSafeName(name) else { return nil }
        for directory in directories {
            let path = directory + "/" + name
            if let info = FileIO.info(path), !info.isDirectory { return path }
        }
        return nil
    }

    /// Zone `name` (e.g. `Europe/Zurich`) from the first folder that has it.
    package static func load(_ name: String) throws(Failure) -> TZifFile {
        guard isSafeName(name) else { throw Failure(message: "\"\(name)\" is not an IANA time zone name") }
        var lastError = "no zoneinfo folder found (install the tzdata package)"
        for directory in directories {
            let bytes: [UInt8]
            do {
                bytes = try FileIO.readChecked(directory + "/" + name, limit: maximumFileBytes)
            } catch {
                lastError = "\(directory)/\(name): \(error.message)"
                continue
            }
            return try TZifFile(bytes: bytes, name: name)
        }
        throw Failure(message: lastError)
    }
}

/// A TZif file (RFC 8536), any version: its transition table, local time types and, from
/// version 2 on, the POSIX TZ rule of its footer for instants past the table.
package struct TZifFile: Sendable {
    /// One local time type.
    package struct LocalTimeType: Sendable, Equatable {
        /// Seconds east of UTC.
        package var offset: Int
        package var isDaylightSaving: Bool
        package var abbreviation: String
    }

    /// The version byte: 0 for version 1, else `"2"`, `"3"`, `"4"`.
    package var version: UInt8 = 0
    /// Transition instants (UTC seconds), ascending.
    package var transitions: [Int64] = []
    /// The index into `types` in force from each transition on (each checked in range).
    package var transitionTypes: [Int] = []
    /// The local time types (at least one).
    package var types: [LocalTimeType] = []
    /// The footer's POSIX TZ string; empty when there is none.
    package var footer: String = ""

    /// Reads `bytes`; `name` is the zone's, for the error message.
    package init(bytes: [UInt8], name: String) throws(ZoneInfo.Failure) {
        func fail(_ message: String) -> ZoneInfo.Failure {
            ZoneInfo.Failure(message: "zone file for \(name) is not valid TZif: \(message)")
        }
        var reader = TZifReader(bytes: bytes)
        func header() throws(ZoneInfo.Failure) -> (version: UInt8, counts: [Int]) {
            guard reader.remaining >= 44, reader.bytes[reader.position..<reader.position + 4].elementsEqual("TZif".utf8)
            else { throw fail("bad magic") }
            let version = reader.bytes[reader.position + 4]
            reader.position += 20
            var counts: [Int] = []
            for _ in 0..<6 { counts.append(Int(reader.uint32())) }
            return (version, counts)
        }
        let first = try header()
        version = first.version
        // counts: isutcnt, isstdcnt, leapcnt, timecnt, typecnt, charcnt
        func blockSize(_ counts: [Int], timeSize: Int) -> Int {
            counts[3] * timeSize + counts[3] + counts[4] * 6 + counts[5] + counts[2] * (timeSize + 4) + counts[1] + counts[0]
        }
        var counts = first.counts
        var timeSize = 4
        if first.version >= UInt8(ascii: "2") {
            reader.position += blockSize(first.counts, timeSize: 4)
            counts = try header().counts
            timeSize = 8
        }
        guard reader.remaining >= blockSize(counts, timeSize: timeSize), counts[4] > 0 else { throw fail("truncated") }
        for _ in 0..<counts[3] {
            transitions.append(timeSize == 8 ? Int64(bitPattern: reader.uint64()) : Int64(Int32(bitPattern: reader.uint32())))
        }
        for _ in 0..<counts[3] { transitionTypes.append(Int(reader.byte())) }
        var rawTypes: [(Int, Bool, Int)] = []
        for _ in 0..<counts[4] {
            let offset = Int(Int32(bitPattern: reader.uint32()))
            let isDST = reader.byte() != 0
            let index = Int(reader.byte())
            rawTypes.append((offset, isDST, index))
        }
        let characters = Array(reader.bytes[reader.position..<reader.position + counts[5]])
        reader.position += counts[5] + counts[2] * (timeSize + 4) + counts[1] + counts[0]
        for (offset, isDST, index) in rawTypes {
            let start = min(index, characters.count)
            var end = start
            while end < characters.count, characters[end] != 0 { end += 1 }
            types.append(LocalTimeType(offset: offset, isDaylightSaving: isDST, abbreviation: String(decoding: characters[start..<end], as: UTF8.self)))
        }
        guard transitionTypes.allSatisfy({ $0 < types.count }) else { throw fail("transition type out of range") }
        if timeSize == 8, reader.remaining > 1, reader.bytes[reader.position] == 0x0A {
            let rest = reader.bytes[(reader.position + 1)...]
            if let newline = rest.firstIndex(of: 0x0A) {
                footer = String(decoding: rest[rest.startIndex..<newline], as: UTF8.self)
            }
        }
    }

    /// The footer's rule, when there is a valid one.
    package var rule: PosixTZ? { footer.isEmpty ? nil : PosixTZ(footer) }

    /// The offset at `time`: from the table, or past its end (or without one) from the footer.
    package func offset(at time: Int64) -> ZoneOffset {
        if let last = transitions.last, time >= last, let rule { return rule.offset(at: time) }
        if transitions.isEmpty, let rule { return rule.offset(at: time) }
        var type = 0
        if let index = transitions.lastIndex(where: { $0 <= time }) {
            type = transitionTypes[index]
        } else if let firstStandard = types.firstIndex(where: { !$0.isDaylightSaving }) {
            type = firstStandard
        }
        let chosen = types[type]
        return ZoneOffset(seconds: chosen.offset, abbreviation: chosen.abbreviation, isDaylightSaving: chosen.isDaylightSaving)
    }
}

/// Big-endian reads; the caller checks `remaining` first.
private struct TZifReader {
    let bytes: [UInt8]
    var position = 0
    var remaining: Int { bytes.count - position }

    mutating func byte() -> UInt8 {
        defer { position += 1 }
        return bytes[position]
    }

    mutating func uint32() -> UInt32 {
        var value: UInt32 = 0
        for _ in 0..<4 { value = value << 8 | UInt32(byte()) }
        return value
    }

    mutating func uint64() -> UInt64 {
        var value: UInt64 = 0
        for _ in 0..<8 { value = value << 8 | UInt64(byte()) }
        return value
    }
}

/// A POSIX TZ rule such as `CET-1CEST,M3.5.0,M10.5.0/3` or `<+0530>-5:30`, as in a TZif footer.
/// A daylight name without transition rules is read as standard time only (the POSIX default US
/// rules are obsolete).
package struct PosixTZ: Sendable {
    package var standardName: String
    /// Seconds east of UTC (POSIX writes the opposite sign).
    package var standardOffset: Int
    package var daylightName: String?
    /// Seconds east of UTC in daylight time; `nil` when the zone has none.
    package var daylightOffset: Int?
    /// When daylight time starts and ends (local rules), when it has daylight time.
    package var start: Rule?
    package var end: Rule?

    /// One transition rule: a day of the year and a local time.
    package struct Rule: Sendable {
        package enum Day: Sendable {
            /// `Jn`: day 1…365, 29 February never counted.
            case julianNoLeap(Int)
            /// `n`: day 0…365, 29 February counted.
            case zeroBased(Int)
            /// `Mm.w.d`: month, week 1…5 (5 = last), weekday 0 = Sunday.
            case monthWeekDay(month: Int, week: Int, weekday: Int)
        }
        package var day: Day
        /// Seconds after local midnight (may be negative or past 24 h).
        package var time: Int

        /// The day (since 1970-01-01) this rule names in `year`.
        package func days(in year: Int) -> Int {
            let january1 = GregorianDays.days(year: year, month: 1, day: 1)
            switch day {
            case .zeroBased(let day): return january1 + day
            case .julianNoLeap(let day): return january1 + day - 1 + (GregorianDays.isLeapYear(year) && day >= 60 ? 1 : 0)
            case .monthWeekDay(let month, let week, let weekday):
                let first = GregorianDays.days(year: year, month: month, day: 1)
                let firstWeekday = ((first % 7) + 7 + 4) % 7  // 1970-01-01 was a Thursday (4)
                var day = first + (weekday - firstWeekday + 7) % 7 + (week - 1) * 7
                let monthLength = GregorianDays.daysInMonth(year: year, month: month)
                while day >= first + monthLength { day -= 7 }
                return day
            }
        }
    }

    /// Parses a POSIX TZ string; `nil` when it is not valid.
    package init?(_ text: String) {
        var scanner = PosixTZScanner(bytes: Array(text.utf8)[...])
        guard let standard = scanner.name(), let offset = scanner.time() else { return nil }
        standardName = standard
        standardOffset = -offset
        if scanner.bytes.isEmpty { return }
        guard let daylight = scanner.name() else { return nil }
        daylightName = daylight
        var daylightOffset = standardOffset + 3600
        if let first = scanner.bytes.first, first != UInt8(ascii: ",") {
            guard let value = scanner.time() else { return nil }
            daylightOffset = -value
        }
        if scanner.bytes.isEmpty { return }
        guard scanner.bytes.popFirst() == UInt8(ascii: ","), let startRule = scanner.rule(),
            scanner.bytes.popFirst() == UInt8(ascii: ","), let endRule = scanner.rule(), scanner.bytes.isEmpty
        else { return nil }
        self.daylightOffset = daylightOffset
        start = startRule
        end = endRule
    }

    /// Instants this far from 1970 (about 31 million years) are read as standard time: the
    /// year arithmetic stays far from overflow.
    private static let ruleRange: ClosedRange<Int64> = -1_000_000_000_000_000...1_000_000_000_000_000

    /// Whether daylight time is in force at `time` (UTC seconds).
    package func isDaylight(at time: Int64) -> Bool {
        guard let daylightOffset, let start, let end, Self.ruleRange.contains(time) else { return false }
        let local = time + Int64(standardOffset)
        let year = GregorianDays.date(days: Int(local >= 0 ? local / 86400 : -((-local + 86399) / 86400))).year
        // Transition instants in UTC: the start happens in standard time, the end in daylight time.
        let startUTC = Int64(start.days(in: year)) * 86400 + Int64(start.time - standardOffset)
        let endUTC = Int64(end.days(in: year)) * 86400 + Int64(end.time - daylightOffset)
        return startUTC < endUTC ? (time >= startUTC && time < endUTC) : !(time >= endUTC && time < startUTC)
    }

    /// The offset in force at `time` (UTC seconds), seconds east of UTC.
    package func offsetSeconds(at time: Int64) -> Int {
        isDaylight(at: time) ? daylightOffset ?? standardOffset : standardOffset
    }

    /// The offset, abbreviation and daylight flag in force at `time` (UTC seconds).
    package func offset(at time: Int64) -> ZoneOffset {
        if isDaylight(at: time), let daylightOffset, let daylightName {
            return ZoneOffset(seconds: daylightOffset, abbreviation: daylightName, isDaylightSaving: true)
        }
        return ZoneOffset(seconds: standardOffset, abbreviation: standardName, isDaylightSaving: false)
    }
}

/// Reads the parts of a POSIX TZ string, front to back: names, numbers, times and rules.
private struct PosixTZScanner {
    /// What is left to read.
    var bytes: ArraySlice<UInt8>

    /// A zone abbreviation: `<…>` or three or more letters.
    mutating func name() -> String? {
        if bytes.first == UInt8(ascii: "<") {
            guard let close = bytes.firstIndex(of: UInt8(ascii: ">")) else { return nil }
            let value = String(decoding: bytes[(bytes.startIndex + 1)..<close], as: UTF8.self)
            bytes = bytes[(close + 1)...]
            return value
        }
        var end = bytes.startIndex
        while end < bytes.endIndex, (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(bytes[end] & 0xDF) { end += 1 }
        guard end - bytes.startIndex >= 3 else { return nil }
        let value = String(decoding: bytes[bytes.startIndex..<end], as: UTF8.self)
        bytes = bytes[end...]
        return value
    }

    /// Up to four decimal digits.
    mutating func number() -> Int? {
        var value = 0, digits = 0
        while let byte = bytes.first, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
            value = value * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
            bytes = bytes.dropFirst()
            // POSIX numbers here are hours (≤ 167), minutes, seconds and days: more digits
            // than that is a broken footer, not an overflow.
            if digits > 4 { return nil }
        }
        return digits > 0 ? value : nil
    }

    /// `[+-]hh[:mm[:ss]]` in seconds.
    mutating func time() -> Int? {
        let sign = bytes.first == UInt8(ascii: "-") ? -1 : 1
        if bytes.first == UInt8(ascii: "-") || bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
        guard let hours = number() else { return nil }
        var seconds = hours * 3600
        if bytes.first == UInt8(ascii: ":") {
            bytes = bytes.dropFirst()
            guard let minutes = number() else { return nil }
            seconds += minutes * 60
            if bytes.first == UInt8(ascii: ":") {
                bytes = bytes.dropFirst()
                guard let secs = number() else { return nil }
                seconds += secs
            }
        }
        return sign * seconds
    }

    /// A transition rule (`Mm.w.d`, `Jn` or `n`) and its `/time` (default 02:00).
    mutating func rule() -> PosixTZ.Rule? {
        var day: PosixTZ.Rule.Day
        if bytes.first == UInt8(ascii: "M") {
            bytes = bytes.dropFirst()
            guard let month = number(), bytes.popFirst() == UInt8(ascii: "."), let week = number(),
                bytes.popFirst() == UInt8(ascii: "."), let weekday = number(),
                (1...12).contains(month), (1...5).contains(week), (0...6).contains(weekday)
            else { return nil }
            day = .monthWeekDay(month: month, week: week, weekday: weekday)
        } else if bytes.first == UInt8(ascii: "J") {
            bytes = bytes.dropFirst()
            guard let julian = number(), (1...365).contains(julian) else { return nil }
            day = .julianNoLeap(julian)
        } else {
            guard let zeroBased = number(), (0...365).contains(zeroBased) else { return nil }
            day = .zeroBased(zeroBased)
        }
        var at = 7200
        if bytes.first == UInt8(ascii: "/") {
            bytes = bytes.dropFirst()
            guard let value = time() else { return nil }
            at = value
        }
        return PosixTZ.Rule(day: day, time: at)
    }
}
