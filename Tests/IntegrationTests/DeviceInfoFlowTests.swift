import ContextHostTestSupport
import ContextProviderKit
import Foundation
import Testing

/// The Device Information provider (plain C) through the real `context-host` and the default
/// manifests folder.
@Suite("Device Information through context-host")
struct DeviceInfoFlowTests {
    @Test("collect/make → preview → detail → describe → encode")
    func fullFlow() throws {
        let client = try RPCClient(arguments: ["serve"])
        defer { client.host.terminate() }
        try client.initialize()

        let provider = try client.availableProvider("com.contexthost.device-info")
        #expect(provider["title"] == "Device Information")

        let made = try client.call("collect/make", ["providerId": "com.contexthost.device-info"])
        let item = try #require(made["item"])
        #expect(item["providerId"] == "com.contexthost.device-info")
        #expect(item["type"] == "device")
        let content = try #require(item["content"])
        #expect(content["cpuCount"]?.intValue == ProcessInfo.processInfo.activeProcessorCount)
        #expect(content["memoryTotalBytes"]?.numberValue == Double(ProcessInfo.processInfo.physicalMemory))

        let chip = try client.call("items/preview", ["item": item])
        #expect(chip["title"] == item["displayName"])
        #expect(chip["icon"] == "desktopcomputer")
        #expect(chip["subtitle"]?.stringValue?.contains(" \u{B7} up ") == true)

        let detail = try client.call("items/detail", ["item": item])
        let facts = detail["blocks"]?.arrayValue?.first?["facts"]?.arrayValue ?? []
        #expect(facts.first { $0["label"] == "CPUs" }?["value"] == .string(String(ProcessInfo.processInfo.activeProcessorCount)))

        let describe = try client.call("items/describe", ["item": item])
        #expect(describe["text"]?.stringValue?.hasPrefix("Device \(item["displayName"]?.stringValue ?? "")") == true)

        let encoded = try client.call("items/encode", ["item": item])
        #expect(encoded["contentType"] == "application/json")
        let data = try #require(Data(base64Encoded: encoded["data"]?.stringValue ?? ""))
        #expect(try JSONValue(parsing: Array(data)) == content)

        #expect(try client.shutdown() == 0)
    }
}
