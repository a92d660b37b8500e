/// One metric's value on one day, in the metric's base unit.
struct DayValue: Sendable, Hashable {
    /// Days since 1970-01-01.
    var day: Int32
    /// The day's total (sum metrics, sleep hours) or mean (average metrics).
    var value: Double
    /// The smallest sample (average metrics); the value otherwise.
    var min: Double
    /// The largest sample (average metrics); the value otherwise.
    var max: Double
    /// The number of samples behind the value.
    var count: UInt32
}

/// What reading a data file found, besides the values: counts and the problems reported.
struct IngestReport: Sendable, Hashable {
    /// The maximum number of problem messages kept; later ones are only counted.
    static let problemLimit = 50

    /// `apple-health-export` or `csv`.
    var format = "apple-health-export"
    /// Bytes read.
    var bytes: UInt64 = 0
    /// Records (XML `Record` elements or CSV rows) read.
    var records: UInt64 = 0
    /// Records that went into the aggregates.
    var used: UInt64 = 0
    /// Records of types the provider does not aggregate, by type.
    var unknownTypes: [String: UInt64] = [:]
    /// Records skipped because they were malformed.
    var malformed: UInt64 = 0
    /// `Workout` elements seen (not aggregated).
    var workouts: UInt64 = 0
    /// `ActivitySummary` elements seen (not aggregated).
    var activitySummaries: UInt64 = 0
    /// Set when the file ends early (inside an element, or without `</HealthData>`).
    var truncation: String?
    /// Problems with their location (`export.xml:12: …`), at most `problemLimit`.
    var problems: [String] = []

    /// Records of unknown types.
    var unknownCount: UInt64 { unknownTypes.values.reduce(0, +) }

    mutating func problem(_ message: String) {
        malformed += 1
        if problems.count < Self.problemLimit { problems.append(message) }
    }
}

/// The per-day aggregates of one data file: what the cache stores and the views are built from.
struct HealthData: Sendable {
    /// Days per metric, sorted by day.
    var days: [Metric: [DayValue]]
    /// What reading found.
    var report: IngestReport

    /// Metrics with at least one day of data, in catalogue order.
    var metrics: [Metric] { Metric.allCases.filter { !(days[$0] ?? []).isEmpty } }

    /// The value of a metric on a day.
    func value(_ metric: Metric, on day: Int) -> DayValue? {
        guard let list = days[metric] else { return nil }
        var low = 0
        var high = list.count
        while low < high {
            let mid = (low + high) / 2
            if Int(list[mid].day) < day { low = mid + 1 } else { high = mid }
        }
        return low < list.count && Int(list[low].day) == day ? list[low] : nil
    }
}

/// Collects samples while a file is read, then reduces them to `HealthData`.
///
/// Samples are accumulated per (metric, source, day) so overlapping sources (an iPhone and a
/// Watch both counting steps) can be resolved per day: sums and sleep take the source with the
/// largest total, averages pool every sample.
struct SampleAccumulator {
    struct Bucket {
        var sum: Double
        var count: UInt32
        var min: Double
        var max: Double
    }

    private(set) var buckets: [UInt64: Bucket] = [:]
    /// Source names by index.
    private(set) var sources: [String] = []
    private var sourceIndex: [UInt64: UInt32] = [:]

    init() {
        buckets.reserveCapacity(4096)
    }

    /// The index of a source, by the FNV-1a hash of its raw name; `name` is only built for a
    /// new source.
    @inline(__always)
    mutating func source(hash: UInt64, name: () -> String) -> UInt32 {
        if let index = sourceIndex[hash] { return index }
        // Past the limit every new source shares the last slot (one "other sources" bucket).
        guard sources.count < Limits.maximumSources else { return UInt32(Limits.maximumSources) }
        let index = UInt32(truncatingIfNeeded: sources.count)
        sources.append(name())
        sourceIndex[hash] = index
        return index
    }

    /// Samples dropped because they would have opened a bucket past `Limits.maximumBuckets`.
    private(set) var dropped: UInt64 = 0

    /// Adds a sample in the metric's base unit.
    @inline(__always)
    mutating func add(_ metric: Metric, source: UInt32, day: Int, value: Double) {
        let key = UInt64(metric.rawValue) << 56 | UInt64(source & 0xFFFF) << 40
            | UInt64(UInt32(bitPattern: Int32(truncatingIfNeeded: day)))
        if let index = buckets.index(forKey: key) {
            buckets.values[index].sum += value
            buckets.values[index].count &+= buckets.values[index].count < UInt32.max ? 1 : 0
            if value < buckets.values[index].min { buckets.values[index].min = value }
            if value > buckets.values[index].max { buckets.values[index].max = value }
        } else if buckets.count < Limits.maximumBuckets {
            buckets[key] = Bucket(sum: value, count: 1, min: value, max: value)
        } else {
            dropped &+= 1
        }
    }

    /// The per-day values.
    func reduce() -> [Metric: [DayValue]] {
        var perDay: [[Int32: DayValue]] = Array(repeating: [:], count: Metric.allCases.count)
        for (key, bucket) in buckets {
            guard let metric = Metric(rawValue: UInt8(key >> 56)) else { continue }
            let day = Int32(bitPattern: UInt32(truncatingIfNeeded: key))
            let index = Int(metric.rawValue)
            switch metric.aggregation {
            case .sum, .sleep:
                if let existing = perDay[index][day], existing.value >= bucket.sum { break }
                perDay[index][day] = DayValue(day: day, value: bucket.sum, min: bucket.sum, max: bucket.sum, count: bucket.count)
            case .average:
                if var existing = perDay[index][day] {
                    // `value` holds the running sum until the pass below.
                    existing.value += bucket.sum
                    existing.count = existing.count.addingReportingOverflow(bucket.count).overflow ? UInt32.max : existing.count &+ bucket.count
                    existing.min = Swift.min(existing.min, bucket.min)
                    existing.max = Swift.max(existing.max, bucket.max)
                    perDay[index][day] = existing
                } else {
                    perDay[index][day] = DayValue(day: day, value: bucket.sum, min: bucket.min, max: bucket.max, count: bucket.count)
                }
            }
        }
        var result: [Metric: [DayValue]] = [:]
        for metric in Metric.allCases where !perDay[Int(metric.rawValue)].isEmpty {
            let days = perDay[Int(metric.rawValue)]
            var list = days.values.sorted { $0.day < $1.day }
            if metric.aggregation == .average {
                for index in list.indices { list[index].value /= Double(list[index].count) }
            }
            result[metric] = list
        }
        return result
    }
}
