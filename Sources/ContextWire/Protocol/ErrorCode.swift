/// A JSON-RPC error code. Open, so new codes can be added without breaking clients that switch on
/// the known ones. Host-specific codes live in -32000…-32099 and are documented in docs/protocol.md.
public struct ErrorCode: RawRepresentable, Hashable, Sendable, Codable {
    public var rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    // JSON-RPC 2.0
    public static let parseError = ErrorCode(rawValue: -32700)
    public static let invalidRequest = ErrorCode(rawValue: -32600)
    public static let methodNotFound = ErrorCode(rawValue: -32601)
    public static let invalidParams = ErrorCode(rawValue: -32602)
    public static let internalError = ErrorCode(rawValue: -32603)

    // LSP lifecycle
    public static let serverNotInitialized = ErrorCode(rawValue: -32002)
    public static let requestCancelled = ErrorCode(rawValue: -32800)

    // Host range
    /// No provider has that id (or it was rejected at discovery).
    public static let providerNotFound = ErrorCode(rawValue: -32010)
    /// The provider exists but cannot be used now (platform, permission, host version, its own check).
    public static let providerUnavailable = ErrorCode(rawValue: -32011)
    /// The provider's library could not be loaded or opened.
    public static let providerLoadFailed = ErrorCode(rawValue: -32012)
    /// The provider answered with an error.
    public static let providerError = ErrorCode(rawValue: -32013)
    /// The provider answered something that is not a valid response.
    public static let providerBadReply = ErrorCode(rawValue: -32014)
    /// The provider did not answer within its timeout.
    public static let providerTimedOut = ErrorCode(rawValue: -32015)
    /// The provider crashed while handling the request.
    public static let providerCrashed = ErrorCode(rawValue: -32016)
    /// No collection session has that id.
    public static let sessionNotFound = ErrorCode(rawValue: -32020)
    /// The provider does not support that way of collecting (manifest `collection`).
    public static let collectionNotSupported = ErrorCode(rawValue: -32021)

    /// Attaching would exceed a count limit: the provider's `maximumAttachmentCount` (`data.kind`
    /// "provider") or the composer's maximum items (`data.kind` "composer").
    public static let attachmentLimitReached = ErrorCode(rawValue: -32030)
    /// Attaching would exceed the composer's byte budget for encoded content.
    public static let byteBudgetExceeded = ErrorCode(rawValue: -32031)
    /// No composer has that id.
    public static let composerNotFound = ErrorCode(rawValue: -32032)
    /// The composer has no item with that id.
    public static let itemNotFound = ErrorCode(rawValue: -32033)
    /// The draft could not be saved, so the change was not made.
    public static let stateWriteFailed = ErrorCode(rawValue: -32034)

    /// A host limit on open things was reached: composers or collection sessions
    /// (`data: {limit, current, limitName}`; docs/security.md §6).
    public static let limitExceeded = ErrorCode(rawValue: -32040)

    /// `initialize` named no protocol version the host speaks
    /// (`data: {supported: [Int], requested: [Int]}`).
    public static let protocolVersionUnsupported = ErrorCode(rawValue: -32050)

    /// The host refused or failed a provider's `host/fetch` (host → provider; `data: {reason,
    /// field?, hint?}`: `field` names the manifest field that would allow it).
    public static let egressRefused = ErrorCode(rawValue: -32060)
    /// `secrets/set`: this host keeps no secrets (`HostConfiguration.secrets` is nil), or the
    /// store failed.
    public static let secretsUnavailable = ErrorCode(rawValue: -32061)
}

extension ErrorCode {
    /// What any method that calls a provider may answer.
    public static let providerCallErrors: [ErrorCode] = [
        .providerNotFound, .providerUnavailable, .providerLoadFailed, .providerError, .providerBadReply,
        .providerTimedOut, .providerCrashed, .requestCancelled,
    ]
}
