import ContextHostTestSupport
import ContextProviderKit
import Testing

/// The harness every provider test uses: a real .so driven through the C ABI.
@Suite("Provider harness")
struct HarnessTests {
    @Test("the Note provider answers through its real library")
    func noteThroughHarness() async throws {
        let note = try ProviderHarness(product: "NoteProvider", providerID: "com.contexthost.note")
        let info = try await note.call("provider/info")
        #expect(info["id"] == "com.contexthost.note")
        let result = try await note.collect(steps: [["title": "Hi", "body": "two words"]])
        #expect(result["outcome"] == "item")
        let chip = try await note.call("item/preview", ["item": result["item"] ?? .null])
        #expect(chip["subtitle"] == "2 words")
        await #expect(throws: ProviderHarness.CallError.self) {
            try await note.call("item/encode", ["item": result["item"] ?? .null, "representation": "pdf"])
        }
    }
}
