import ContextProtocol
import ContextProviderKit

/// `secrets/set {providerId, name, value}`: sets (`value` a string) or removes (`value: null`) a
/// provider's secret setting in the host's store (`HostConfiguration.secrets`). Answers
/// `{"set": Bool}`; nothing ever answers a secret's value.
package enum SecretsSetMethod: RequestHandler {
    package static func handle(_ request: SecretsSetRequest, context: RequestContext<SecretsSetRequest.Response>) throws(RPCError) {
        let (host, providerID, name, value) = (context.host, request.providerId, request.name, request.value)
        guard let manifest = host.registry.withEntry(id: providerID, { $0.pointee.manifest }) ?? nil else {
            throw RPCError(.providerNotFound, "No provider has id '\(providerID)'. Call providers/list to see the ids.", data: ["providerId": .string(providerID)])
        }
        let secrets = manifest.settings.filter { $0.type == .secret }.map(\.name)
        guard secrets.contains(name) else {
            throw RPCError(
                .invalidParams,
                "\(providerID) has no secret setting '\(name)'" + (secrets.isEmpty ? " (it declares none)" : "; its secret settings: \(secrets.joined(separator: ", "))"),
                data: ["field": "name"])
        }
        guard let store = host.configuration.secrets else {
            throw RPCError(.secretsUnavailable, "This host keeps no secrets.", data: ["hint": "give the host a HostConfiguration.secrets store (context-host has one)"])
        }
        do {
            if let value {
                guard !value.isEmpty, value.utf8.count <= SecretLimits.maximumBytes else {
                    throw RPCError(.invalidParams, "A secret is 1 to \(SecretLimits.maximumBytes) bytes.")
                }
                try store.set(provider: providerID, name: name, value: Array(value.utf8))
            } else {
                try store.remove(provider: providerID, name: name)
            }
        } catch let error as RPCError {
            throw error
        } catch {
            throw RPCError(.secretsUnavailable, "The secret store failed: \(error)")
        }
        host.logger.info("Secret \(name) of \(providerID) \(value == nil ? "removed" : "set") (secrets/set).")
        context.answer(SecretsSetResult(isSet: value != nil))
    }
}

/// Bounds on secrets.
package enum SecretLimits {
    /// The longest secret accepted, in bytes.
    package static let maximumBytes = 16 << 10
}
