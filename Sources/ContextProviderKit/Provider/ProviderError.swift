/// An error a provider throws to answer a request with a chosen JSON-RPC error code.
///
/// Any other error thrown by a provider method is answered with `-32603` (internal error) and its
/// description; `CancellationError` is answered with `-32800`.
public struct ProviderError: Error, Sendable, Hashable, CustomStringConvertible {
    /// JSON-RPC error codes the SDK uses.
    public enum Code {
        /// Invalid JSON.
        public static let parseError = -32700
        /// Not a valid JSON-RPC request.
        public static let invalidRequest = -32600
        /// Unknown method, or a feature the provider does not have (e.g. no collector).
        public static let methodNotFound = -32601
        /// Params that do not convert, or a value the provider rejects.
        public static let invalidParams = -32602
        /// Any other failure.
        public static let internalError = -32603
        /// The request was cancelled.
        public static let requestCancelled = -32800
    }

    /// The JSON-RPC error code.
    public var code: Int
    /// What went wrong, in words a user or operator can act on.
    public var message: String
    /// Extra machine-readable detail, sent as the error's `data`.
    public var data: JSONValue?
    /// How to fix it; sent in `data.hint` when `data` is `nil`, and as the `hint` of an `open`
    /// failure.
    public var hint: String?

    /// Creates an error with any code.
    public init(code: Int = Code.internalError, message: String, data: JSONValue? = nil, hint: String? = nil) {
        self.code = code
        self.message = message
        self.data = data
        self.hint = hint
    }

    /// An internal error (`-32603`) with this message.
    public init(_ message: String, hint: String? = nil) {
        self.init(code: Code.internalError, message: message, hint: hint)
    }

    /// A `-32602` error: the request's values are not acceptable.
    public static func invalidParams(_ message: String, data: JSONValue? = nil) -> ProviderError {
        ProviderError(code: Code.invalidParams, message: message, data: data)
    }

    /// A `-32601` error: the provider does not offer this feature.
    public static func notSupported(_ message: String) -> ProviderError {
        ProviderError(code: Code.methodNotFound, message: message)
    }

    /// The message.
    public var description: String { message }

    /// The JSON-RPC `error` object.
    public var json: JSONValue {
        var object = JSONObject()
        object["code"] = .number(Double(code))
        object["message"] = .string(message)
        if let data {
            object["data"] = data
        } else if let hint {
            object["data"] = ["hint": .string(hint)]
        }
        return .object(object)
    }

    /// The error a thrown `error` is answered with.
    public static func from(_ error: any Error) -> ProviderError {
        switch error {
        case let error as ProviderError: error
        case let error as JSONDecodeError: ProviderError(code: Code.invalidParams, message: error.description)
        case is CancellationError: ProviderError(code: Code.requestCancelled, message: "Request cancelled")
        default: ProviderError(code: Code.internalError, message: String(describing: error))
        }
    }
}
