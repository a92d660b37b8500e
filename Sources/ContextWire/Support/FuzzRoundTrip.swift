/// The round trip the fuzz targets check (`Fuzz/ProtocolFuzzer`, the SDK's `SDKFuzzEntry`):
/// `package`, for this package's targets only.
extension JSONConvertible {
    /// Decodes `value`; when it decodes, its encoding must parse and decode again, or the process
    /// stops (`preconditionFailure`, which libFuzzer reports as a crash). Answers the first
    /// decoding, its encoding and the second decoding, for the caller's sameness check; `nil`
    /// when `value` does not decode.
    package static func fuzzRoundTrip(_ value: JSONValue) -> (decoded: Self, encoded: JSONValue, again: Self)? {
        guard let decoded = try? Self(json: value, path: "fuzz") else { return nil }
        let encoded = decoded.json
        guard let reparsed = try? JSONReader.parse(encoded.jsonBytes) else {
            preconditionFailure("\(Self.self) encodes to JSON that does not parse")
        }
        do {
            return (decoded, encoded, try Self(json: reparsed, path: "fuzz"))
        } catch {
            preconditionFailure("\(Self.self) does not decode its own encoding: \(error)")
        }
    }
}
