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
    /// Reads what `read` delivers (up to `count` bytes at the pointer; 0 at the end). A line
    /// longer than `Limits.maximumCSVLine` is reported and skipped without being kept.
    package static func read(
        fileName: String, chunkSize requestedChunkSize: Int,
        read: ChunkSource
    ) throws(ProviderError) -> HealthData {
        let chunkSize = FileSystem.chunkSize(requestedChunkSize)
        var ingest = CSVIngest(fileName: fileName)
        var pendingLine: [UInt8] = []
        /// The current line passed the length limit: its bytes are dropped up to the newline.
        var overlong = false
        var chunk = [UInt8](repeating: 0, count: chunkSize)
        while true {
            let count = try chunk.withUnsafeMutableBufferPointer { (buffer) throws(ProviderError) -> Int in
                try read(buffer.baseAddress!, buffer.count)
            }
            if count <= 0 { break }
            let filled = min(count, chunkSize)
            ingest.report.bytes &+= UInt64(filled)
            var lineStart = 0
            while lineStart <= filled {
                // The next newline in this chunk, found with memchr.
                let newline: Int? = chunk.withUnsafeBufferPointer { buffer in
                    guard lineStart < filled, let found = memchr(buffer.baseAddress! + lineStart, 0x0A, filled - lineStart) else { return nil }
                    return buffer.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
                }
                let pieceEnd = newline ?? filled
                if overlong {
                    // Drop the rest of an overlong line.
                } else if pendingLine.count + (pieceEnd - lineStart) > Limits.maximumCSVLine {
                    overlong = true
                    pendingLine.removeAll(keepingCapacity: false)
                } else if newline != nil {
                    if pendingLine.isEmpty {
                        ingest.line(chunk[lineStart..<pieceEnd])
                    } else {
                        pendingLine.append(contentsOf: chunk[lineStart..<pieceEnd])
                        ingest.line(pendingLine[...])
                        pendingLine.removeAll(keepingCapacity: true)
                    }
                } else {
                    pendingLine.append(contentsOf: chunk[lineStart..<pieceEnd])
                }
                guard newline != nil else { break }
                if overlong {
                    ingest.overlongLine()
                    overlong = false
                }
                lineStart = pieceEnd + 1
            }
        }
        if overlong {
            ingest.overlongLine()
        } else if !pendingLine.isEmpty {
            ingest.line(pendingLine[...])
        }
        return ingest.finish()
    }

    /// Splits a CSV line; `nil` when a quote is not closed.
    static func fields(_ line: String, separator: Character = ",") -> [String]? {
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
            } else if character == separator {
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

/// One CSV read's state: the header once read, the line count, the samples kept and the rows
/// skipped (and why).
private struct CSVIngest {
    let fileName: String
    var report = IngestReport()
    var accumulator: SampleAccumulator
    let source: UInt32
    var columns: [String: Int]?
    var separator: Character = ","
    var lineNumber = 0
    var unknown: [String: UInt64] = [:]

    init(fileName: String) {
        self.fileName = fileName
        var accumulator = SampleAccumulator()
        source = accumulator.source(hash: 1) { fileName }
        self.accumulator = accumulator
        report.format = "csv"
    }

    /// Reads one line (without its newline): the header, a comment or a row.
    mutating func line(_ raw: ArraySlice<UInt8>) {
        lineNumber += 1
        var bytes = raw
        if bytes.last == 0x0D { bytes = bytes.dropLast() }
        if lineNumber == 1, bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        let text = String(decoding: bytes, as: UTF8.self)
        if text.allSatisfy(\.isWhitespace) || text.hasPrefix("#") { return }
        if columns == nil, !text.contains(","), text.contains(";") { separator = ";" }
        guard let fields = CSVReader.fields(text, separator: separator) else {
            report.problem("\(fileName):\(lineNumber): unclosed quote; row skipped")
            return
        }
        guard columns != nil else {
            var found: [String: Int] = [:]
            for (index, name) in fields.enumerated() where found[name.trimmingWhitespace().lowercased()] == nil {
                found[name.trimmingWhitespace().lowercased()] = index
            }
            if ["date", "metric", "value"].allSatisfy({ found[$0] != nil }) {
                columns = found
            } else {
                report.problem("\(fileName):\(lineNumber): the first line must be the header date,metric,value,unit; got \"\(Limits.quote(text))\"")
                columns = ["date": 0, "metric": 1, "value": 2, "unit": 3]
                row(fields, line: lineNumber)
            }
            return
        }
        row(fields, line: lineNumber)
    }

    /// Counts and reports a line over `Limits.maximumCSVLine`.
    mutating func overlongLine() {
        lineNumber += 1
        report.records &+= 1
        report.problem("\(fileName):\(lineNumber): the line is longer than \(Limits.maximumCSVLine >> 10) KB; row skipped")
    }

    /// Checks one row and adds its sample.
    mutating func row(_ fields: [String], line: Int) {
        report.records &+= 1
        guard let header = columns else { return }
        func field(_ name: String) -> String? {
            guard let index = header[name], index < fields.count else { return nil }
            return fields[index].trimmingWhitespace()
        }
        guard let dateText = field("date"), let metricText = field("metric"), let valueText = field("value") else {
            report.problem("\(fileName):\(line): expected \(header.count) columns (date,metric,value,unit), found \(fields.count); row skipped")
            return
        }
        guard let metric = Metric(name: metricText) else {
            let name = metricText.isEmpty ? "(empty)" : Limits.quote(metricText)
            if unknown[name] != nil || unknown.count < Limits.maximumUnknownNames {
                unknown[name, default: 0] &+= 1
            } else {
                unknown[Limits.otherUnknownName, default: 0] &+= 1
            }
            return
        }
        let dateBytes = Array(dateText.utf8.prefix(64))
        guard dateBytes.count == 10 || dateBytes.count >= 16,
            let day = dateBytes.withUnsafeBufferPointer({ CivilDate.parseDate($0.baseAddress!, count: $0.count) })
        else {
            report.problem("\(fileName):\(line): date \"\(Limits.quote(dateText))\" is not a date like 2024-01-31; row skipped")
            return
        }
        guard day >= Limits.firstDay, day <= Limits.lastDay else {
            report.problem("\(fileName):\(line): date \"\(Limits.quote(dateText))\" is outside the years \(Limits.years.lowerBound)–\(Limits.years.upperBound); row skipped")
            return
        }
        let valueBytes = Array(valueText.utf8.prefix(400))
        guard !valueBytes.isEmpty, valueBytes.count == valueText.utf8.count,
            let number = valueBytes.withUnsafeBufferPointer({ parseNumber($0.baseAddress!, $0.count) }),
            number.isFinite
        else {
            report.problem("\(fileName):\(line): value \"\(Limits.quote(valueText))\" is not a number; row skipped")
            return
        }
        let unitText = field("unit") ?? ""
        let unit = unitText.isEmpty ? metric.baseUnit : HealthUnit(text: unitText)
        guard let unit, unit.fits(metric) else {
            report.problem("\(fileName):\(line): unit \"\(Limits.quote(unitText))\" does not fit \(metric.key) (use a unit convertible to \(metric.baseUnit.rawValue)); row skipped")
            return
        }
        guard number >= 0 else {
            report.problem("\(fileName):\(line): value \(Limits.quote(valueText)) is negative; row skipped")
            return
        }
        let base = number * unit.factorToBase
        guard base <= metric.maximumSample else {
            report.problem("\(fileName):\(line): value \(Limits.quote(valueText)) \(Limits.quote(unitText)) is out of range for \(metric.key) (at most \(formatPlain(metric.maximumSample)) \(metric.baseUnit.rawValue) a row); row skipped")
            return
        }
        accumulator.add(metric, source: source, day: day, value: base)
        report.used &+= 1
    }

    /// The result, with the file-level problems.
    mutating func finish() -> HealthData {
        if accumulator.dropped > 0 {
            report.problem("\(fileName): \(accumulator.dropped) rows were dropped: the file has more than \(Limits.maximumBuckets) distinct metric and day combinations")
        }
        if columns == nil { report.problems.insert("\(fileName): empty CSV file (expected the header date,metric,value,unit)", at: 0) }
        report.unknownTypes = unknown
        return HealthData(days: accumulator.reduce(), report: report)
    }
}
