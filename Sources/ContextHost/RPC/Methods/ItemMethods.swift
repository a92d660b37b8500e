import ContextProviderKit
import ContextProtocol

/// Shared shape of the `items/*` methods: find the provider by `params.item.providerId` and pass
/// the item to it untouched.
protocol ItemMethod: MethodHandler {
    /// The provider-side method.
    static var providerMethod: String { get }
    /// Extra members copied from the client's params to the provider's (besides `item`).
    static var forwardedMembers: [String] { get }
}

extension ItemMethod {
    static var forwardedMembers: [String] { [] }
    /// The item goes to its provider as the client wrote it (from the typed API: as written once
    /// for the input limits), never decoded: a measured specialisation of the typed seam.
    package static var forwardsRawParams: Bool { true }

    package static func handle(_ request: Request, server: RPCServer) throws(RPCError) {
        guard let reply = request.reply else { return }
        let (itemRange, providerID, extras) = try locateItem(request)
        // At start-up the provider may still be loading: wait for it (off the reader).
        if server.host.mustWait(for: providerID) {
            try server.whenLoaded(providerID, reply: reply) { () throws(RPCError) in
                try forward(request, reply: reply, server: server, providerID: providerID, itemRange: itemRange, extras: extras)
            }
            return
        }
        try forward(request, reply: reply, server: server, providerID: providerID, itemRange: itemRange, extras: extras)
    }

    /// Passes the item (and the extra members) to its provider.
    private static func forward(
        _ request: Request, reply: Reply, server: RPCServer, providerID: String, itemRange: Range<Int>,
        extras: [(String, Range<Int>)]
    ) throws(RPCError) {
        let provider = try server.host.provider(providerID, for: .item)
        let message = request.message
        let token = try progressToken(request)
        server.forward(
            reply: reply, provider: provider, method: providerMethod,
            params: { out in
            out.append(contentsOf: #"{"item":"#.utf8)
            out.append(contentsOf: message[itemRange])
            for (key, range) in extras {
                out.append(UInt8(ascii: ","))
                JSONWriter.appendString(key, to: &out)
                out.append(UInt8(ascii: ":"))
                out.append(contentsOf: message[range])
            }
            out.append(UInt8(ascii: "}"))
        }, progressToken: token)
    }
}

extension ItemMethod {
    /// Finds the item, its providerId and the forwarded members without decoding the item: from
    /// where the input limits check saw them (`Request.itemLocation`), else by reading the params
    /// again, which also names what is wrong.
    static func locateItem(_ request: Request) throws(RPCError) -> (Range<Int>, String, [(String, Range<Int>)]) {
        try request.withRawParams { bytes, range throws(RPCError) -> (Range<Int>, String, [(String, Range<Int>)]) in
            if forwardedMembers.isEmpty, let item = request.itemLocation.item, let providerRange = request.itemLocation.providerID,
                let providerID = RawObject.string(bytes, in: providerRange)
            {
                return (item, providerID, [])
            }
            guard let range else { throw RPCError.invalidParams("params.item is required (an object)") }
            var item: Range<Int>?
            var extras: [(String, Range<Int>)] = []
            do {
                try RawObject.members(bytes, in: range) { key, value in
                    if key == "item" {
                        item = value
                    } else if forwardedMembers.contains(key) {
                        extras.append((key, value))
                    }
                }
            } catch {
                throw RPCError.invalidParams("params must be an object")
            }
            guard let item else { throw RPCError.invalidParams("params.item is required (an object)") }
            guard bytes[item.lowerBound] == UInt8(ascii: "{") else {
                throw RPCError.invalidParams("params.item: expected an object")
            }
            guard let providerRange = try? RawObject.member("providerId", of: bytes, in: item) else {
                throw RPCError.invalidParams("params.item.providerId is required (a string)")
            }
            guard let providerID = RawObject.string(bytes, in: providerRange) else {
                throw RPCError.invalidParams("params.item.providerId: expected a string")
            }
            return (item, providerID, extras)
        }
    }

    /// A request's `progressToken`: from where the params check found it (`Request.itemLocation`),
    /// so the `items/*` hot path reads nothing more when there is none.
    static func progressToken(_ request: Request) throws(RPCError) -> ProgressToken? {
        if request.itemLocation.scanned, request.itemLocation.progressToken == nil { return nil }
        return try request.withRawParams { bytes, range throws(RPCError) -> ProgressToken? in
            let member: Range<Int>
            if request.itemLocation.scanned {
                guard let found = request.itemLocation.progressToken else { return nil }
                member = found
            } else {
                guard let range, let found = try? RawObject.member("progressToken", of: bytes, in: range) else { return nil }
                member = found
            }
            guard let value = try? JSONReader.parse(UnsafeRawBufferPointer(rebasing: bytes[member])) else { return nil }
            if value.isNull { return nil }
            do throws(JSONDecodeError) {
                return try ProgressToken(json: value, path: "params.progressToken")
            } catch {
                throw .invalidParams("\(error)")
            }
        }
    }
}

/// `items/preview`: the item's chip.
package enum ItemsPreviewMethod: ItemMethod {
    package static let method = ItemsPreviewRequest.method
    static let providerMethod = ItemPreviewRequest.method
}

/// `items/detail`: the item's detail document.
package enum ItemsDetailMethod: ItemMethod {
    package static let method = ItemsDetailRequest.method
    static let providerMethod = ItemDetailRequest.method
}

/// `items/describe`: a localized one-line description of the item.
package enum ItemsDescribeMethod: ItemMethod {
    package static let method = ItemsDescribeRequest.method
    static let providerMethod = ItemDescribeRequest.method
}

/// `items/encode`: the item encoded for transport (base64 data, representation, metadata).
package enum ItemsEncodeMethod: ItemMethod {
    package static let method = ItemsEncodeRequest.method
    static let providerMethod = ItemEncodeRequest.method
    static var forwardedMembers: [String] { ["representation"] }
}
