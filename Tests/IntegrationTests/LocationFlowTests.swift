import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// The Location provider through the real `context-host` with the default manifests.
@Suite("Location flow through context-host")
struct LocationFlowTests {
    static func decoded(_ encoded: JSONValue) throws -> [UInt8] {
        let text = try #require(encoded["data"]?.stringValue)
        let data = try #require(Data(base64Encoded: text))
        return Array(data)
    }

    @Test("collect (search + coordinates) → preview → detail → encode, and collect/make without a current location")
    func flow() throws {
        let client = try RPCClient(arguments: ["serve"])
        defer { client.host.terminate() }
        _ = try client.initialize()

        _ = try client.availableProvider("com.contexthost.location")

        // collect/start → the form with a searchable place and a coordinates field.
        let start = try client.call("collect/start", ["providerId": "com.contexthost.location"])
        let sessionID = try #require(start["sessionId"]?.stringValue)
        let fields = start["form"]?["fields"]?.arrayValue ?? []
        #expect(fields.compactMap { $0["id"]?.stringValue } == ["place", "coordinates"])
        #expect(fields.first?["search"]?["minQueryLength"] == 2)

        // collect/query: accents optional.
        let options = try client.call(
            "collect/query", ["sessionId": .string(sessionID), "fieldId": "place", "query": "zurich"])["options"]?.arrayValue ?? []
        let zurich = try #require(options.first)
        #expect(zurich["label"] == "Zürich")

        // A bad coordinate: per-field error, session stays open.
        let invalid = try client.call(
            "collect/submit", ["sessionId": .string(sessionID), "values": ["coordinates": "47.37N, 8.54"]])
        #expect(invalid["outcome"] == "invalid")
        #expect(invalid["fieldErrors"]?["coordinates"]?.stringValue?.contains("Mixed notations") == true)

        // Submit the chosen place → item.
        let item = try client.submitForItem(session: .string(sessionID), values: ["place": zurich["value"] ?? .null])
        #expect(item["providerId"] == "com.contexthost.location")
        #expect(item["displayName"] == "Zürich, Switzerland")

        // items/preview
        let chip = try client.call("items/preview", ["item": item])
        #expect(chip["title"] == "Zürich")
        #expect(chip["subtitle"] == "Zurich, Switzerland")

        // items/detail
        let detail = try client.call("items/detail", ["item": item])
        let blocks = detail["blocks"]?.arrayValue ?? []
        #expect(blocks.first { $0["type"] == "map" }?["link"] == "geo:47.36667,8.55")
        let facts = blocks.first { $0["type"] == "facts" }?["facts"]?.arrayValue ?? []
        #expect(facts.first { $0["label"] == "DMS" }?["value"] == "47°22′00.0″N 8°33′00.0″E")
        #expect(facts.contains { $0["label"] == "UTC offset now" })
        #expect((blocks.first { $0["type"] == "list" }?["items"]?.arrayValue?.count ?? 0) == 5)

        // items/encode: JSON and geo: URI.
        let json = try client.call("items/encode", ["item": item])
        let value = try JSONValue(parsing: try Self.decoded(json))
        #expect(value["placeName"] == "Zürich")
        #expect(value["latitude"] == 47.36667)
        #expect(value["longitude"] == 8.55)
        let geo = try client.call("items/encode", ["item": item, "representation": "geo"])
        #expect(String(decoding: try Self.decoded(geo), as: UTF8.self) == "geo:47.36667,8.55")

        // A second session with typed DMS coordinates: reverse lookup names the place.
        let second = try client.call("collect/start", ["providerId": "com.contexthost.location"])
        let pointItem = try client.call(
            "collect/submit",
            ["sessionId": second["sessionId"] ?? .null, "values": ["coordinates": "48°51'24\"N 2°21'03\"E"]])
        // The nearest GeoNames place is a Paris arrondissement (PPLX), e.g. "Paris 04 Hôtel-de-Ville".
        #expect(pointItem["item"]?["content"]?["placeName"]?.stringValue?.hasPrefix("Paris") == true)
        #expect(pointItem["item"]?["content"]?["countryCode"] == "FR")

        // collect/make: no current location configured → the provider's reason.
        let make = try client.callExpectingError("collect/make", ["providerId": "com.contexthost.location"])
        #expect(make["code"] == -32013)
        #expect(make["data"]?["providerCode"] == 1001)
        #expect(make["message"]?.stringValue?.contains("no current location is configured") == true)

        #expect(try client.shutdown() == 0)
    }
}
