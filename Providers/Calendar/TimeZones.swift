import ProviderSupport
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The UTC offsets of one time zone over time: a table of transitions, then (optionally) a
/// POSIX TZ rule for instants past the table. Built from a TZif file, a POSIX TZ string, or an
/// embedded iCalendar `VTIMEZONE`.
final class ZoneRules: Sendable {
    /// The zone's name (IANA name, TZID, or `UTC`).
    let name: String
    /// Transition instants (UTC seconds), ascending.
    let transitions: [Int]
    /// The offset (seconds east of UTC) in force from each transition on.
    let offsets: [Int]
    /// The offset before the first transition.
    let initialOffset: Int
    /// The rule for instants after the last transition.
    let tail: PosixTZ?
    /// The largest offset from UTC (east or west) the zone ever has: a wall-clock time and its
    /// UTC instant are never further apart.
    let largestOffset: Int
    /// A `VTIMEZONE`'s yearly rules, for instants the table does not cover (see `RecurringZone`).
    let recurring: RecurringZone?

    init(name: String, transitions: [Int], offsets: [Int], initialOffset: Int, tail: PosixTZ?, recurring: RecurringZone? = nil) {
        self.name = name
        self.transitions = transitions
        self.offsets = offsets
        self.initialOffset = initialOffset
        self.tail = tail
        self.recurring = recurring
        let tailOffsets = [tail?.standardOffset, tail?.daylightOffset].compactMap { $0 }
        let partOffsets = (recurring?.parts ?? []).flatMap { [$0.from, $0.to] }
        largestOffset = (offsets + tailOffsets + partOffsets).reduce(abs(initialOffset)) { max($0, abs($1)) }
    }

    /// UTC.
    static let utc = ZoneRules(name: "UTC", transitions: [], offsets: [], initialOffset: 0, tail: nil)

    /// The offset in force at a UTC instant.
    func offset(atUTC t: Int) -> Int {
        if let recurring, !recurring.covered.contains(t) { return recurring.offset(atUTC: t, initialOffset: initialOffset) }
        if let last = transitions.last, t >= last, let tail { return tail.offsetSeconds(at: Int64(t)) }
        if transitions.isEmpty { return tail?.offsetSeconds(at: Int64(t)) ?? initialOffset }
        // Last transition <= t.
        let low = countAtOrBefore(t, in: transitions)
        return low == 0 ? initialOffset : offsets[low - 1]
    }

    /// The UTC instant of a wall-clock time (local seconds). An ambiguous time (fall back) takes
    /// the earlier instant; a time in a gap (spring forward) is read with the offset before the
    /// gap, as RFC 5545 §3.3.5 asks.
    func utc(fromLocal local: Int) -> Int {
        let before = offset(atUTC: local - 86_400)
        if offset(atUTC: local - before) == before { return local - before }
        let after = offset(atUTC: local + 86_400)
        if offset(atUTC: local - after) == after { return local - after }
        return local - before
    }

    /// Wall-clock seconds of a UTC instant.
    func local(fromUTC t: Int) -> Int { t + offset(atUTC: t) }
}

/// The parts (`STANDARD`, `DAYLIGHT`) of a `VTIMEZONE` whose yearly rules reach outside the
/// transition table, for the offsets there.
///
/// A `VTIMEZONE` part's `RRULE` can start in any year: eM Client writes `DTSTART:00010325T020000`,
/// Outlook `16010101T…`. The table of a zone holds the changes from 1900 (or the part's start, if
/// later) to 2200, which is a few hundred entries whatever the start year; instants outside it are
/// answered from the rules themselves: the part's last change before the instant is found by
/// expanding its rule over the two years before it (the rule's expansion jumps there, so the work
/// does not grow with the distance from `DTSTART`), over more years only when that finds none.
struct RecurringZone: Sendable {
    /// One `STANDARD` or `DAYLIGHT` part.
    struct Part: Sendable {
        /// `DTSTART`, wall-clock seconds in `from`.
        var start: Int
        /// `TZOFFSETFROM` and `TZOFFSETTO`.
        var from: Int
        var to: Int
        /// A `FREQ=YEARLY` rule without `COUNT`, at most one time of day: its changes are found
        /// on demand. `nil`: every change is in `fixed`.
        var rule: RecurrenceRule?
        /// The changes that are not the rule's (`DTSTART`, `RDATE`s, or all of a part without a
        /// rule found on demand), UTC seconds, ascending.
        var fixed: [Int]
        /// The rule's changes of each year asked for, kept (shared by copies of the part).
        var years = YearChanges()

