/// SplitMix64 (Steele, Lea and Flood, 2014): a small, fast generator that gives the same sequence
/// on every platform from the same seed, for benchmarks' generated data and seeded tests whose
/// failures name a reproducible case. Not for anything secret.
package struct SplitMix64: RandomNumberGenerator, Sendable {
    /// The generator's state; the seed to start with.
    package var state: UInt64

    /// A generator seeded with `state`.
    package init(state: UInt64) { self.state = state }

    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A uniform number in `0 ..< 1`, from the top 53 bits.
    package mutating func unit() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// A number in `0 ..< n`; `n` must be positive.
    package mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }

    /// A number in `range`.
    package mutating func int(_ range: ClosedRange<Int>) -> Int { range.lowerBound + Int(next() % UInt64(range.count)) }
}
