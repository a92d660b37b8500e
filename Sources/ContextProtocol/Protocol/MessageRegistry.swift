/// Every message of the two protocols, listed once: the host's dispatch, the SDK's dispatch,
/// the clients and `docs/openrpc.json` are all built from these lists.
public enum MessageRegistry {
    /// Requests a client sends to the host (docs/protocol.md §3).
    public static let clientRequests: [any RequestType.Type] = [
        ItemsPreviewRequest.self,
        SetLogLevelRequest.self,
    ]

    /// Notifications a client sends to the host.
    public static let clientNotifications: [any NotificationType.Type] = []

    /// Notifications the host sends to a client.
    public static let hostNotifications: [any NotificationType.Type] = [
        ProgressNotification.self,
        LogMessageNotification.self,
    ]

    /// Requests the host sends to a provider (docs/provider-abi.md).
    public static let providerRequests: [any RequestType.Type] = []

    /// Notifications between the host and a provider (either way).
    public static let providerNotifications: [any NotificationType.Type] = [
        ProviderProgressNotification.self,
        ProviderLogNotification.self,
    ]
}