        /// Whether `rule` can be expanded on demand with bounded work: yearly, no `COUNT`, and
        /// at most one hour, minute and second (so at most 366 changes a year).
        static func isOnDemand(_ rule: RecurrenceRule) -> Bool {
            rule.frequency == .yearly && rule.count == nil && rule.byHour.count <= 1 && rule.byMinute.count <= 1
                && rule.bySecond.count <= 1
        }

        /// The last change at or before the UTC instant `t`, or `nil` when the part has none yet.
        func lastChange(atOrBefore t: Int) -> Int? {
            // The last fixed change <= t (binary search).
            let low = countAtOrBefore(t, in: fixed)
            var best = low == 0 ? nil : fixed[low - 1]
            guard let rule else { return best }
            let (local, overflow) = t.addingReportingOverflow(from)
            guard !overflow, local >= start else { return best }
            // This year's changes, else last year's: each year expanded once and kept, so the
            // instants of a long series (every one of which asks) cost a lookup, not an expansion.
            let thisYear = Civil.date(days: Civil.floorDiv(local, 86_400)).year
            if abs(thisYear) <= RecurringZone.yearLimit {
                for year in [thisYear, thisYear - 1] {
                    if let last = changes(in: year, rule: rule).last(where: { $0 <= local }) {
                        return max(best ?? Int.min, last - from)
                    }
                }
            }
            let year = 366 * 86_400
            for years in [2, 20, 200, 2_000, 10_000] {
                let skip = max(start, local - years * year)
                let expanded = rule.expand(start: start, skipTo: skip, through: local) { instance in
                    guard let until = rule.until else { return true }
                    return until.kind == .utc ? instance - from <= until.local : instance <= until.local
                }
                if let last = expanded.starts.last {
                    best = max(best ?? Int.min, last - from)
                    break
                }
                if skip <= start { break }
            }
            return best
        }

        /// The changes (UTC seconds) from `first` through `last`, a span inside UTC years
        /// `year - 1` and `year`; `year` is within `RecurringZone.yearLimit`.
        func changes(from first: Int, through last: Int, aroundYear year: Int) -> [Int] {
            var found: [Int] = []
            var index = 0
            var high = fixed.count
            while index < high {
                let mid = (index + high) / 2
                if fixed[mid] < first { index = mid + 1 } else { high = mid }
            }
            while index < fixed.count, fixed[index] <= last {
                found.append(fixed[index])
                index += 1
            }
            guard let rule else { return found }
            // Wall-clock years in `from` around the span (an offset moves an instant a day at most).
            for localYear in (year - 2)...(year + 1) {
                for local in changes(in: localYear, rule: rule) {
                    let utc = local - from
                    if utc >= first, utc <= last { found.append(utc) }
                }
            }
            return found
        }

        /// The rule's changes in `year` (wall-clock seconds in `from`, ascending).
        private func changes(in year: Int, rule: RecurrenceRule) -> [Int] {
            years.value(for: year) {
                let first = Civil.days(year: year, month: 1, day: 1) * 86_400
                let last = Civil.days(year: year + 1, month: 1, day: 1) * 86_400 - 1
                guard last >= start else { return [] }
                return rule.expand(start: start, skipTo: max(start, first), through: last) { instance in
                    guard let until = rule.until else { return true }
                    return until.kind == .utc ? instance - from <= until.local : instance <= until.local
                }.starts.filter { $0 >= first }
            }
        }
    }

