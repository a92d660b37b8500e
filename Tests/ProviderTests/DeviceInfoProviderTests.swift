import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// The Device Information provider (plain C, Providers/DeviceInfo/) through its real library.
@Suite("Device Information provider")
struct DeviceInfoProviderTests {
    let provider: ProviderHarness

    init() throws {
        provider = try ProviderHarness(product: "DeviceInfoProvider", providerID: "com.contexthost.device-info")
    }

    private func makeItem() async throws -> JSONValue {
        let result = try await provider.call("provider/makeContext")
        return try #require(result["item"])
    }

    @Test("info, availability and a programmatic item of this machine")
    func makeContext() async throws {
        let info = try await provider.call("provider/info")
        #expect(info["id"] == "com.contexthost.device-info")
        #expect(info["version"] == "1.0.0")
        #expect(try await provider.call("provider/availability")["available"] == true)
        let item = try await makeItem()
        #expect(item["providerId"] == "com.contexthost.device-info")
        #expect(item["type"] == "device")
        #expect(UUID(uuidString: item["id"]?.stringValue ?? "") != nil)
        let content = try #require(item["content"])
        #expect(content["hostname"]?.stringValue == ProcessInfo.processInfo.hostName
            || content["hostname"]?.stringValue?.isEmpty == false)
        #expect(content["cpuCount"]?.intValue == ProcessInfo.processInfo.activeProcessorCount)
        #expect((content["memoryTotalBytes"]?.numberValue ?? 0) == Double(ProcessInfo.processInfo.physicalMemory))
        #expect((content["uptimeSeconds"]?.numberValue ?? -1) >= 0)
        #expect(item["displayName"] == content["hostname"])
        // A second call is a fresh snapshot with a new id.
        let second = try await makeItem()
        #expect(second["id"] != item["id"])
    }

    @Test("chip, detail, description and encodings are built from the item alone")
    func views() async throws {
        let item: JSONValue = [
            "id": "6f1c1d3e-8a2b-4c5d-9e0f-1a2b3c4d5e6f", "providerId": "com.contexthost.device-info", "type": "device",
            "displayName": "box",
            "content": [
                "hostname": "box \"α\"", "os": "Ubuntu 24.04 LTS", "kernel": "Linux 6.8.0", "architecture": "x86_64",
                "cpuCount": 2, "uptimeSeconds": 93_784, "memoryTotalBytes": 8_589_934_592,
                "memoryAvailableBytes": 2_147_483_648, "collectedAt": "2026-11-21T10:00:00Z",
            ],
        ]
        let chip = try await provider.call("item/preview", ["item": item])
        #expect(chip["title"] == "box \"α\"")
        #expect(chip["subtitle"] == "Ubuntu 24.04 LTS \u{B7} up 1d 2h")
        let detail = try await provider.call("item/detail", ["item": item])
        let facts = detail["blocks"]?.arrayValue?.first?["facts"]?.arrayValue ?? []
        #expect(facts.first { $0["label"] == "Memory" }?["value"] == "6.0 GiB of 8.0 GiB used (75%)")
        #expect(facts.count == 10)
        let text = try await provider.call("item/describe", ["item": item])["text"]?.stringValue ?? ""
        #expect(text == "Device box \"α\": Ubuntu 24.04 LTS, kernel Linux 6.8.0 (x86_64), 2 CPUs, memory 6.0 GiB of 8.0 GiB used (75%), up 1d 2h (as of 2026-11-21T10:00:00Z)")

        let json = try await provider.call("item/encode", ["item": item])
        #expect(json["contentType"] == "application/json")
        let data = try #require(Data(base64Encoded: json["data"]?.stringValue ?? ""))
        #expect(try JSONValue(parsing: Array(data)) == item["content"])
        let plain = try await provider.call("item/encode", ["item": item, "representation": "text"])
        #expect(Data(base64Encoded: plain["data"]?.stringValue ?? "").map { String(decoding: $0, as: UTF8.self) } == text)
    }

    @Test("bad input answers errors naming the member; unknown methods -32601")
    func errors() async throws {
        var item = try await makeItem()
        await #expect(throws: ProviderHarness.CallError.self) { try await provider.call("item/preview", ["item": 42]) }
        if case .object(var object) = item, case .object(var content) = object["content"] {
            content["cpuCount"] = "two"
            object["content"] = .object(content)
            item = .object(object)
        }
        let error = try await provider.callError("item/detail", ["item": item])
        #expect(error.code == -32602)
        #expect(error.message == "params.item.content.cpuCount: expected a number, got a string")
        let good = try await makeItem()
        let encodeError = try await provider.callError("item/encode", ["item": good, "representation": "pdf"])
        #expect(encodeError.code == -32602)
        #expect(encodeError.message.contains("unknown representation \"pdf\""))
        for method in ["collect/start", "no/such"] {
            let error = try await provider.callError(method, ["sessionId": "s"])
            #expect(error.code == -32601)
        }
    }

    @Test("many concurrent calls each get their own answer")
    func concurrency() async throws {
        let item = try await makeItem()
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let method = index % 2 == 0 ? "item/preview" : "item/describe"
                    let result = try await provider.call(method, ["item": item])
                    return index % 2 == 0 ? result["title"] == item["displayName"] : result["text"]?.stringValue?.hasPrefix("Device ") == true
                }
            }
            for try await ok in group { #expect(ok) }
        }
    }
}
