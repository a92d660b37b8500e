import ContextHost
import ContextProviderKit
import Foundation
import Synchronization

/// Drives a real provider library (`lib<Product>.so` from the build folder) through the C ABI,
/// exactly as the host does in-process, for provider tests.
///
///     let location = try ProviderHarness(product: "LocationProvider", providerID: "com.contexthost.location",
///                                        settings: ["gazetteer": "…"])
///     let chip = try await location.call("item/preview", ["item": item])
public final class ProviderHarness: Sendable {
    public let providerID: String
    private let connection: InProcessConnection

    /// A provider call that failed: the JSON-RPC error the provider answered.
    public struct CallError: Error, CustomStringConvertible {
        public var code: Int
        public var message: String
        public var data: JSONValue?
        public var description: String { "\(code): \(message)" }
    }

    /// Loads `lib<product>.so` and opens an instance with these settings (and the data folder the
    /// host would give it).
    public init(
        product: String, providerID: String, settings: JSONObject = [:], locale: String = "en-US",
        grantedPermissions: [String] = [], dataDirectory: String? = nil
    ) throws {
        try BuildProducts.checkBuilt()
        self.providerID = providerID
        let path = BuildProducts.library(product)
        let library = try ProviderLibrary.load(path: path, sha256: nil)
        var context = ProviderContext(providerID: providerID, settings: settings, locale: locale, grantedPermissions: grantedPermissions)
        context.dataDirectory = dataDirectory
        connection = try InProcessConnection(library: library, initJSON: context.initBytes)
    }

    /// Sends one request and waits for its result; throws `CallError` for an error answer.
    public func call(_ method: String, _ params: JSONValue = [:], timeout: Double = 60) async throws -> JSONValue {
        let outcome: Result<JSONValue, CallError> = await withCheckedContinuation { continuation in
            let once = Mutex(false)
            let finish: @Sendable (Result<JSONValue, CallError>) -> Void = { result in
                let first = once.withLock { done in
                    defer { done = true }
                    return !done
                }
                if first { continuation.resume(returning: result) }
            }
            let id = connection.send(method: method, params: { JSONWriter.append(params, to: &$0) }) { response in
                if let error = response.error {
                    finish(.failure(CallError(code: error.code.rawValue, message: error.message, data: error.data)))
                } else if let bytes = response.resultBytes, let value = try? JSONValue(parsing: bytes) {
                    finish(.success(value))
                } else {
                    finish(.failure(CallError(code: -32014, message: "reply without a valid result", data: nil)))
                }
            }
            // Weak: the timer must not keep the instance open for `timeout` after the answer (the
            // host closes an instance when its last reference goes; benchmarks open many).
            DispatchQueue.global().asyncAfter(deadline: .now() + timeout) { [weak connection] in
                finish(.failure(CallError(code: -32015, message: "no answer to \(method) within \(timeout) s", data: nil)))
                connection?.cancel(id)
            }
        }
        return try outcome.get()
    }

    /// Runs a whole form collection: start, then submit each step's values in turn; returns the
    /// final submit result.
    public func collect(steps: [JSONObject]) async throws -> JSONValue {
        let session = JSONValue.string(UUID().uuidString)
        var form = try await call("collect/start", ["sessionId": session])
        var result: JSONValue = .null
        for values in steps {
            let stepID = form["stepId"] ?? ""
            result = try await call("collect/submit", ["sessionId": session, "stepId": stepID, "values": .object(values)])
            if result["outcome"] == "step", let next = result["form"] { form = next }
        }
        return result
    }
}
