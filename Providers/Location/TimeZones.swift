import ContextProviderKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A zone's UTC offset at one instant.
struct ZoneOffset: Sendable, Equatable {
    /// Seconds east of UTC.
    var seconds: Int
    /// The abbreviation in force, e.g. `CET`, `CEST`, `+0530`.
    var abbreviation: String
    /// Whether daylight-saving time is in force.
    var isDaylightSaving: Bool

    /// `UTC+01:00`, `UTC−03:30`, `UTC±00:00`.
    var label: String {
        if seconds == 0 { return "UTC±00:00" }
        let magnitude = abs(seconds) / 60
        let hours = magnitude / 60, minutes = magnitude % 60
        return "UTC\(seconds < 0 ? "−" : "+")\(hours < 10 ? "0" : "")\(hours):\(minutes < 10 ? "0" : "")\(minutes)"
    }
}

/// Reads IANA time zone files (TZif, RFC 8536) from the system zoneinfo folder itself — no ICU,
/// no Foundation — and answers a zone's offset at an instant, using the transition table and,
/// past its end, the POSIX TZ rule in the file's footer.
enum TimeZoneDatabase {
    /// Where zone files live, first match wins (`TZDIR` overrides).
    static var directories: [String] {
        var result: [String] = []
        if let directory = getenv("TZDIR") { result.append(String(cString: directory)) }
        result += ["/usr/share/zoneinfo", "/usr/lib/zoneinfo", "/usr/share/lib/zoneinfo"]
        return result
    }

    /// Why an offset could not be computed.
    struct Failure: Error, Sendable {
        var message: String
    }

    /// The offset of zone `name` (e.g. `Europe/Zurich`) at `time` (seconds since 1970, UTC).
    static func offset(zone name: String, at time: Int64) throws(Failure) -> ZoneOffset {
        guard !name.isEmpty, !name.hasPrefix("/"), !name.split(separator: "/").contains(".."),
            name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { throw Failure(message: "\"\(name)\" is not an IANA time zone name") }
        var lastError = "no zoneinfo folder found (install the tzdata package)"
        for directory in directories {
            do {
                let bytes = try FileBytes.read(directory + "/" + name, limit: 1 << 20)  // zone files are a few KB
                return try TZif(bytes: bytes, name: name).offset(at: time)
            } catch let error as FileBytes.Failure {
                lastError = "\(directory)/\(name): \(error.message)"
            } catch let error as Failure {
                throw error
            } catch {
                lastError = "\(error)"
            }
        }
        throw Failure(message: lastError)
    }
}

/// A parsed TZif file.
struct TZif {
    var transitions: [Int64] = []
    var transitionTypes: [Int] = []
    var types: [(offset: Int, isDST: Bool, abbreviation: String)] = []
    var footer: String = ""

    init(bytes: [UInt8], name: String) throws(TimeZoneDatabase.Failure) {
        func fail(_ message: String) -> TimeZoneDatabase.Failure {
            TimeZoneDatabase.Failure(message: "zone file for \(name) is not valid TZif: \(message)")
        }
        var reader = ByteReader(bytes: bytes)
        func header() throws(TimeZoneDatabase.Failure) -> (version: UInt8, counts: [Int]) {
            guard reader.remaining >= 44, reader.bytes[reader.position..<reader.position + 4].elementsEqual("TZif".utf8)
            else { throw fail("bad magic") }
            let version = reader.bytes[reader.position + 4]
            reader.position += 20
            var counts: [Int] = []
            for _ in 0..<6 { counts.append(Int(reader.uint32())) }
            return (version, counts)
        }
        let first = try header()
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
            var end = min(index, characters.count)
            while end < characters.count, characters[end] != 0 { end += 1 }
            types.append((offset, isDST, String(decoding: characters[min(index, characters.count)..<end], as: UTF8.self)))
        }
        guard transitionTypes.allSatisfy({ $0 < types.count }) else { throw fail("transition type out of range") }
        if timeSize == 8, reader.remaining > 1, reader.bytes[reader.position] == 0x0A {
            let rest = reader.bytes[(reader.position + 1)...]
            if let newline = rest.firstIndex(of: 0x0A) {
                footer = String(decoding: rest[rest.startIndex..<newline], as: UTF8.self)
            }
        }
    }

    /// The offset at `time`.
    func offset(at time: Int64) throws(TimeZoneDatabase.Failure) -> ZoneOffset {
        if let last = transitions.last, time >= last, !footer.isEmpty, let rule = PosixTZ(footer) {
            return rule.offset(at: time)
        }
        if transitions.isEmpty, !footer.isEmpty, let rule = PosixTZ(footer) { return rule.offset(at: time) }
        var type = 0
        if let index = transitions.lastIndex(where: { $0 <= time }) {
            type = transitionTypes[index]
        } else if let firstStandard = types.firstIndex(where: { !$0.isDST }) {
            type = firstStandard
        }
        let chosen = types[type]
        return ZoneOffset(seconds: chosen.offset, abbreviation: chosen.abbreviation, isDaylightSaving: chosen.isDST)
    }
}

