/// The samples of one benchmark row (calendar-bench, location-bench): nearest-rank percentiles.
public struct BenchSamples {
    public var values: [Double]

    public init(_ values: [Double]) { self.values = values }

    /// The nearest-rank `p` percentile (`p` in 0…1) of at least one sample.
    public func percentile(_ p: Double) -> Double {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, max(0, Int((Double(sorted.count) * p).rounded(.up)) - 1))]
    }

    /// The largest sample, 0 without any.
    public var maximum: Double { values.max() ?? 0 }
}
