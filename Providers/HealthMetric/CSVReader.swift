#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import ContextProviderKit

/// A streaming reader for simple metric CSV files: a header `date,metric,value,unit`, then one
/// row per sample or per day.
///
/// `date` is `YYYY-MM-DD` (a time after it is allowed and ignored), `metric` a metric key
/// (`steps`, `sleep`, …) or a Health identifier, `value` a number and `unit` a unit such as
/// `km`, `mi`, `kcal`, `kJ`, `kg`, `lb`, `count/min` or `h` (empty means the metric's base unit).
/// Rows of the same metric and day are added up (sums, sleep) or averaged. Fields may be quoted.
struct CSVReader {
    let path: String
    let chunkSize: Int

    init(path: String, chunkSize: Int = 1 << 20) {
        self.path = path
        self.chunkSize = max(chunkSize, 64)
    }

    /// Reads the whole file; bad rows are reported in the result, never thrown.
    func read() throws(ProviderError) -> HealthData {
        let fd = try FileSystem.openForReading(path)
        defer { close(fd) }
        let fileName = FileSystem.fileName(path)
        var report = IngestReport()
        report.format = "csv"
        var accumulator = SampleAccumulator()
        let source = accumulator.source(hash: 1) { fileName }
        var columns: [String: Int]?
        var lineNumber = 0
        var pendingLine: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        var unknown: [String: UInt64] = [:]

        func handle(_ raw: ArraySlice<UInt8>) {
            lineNumber += 1
            var bytes = raw
            if bytes.last == 0x0D { bytes = bytes.dropLast() }
            if lineNumber == 1, bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
            let text = String(decoding: bytes, as: UTF8.self)
            if text.allSatisfy(\.isWhitespace) || text.hasPrefix("#") { return }
            guard let fields = Self.fields(text) else {
                report.problem("\(fileName):\(lineNumber): unclosed quote; row skipped")
                return
            }
            guard columns != nil else {
                var found: [String: Int] = [:]
                for (index, name) in fields.enumerated() { found[name.trimmed().lowercased()] = index }
                if ["date", "metric", "value"].allSatisfy({ found[$0] != nil }) {
                    columns = found
                } else {
                    report.problem("\(fileName):\(lineNumber): the first line must be the header date,metric,value,unit; got \"\(text.prefix(60))\"")
                    columns = ["date": 0, "metric": 1, "value": 2, "unit": 3]
                    handleRow(fields, line: lineNumber)
                }
                return
            }
            handleRow(fields, line: lineNumber)
        }

        func handleRow(_ fields: [String], line: Int) {
            report.records += 1
            let header = columns!
            func field(_ name: String) -> String? {
                guard let index = header[name], index < fields.count else { return nil }
                return fields[index].trimmed()
            }
            guard let dateText = field("date"), let metricText = field("metric"), let valueText = field("value") else {
                report.problem("\(fileName):\(line): expected \(header.count) columns (date,metric,value,unit), found \(fields.count); row skipped")
                return
            }
            guard let metric = Metric(name: metricText) else {
                unknown[metricText.isEmpty ? "(empty)" : metricText, default: 0] += 1
                return
            }
            let dateBytes = Array(dateText.utf8)
            guard dateBytes.count == 10 || dateBytes.count >= 16,
                let day = dateBytes.withUnsafeBufferPointer({ CivilDate.parseDate($0.baseAddress!, count: $0.count) })
            else {
                report.problem("\(fileName):\(line): date \"\(dateText)\" is not a date like 2024-01-31; row skipped")
                return
            }
            let valueBytes = Array(valueText.utf8)
            guard !valueBytes.isEmpty,
                let number = valueBytes.withUnsafeBufferPointer({ parseNumber($0.baseAddress!, $0.count) }),
                number.isFinite
            else {
                report.problem("\(fileName):\(line): value \"\(valueText)\" is not a number; row skipped")
                return
            }
            let unitText = field("unit") ?? ""
            let unit = unitText.isEmpty ? metric.baseUnit : HealthUnit(text: unitText)
            guard let unit, unit.fits(metric) else {
                report.problem("\(fileName):\(line): unit \"\(unitText)\" does not fit \(metric.key) (use a unit convertible to \(metric.baseUnit.rawValue)); row skipped")
                return
            }
            guard number >= 0 else {
                report.problem("\(fileName):\(line): value \(valueText) is negative; row skipped")
                return
            }
            accumulator.add(metric, source: source, day: day, value: number * unit.factorToBase)
            report.used += 1
        }

        while true {
            let count = try chunk.withUnsafeMutableBufferPointer { (buffer) throws(ProviderError) -> Int in
                try FileSystem.read(fd, into: buffer.baseAddress!, count: buffer.count, path: path)
            }
            if count == 0 { break }
            report.bytes += UInt64(count)
            var lineStart = 0
            for index in 0..<count where chunk[index] == 0x0A {
                if pendingLine.isEmpty {
                    handle(chunk[lineStart..<index])
                } else {
                    pendingLine.append(contentsOf: chunk[lineStart..<index])
                    handle(pendingLine[...])
                    pendingLine.removeAll(keepingCapacity: true)
                }
                lineStart = index + 1
            }
            pendingLine.append(contentsOf: chunk[lineStart..<count])
        }
        if !pendingLine.isEmpty { handle(pendingLine[...]) }
        if columns == nil { report.problems.insert("\(fileName): empty CSV file (expected the header date,metric,value,unit)", at: 0) }
        report.unknownTypes = unknown
        return HealthData(days: accumulator.reduce(), report: report)
    }

    /// Splits a CSV line; `nil` when a quote is not closed.
    static func fields(_ line: String) -> [String]? {
        var fields: [String] = []
        var current = ""
        var quoted = false
        var iterator = Array(line).makeIterator()
        var previousWasQuote = false
        while let character = iterator.next() {
            if quoted {
                if character == "\"" {
                    quoted = false
                    previousWasQuote = true
                    continue
                }
                current.append(character)
            } else if character == "\"" {
                if previousWasQuote { current.append("\"") }
                quoted = true
            } else if character == "," {
                fields.append(current)
                current = ""
            } else {
                current.append(character)
            }
            previousWasQuote = false
        }
        guard !quoted else { return nil }
        fields.append(current)
        return fields
    }
}

extension String {
    func trimmed() -> String {
        var slice = Substring(self)
        while let first = slice.first, first.isWhitespace { slice.removeFirst() }
        while let last = slice.last, last.isWhitespace { slice.removeLast() }
        return String(slice)
    }
}
