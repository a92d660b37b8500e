// Shorthands for `send`: one per protocol method, named for what the app wants.

extension ContextHostSession {
    // MARK: Lifecycle

    /// `initialize`: says who the app is; answers the host's capabilities and the negotiated
    /// protocol version. Send it first, once.
    public func initialize(_ params: InitializeRequest = InitializeRequest()) async throws(ResponseError) -> InitializeResult {
        try await send(params)
    }

    /// `ping`: the cheapest round trip.
    public func ping() async throws(ResponseError) {
        _ = try await send(PingRequest())
    }

    // MARK: Providers

    /// `providers/list`: every provider, in the order to offer them, with availability and
    /// reasons; with `composerId`, also whether each can attach to that composer now.
    public func providers(composerId: String? = nil) async throws(ResponseError) -> [ProviderDescription] {
        try await send(ProvidersListRequest(composerId: composerId)).providers
    }

    /// `providers/retry`: ends a provider's quarantine and loads it again.
    public func retry(providerId: String, progressToken: ProgressToken? = nil) async throws(ResponseError) -> ProviderDescription {
        try await send(ProvidersRetryRequest(providerId: providerId, progressToken: progressToken)).provider
    }

    // MARK: Collection

    /// `collect/start`: opens a collection session on a form provider; answers its first form.
    public func startCollection(
        providerId: String, composerId: String? = nil, progressToken: ProgressToken? = nil
    ) async throws(ResponseError) -> CollectStartResult {
        try await send(CollectStartRequest(providerId: providerId, composerId: composerId, progressToken: progressToken))
    }

    /// `collect/query`: the options of a search field for what the user typed.
    public func query(
        sessionId: String, fieldId: String, query: String?, values: JSONObject? = nil, progressToken: ProgressToken? = nil
    ) async throws(ResponseError) -> [FormOption] {
        try await send(CollectQueryRequest(sessionId: sessionId, fieldId: fieldId, query: query, values: values, progressToken: progressToken)).options
    }

    /// `collect/submit`: submits the current step's values; answers the item, the next step, or
    /// the field errors (the session stays open on `invalid` and `step`).
    public func submit(
        sessionId: String, values: JSONObject, progressToken: ProgressToken? = nil
    ) async throws(ResponseError) -> CollectSubmitResult {
        try await send(CollectSubmitRequest(sessionId: sessionId, values: values, progressToken: progressToken))
    }

    /// `collect/cancel`: closes a collection session.
    public func cancelCollection(sessionId: String) async throws(ResponseError) {
        _ = try await send(CollectCancelRequest(sessionId: sessionId))
    }

    /// `collect/make`: asks a programmatic provider for an item (nil: it made none).
    public func make(
        providerId: String, composerId: String? = nil, progressToken: ProgressToken? = nil
    ) async throws(ResponseError) -> CollectMakeResult {
        try await send(CollectMakeRequest(providerId: providerId, composerId: composerId, progressToken: progressToken))
    }

    // MARK: Items

    /// `items/preview`: the item's chip.
    public func preview(_ item: ContextItem, progressToken: ProgressToken? = nil) async throws(ResponseError) -> ContextChip {
        try await send(ItemsPreviewRequest(item: item, progressToken: progressToken))
    }

    /// `items/detail`: the item's detail document.
    public func detail(_ item: ContextItem, progressToken: ProgressToken? = nil) async throws(ResponseError) -> ContextDetail {
        try await send(ItemsDetailRequest(item: item, progressToken: progressToken))
    }

    /// `items/describe`: a localized one-line description.
    public func describe(_ item: ContextItem, progressToken: ProgressToken? = nil) async throws(ResponseError) -> String {
        try await send(ItemsDescribeRequest(item: item, progressToken: progressToken)).text
    }

    /// `items/encode`: the item as a backend receives it.
    public func encode(
        _ item: ContextItem, representation: String? = nil, progressToken: ProgressToken? = nil
    ) async throws(ResponseError) -> EncodedItem {
        try await send(ItemsEncodeRequest(item: item, representation: representation, progressToken: progressToken))
    }

    // MARK: Composers

    /// `composer/open`: a new draft message with its limits.
    public func openComposer(maximumItems: Int? = nil, byteBudget: Int? = nil) async throws(ResponseError) -> ComposerSummary {
        try await send(ComposerOpenRequest(maximumItems: maximumItems, byteBudget: byteBudget))
    }

    /// `composer/list {composerId}`: a composer's items with their chips.
    public func composer(_ composerId: String) async throws(ResponseError) -> ComposerListResult {
        try await send(ComposerListRequest(composerId: composerId))
    }

    /// `composer/list`: every open composer (drafts restored after a restart included).
    public func composers() async throws(ResponseError) -> [ComposerSummary] {
        try await send(ComposerListRequest()).composers ?? []
    }

    /// `composer/remove`: takes an item out of a composer.
    public func removeItem(_ itemId: String, from composerId: String) async throws(ResponseError) -> ComposerRemoveResult {
        try await send(ComposerRemoveRequest(composerId: composerId, itemId: itemId))
    }

    /// `composer/send`: the envelope a backend receives (each item encoded again); the sent items
    /// leave the composer.
    public func sendMessage(composerId: String, text: String? = nil) async throws(ResponseError) -> ComposerSendResult {
        try await send(ComposerSendRequest(composerId: composerId, text: text))
    }

    /// `composer/close`: discards a draft.
    public func closeComposer(_ composerId: String) async throws(ResponseError) {
        _ = try await send(ComposerCloseRequest(composerId: composerId))
    }
}
