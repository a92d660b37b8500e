import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// The Health Metric provider through the real `context-host`, with the default manifests and the
/// bundled sample export: collect → preview → detail → encode.
@Suite("Health Metric through context-host")
struct HealthMetricFlowTests {
    @Test("collect a week of steps from the sample export, then preview, detail and encode it")
    func weekOfSteps() throws {
        // A private HOME, so the aggregate cache (~/.cache/context-host/health) lands in a
        // temporary folder.
        let home = try TemporaryDirectory()
        let host = try HostProcess(arguments: ["serve"], environment: ["HOME": home.path])
        let client = RPCClient(host: host)
        defer { client.host.terminate() }
        _ = try client.initialize(["clientInfo": ["name": "tests"], "locale": "en-US"])

        let health = try client.availableProvider("com.contexthost.health-metric")
        #expect(health["title"] == "Health Metric")

        let start = try client.call("collect/start", ["providerId": "com.contexthost.health-metric"])
        let sessionID = try #require(start["sessionId"]?.stringValue)
        let fields = start["form"]?["fields"]?.arrayValue ?? []
        #expect(fields.compactMap { $0["id"]?.stringValue } == ["metric", "period", "date"])
        let metrics = (fields.first?["options"]?.arrayValue ?? []).compactMap { $0["value"]?.stringValue }
        #expect(metrics.contains("steps") && metrics.contains("sleep") && metrics.count == 8)

        let submitted = try client.call(
            "collect/submit",
            ["sessionId": .string(sessionID), "values": ["metric": "steps", "period": "week", "date": "2024-01-10"]])
        #expect(submitted["outcome"] == "item")
        let item = try #require(submitted["item"])
        #expect(item["providerId"] == "com.contexthost.health-metric")
        #expect(item["type"] == "health-metric")
        #expect(item["content"]?["start"] == "2024-01-08")
        #expect(item["content"]?["end"] == "2024-01-14")
        let days = item["content"]?["days"]?.arrayValue ?? []
        #expect(days.count == 7)
        let average = try #require(item["content"]?["value"]?.numberValue)
        let values = days.compactMap { $0["value"]?.numberValue }
        #expect(abs(average - values.reduce(0, +) / Double(values.count)) <= 1)

        let chip = try client.call("items/preview", ["item": item])
        #expect(chip["icon"] == "figure.walk")
        #expect(chip["title"]?.stringValue?.hasSuffix(" steps/day") == true)
        #expect(chip["subtitle"] == "Steps · week of 2024-01-08 · goal 10,000 steps")
        #expect(["good", "warning", "attention"].contains(chip["tone"]?.stringValue ?? ""))

        let detail = try client.call("items/detail", ["item": item])
        #expect(detail["title"] == "Steps — week of 2024-01-08")
        let blocks = detail["blocks"]?.arrayValue ?? []
        let chart = try #require(blocks.first { $0["type"] == "chart" })
        #expect(chart["thresholds"]?.arrayValue?.first?["value"] == 10000)
        #expect(chart["series"]?.arrayValue?.first?["points"]?.arrayValue?.count == 7)
        let facts = try #require(blocks.first { $0["type"] == "facts" })
        let labels = (facts["facts"]?.arrayValue ?? []).compactMap { $0["label"]?.stringValue }
        for label in ["Average", "Minimum", "Maximum", "Days met"] { #expect(labels.contains(label), "\(label)") }

        let encoded = try client.call("items/encode", ["item": item])
        #expect(encoded["contentType"] == "application/json")
        let base64 = try #require(encoded["data"]?.stringValue)
        let data = try #require(Data(base64Encoded: base64))
        let json = try JSONValue(parsing: Array(data))
        #expect(json["metric"] == "steps")
        #expect(json["days"]?.arrayValue?.count == 7)
        #expect(json["summary"]?["daysWithData"] == 7)

        #expect(try client.shutdown() == 0)
        // The aggregates were cached under the private HOME.
        let cache = home.path + "/.cache/context-host/health"
        #expect((try? FileManager.default.contentsOfDirectory(atPath: cache))?.count == 1)
    }
}
