/// What the SDK's fuzz targets (`Fuzz/SDKJSONFuzzer`, `Fuzz/CtxuiFuzzer`) call, with the
/// invariants they check. `package`: visible to this package's targets only, not to providers.
/// A broken invariant stops the process (`preconditionFailure`), which libFuzzer reports as a crash.
package enum SDKFuzzEntry {
    /// `JSONReader` on arbitrary bytes: what parses writes back as JSON that parses to an equal
    /// value and is a fixed point of writing; strict skipping (`checksSurrogates`) accepts exactly
    /// what parsing accepts; the message scanner of requests (`ProviderRequest(scanning:)`) accepts
    /// every object the parser accepts.
    package static func json(_ bytes: UnsafeRawBufferPointer) {
        let parsed: JSONValue?
        do {
            parsed = try JSONReader.parse(bytes)
        } catch {
            precondition(error.offset >= 0 && error.offset <= bytes.count, "error offset \(error.offset) outside the input")
            parsed = nil
        }
        var skipper = JSONReader(bytes)
        skipper.checksSurrogates = true
        skipper.skipWhitespace()
        let skipped: Bool
        do {
            try skipper.skipValue()
            skipper.skipWhitespace()
            skipped = skipper.position == bytes.count
        } catch {
            skipped = false
        }
        precondition(skipped == (parsed != nil), "strict skipping \(skipped ? "accepts" : "refuses") what parsing \(parsed != nil ? "accepts" : "refuses")")
        guard let value = parsed else { return }
        let written = value.jsonBytes
        let again: JSONValue
        do {
            again = try JSONReader.parse(written)
        } catch {
            preconditionFailure("written JSON does not parse: \(error)")
        }
        precondition(again == value, "written JSON parses to another value")
        precondition(again.jsonBytes == written, "writing is not a fixed point")
        if case .object = value {
            do {
                _ = try ProviderRequest(scanning: bytes)
            } catch {
                preconditionFailure("the request scanner refuses an object the parser reads: \(error)")
            }
        }
    }

    /// The ctxui value types and items decoded from the JSON in `bytes` (each type in turn): what
    /// decodes encodes again, and the encoding decodes to an equal value. The request scanner's
    /// direct item decoding agrees with the general decoder.
    package static func ctxui(_ bytes: UnsafeRawBufferPointer) {
        // A chip read straight from the text (`InProcessHost`'s answers) must be the tree's chip.
        if let direct = ContextChip(text: bytes) {
            guard let tree = try? JSONReader.parse(bytes), let general = try? ContextChip(json: tree) else {
                preconditionFailure("the direct chip reader accepts a chip the general decoder refuses")
            }
            precondition(general == direct, "the direct chip reading differs from the general one")
        }
        guard let value = try? JSONReader.parse(bytes) else { return }
        // An item written straight to text (`InProcessHost`'s params) must be the tree's text.
        if let item = try? ContextItem(json: value) {
            var text: [UInt8] = []
            item.appendJSON(to: &text)
            precondition(text == item.json.jsonBytes, "ContextItem.appendJSON differs from its JSON tree's text")
        }
        roundTrip(value, as: ContextChip.self)
        roundTrip(value, as: ContextDetail.self)
        roundTrip(value, as: DetailBlock.self)
        roundTrip(value, as: ContextForm.self)
        roundTrip(value, as: FormField.self)
        roundTrip(value, as: FormOption.self)
        roundTrip(value, as: ChoiceSearch.self)
        roundTrip(value, as: ContextItem.self)
        roundTrip(value, as: EncodedItem.self)
        roundTrip(value, as: SubmitOutcome.self)
        roundTrip(value, as: Availability.self)
        roundTrip(value, as: ProviderMetadata.self)
        roundTrip(value, as: ChipAccessory.self)
        roundTrip(value, as: Coordinate.self)
        roundTrip(value, as: MapMarker.self)
        roundTrip(value, as: Fact.self)
        roundTrip(value, as: ChartSeries.self)
        roundTrip(value, as: ChartThreshold.self)
        if let detail = try? ContextDetail(json: value) {
            for block in detail.blocks { _ = block.plainText }
        }
        if case .object(let object) = value {
            let values = FormValues(object)
            _ = values.coordinate("location")
            // Client values checked against a form read from the same input (patterns are the
            // provider's, not the client's: left out).
            if let form = try? ContextForm(json: value) {
                var checked = form
                for index in checked.fields.indices { checked.fields[index].pattern = nil }
                _ = checked.validate(values)
                if case .object(let inner)? = object["values"] { _ = checked.validate(FormValues(inner)) }
            }
        }
        // `params` of an item method, read the fast way and the general way.
        var reader = JSONReader(bytes)
        reader.checksSurrogates = true
        reader.skipWhitespace()
        let direct: ContextItem?
        do {
            direct = try RequestParams.readItem(&reader)
        } catch {
            preconditionFailure("the item reader refuses JSON the parser reads: \(error)")
        }
        if let direct {
            let general = try? JSONObjectReader(value, path: "params").decode("item", as: ContextItem.self)
            precondition(general == direct, "the direct item decoding differs from the general one")
        }
    }

    private static func roundTrip<T: JSONConvertible & Equatable>(_ value: JSONValue, as type: T.Type) {
        guard let (decoded, _, again) = T.fuzzRoundTrip(value) else { return }
        precondition(again == decoded, "\(T.self) decodes its own encoding to another value")
    }
}
