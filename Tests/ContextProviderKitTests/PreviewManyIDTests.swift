@testable import ContextProviderKit
import Testing

/// `ProviderRequest.previewManyID` recognises `item/previewMany` requests written as hosts write
/// them (the raw prefix and suffix must stay the literal method name).
@Suite("previewMany request id")
struct PreviewManyIDTests {
    @Test("a host-written item/previewMany request yields its id; other methods do not")
    func recognisesHostRequests() {
        let request = Array(#"{"jsonrpc":"2.0","id":42,"method":"item/previewMany","params":{"items":[]}}"#.utf8)
        #expect(request.withUnsafeBytes { ProviderRequest.previewManyID($0) } == 42)
        let other = Array(#"{"jsonrpc":"2.0","id":42,"method":"item/preview","params":{"item":{}}}"#.utf8)
        #expect(other.withUnsafeBytes { ProviderRequest.previewManyID($0) } == nil)
    }
}
