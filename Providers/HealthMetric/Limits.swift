/// Bounds on what a data file, a setting or a client request can make the provider do: every
/// number that reaches an `Int` conversion, every text quoted in a message, every table that grows
/// with the input. Out-of-range data is a reported data problem, never a trap.
package enum Limits {
    /// At most this many bytes of a value are quoted in a message (then `…`).
    static let quoteBytes = 80
    /// A CSV line longer than this is skipped (and reported) without being split into fields.
    package static let maximumCSVLine = 64 << 10
    /// Distinct source names kept apart; later ones share one "other sources" bucket.
    static let maximumSources = 1024
    /// Distinct unknown types (or CSV metric names) counted by name; later ones are counted together.
    static let maximumUnknownNames = 256
    /// The name under which unknown types past `maximumUnknownNames` are counted.
    static let otherUnknownName = "(other types)"
    /// Records are read for days in these years; others are reported (a typo like 0024 or 2204
    /// would otherwise add centuries of empty days to the cache).
    static let years: ClosedRange<Int> = 1900...2199
    static let firstDay = CivilDate.day(year: years.lowerBound, month: 1, day: 1)
    static let lastDay = CivilDate.day(year: years.upperBound, month: 12, day: 31)
    /// Distinct (metric, source, day) buckets while a file is read; samples for new buckets past
    /// this are dropped and reported (a real export has a few hundred thousand at most).
    static let maximumBuckets = 1_000_000
    /// Days in a forged item (a month is 31; the day view shows 7).
    static let maximumItemDays = 366
    /// Notes in an item shown by the views.
    static let maximumItemNotes = 50

    /// `text` cut to at most `quoteBytes` UTF-8 bytes (on a character boundary), with `…` when cut;
    /// newlines and tabs become spaces.
    static func quote(_ text: some StringProtocol, limit: Int = quoteBytes) -> String {
        if text.utf8.count <= limit { return String(text).replacingNewlines() }
        var result = ""
        var used = 0
        for character in text {
            let size = character.utf8.count
            if used + size > limit { break }
            result.append(character)
            used += size
        }
        return result.replacingNewlines() + "…"
    }

    /// `count` bytes at `pointer` as text, cut like `quote(_:)` (a cut character shows as U+FFFD).
    static func quote(_ pointer: UnsafePointer<UInt8>, _ count: Int) -> String {
        let shown = max(0, min(count, quoteBytes))
        let text = String(decoding: UnsafeBufferPointer(start: pointer, count: shown), as: UTF8.self).replacingNewlines()
        return count > shown ? text + "…" : text
    }

    /// `value` rounded to an `Int`, clamped to ±10¹⁵ (NaN is 0): never traps.
    package static func clampedInt(_ value: Double) -> Int {
        guard !value.isNaN else { return 0 }
        let rounded = value.rounded()
        if rounded >= 1e15 { return 1_000_000_000_000_000 }
        if rounded <= -1e15 { return -1_000_000_000_000_000 }
        return Int(rounded)
    }
}

extension Metric {
    /// The largest single sample (or CSV row) accepted, in the base unit; larger values are
    /// reported as out of range. Generous for real data: a day's steps, a marathon's distance and
    /// energy many times over, any human heart rate or body mass.
    package var maximumSample: Double {
        switch self {
        case .steps: 1_000_000
        case .distance: 1_000
        case .activeEnergy: 100_000
        case .flightsClimbed: 10_000
        case .heartRate, .restingHeartRate: 400
        case .bodyMass: 1_000
        case .sleep: 24
        }
    }

    /// The smallest goal the `goals` setting accepts, in the base unit.
    var minimumGoal: Double {
        switch self {
        case .steps, .flightsClimbed: 1
        case .distance: 0.01
        case .activeEnergy: 1
        case .heartRate, .restingHeartRate: 10
        case .bodyMass: 1
        case .sleep: 0.25
        }
    }

    /// The largest goal the `goals` setting accepts, in the base unit.
    var maximumGoal: Double { maximumSample }
}