    /// Years further from 0 are answered by the plain expansion (no calendar arithmetic near
    /// `Int`'s limits).
    static let yearLimit = 1_000_000
    /// The most years a `YearCache` keeps.
    static let yearCapacity = 512

    /// Values computed once per year: each part's rule changes (`YearChanges`), the zone's year
    /// tables (`YearTables`). At most `yearCapacity` years are kept (then it starts again), so a
    /// zone asked about every year there is stays small.
    final class YearCache<Value: Sendable>: Sendable {
        private let known = Mutex<[Int: Value]>([:])

        func value(for year: Int, _ compute: () -> Value) -> Value {
            if let found = known.withLock({ $0[year] }) { return found }
            let computed = compute()
            known.withLock { table in
                if table.count >= RecurringZone.yearCapacity { table.removeAll(keepingCapacity: true) }
                table[year] = computed
            }
            return computed
        }
    }

    /// Each year's changes of one part's rule, found once.
    typealias YearChanges = YearCache<[Int]>
    /// The year tables asked for.
    typealias YearTables = YearCache<YearTable>

    var parts: [Part]
    /// The UTC instants the zone's transition table answers for; outside them, `offset(atUTC:)`.
    var covered: ClosedRange<Int>
    /// The changes of every part around each UTC year asked for (shared by copies of the zone).
    let years = YearTables()

    init(parts: [Part], covered: ClosedRange<Int>) {
        self.parts = parts
        self.covered = covered
    }

    /// The offset at a UTC instant: that of the part with the latest change at or before it (the
    /// later part on a tie, as in the table), else the offset before the first change.
    ///
    /// A series asks this for each of its instants, so the answer comes from a table of the
    /// zone's changes in the instant's UTC year and the year before, built once per year; only an
    /// instant with no change in those two years (or at the far ends of time) asks each part.
    func offset(atUTC t: Int, initialOffset: Int) -> Int {
        let year = Civil.date(days: Civil.floorDiv(t, 86_400)).year
        if abs(year) < RecurringZone.yearLimit,
            let offset = years.value(for: year, { yearTable(year) }).offset(atUTC: t)
        {
            return offset
        }
        var best: (utc: Int, offset: Int)?
        for part in parts {
            guard let change = part.lastChange(atOrBefore: t) else { continue }
            if change >= best?.utc ?? Int.min { best = (change, part.to) }
        }
        return best?.offset ?? initialOffset
    }

    /// Every part's changes from the start of UTC year `year - 1` to the end of `year`, ordered by
    /// instant and then by part (the later part wins a tie, as in `offset(atUTC:)`). Complete for
    /// that span: if an instant in `year` has a change at or before it in the table, the latest one
    /// is the zone's latest change before it.
    private func yearTable(_ year: Int) -> YearTable {
        let first = Civil.days(year: year - 1, month: 1, day: 1) * 86_400
        let last = Civil.days(year: year + 1, month: 1, day: 1) * 86_400 - 1
        var changes: [(utc: Int, part: Int, offset: Int)] = []
        for (index, part) in parts.enumerated() {
            for utc in part.changes(from: first, through: last, aroundYear: year) {
                changes.append((utc, index, part.to))
            }
        }
        changes.sort { ($0.utc, $0.part) < ($1.utc, $1.part) }
        return YearTable(instants: changes.map(\.utc), offsets: changes.map(\.offset))
    }

    /// One UTC year's changes (see `yearTable`).
    final class YearTable: Sendable {
        let instants: [Int]
        let offsets: [Int]

        init(instants: [Int], offsets: [Int]) {
            self.instants = instants
            self.offsets = offsets
        }

        /// The offset of the last change at or before `t`, or `nil` when the table has none.
        func offset(atUTC t: Int) -> Int? {
            let low = countAtOrBefore(t, in: instants)
            return low == 0 ? nil : offsets[low - 1]
        }
    }
}

