import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// Hostile data and requests for the Health Metric provider, through the real
/// `libHealthMetricProvider.so` loaded in-process by the real `context-host` (a trap would end
/// the host). Each test checks that the host still answers `ping`, that the request got a result or
/// a documented error within its timeout, and that the host's peak memory stayed below a bound.
@Suite("Health Metric: hostile inputs through the real host", .serialized)
struct HostileHealthMetricTests {
    static let id = "com.contexthost.health-metric"
    static let steps = "HKQuantityTypeIdentifierStepCount"

    static func record(_ value: String, type: String = steps, unit: String? = "count", day: String = "2024-01-02", source: String = "iPhone") -> String {
        let unitText = unit.map { " unit=\"\($0)\"" } ?? ""
        return "<Record type=\"\(type)\" sourceName=\"\(source)\"\(unitText) startDate=\"\(day) 08:00:00 +0100\" endDate=\"\(day) 08:10:00 +0100\" value=\"\(value)\"/>\n"
    }

    static let head = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<HealthData locale=\"en_US\">\n"
    static let tail = "</HealthData>\n"

    /// A host whose provider reads `file` (written into the temporary folder).
    static func host(
        file name: String = "export.xml", contents: String? = nil, settings: [String: JSONValue] = [:],
        prepare: (TemporaryDirectory) throws -> Void = { _ in }, editManifest: (String) -> String = { $0 }
    ) throws -> HostileHost {
        let folder = try TemporaryDirectory()
        if let contents { try folder.write("data/" + name, contents) }
        try prepare(folder)
        var all: [String: JSONValue] = [
            "export": .string(folder.path + "/data/" + name), "cacheDirectory": .string(folder.path + "/cache"),
        ]
        for (key, value) in settings { all[key] = value }
        return try HostileHost(
            manifest: "health-metric.yaml", providerId: id, settings: all, folder: folder, editManifest: editManifest)
    }

    /// collect/start + collect/submit: the item, or the outcome / error when there is none.
    static func submit(_ host: HostileHost, _ values: JSONValue) throws -> (item: JSONValue?, answer: JSONValue?) {
        try host.submit(values, timeout: 60)
    }

    /// preview, detail, describe and encode (json and csv) of an item: each a result or a documented error.
    static func views(_ host: HostileHost, _ item: JSONValue) throws -> [JSONValue] {
        try host.views(item, representation: "csv")
    }

    /// A forged item: the sample's shape with `content` changed by `edit`.
    static func forged(_ edit: (inout JSONObject) -> Void) -> JSONValue {
        var content: JSONObject = [
            "metric": "steps", "title": "Steps", "period": "day", "date": "2024-01-10", "start": "2024-01-10", "end": "2024-01-10",
            "unit": "steps", "value": 8000, "goal": ["value": 10000, "direction": "atLeast"],
            "days": [["date": "2024-01-09", "value": 7000, "samples": 3], ["date": "2024-01-10", "value": 8000, "samples": 4]],
            "summary": ["average": 7500, "min": 7000, "max": 8000, "total": 15000, "daysWithData": 2, "daysInRange": 7, "daysMet": 0],
            "source": ["file": "export.xml", "records": 7, "notes": []],
        ]
        edit(&content)
        return ["id": "00000000-0000-4000-8000-000000000001", "providerId": .string(id), "type": "health-metric", "displayName": "Steps", "content": .object(content)]
    }

    // MARK: Numbers

