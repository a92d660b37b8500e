import ContextProviderKit

/// Entry points for the libFuzzer targets (`Fuzz/HealthExportFuzzer`, `Fuzz/HealthCSVFuzzer`):
/// each reads one input the way the provider reads a file and checks invariants beyond "no trap".
/// Each answers `nil`, or what was violated (the fuzzer then stops with it).
package enum HealthFuzz {
    /// Chunk sizes the first byte picks from (its low three bits).
    static let chunkSizes = [64, 65, 97, 128, 1000, 4096, 1 << 16, 1 << 20]

    /// The export scanner over `input` (after its first byte), fed in chunks of the size the first
    /// byte picks (bit 3: reads deliver fewer bytes than asked), compared with one whole read.
    package static func export(_ input: UnsafeRawBufferPointer) -> String? {
        run(input, csv: false)
    }

    /// The CSV reader, fed the same way.
    package static func csv(_ input: UnsafeRawBufferPointer) -> String? {
        run(input, csv: true)
    }

    static func run(_ input: UnsafeRawBufferPointer, csv: Bool) -> String? {
        guard let first = input.first else { return nil }
        let bytes = Array(input.dropFirst())
        let chunkSize = chunkSizes[Int(first & 7)]
        let partial = first & 8 != 0
        let chunked = read(bytes, chunkSize: chunkSize, partial: partial, csv: csv)
        let whole = read(bytes, chunkSize: max(bytes.count + 1, 64), partial: false, csv: csv)
        if let problem = check(chunked, inputSize: bytes.count) { return problem }
        if chunked.days != whole.days {
            return "chunk size \(chunkSize) (partial reads: \(partial)) gave other aggregates than one read"
        }
        if chunked.report.records != whole.report.records || chunked.report.used != whole.report.used
            || chunked.report.malformed != whole.report.malformed
        {
            return "chunk size \(chunkSize) gave other counts than one read: \(chunked.report.records)/\(chunked.report.used)/\(chunked.report.malformed) vs \(whole.report.records)/\(whole.report.used)/\(whole.report.malformed)"
        }
        return views(chunked)
    }

    static func read(_ bytes: [UInt8], chunkSize: Int, partial: Bool, csv: Bool) -> HealthData {
        var offset = 0
        var turn = 0
        let source = { (pointer: UnsafeMutablePointer<UInt8>, count: Int) throws(ProviderError) -> Int in
            turn += 1
            var size = min(count, bytes.count - offset)
            if partial, size > 1 { size = 1 + (turn * 7919) % size }
            bytes.withUnsafeBufferPointer { buffer in
                if size > 0 { pointer.update(from: buffer.baseAddress! + offset, count: size) }
            }
            offset += size
            return size
        }
        do {
            return csv
                ? try CSVReader.read(fileName: "fuzz.csv", chunkSize: chunkSize, read: source)
                : try ExportScanner.scan(fileName: "fuzz.xml", chunkSize: chunkSize, read: source)
        } catch {
            return HealthData(days: [:], report: IngestReport())
        }
    }

    /// Values within the metric's range, days in order, counts consistent, messages short.
    static func check(_ data: HealthData, inputSize: Int) -> String? {
        let report = data.report
        if report.used > report.records { return "used \(report.used) > records \(report.records)" }
        if report.problems.count > IngestReport.problemLimit + 1 { return "\(report.problems.count) problems kept" }
        for message in report.problems + [report.truncation].compactMap({ $0 }) where message.utf8.count > 600 {
            return "a \(message.utf8.count)-byte message: \(message.prefix(120))"
        }
        if report.unknownTypes.count > Limits.maximumUnknownNames + 1 { return "\(report.unknownTypes.count) unknown type names kept" }
        for (metric, days) in data.days {
            var previous: Int32?
            for day in days {
                if let previous, day.day <= previous { return "\(metric.key): days out of order" }
                previous = day.day
                guard day.value.isFinite, day.min.isFinite, day.max.isFinite, day.count > 0 else {
                    return "\(metric.key): a non-finite value or an empty day"
                }
                let limit = metric.maximumSample
                switch metric.aggregation {
                case .sum, .sleep:
                    if day.value < 0 || day.value > limit * Double(day.count) * (1 + 1e-9) {
                        return "\(metric.key): day total \(day.value) outside 0…\(limit) × \(day.count)"
                    }
                case .average:
                    if day.min < 0 || day.max > limit || day.value < day.min * (1 - 1e-9) - 1e-9
                        || day.value > day.max * (1 + 1e-9) + 1e-9
                    {
                        return "\(metric.key): mean \(day.value) outside min \(day.min)…max \(day.max) or 0…\(limit)"
                    }
                }
            }
        }
        return nil
    }

    /// Every metric and period through the item and its views, in two locales; the item must read
    /// back, and each view's JSON must be written and parse again.
    static func views(_ data: HealthData) -> String? {
        let located = HealthStore.Located(
            path: "/fuzz/export.xml", stamp: FileStamp(size: 0, modifiedSeconds: 0, modifiedNanoseconds: 0, isDirectory: false),
            isCSV: false)
        let loaded = HealthStore.Loaded(located: located, data: data)
        for metric in data.metrics {
            guard let last = data.days[metric]?.last else { continue }
            for (period, locale) in [(Period.day, "en-US"), (.week, "de-DE"), (.month, "fr-FR")] {
                let units = DisplayUnits(locale: locale, system: "auto")
                let summary = PeriodSummary(
                    metric: metric, period: period, date: Int(last.day), data: data, goal: metric.defaultGoal ?? Goal(value: 1, direction: .atMost))
                guard summary.hasData else { return "\(metric.key): the last day with data has no value" }
                let item = ContextItem(
                    providerId: HealthMetricProvider.metadata.id, type: "health-metric", displayName: summary.displayName(units: units),
                    content: summary.content(units: units, locale: locale, loaded: loaded))
                do {
                    let health = try HealthItem(item)
                    for json in [health.chip.json, health.detail.json] {
                        let text = json.jsonString
                        _ = try JSONValue(parsing: Array(text.utf8))
                    }
                    _ = health.sentence
                } catch {
                    return "\(metric.key) \(period.rawValue): the provider's own item does not read back: \(error)"
                }
            }
        }
        return nil
    }
}
