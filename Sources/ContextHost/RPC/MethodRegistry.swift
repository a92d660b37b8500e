/// Every protocol method the host answers, listed once.
package enum MethodRegistry {
    package static let all: [any MethodHandler.Type] = [
        // Lifecycle
        InitializeMethod.self,
        InitializedNotification.self,
        ShutdownMethod.self,
        ExitNotification.self,
        CancelRequestNotification.self,
        PingMethod.self,
        SetLogLevelMethod.self,
        // Providers
        ProvidersListMethod.self,
        ProvidersRetryMethod.self,
        SecretsSetMethod.self,
        // Composers
        ComposerOpenMethod.self,
        ComposerListMethod.self,
        ComposerRemoveMethod.self,
        ComposerSendMethod.self,
        ComposerCloseMethod.self,
        // Collection
        CollectStartMethod.self,
        CollectQueryMethod.self,
        CollectSubmitMethod.self,
        CollectCancelMethod.self,
        CollectMakeMethod.self,
        // Items
        ItemsPreviewMethod.self,
        ItemsDetailMethod.self,
        ItemsDescribeMethod.self,
        ItemsEncodeMethod.self,
    ]

    /// Handlers by method name.
    package static let handlers: [String: any MethodHandler.Type] = {
        var table: [String: any MethodHandler.Type] = [:]
        for handler in all {
            precondition(table[handler.method] == nil, "Method \(handler.method) is registered twice")
            table[handler.method] = handler
        }
        return table
    }()

    /// Method names, for `initialize`'s capabilities.
    package static var methodNames: [String] { all.map { $0.method }.filter { !$0.hasPrefix("$/") } }
}
