/// Every message of the two protocols, listed once: the host's dispatch, the SDK's dispatch,
/// the clients and `docs/openrpc.json` are all built from these lists. Each list is in the order
/// of its document (docs/protocol.md §3, docs/provider-abi.md "Methods").
public enum MessageRegistry {
    /// Requests a client sends to the host (docs/protocol.md §3).
    public static let clientRequests: [any RequestType.Type] = [
        // Lifecycle
        InitializeRequest.self,
        ShutdownRequest.self,
        PingRequest.self,
        // Providers
        ProvidersListRequest.self,
        ProvidersRetryRequest.self,
        SecretsSetRequest.self,
        // Composers
        ComposerOpenRequest.self,
        ComposerListRequest.self,
        ComposerRemoveRequest.self,
        ComposerSendRequest.self,
        ComposerCloseRequest.self,
        // Collection
        CollectStartRequest.self,
        CollectQueryRequest.self,
        CollectSubmitRequest.self,
        CollectCancelRequest.self,
        CollectMakeRequest.self,
        // Items
        ItemsPreviewRequest.self,
        ItemsDetailRequest.self,
        ItemsDescribeRequest.self,
        ItemsEncodeRequest.self,
        // Logging (protocol version 2)
        SetLogLevelRequest.self,
    ]

    /// Notifications a client sends to the host.
    public static let clientNotifications: [any NotificationType.Type] = [
        InitializedNotification.self,
        ExitNotification.self,
        CancelRequestNotification.self,
    ]

    /// Notifications the host sends to a client.
    public static let hostNotifications: [any NotificationType.Type] = [
        ProvidersChangedNotification.self,
        ProgressNotification.self,
        LogMessageNotification.self,
    ]

    /// Requests the host sends to a provider (docs/provider-abi.md).
    public static let providerRequests: [any RequestType.Type] = [
        ProviderInfoRequest.self,
        ProviderAvailabilityRequest.self,
        ProviderMakeContextRequest.self,
        ProviderCollectStartRequest.self,
        ProviderCollectQueryRequest.self,
        ProviderCollectSubmitRequest.self,
        ProviderCollectCancelRequest.self,
        ItemPreviewRequest.self,
        ItemPreviewManyRequest.self,
        ItemDetailRequest.self,
        ItemDescribeRequest.self,
        ItemEncodeRequest.self,
        ConformanceSamplesRequest.self,
    ]

    /// Notifications between the host and a provider (either way).
    public static let providerNotifications: [any NotificationType.Type] = [
        CancelRequestNotification.self,
        ProviderProgressNotification.self,
        ProviderLogNotification.self,
    ]
}
