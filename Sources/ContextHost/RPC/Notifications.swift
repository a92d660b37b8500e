import ContextProviderKit
import ContextProtocol

extension RPCServer {
    /// Writes a host → client notification `{"jsonrpc":"2.0","method":…,"params":…}`.
    ///
    /// Only while the session runs (after `initialize`, before `shutdown`): a client that has not
    /// initialized has not asked for anything yet.
    package func sendNotification(_ method: String, params: JSONValue) {
        guard state == .running else { return }
        let message: JSONValue = ["jsonrpc": "2.0", "method": .string(method), "params": params]
        output.send(message.jsonBytes)
    }
}

extension Host {
    /// Sends a notification to the client, if a server is attached and the client initialized.
    package func notify(_ method: String, params: JSONValue) {
        let sink = notificationSink.withLock { $0 }
        sink?.function(method, params)
    }

    /// Sends `providers/changed`: the ids added, changed and removed, and the whole new
    /// `providers/list` result (`providers`), so a client can simply replace its list.
    package func notifyProvidersChanged(added: [String] = [], changed: [String] = [], removed: [String] = []) {
        var params: JSONObject = [
            "added": .array(added.map(JSONValue.string)),
            "changed": .array(changed.map(JSONValue.string)),
            "removed": .array(removed.map(JSONValue.string)),
        ]
        params["providers"] = .array(providersList().providers.map(\.json))
        notify(ProvidersChangedNotification.method, params: .object(params))
    }
}

extension Host: RequestEventsClient {
    package var clientLogLevel: LogLevel { logLevel.withLock { $0 } }
}
