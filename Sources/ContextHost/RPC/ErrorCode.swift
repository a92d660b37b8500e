/// A JSON-RPC error code. Open, so new codes can be added without breaking clients that switch on
/// the known ones. Host-specific codes live in -32000…-32099 and are documented in docs/protocol.md.
package struct ErrorCode: RawRepresentable, Hashable, Sendable, Codable {
    package var rawValue: Int
    package init(rawValue: Int) { self.rawValue = rawValue }

    // JSON-RPC 2.0
    package static let parseError = ErrorCode(rawValue: -32700)
    package static let invalidRequest = ErrorCode(rawValue: -32600)
    package static let methodNotFound = ErrorCode(rawValue: -32601)
    package static let invalidParams = ErrorCode(rawValue: -32602)
    package static let internalError = ErrorCode(rawValue: -32603)

    // LSP lifecycle
    package static let serverNotInitialized = ErrorCode(rawValue: -32002)
    package static let requestCancelled = ErrorCode(rawValue: -32800)

    // Host range
    /// No provider has that id (or it was rejected at discovery).
    package static let providerNotFound = ErrorCode(rawValue: -32010)
    /// The provider exists but cannot be used now (platform, permission, host version, its own check).
    package static let providerUnavailable = ErrorCode(rawValue: -32011)
    /// The provider's library could not be loaded or opened.
    package static let providerLoadFailed = ErrorCode(rawValue: -32012)
    /// The provider answered with an error.
    package static let providerError = ErrorCode(rawValue: -32013)
    /// The provider answered something that is not a valid response.
    package static let providerBadReply = ErrorCode(rawValue: -32014)
    /// The provider did not answer within its timeout.
    package static let providerTimedOut = ErrorCode(rawValue: -32015)
    /// The provider crashed while handling the request.
    package static let providerCrashed = ErrorCode(rawValue: -32016)
    /// No collection session has that id.
    package static let sessionNotFound = ErrorCode(rawValue: -32020)
    /// The provider does not support that way of collecting (manifest `collection`).
    package static let collectionNotSupported = ErrorCode(rawValue: -32021)

    /// Attaching would exceed a count limit: the provider's `maximumAttachmentCount` (`data.kind`
    /// "provider") or the composer's maximum items (`data.kind` "composer").
    package static let attachmentLimitReached = ErrorCode(rawValue: -32030)
    /// Attaching would exceed the composer's byte budget for encoded content.
    package static let byteBudgetExceeded = ErrorCode(rawValue: -32031)
    /// No composer has that id.
    package static let composerNotFound = ErrorCode(rawValue: -32032)
    /// The composer has no item with that id.
    package static let itemNotFound = ErrorCode(rawValue: -32033)
    /// The draft could not be saved, so the change was not made.
    package static let stateWriteFailed = ErrorCode(rawValue: -32034)

    /// A host limit on open things was reached: composers or collection sessions
    /// (`data: {limit, current, limitName}`; docs/security.md §6).
    package static let limitExceeded = ErrorCode(rawValue: -32040)
}
