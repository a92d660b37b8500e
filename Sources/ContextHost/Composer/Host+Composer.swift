import ContextProviderKit

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Host {
    /// Encodes a freshly made item with its provider and attaches it to a composer, checking every
    /// limit again (another collection may have finished meanwhile). The draft is saved before
    /// this returns, so an item the client hears about is never lost.
    package func attach(_ item: JSONValue, from provider: LiveProvider, to composerID: String) async throws(RPCError) -> Composer {
        guard case .object(let object) = item else {
            throw RPCError(.providerBadReply, "Provider '\(provider.manifest.id)' produced an item that is not an object.")
        }
        let encoded = try await request(provider, method: "item/encode", params: ["item": item])
        guard case .object(let encoding) = encoded, encoding["data"]?.stringValue != nil else {
            throw RPCError(
                .providerBadReply, "Provider '\(provider.manifest.id)' answered item/encode without base64 'data'.",
                data: ["providerId": .string(provider.manifest.id), "method": "item/encode"])
        }
        do {
            return try composers.attach(
                AttachedItem(item: object, encoding: encoding), to: composerID,
                providerLimit: provider.manifest.maximumAttachmentCount)
        } catch {
            // Give the item back so the client can keep what the user entered.
            var data = error.data?.objectValue ?? JSONObject()
            data["item"] = item
            throw RPCError(error.code, error.message, data: .object(data))
        }
    }

    /// Checks, before a collection starts, that an item of `providerID` could still be attached.
    package func checkCanStartCollection(providerID: String, composerID: String) throws(RPCError) {
        let composer = try composers.get(composerID)
        let limit = registry.entry(id: providerID)?.manifest?.maximumAttachmentCount ?? 1
        try ComposerPolicy.checkCanAttach(to: composer, providerID: providerID, providerLimit: limit, encodedBytes: 0)
    }

    /// A composer's summary (no items).
    package func summary(of composer: Composer) -> JSONObject {
        [
            "composerId": .string(composer.id),
            "maximumItems": .number(Double(composer.maximumItems)),
            "byteBudget": .number(Double(composer.byteBudget)),
            "bytesUsed": .number(Double(composer.bytesUsed)),
            "itemCount": .number(Double(composer.items.count)),
        ]
    }

    /// A composer with each item and its chip. An item whose provider is gone or failing keeps
    /// its place and gets the default text chip, with the reason.
    package func listing(of composer: Composer) async -> JSONValue {
        var items: [JSONValue] = []
        for attached in composer.items {
            var entry: JSONObject = ["item": .object(attached.item), "encodedBytes": .number(Double(attached.encodedBytes))]
            do {
                let provider = try provider(attached.providerID, for: .item)
                entry["chip"] = try await request(provider, method: "item/preview", params: ["item": .object(attached.item)])
                entry["providerAvailable"] = true
            } catch {
                entry["chip"] = defaultChip(for: attached)
                entry["providerAvailable"] = false
                entry["providerProblem"] = ["code": .number(Double(error.code.rawValue)), "message": .string(error.message)]
            }
            items.append(.object(entry))
        }
        var result = summary(of: composer)
        result["items"] = .array(items)
        return .object(result)
    }

    /// The chip a client shows when the provider cannot make one (DESIGN §8 default).
    func defaultChip(for attached: AttachedItem) -> JSONValue {
        let icon = registry.entry(id: attached.providerID)?.manifest?.iconName ?? "doc"
        return [
            "ctxui": 1, "icon": .string(icon), "title": .string(attached.displayName), "tone": "neutral",
            "accessibilityLabel": .string(attached.displayName), "fallbackText": .string(attached.displayName),
        ]
    }

    /// Builds the message envelope a backend receives for a composer, with ChatKit's field names,
    /// then removes the sent items. Each item is encoded again by its provider; if the provider
    /// is gone or fails, the encoding made at attach time is used, so a draft can always be sent.
    package func send(composerID: String, text: String) async throws(RPCError) -> JSONValue {
        let composer = try composers.get(composerID)
        var contextItems: [JSONValue] = []
        var descriptions: [String] = []
        for attached in composer.items {
            var encoding = attached.encoding
            var description = attached.displayName
            if let provider = try? provider(attached.providerID, for: .item) {
                if let fresh = try? await request(provider, method: "item/encode", params: ["item": .object(attached.item)]),
                    case .object(let object) = fresh, object["data"]?.stringValue != nil
                {
                    encoding = object
                }
                if let described = try? await request(provider, method: "item/describe", params: ["item": .object(attached.item)]),
                    let text = described["text"]?.stringValue
                {
                    description = text
                }
            }
            var metadata: JSONObject = [
                "provider": .string(attached.providerID),
                "type": .string(attached.type),
                "encoding": encoding["representation"] ?? "json",
                "contentType": encoding["contentType"] ?? "application/octet-stream",
                "localizedDescription": .string(description),
                "itemId": .string(attached.id),
            ]
            if case .object(let extra) = encoding["metadata"] ?? .null {
                for (key, value) in extra where metadata[key] == nil { metadata[key] = value }
            }
            contextItems.append([
                "contextType": .string(attached.type),
                "displayName": .string(attached.displayName),
                "encodedContent": encoding["data"] ?? "",
                "metadata": .object(metadata),
            ])
            descriptions.append(description)
        }
        var summary = text
        if !descriptions.isEmpty {
            if !summary.isEmpty { summary += "\n\n" }
            summary += "Attached context:\n" + descriptions.map { "- " + $0 }.joined(separator: "\n")
        }
        let envelope: JSONValue = [
            "composerId": .string(composer.id),
            "message": ["text": .string(text), "contextItems": .array(contextItems), "summary": .string(summary)],
        ]
        // Clear only once the envelope exists; items attached meanwhile stay.
        try composers.removeSent(Set(composer.items.map(\.id)), from: composer.id)
        return envelope
    }

    /// Seconds since 1970.
    static func now() -> Double {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        return Double(spec.tv_sec) + Double(spec.tv_nsec) / 1e9
    }
}