private struct ByteReader {
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

/// A POSIX TZ rule such as `CET-1CEST,M3.5.0,M10.5.0/3` or `<+0530>-5:30`.
struct PosixTZ {
    var standardName: String
    /// Seconds east of UTC (POSIX writes the opposite sign).
    var standardOffset: Int
    var daylightName: String?
    var daylightOffset: Int
    var start: Rule?
    var end: Rule?

    enum Rule {
        case julianNoLeap(Int)  // Jn: 1…365, February 29 never counted
        case zeroBased(Int)  // n: 0…365
        case monthWeekDay(month: Int, week: Int, weekday: Int)
    }
    var startTime = 7200
    var endTime = 7200

    init?(_ text: String) {
        var scanner = PosixTZScanner(bytes: Array(text.utf8)[...])
        guard let standard = scanner.name(), let offset = scanner.time() else { return nil }
        standardName = standard
        standardOffset = -offset
        daylightOffset = standardOffset + 3600
        if scanner.bytes.isEmpty { return }
        guard let daylight = scanner.name() else { return nil }
        daylightName = daylight
        if let first = scanner.bytes.first, first != UInt8(ascii: ",") {
            guard let value = scanner.time() else { return nil }
            daylightOffset = -value
        }
        guard scanner.bytes.popFirst() == UInt8(ascii: ","), let (startRule, startAt) = scanner.rule(),
            scanner.bytes.popFirst() == UInt8(ascii: ","), let (endRule, endAt) = scanner.rule()
        else { return nil }
        start = startRule
        end = endRule
        startTime = startAt
        endTime = endAt
    }

    func offset(at time: Int64) -> ZoneOffset {
        guard let start, let end, let daylightName else {
            return ZoneOffset(seconds: standardOffset, abbreviation: standardName, isDaylightSaving: false)
        }
        let year = Calendar.civil(fromDays: Int(floorDiv(time + Int64(standardOffset), 86400))).year
        // Transition instants in UTC: the start happens in standard time, the end in daylight time.
        let startUTC = Int64(Calendar.days(of: start, year: year)) * 86400 + Int64(startTime - standardOffset)
        let endUTC = Int64(Calendar.days(of: end, year: year)) * 86400 + Int64(endTime - daylightOffset)
        let inDaylight = startUTC < endUTC ? (time >= startUTC && time < endUTC) : !(time >= endUTC && time < startUTC)
        return inDaylight
            ? ZoneOffset(seconds: daylightOffset, abbreviation: daylightName, isDaylightSaving: true)
            : ZoneOffset(seconds: standardOffset, abbreviation: standardName, isDaylightSaving: false)
    }

    private func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : -((-a + b - 1) / b) }
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
        var sign = 1
        if bytes.first == UInt8(ascii: "-") { sign = -1; bytes = bytes.dropFirst() }
        else if bytes.first == UInt8(ascii: "+") { bytes = bytes.dropFirst() }
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
    mutating func rule() -> (PosixTZ.Rule, Int)? {
        var parsed: PosixTZ.Rule
        if bytes.first == UInt8(ascii: "M") {
            bytes = bytes.dropFirst()
            guard let month = number(), bytes.popFirst() == UInt8(ascii: "."), let week = number(),
                bytes.popFirst() == UInt8(ascii: "."), let weekday = number(),
                (1...12).contains(month), (1...5).contains(week), (0...6).contains(weekday)
            else { return nil }
            parsed = .monthWeekDay(month: month, week: week, weekday: weekday)
        } else if bytes.first == UInt8(ascii: "J") {
            bytes = bytes.dropFirst()
            guard let day = number(), (1...365).contains(day) else { return nil }
            parsed = .julianNoLeap(day)
        } else {
            guard let day = number(), (0...365).contains(day) else { return nil }
            parsed = .zeroBased(day)
        }
        var at = 7200
        if bytes.first == UInt8(ascii: "/") {
            bytes = bytes.dropFirst()
            guard let value = time() else { return nil }
            at = value
        }
        return (parsed, at)
    }
}

/// Proleptic Gregorian calendar arithmetic (days since 1970-01-01).
enum Calendar {
    /// Days since 1970-01-01 for a civil date.
    static func days(year: Int, month: Int, day: Int) -> Int { GregorianDays.days(year: year, month: month, day: day) }

    static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) { GregorianDays.date(days: days) }

    static func isLeap(_ year: Int) -> Bool { GregorianDays.isLeapYear(year) }

    /// The day (since 1970) a POSIX rule names in `year`.
    static func days(of rule: PosixTZ.Rule, year: Int) -> Int {
        let january1 = days(year: year, month: 1, day: 1)
        switch rule {
        case .zeroBased(let day): return january1 + day
        case .julianNoLeap(let day): return january1 + day - 1 + (isLeap(year) && day >= 60 ? 1 : 0)
        case .monthWeekDay(let month, let week, let weekday):
            let first = days(year: year, month: month, day: 1)
            let firstWeekday = ((first % 7) + 7 + 4) % 7  // 1970-01-01 was a Thursday (4)
            var day = first + (weekday - firstWeekday + 7) % 7 + (week - 1) * 7
            let monthLength = GregorianDays.daysInMonth(year: year, month: month)
            while day >= first + monthLength { day -= 7 }
            return day
        }
    }
}
