import ContextProviderKit

extension ProviderHarness {
    /// A call that must fail: the error the provider answered. A result is itself a failure
    /// (`UnexpectedResult`, naming the call and the result).
    public func callError(_ method: String, _ params: JSONValue = [:], timeout: Double = 60) async throws -> CallError {
        let result: JSONValue
        do {
            result = try await call(method, params, timeout: timeout)
        } catch let error as CallError {
            return error
        }
        throw UnexpectedResult(method: method, result: result)
    }

    /// A call expected to fail answered a result.
    public struct UnexpectedResult: Error, CustomStringConvertible {
        public var method: String
        public var result: JSONValue
        public var description: String { "expected an error from \(method), got the result \(result)" }
    }
}