    @Test("huge, 20-digit, Int.min-like, NaN, infinite and negative values are reported; the rest is used")
    func hugeNumbers() throws {
        let values = ["1e308", "99999999999999999999", "-9223372036854775808", "NaN", "inf", "-5", "1e-320"]
        let lines = values.map { Self.record($0) }.joined() + Self.record("1000") + Self.record("234")
        let host = try Self.host(contents: Self.head + lines + Self.tail)
        let (item, answer) = try Self.submit(host, ["metric": "steps", "period": "day", "date": "2024-01-02"])
        let content = try #require(item?["content"], "\(answer ?? .null)")
        // 1e-320 is a (tiny) valid count; the out-of-range ones are skipped.
        #expect(content["value"] == 1234)
        #expect(content["source"]?["skippedMalformed"] == 6)
        let notes = HostileHost.allText(content["source"]?["notes"])
        #expect(notes.contains("outside 0…1000000 count"), "\(notes)")
        let answers = try Self.views(host, try #require(item))
        #expect(answers[0]["accessibilityLabel"]?.stringValue?.contains("12% of the goal") == true, "\(answers[0])")
        try host.expectAlive()
    }

    @Test("a CSV with 20-digit, Int.min-like, NaN, infinite, negative and huge sleep values")
    func hostileCSVNumbers() throws {
        let rows = [
            "2024-01-02,steps,99999999999999999999,count", "2024-01-02,steps,-9223372036854775808,", "2024-01-02,steps,NaN,",
            "2024-01-02,steps,inf,", "2024-01-02,steps,1e400,", "2024-01-02,sleep,1e300,min", "2024-01-02,sleep,90000,h",
            "2024-01-02,steps,4200,count", "2024-01-02,sleep,420,min",
        ]
        let host = try Self.host(file: "metrics.csv", contents: "date,metric,value,unit\n" + rows.joined(separator: "\n") + "\n")
        let (item, answer) = try Self.submit(host, ["metric": "sleep", "period": "day", "date": "2024-01-02"])
        let content = try #require(item?["content"], "\(answer ?? .null)")
        #expect(content["value"] == 7)
        #expect(content["source"]?["skippedMalformed"] == 7)
        _ = try Self.views(host, try #require(item))
        try host.expectAlive()
    }

    @Test("a goal of 1e-10 steps refuses to open (it would make the percentage overflow)")
    func tinyGoal() throws {
        let host = try Self.host(contents: Self.head + Self.record("5000") + Self.tail, settings: ["goals": "steps=0.0000000001"])
        let (session, error) = try host.start()
        #expect(session == nil)
        #expect(error?["code"] == -32012, "\(error ?? .null)")
        #expect(HostileHost.allText(error).contains("out of range"), "\(error ?? .null)")
        try host.expectAlive()
    }

    @Test("a 5 MB goals setting is refused with a short message")
    func hugeGoalsSetting() throws {
        let goals = String(repeating: "9", count: 5 << 20)
        let host = try Self.host(contents: Self.head + Self.record("5000") + Self.tail, settings: ["goals": .string(goals)])
        let (session, error) = try host.start()
        #expect(session == nil)
        let text = HostileHost.allText(error)
        #expect(text.contains("goals"), "\(text.prefix(300))")
        #expect(text.utf8.count < 2000, "the error quotes \(text.utf8.count) bytes")
        let listing = try host.listing()
        #expect(HostileHost.allText(listing).utf8.count < 4000)
        try host.expectAlive()
    }

    // MARK: Forged items

    @Test("forged items with infinite or huge values get a documented error or a clamped answer, never a trap")
    func forgedNumbers() throws {
        let host = try Self.host(contents: Self.head + Self.record("5000") + Self.tail)
        let forgedItems = [
            Self.forged { $0["goal"] = ["value": .number(1e-300), "direction": "atLeast"] },
            Self.forged { $0["value"] = .number(1.7e308); $0["goal"] = ["value": .number(1e-300)] },
            Self.forged { $0["metric"] = "sleep"; $0["unit"] = "h"; $0["value"] = .number(1e300); $0["goal"] = ["value": .number(7)] },
            Self.forged { $0["days"] = [["date": "2024-01-10", "value": .number(-1.7e308), "min": .number(1e308)]] },
            Self.forged { $0["summary"] = ["average": .number(1e308), "daysWithData": .number(9.007199254740992e15)] },
        ]
        for item in forgedItems {
            #expect(try Self.views(host, item).count == 5)
        }
        // The huge-but-finite values are shown, clamped.
        let percent = try host.result("items/preview", ["item": forgedItems[1]])
        #expect(percent["accessibilityLabel"]?.stringValue?.contains("% of the goal") == true, "\(percent)")
        let sleep = try host.result("items/preview", ["item": forgedItems[2]])
        #expect(sleep["title"]?.stringValue?.contains(" h") == true, "\(sleep)")
        // 1e400 reads as infinity: refused with a documented error.
        for (field, replacement) in [("\"value\":8000", "\"value\":1e400"), ("\"value\":10000", "\"value\":-1e400"), ("\"value\":7000", "\"value\":1e999")] {
            let text = Self.forged { _ in }.jsonString
            #expect(text.contains(field))
            for method in ["items/preview", "items/detail", "items/describe", "items/encode"] {
                let (result, error) = try host.rawRequest(method, params: "{\"item\":\(text.replacingOccurrences(of: field, with: replacement))}")
                #expect(result == nil, "\(method) \(replacement): \(result ?? .null)")
                #expect(error != nil)
            }
        }
        try host.expectAlive()
    }

    @Test("a forged item with 5,000 days is refused (at most 366)")
    func forgedManyDays() throws {
        let host = try Self.host(contents: Self.head + Self.record("5000") + Self.tail)
        let days = (0..<5_000).map { _ -> JSONValue in ["date": "2024-01-10", "value": 1] }
        let item = Self.forged { $0["days"] = .array(days) }
        let (result, error) = try host.request("items/detail", ["item": item])
        #expect(result == nil)
        #expect(HostileHost.allText(error).contains("at most 366 days"), "\(error ?? .null)")
        try host.expectAlive()
    }

    @Test("forged collect/submit values: unknown period, 64 KB date, 5-digit year, unknown metric")
    func forgedSubmit() throws {
        let host = try Self.host(contents: Self.head + Self.record("5000") + Self.tail)
        let cases: [JSONValue] = [
            ["metric": "steps", "period": "decade", "date": "2024-01-02"],
            ["metric": "steps", "period": "day", "date": .string(String(repeating: "2024-01-02", count: 6554))],
            ["metric": "steps", "period": "week", "date": "99999-01-01"],
            ["metric": "steps", "period": "month", "date": "0000-01-01"],
            ["metric": .string(String(repeating: "x", count: 1 << 20)), "period": "day", "date": "2024-01-02"],
            ["metric": "steps", "period": "day", "date": 9.007199254740992e15],
        ]
        for values in cases {
            let (item, answer) = try Self.submit(host, values)
            #expect(item == nil)
            #expect(answer?["outcome"] == "invalid" || answer?["code"] != nil, "\(answer ?? .null)")
        }
        try host.expectAlive()
    }

    // MARK: XML

    @Test("a billion-laughs DTD is never expanded; the records around it are used")
    func billionLaughs() throws {
        var dtd = "<?xml version=\"1.0\"?>\n<!DOCTYPE HealthData [\n <!ENTITY lol \"lol\">\n"
        for level in 1...9 {
            dtd += " <!ENTITY lol\(level) \"\(String(repeating: level == 1 ? "&lol;" : "&lol\(level - 1);", count: 10))\">\n"
        }
        dtd += "]>\n<HealthData>\n"
        let body = Self.record("&lol9;") + Self.record("321", source: "&lol9;") + Self.record("4000") + Self.tail
        let host = try Self.host(contents: dtd + body)
        let (item, answer) = try Self.submit(host, ["metric": "steps", "period": "day", "date": "2024-01-02"])
        let content = try #require(item?["content"], "\(answer ?? .null)")
        #expect(content["value"] == 4000)
        #expect(content["source"]?["skippedMalformed"] == 2)
        #expect(HostileHost.allText(content).contains("unknown entity"))
        try host.expectAlive(memoryBoundMiB: 128)
    }

    @Test("an XML external entity (XXE) is never read: the marker in the file it names appears nowhere")
    func externalEntity() throws {
        let marker = "XXE-MARKER-\(UUID().uuidString)"
        let host = try Self.host(prepare: { folder in
            let secret = try folder.write("secret.txt", marker)
            let xml = "<?xml version=\"1.0\"?>\n<!DOCTYPE HealthData [\n <!ENTITY xxe SYSTEM \"file://\(secret)\">\n <!ENTITY % remote SYSTEM \"file://\(secret)\">\n %remote;\n]>\n<HealthData>\n"
                + Self.record("&xxe;") + Self.record("12", source: "&xxe;") + Self.record("3000").replacingOccurrences(of: "iPhone", with: "&xxe;iPhone")
                + Self.record("2500") + Self.tail
            try folder.write("data/export.xml", xml)
        })
        let (item, answer) = try Self.submit(host, ["metric": "steps", "period": "day", "date": "2024-01-02"])
        let content = try #require(item?["content"], "\(answer ?? .null)")
        #expect(content["value"] == 2500)
        var seen = HostileHost.allText(item)
        for view in try Self.views(host, try #require(item)) { seen += HostileHost.allText(view) }
        seen += HostileHost.allText(try host.listing())
        #expect(!seen.contains(marker))
        try host.expectAlive()
        #expect(!host.host.standardError.contains(marker))
    }

    @Test("100,000 nested elements and 100,000 distinct unknown types and sources stay bounded")
    func deepNestingAndManyNames() throws {
        let host = try Self.host(prepare: { folder in
            var xml = Self.head + String(repeating: "<a>", count: 100_000)
            xml += (0..<100_000).map { "<Record type=\"HKQuantityTypeIdentifierX\($0)\" value=\"1\"/>\n" }.joined()
            xml += (0..<20_000).map { Self.record("1", source: "source-\($0)") }.joined()
            xml += String(repeating: "</a>", count: 100_000) + Self.tail
            try folder.write("data/export.xml", xml)
        })
        let (item, answer) = try Self.submit(host, ["metric": "steps", "period": "day", "date": "2024-01-02"])
        let content = try #require(item?["content"], "\(answer ?? .null)")
        #expect(content["source"]?["ignoredUnknownTypes"] == 100_000)
        _ = try Self.views(host, try #require(item))
        try host.expectAlive()
    }

    @Test("an 8 MB attribute read 64 bytes at a time is scanned in linear time (no rescans per chunk)")
    func longAttributeSmallChunks() throws {
        let host = try Self.host(
            settings: ["chunkSize": 64],
            prepare: { folder in
                let long = String(repeating: "x", count: 8 << 20)
                let xml = Self.head + Self.record("700") + Self.record("800", source: long) + Self.record("900") + Self.tail
                try folder.write("data/export.xml", xml)
            })
        let started = Date()
        let (item, answer) = try Self.submit(host, ["metric": "steps", "period": "day", "date": "2024-01-02"])
        let content = try #require(item?["content"], "\(answer ?? .null)")
        // iPhone 1,600 vs the long source's 800: the larger source wins the day.
        #expect(content["value"] == 1600)
        // Linear: well under a second here; rescanning the pending tag after every 64-byte read took 20 s.
        #expect(Date().timeIntervalSince(started) < 8)
        try host.expectAlive()
    }

    @Test("truncated exports: inside a tag, inside an open Record, without </HealthData>")
    func truncatedExports() throws {
        for cut in [
            Self.head + Self.record("600") + "<Record type=\"\(Self.steps)\" value=\"4\" startDate=\"2024-01-0",
            Self.head + Self.record("600") + Self.record("5").replacingOccurrences(of: "/>", with: ">") + "<MetadataEntry key=\"k\" value=\"v\"/>\n",
            Self.head + Self.record("600"),
        ] {
            let host = try Self.host(contents: cut)
            let (item, answer) = try Self.submit(host, ["metric": "steps", "period": "day", "date": "2024-01-02"])
            let content = try #require(item?["content"], "\(answer ?? .null)")
            #expect(content["value"] == 600)
            #expect(content["source"]?["truncated"] == true)
            try host.expectAlive()
        }
    }

    @Test("binary garbage as export.xml and as a CSV: unavailable with a reason, host alive")
    func binaryGarbage() throws {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for name in ["export.xml", "metrics.csv"] {
            let host = try Self.host(file: name, prepare: { folder in
                try FileManager.default.createDirectory(atPath: folder.path + "/data", withIntermediateDirectories: true)
                FileManager.default.createFile(atPath: folder.path + "/data/" + name, contents: Data(bytes))
            })
            let (session, error) = try host.start()
            #expect(session == nil)
            #expect(error?["code"] == -32011 || error?["code"] == -32013, "\(error ?? .null)")
            try host.expectAlive()
        }
    }

    // MARK: CSV

    @Test("a 24 MB single-line CSV is skipped with a short report; memory stays bounded")
    func hugeSingleLine() throws {
        let host = try Self.host(file: "metrics.csv", prepare: { folder in
            try FileManager.default.createDirectory(atPath: folder.path + "/data", withIntermediateDirectories: true)
            try HostileHost.writeRepeated(
                folder.path + "/data/metrics.csv", header: "date,metric,value,unit\n2024-01-02,steps,", line: "9,\"",
                count: 8 << 20, footer: "\n2024-01-02,steps,777,count\n")
        })
        let (item, answer) = try Self.submit(host, ["metric": "steps", "period": "day", "date": "2024-01-02"])
        let content = try #require(item?["content"], "\(answer ?? .null)")
        #expect(content["value"] == 777)
        let notes = content["source"]?["notes"]?.arrayValue ?? []
        #expect(notes.contains { $0.stringValue?.contains("longer than 64 KB") == true }, "\(notes)")
        #expect(notes.allSatisfy { ($0.stringValue?.utf8.count ?? 0) < 400 })
        try host.expectAlive(memoryBoundMiB: 200)
    }

    @Test("a million CSV rows for one date are summed in bounded memory")
    func millionRowsOneDate() throws {
        let host = try Self.host(file: "metrics.csv", prepare: { folder in
            try FileManager.default.createDirectory(atPath: folder.path + "/data", withIntermediateDirectories: true)
            try HostileHost.writeRepeated(
                folder.path + "/data/metrics.csv", header: "date,metric,value\n", line: "2024-01-02,steps,1\n", count: 1_000_000)
        })
        let (item, answer) = try Self.submit(host, ["metric": "steps", "period": "day", "date": "2024-01-02"])
        let content = try #require(item?["content"], "\(answer ?? .null)")
        #expect(content["value"] == 1_000_000)
        #expect(content["days"]?.arrayValue?.last?["samples"] == 1_000_000)
        try host.expectAlive(memoryBoundMiB: 128)
    }

    // MARK: Real formats

    @Test("exports from several iOS versions: offsets, units, sleep stages, Correlations, a localized file name")
    func realFormats() throws {
        let sleep = "HKCategoryTypeIdentifierSleepAnalysis"
        func sleepRecord(_ value: String, _ start: String, _ end: String) -> String {
            "<Record type=\"\(sleep)\" sourceName=\"Watch\" startDate=\"\(start)\" endDate=\"\(end)\" value=\"\(value)\"/>\n"
        }
        var xml = Self.head
        // iOS 8–12 style: kcal written as Cal, distance in mi, a +0200 offset.
        xml += "<Record type=\"HKQuantityTypeIdentifierActiveEnergyBurned\" sourceName=\"iPhone\" unit=\"Cal\" creationDate=\"2019-06-01 08:12:03 +0200\" startDate=\"2019-06-01 08:12:03 +0200\" endDate=\"2019-06-01 08:20:03 +0200\" value=\"120.5\"/>\n"
        xml += "<Record type=\"HKQuantityTypeIdentifierDistanceWalkingRunning\" sourceName=\"iPhone\" unit=\"mi\" startDate=\"2019-06-01 23:50:00 -0500\" endDate=\"2019-06-02 00:10:00 -0500\" value=\"1\"/>\n"
        // Blood pressure: a Correlation whose Records are repeated at the top level.
        xml += "<Correlation type=\"HKCorrelationTypeIdentifierBloodPressure\" sourceName=\"Cuff\" startDate=\"2019-06-01 09:00:00 +0200\" endDate=\"2019-06-01 09:00:00 +0200\">\n"
        xml += " <MetadataEntry key=\"HKWasUserEntered\" value=\"1\"/>\n"
        xml += " " + Self.record("120", type: "HKQuantityTypeIdentifierBloodPressureSystolic", unit: "mmHg", day: "2019-06-01")
        xml += " " + Self.record("80", type: "HKQuantityTypeIdentifierBloodPressureDiastolic", unit: "mmHg", day: "2019-06-01")
        xml += " " + Self.record("50", type: "HKQuantityTypeIdentifierHeartRate", unit: "count/min", day: "2019-06-01")
        xml += "</Correlation>\n"
        xml += Self.record("120", type: "HKQuantityTypeIdentifierBloodPressureSystolic", unit: "mmHg", day: "2019-06-01")
        xml += Self.record("72", type: "HKQuantityTypeIdentifierHeartRate", unit: "count/min", day: "2019-06-01")
        xml += Self.record("0.25", type: "HKQuantityTypeIdentifierBodyFatPercentage", unit: "%", day: "2019-06-01")
        // Sleep: iOS ≤ 15 Asleep, iOS 16+ stages, InBed (not counted).
        xml += sleepRecord("HKCategoryValueSleepAnalysisInBed", "2019-06-01 22:30:00 +0200", "2019-06-02 07:00:00 +0200")
        xml += sleepRecord("HKCategoryValueSleepAnalysisAsleep", "2019-06-01 23:00:00 +0200", "2019-06-02 02:00:00 +0200")
        xml += sleepRecord("HKCategoryValueSleepAnalysisAsleepCore", "2019-06-02 02:00:00 +0200", "2019-06-02 04:00:00 +0200")
        xml += sleepRecord("HKCategoryValueSleepAnalysisAsleepREM", "2019-06-02 04:00:00 +0200", "2019-06-02 05:00:00 +0200")
        xml += sleepRecord("HKCategoryValueSleepAnalysisAwake", "2019-06-02 05:00:00 +0200", "2019-06-02 05:30:00 +0200")
        xml += sleepRecord("HKCategoryValueSleepAnalysisAsleepDeep", "2019-06-02 05:30:00 +0200", "2019-06-02 06:30:00 +0200")
        xml += Self.tail
        let folder = try TemporaryDirectory()
        try folder.write("apple_health_export/Exportieren.xml", xml)
        try folder.write("apple_health_export/export_cda.xml", "<ClinicalDocument/>")
        let host = try HostileHost(
            manifest: "health-metric.yaml", providerId: Self.id,
            settings: ["export": .string(folder.path), "cacheDirectory": .string(folder.path + "/cache")], folder: folder)
        func value(_ metric: String, _ date: String) throws -> JSONValue? {
            let (item, answer) = try Self.submit(host, ["metric": .string(metric), "period": "day", "date": .string(date)])
            #expect(item != nil, "\(metric): \(answer ?? .null)")
            return item?["content"]?["value"]
        }
        #expect(try value("activeEnergy", "2019-06-01") == 121)  // 120.5 kcal, shown without decimals
        #expect(try value("distance", "2019-06-01") == 1)  // en-US: miles; counted on its start day
        #expect(try value("heartRate", "2019-06-01") == 72)  // the Correlation's copy is not counted twice
        #expect(try value("sleep", "2019-06-02") == 7)  // 3 + 2 + 1 + 1 h asleep; InBed and Awake not
        try host.expectAlive()
    }

    // MARK: Settings

    @Test("an empty cacheDirectory in the manifest means no cache: nothing is written into the manifests folder")
    func emptyCacheDirectory() throws {
        let folder = try TemporaryDirectory()
        try folder.write("data/export.xml", Self.head + Self.record("5000") + Self.tail)
        let host = try HostileHost(
            manifest: "health-metric.yaml", providerId: Self.id, settings: ["export": .string(folder.path + "/data/export.xml")],
            folder: folder,
            editManifest: { $0.replacingOccurrences(of: "default: \"~/.cache/context-host/health\"", with: "default: \"\"") })
        let manifest = try String(contentsOfFile: host.manifests + "/health-metric.yaml", encoding: .utf8)
        #expect(manifest.contains("default: \"\""))
        let (item, answer) = try Self.submit(host, ["metric": "steps", "period": "day", "date": "2024-01-02"])
        #expect(item?["content"]?["value"] == 5000, "\(answer ?? .null)")
        let written = try FileManager.default.contentsOfDirectory(atPath: host.manifests)
        #expect(written == ["health-metric.yaml"], "\(written)")
        try host.expectAlive()
    }
}
