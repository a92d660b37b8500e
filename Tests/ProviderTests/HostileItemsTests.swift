import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// Forged items from a client, for every bundled provider, through the real `context-host` with
/// every provider **in-process** (where a trap would end the host): `items/preview`,
/// `items/detail`, `items/describe` and `items/encode` of each answer a result or a documented
/// error, and the host keeps answering `ping` with bounded memory. (Each provider's own hostile
/// files are in `Hostile<Provider>Tests`.)
@Suite("Bundled providers: forged items through the real host, in-process")
struct HostileItemsTests {
    static let providers = [
        "com.contexthost.note", "com.contexthost.location", "com.contexthost.calendar", "com.contexthost.stock-quote",
        "com.contexthost.health-metric", "com.contexthost.device-info",
    ]

    /// Content a client can forge: wrong types, extreme numbers, huge and odd strings, deep nesting.
    static let contents: [JSONValue] = {
        let huge = String(repeating: "é", count: 200_000)
        var deep: JSONValue = "x"
        for _ in 0..<200 { deep = ["nested": deep] }
        let numbers: [Double] = [1e308, -1e308, 9_007_199_254_740_993, -9_223_372_036_854_775_808, 0.1e-320]
        var result: [JSONValue] = [
            [:],
            ["title": .null, "body": .null],
            ["title": .number(1), "body": .array([]), "value": "x", "latitude": "north"],
            ["title": .string(huge), "body": .string(huge), "name": .string(huge), "symbol": .string(huge)],
            ["title": "\u{0}\u{1}\u{7F}\u{FEFF}\u{202E}", "body": "\u{FFFD}\u{10FFFF}", "symbol": "../../etc/passwd"],
            ["title": deep, "body": deep, "points": deep],
            ["startDate": "99999-99-99", "endDate": "-1", "date": "2025-02-30", "period": "P999999999999999999W"],
            ["points": .array(Array(repeating: ["date": "2025-01-01", "value": .number(1e308)], count: 20_000))],
            ["latitude": .number(1e308), "longitude": .number(-1e308), "zoom": .number(1e18), "accuracy": .number(-1)],
        ]
        for number in numbers {
            result.append([
                "title": "n", "body": "n", "latitude": .number(number), "longitude": .number(number), "value": .number(number),
                "goal": .number(number), "price": .number(number), "close": .number(number), "change": .number(number),
                "page": .number(number), "count": .number(number), "wordCount": .number(number), "minutes": .number(number),
            ])
        }
        result.append(["title": "x", "value": .number(0), "goal": .number(0), "unit": "%"])
        result.append(["title": "x", "value": .number(5e-324), "goal": .number(5e-324), "unit": "min"])
        return result
    }()

    @Test("every forged item answers a result or a documented error; the host stays up", arguments: providers)
    func forgedItems(providerID: String) throws {
        #expect(Self.contents.count >= 15)
        // 5 s previews: a debug build may take longer than the 500 ms default for these items
        // on a loaded machine (a timeout still fails).
        let manifests = try RelaxedManifests.folder(copying: RelaxedManifests.bundled, previewTimeout: "5s")
        let client = try RPCClient(arguments: ["serve", "--no-watch", "--no-state", "--isolation", "in-process", "--manifests", manifests])
        defer { client.host.terminate() }
        try client.initialize()
        let types = ["note", "place", "event", "quote", "metric", "device", "", "x"]
        for (index, content) in Self.contents.enumerated() {
            let item: JSONValue = ["providerId": .string(providerID), "type": .string(types[index % types.count]), "content": content]
            for method in ["items/preview", "items/detail", "items/describe", "items/encode"] {
                let response = try client.response(to: client.send(method, ["item": item]), timeout: 20)
                let code = response["error"]?["code"]?.intValue
                // A result, invalid params or the provider's own error; not a reply the host had to
                // refuse (-32014) nor a timeout (-32015).
                #expect(
                    response["result"] != nil || [-32602, -32600, -32013].contains(code ?? 0),
                    "\(providerID) \(method) #\(index): \(String(describing: response).prefix(300))")
            }
        }
        #expect(try client.call("ping").objectValue != nil)
        #expect(client.host.process.isRunning)
        let memory = try #require(client.host.peakResidentMiB)
        #expect(memory < 400, "host peak resident memory (VmHWM) \(memory) MB")
    }
}