/// Reads TZif files (RFC 8536), version 2 or later, from the system's zoneinfo folder.
enum TZif {
    /// The folder holding the IANA time zone database.
    static let zoneinfo = "/usr/share/zoneinfo"

    /// Rules parsed from TZif bytes (ProviderSupport's reader); `nil` when they are not a
    /// version 2+ TZif file.
    static func parse(_ bytes: [UInt8], name: String) -> ZoneRules? {
        guard let file = try? TZifFile(bytes: bytes, name: name) else { return nil }
        return rules(file, name: name)
    }

    /// The rules of a read TZif file; `nil` before version 2 (no 64-bit table, no footer).
    static func rules(_ file: TZifFile, name: String) -> ZoneRules? {
        guard file.version >= UInt8(ascii: "2") else { return nil }
        let typeOffsets = file.types.map(\.offset)
        let tail = file.rule
        if file.transitions.isEmpty, tail == nil {
            return ZoneRules(name: name, transitions: [], offsets: [], initialOffset: typeOffsets[0], tail: nil)
        }
        let initial = typeOffsets[file.types.firstIndex { !$0.isDaylightSaving } ?? 0]
        return ZoneRules(
            name: name, transitions: file.transitions.map { Int($0) }, offsets: file.transitionTypes.map { typeOffsets[$0] },
            initialOffset: initial, tail: tail)
    }

    /// Loads zone `name` from the zoneinfo folder (`TZDIR`, else `/usr/share/zoneinfo`, …).
    static func load(_ name: String) -> ZoneRules? {
        guard let file = try? ZoneInfo.load(name) else { return nil }
        return rules(file, name: name)
    }

    /// The system's zone: the name `/etc/localtime` links to, else its contents, else UTC.
    static func system() -> ZoneRules {
        var buffer = [CChar](repeating: 0, count: 1024)
        let count = readlink("/etc/localtime", &buffer, buffer.count - 1)
        if count > 0 {
            let target = String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            if let range = target.firstRange(of: "zoneinfo/") {
                let name = String(target[range.upperBound...])
                if let rules = load(name) { return rules.name == "Etc/UTC" ? ZoneRules.utc : rules }
            }
        }
        if let bytes = FileIO.read("/etc/localtime", limit: ZoneInfo.maximumFileBytes), let rules = parse(bytes, name: "localtime") { return rules }
        return .utc
    }
}

