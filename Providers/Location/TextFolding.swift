/// Folds names and queries for matching: lowercase, diacritics removed (`São` → `sao`,
/// `Zürich` → `zurich`, `Łódź` → `lodz`, `Straße` → `strasse`), apostrophes dropped and other
/// punctuation turned into single spaces. Scripts without a Latin fold (Cyrillic, Han, …) keep
/// their lowercase UTF-8 bytes, so they still match themselves.
enum TextFolding {
    /// Latin letters with diacritics (Latin-1, Latin Extended-A/B, Latin Extended Additional) and
    /// their plain forms, as pairs of equal-length runs of the same letter.
    private static let pairs: [(String, String)] = [
        ("ÀÁÂÃÄÅĀĂĄǍǞǠǺȀȂȦȺḀẠẢẤẦẨẪẬẮẰẲẴẶ", "a"), ("àáâãäåāăąǎǟǡǻȁȃȧḁạảấầẩẫậắằẳẵặẚ", "a"),
        ("ÇĆĈĊČƇȻḈ", "c"), ("çćĉċčƈȼḉ", "c"), ("ĎĐƉƊḊḌḎḐḒÐ", "d"), ("ďđɖɗḋḍḏḑḓð", "d"),
        ("ÈÉÊËĒĔĖĘĚȄȆȨɆḔḖḘḚḜẸẺẼẾỀỂỄỆ", "e"), ("èéêëēĕėęěȅȇȩɇḕḗḙḛḝẹẻẽếềểễệ", "e"),
        ("ĜĞĠĢƓǤǦǴḠ", "g"), ("ĝğġģɠǥǧǵḡ", "g"), ("ĤĦȞḢḤḦḨḪ", "h"), ("ĥħȟḣḥḧḩḫẖ", "h"),
        ("ÌÍÎÏĨĪĬĮİƗǏȈȊḬḮỈỊ", "i"), ("ìíîïĩīĭįıɨǐȉȋḭḯỉị", "i"), ("Ĵ", "j"), ("ĵǰ", "j"),
        ("ĶƘǨḰḲḴ", "k"), ("ķƙǩḱḳḵ", "k"), ("ĹĻĽĿŁȽḶḸḺḼ", "l"), ("ĺļľŀłƚḷḹḻḽ", "l"),
        ("ḾṀṂ", "m"), ("ḿṁṃ", "m"), ("ÑŃŅŇǸṄṆṈṊ", "n"), ("ñńņňŉǹṅṇṉṋ", "n"),
        ("ÒÓÔÕÖØŌŎŐƟƠǑǪǬǾȌȎȪȬȮȰṌṎṐṒỌỎỐỒỔỖỘỚỜỞỠỢ", "o"),
        ("òóôõöøōŏőɵơǒǫǭǿȍȏȫȭȯȱṍṏṑṓọỏốồổỗộớờởỡợ", "o"),
        ("ṔṖ", "p"), ("ṕṗ", "p"), ("ŔŖŘȐȒṘṚṜṞ", "r"), ("ŕŗřȑȓṙṛṝṟ", "r"),
        ("ŚŜŞŠȘṠṢṤṦṨ", "s"), ("śŝşšșṡṣṥṧṩſ", "s"), ("ŢŤŦȚṪṬṮṰ", "t"), ("ţťŧțṫṭṯṱẗ", "t"),
        ("ÙÚÛÜŨŪŬŮŰŲƯǓǕǗǙǛȔȖṲṴṶṸṺỤỦỨỪỬỮỰ", "u"), ("ùúûüũūŭůűųưǔǖǘǚǜȕȗṳṵṷṹṻụủứừửữự", "u"),
        ("ṼṾ", "v"), ("ṽṿ", "v"), ("ŴẀẂẄẆẈ", "w"), ("ŵẁẃẅẇẉẘ", "w"), ("ẊẌ", "x"), ("ẋẍ", "x"),
        ("ÝŶŸƳȲẎỲỴỶỸ", "y"), ("ýÿŷƴȳẏỳỵỷỹẙ", "y"), ("ŹŻŽƵȤẐẒẔ", "z"), ("źżžƶȥẑẓẕ", "z"),
    ]

    /// Letters that fold to more than one letter.
    private static let multi: [Character: String] = [
        "ß": "ss", "ẞ": "ss", "Æ": "ae", "æ": "ae", "Œ": "oe", "œ": "oe", "Þ": "th", "þ": "th",
        "Ĳ": "ij", "ĳ": "ij",
    ]

    /// Scalar → folded ASCII bytes, for every non-ASCII scalar with a Latin fold.
    private static let table: [UInt32: [UInt8]] = {
        var table: [UInt32: [UInt8]] = [:]
        for (letters, plain) in pairs {
            for scalar in letters.unicodeScalars { table[scalar.value] = Array(plain.utf8) }
        }
        for (letter, plain) in multi {
            for scalar in letter.unicodeScalars { table[scalar.value] = Array(plain.utf8) }
        }
        // Apostrophe-like marks are dropped, like the ASCII apostrophe.
        for mark: UInt32 in [0x2018, 0x2019, 0x02BC, 0x02BB, 0x0060, 0x00B4] { table[mark] = [] }
        return table
    }()

    /// The folded form of `text` as UTF-8 bytes (see the type's description).
    static func fold(_ text: some StringProtocol) -> [UInt8] {
        // Fast path: plain ASCII.
        if text.utf8.allSatisfy({ $0 < 0x80 }) {
            var out: [UInt8] = []
            out.reserveCapacity(text.utf8.count)
            var pendingSpace = false
            for byte in text.utf8 {
                var folded = byte
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): break
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): folded = byte + 32
                case UInt8(ascii: "'"), UInt8(ascii: "`"): continue
                default:
                    pendingSpace = true
                    continue
                }
                if pendingSpace, !out.isEmpty { out.append(0x20) }
                pendingSpace = false
                out.append(folded)
            }
            return out
        }
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        var pendingSpace = false
        func emit(_ byte: UInt8) {
            if pendingSpace, !out.isEmpty { out.append(0x20) }
            pendingSpace = false
            out.append(byte)
        }
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value < 0x80 {
                let byte = UInt8(value)
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): emit(byte)
                case UInt8(ascii: "A")...UInt8(ascii: "Z"): emit(byte + 32)
                case UInt8(ascii: "'"), UInt8(ascii: "`"): break
                default: pendingSpace = true
                }
                continue
            }
            // Combining marks (U+0300–U+036F) vanish.
            if (0x300...0x36F).contains(value) { continue }
            if let folded = table[value] {
                for byte in folded { emit(byte) }
                continue
            }
            if scalar.properties.isWhitespace || scalar.properties.isDash {
                pendingSpace = true
                continue
            }
            for lowered in scalar.properties.lowercaseMapping.utf8 { emit(lowered) }
        }
        return out
    }
}
