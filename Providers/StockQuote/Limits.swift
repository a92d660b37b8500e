/// Bounds on what a price file, the symbols file, an HTTP answer, a setting or a client request can
/// make the provider do. Out-of-range data is a reported data problem, never a trap.
package enum Limits {
    /// At most this many bytes of a value are quoted in a message (then `…`).
    static let quoteBytes = 80
    /// A line longer than this is reported and skipped without being split into fields.
    package static let maximumLine = 64 << 10
    /// A price file larger than this is not read.
    static let maximumPriceFile = 64 << 20
    /// A symbols file larger than this is not read.
    static let maximumSymbolsFile = 4 << 20
    /// Price files looked at in the quotes folder; the rest are reported and ignored.
    static let maximumPriceFiles = 10_000
    /// Problems kept per file (all are counted); the log gets the same ones.
    package static let maximumDiagnostics = 200
    /// Prices must lie in this range (in the file's currency).
    static let priceRange: ClosedRange<Double> = 1e-6...1e9
    /// Volumes must lie in this range.
    static let maximumVolume = 1e15
    /// The product of the split factors applied to any row stays within 1/this…this.
    static let maximumSplitAdjustment = 10_000.0
    /// Names, exchanges and currencies from the symbols file are cut to this many characters.
    static let maximumNameLength = 200
    /// A search longer than this matches nothing (no ticker or name is that long).
    static let maximumQueryLength = 200
    /// Chart points in a forged item.
    static let maximumItemPoints = 2_000
    /// Sparkline values, problems, notes and splits in a forged item.
    static let maximumItemList = 500

    /// `text` cut to at most `quoteBytes` UTF-8 bytes (on a character boundary), with `…` when cut;
    /// newlines and tabs become spaces.
    static func quote(_ text: some StringProtocol, limit: Int = quoteBytes) -> String {
        var result = ""
        var used = 0
        var cut = false
        for character in text {
            let size = character.utf8.count
            if used + size > limit {
                cut = true
                break
            }
            result.append(character == "\n" || character == "\r" || character == "\t" || character == "\r\n" ? " " : character)
            used += size
        }
        return cut ? result + "…" : result
    }

    /// `bytes` as text, cut like `quote(_:)` (a cut character shows as U+FFFD).
    static func quote(_ bytes: ArraySlice<UInt8>) -> String {
        let shown = bytes.prefix(quoteBytes)
        let text = quote(String(decoding: shown, as: UTF8.self))
        return bytes.count > shown.count ? text + "…" : text
    }
}