/// Resolves TZID values: the calendar's own `VTIMEZONE`s first, then IANA names, then Windows
/// names (Outlook/Exchange), then old Mozilla-style prefixed names.
enum ZoneResolver {
    /// Windows time zone names (CLDR windowsZones, territory 001) → IANA.
    static let windowsNames: [String: String] = [
        "Dateline Standard Time": "Etc/GMT+12", "UTC-11": "Etc/GMT+11", "Hawaiian Standard Time": "Pacific/Honolulu",
        "Alaskan Standard Time": "America/Anchorage", "Pacific Standard Time": "America/Los_Angeles",
        "Pacific Standard Time (Mexico)": "America/Tijuana", "US Mountain Standard Time": "America/Phoenix",
        "Mountain Standard Time": "America/Denver", "Central America Standard Time": "America/Guatemala",
        "Central Standard Time": "America/Chicago", "Central Standard Time (Mexico)": "America/Mexico_City",
        "Canada Central Standard Time": "America/Regina", "SA Pacific Standard Time": "America/Bogota",
        "Eastern Standard Time": "America/New_York", "US Eastern Standard Time": "America/Indianapolis",
        "Atlantic Standard Time": "America/Halifax", "Venezuela Standard Time": "America/Caracas",
        "Pacific SA Standard Time": "America/Santiago", "Newfoundland Standard Time": "America/St_Johns",
        "E. South America Standard Time": "America/Sao_Paulo", "Argentina Standard Time": "America/Buenos_Aires",
        "Greenland Standard Time": "America/Godthab", "UTC": "Etc/UTC", "Coordinated Universal Time": "Etc/UTC",
        "GMT Standard Time": "Europe/London", "Greenwich Standard Time": "Atlantic/Reykjavik",
        "W. Europe Standard Time": "Europe/Berlin", "Central Europe Standard Time": "Europe/Budapest",
        "Romance Standard Time": "Europe/Paris", "Central European Standard Time": "Europe/Warsaw",
        "W. Central Africa Standard Time": "Africa/Lagos", "GTB Standard Time": "Europe/Bucharest",
        "E. Europe Standard Time": "Europe/Chisinau", "FLE Standard Time": "Europe/Kiev",
        "Israel Standard Time": "Asia/Jerusalem", "South Africa Standard Time": "Africa/Johannesburg",
        "Egypt Standard Time": "Africa/Cairo", "Turkey Standard Time": "Europe/Istanbul",
        "Russian Standard Time": "Europe/Moscow", "Arab Standard Time": "Asia/Riyadh",
        "Arabian Standard Time": "Asia/Dubai", "Iran Standard Time": "Asia/Tehran",
        "Pakistan Standard Time": "Asia/Karachi", "India Standard Time": "Asia/Calcutta",
        "Nepal Standard Time": "Asia/Katmandu", "Bangladesh Standard Time": "Asia/Dhaka",
        "SE Asia Standard Time": "Asia/Bangkok", "China Standard Time": "Asia/Shanghai",
        "Singapore Standard Time": "Asia/Singapore", "Taipei Standard Time": "Asia/Taipei",
        "Tokyo Standard Time": "Asia/Tokyo", "Korea Standard Time": "Asia/Seoul",
        "AUS Central Standard Time": "Australia/Darwin", "Cen. Australia Standard Time": "Australia/Adelaide",
        "E. Australia Standard Time": "Australia/Brisbane", "AUS Eastern Standard Time": "Australia/Sydney",
        "Tasmania Standard Time": "Australia/Hobart", "New Zealand Standard Time": "Pacific/Auckland",
    ]

    /// The IANA rules for a TZID without an embedded `VTIMEZONE`, or `nil` when unknown.
    static func system(_ tzid: String) -> ZoneRules? {
        if tzid == "UTC" || tzid == "Etc/UTC" || tzid == "GMT" || tzid == "Z" { return .utc }
        if let rules = SystemZones.shared.rules(tzid) { return rules }
        if let iana = windowsNames[tzid], let rules = SystemZones.shared.rules(iana) { return rules }
        // "/mozilla.org/20050126_1/Europe/Berlin", "/freeassociation.sourceforge.net/Europe/Berlin"
        if tzid.hasPrefix("/") {
            let parts = tzid.split(separator: "/")
            for count in [3, 2, 1] where parts.count >= count {
                let name = parts.suffix(count).joined(separator: "/")
                if let rules = SystemZones.shared.rules(name) { return rules }
            }
        }
        return nil
    }
}

/// A process-wide cache of zoneinfo files.
final class SystemZones: Sendable {
    static let shared = SystemZones()
    private let cache = Mutex<[String: ZoneRules?]>([:])

    /// The rules for an IANA name, loaded once.
    func rules(_ name: String) -> ZoneRules? {
        if let cached = cache.withLock({ $0[name] }) { return cached }
        let loaded = TZif.load(name)
        cache.withLock { $0[name] = .some(loaded) }
        return loaded
    }
}

/// How many of the ascending `sorted` are at or before `t` (binary search): the index after the
/// last one `<= t`, 0 when none is.
func countAtOrBefore(_ t: Int, in sorted: [Int]) -> Int {
    var low = 0
    var high = sorted.count
    while low < high {
        let mid = low + (high - low) / 2
        if sorted[mid] <= t { low = mid + 1 } else { high = mid }
    }
    return low
}
