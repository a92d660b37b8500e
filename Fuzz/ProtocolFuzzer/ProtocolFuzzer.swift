// libFuzzer target: the typed protocol (ContextProtocol). The input as JSON is decoded as the
// params and the result of every registered request type and as every notification's params
// (`MessageRegistry`): what decodes must encode to JSON that decodes again, to the same JSON
// (a stable round trip). The raw bytes also go to the client side of a session
// (`RequestTracker.receive`, as an answer or a notification from a hostile host), which must not
// trap and must answer a waiting request at most once. See Fuzz/README.md.
//
// Built with `-sanitize=fuzzer -DFUZZING` by `Fuzz/run.sh`; a normal `swift build` makes a replay
// driver (`protocol-fuzzer FILE|DIR…`).
import ContextProtocol
import FuzzSupport

/// Decodes `value` as `T`, and checks the round trip.
func roundTrip<T: WireValue>(_ value: JSONValue, as type: T.Type) {
    guard let (_, encoded, again) = T.fuzzRoundTrip(value) else { return }
    precondition(again.json == encoded, "\(T.self) decodes its own encoding to another value")
}

func request<R: RequestType>(_ value: JSONValue, _ type: R.Type) {
    roundTrip(value, as: R.self)
    roundTrip(value, as: R.Response.self)
}

func notification<N: NotificationType>(_ value: JSONValue, _ type: N.Type) {
    roundTrip(value, as: N.self)
}

/// The host side of the session under test: drops what the client sends.
let tracker = RequestTracker { _ in true }

func fuzzOne(_ data: UnsafeRawBufferPointer) {
    let bytes = Array(data)
    if let value = try? JSONValue(parsing: bytes) {
        for type in MessageRegistry.clientRequests + MessageRegistry.providerRequests { request(value, type) }
        for type in MessageRegistry.clientNotifications + MessageRegistry.hostNotifications + MessageRegistry.providerNotifications {
            notification(value, type)
        }
        roundTrip(value, as: ResponseError.self)
        _ = HostEvent(method: "providers/changed", params: value)
    }
    tracker.receive(bytes)
}

@main
enum Main {
    static func main() { FuzzMain.start(fuzzOne) }
}
