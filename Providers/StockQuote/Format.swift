/// Number formatting without Foundation (prices, percentages, volumes), in the `en` style the
/// data files use: `.` decimal point, `,` thousands separator.
enum Format {
    /// Rounds to 6 decimals, to keep float noise out of stored values.
    static func round6(_ value: Double) -> Double { (value * 1e6).rounded() / 1e6 }

    /// A number as JSON would print it, trimmed: `4`, `0.25`, `1329.6`.
    static func plain(_ value: Double) -> String {
        if value.rounded() == value, abs(value) < 1e15 { return String(Int64(value)) }
        return String(round6(value))
    }

    /// `value` with exactly `decimals` digits after the point, grouped in thousands: `1,329.60`.
    static func fixed(_ value: Double, decimals: Int, grouped: Bool = true) -> String {
        guard value.isFinite else { return "—" }
        var scale = 1.0
        for _ in 0..<decimals { scale *= 10 }
        let scaled = (abs(value) * scale).rounded()
        guard scaled < 9e18 else { return String(value) }
        let units = UInt64(scaled)
        let whole = units / UInt64(scale)
        let fraction = units % UInt64(scale)
        var wholeText = String(whole)
        if grouped, wholeText.count > 3 {
            var groupedText = ""
            for (offset, character) in wholeText.enumerated() {
                if offset > 0, (wholeText.count - offset) % 3 == 0 { groupedText.append(",") }
                groupedText.append(character)
            }
            wholeText = groupedText
        }
        var text = (value < 0 && units > 0 ? "-" : "") + wholeText
        if decimals > 0 {
            let digits = String(fraction)
            text += "." + String(repeating: "0", count: decimals - digits.count) + digits
        }
        return text
    }

    /// Decimals for prices around `level`: 2, or 4 below 1 (penny stocks).
    static func decimals(forPrice level: Double) -> Int { abs(level) < 1 ? 4 : 2 }

    /// A price: 2 decimals, or 4 below 1.
    static func price(_ value: Double) -> String { fixed(value, decimals: decimals(forPrice: value)) }

    /// A signed price change, with as many decimals as prices around `level`: `+1.23` / `-0.10`.
    static func signedPrice(_ value: Double, level: Double) -> String {
        let decimals = decimals(forPrice: level)
        let text = fixed(value, decimals: decimals)
        return value > 0 && text != fixed(0, decimals: decimals) ? "+" + text : text
    }

    /// A signed percentage: `+1.01%`.
    static func signedPercent(_ value: Double) -> String {
        let text = fixed(value, decimals: 2)
        return (value > 0 && text != "0.00" ? "+" : "") + text + "%"
    }

    /// A whole number with thousands separators: `12,345,678`.
    static func count(_ value: Double) -> String { fixed(value, decimals: 0) }

    /// ▲, ▼ or ◆ for a change.
    static func arrow(_ change: Double) -> String { change > 0 ? "▲" : change < 0 ? "▼" : "◆" }
}

extension StringProtocol {
    /// Without leading and trailing spaces and tabs.
    var trimmingSpaces: String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice.removeFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice.removeLast() }
        return String(slice)
    }
}
