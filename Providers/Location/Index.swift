/// Prefix search over folded place names.
///
/// Every place contributes its folded name and folded ASCII name as whole-name keys, plus each
/// word start inside them (`sao paulo` also as `paulo`). Keys are grouped into buckets by their
/// first two bytes, so a query scans one bucket (or the 256 buckets of a one-letter query) and
/// compares prefixes with `memcmp`-like loops.
struct SearchIndex: Sendable {
    /// All keys, back to back.
    private let bytes: [UInt8]
    private let keyStart: [UInt32]
    private let keyLength: [UInt16]
    private let keyPlace: [UInt32]
    /// 0 for a whole name, 1 for a word inside a name.
    private let keyKind: [UInt8]
    /// Bucket `b` holds keys `bucketStart[b]..<bucketStart[b + 1]`.
    private let bucketStart: [UInt32]
    private let placeCount: Int

    /// How well a place matched, best first.
    enum Quality: UInt8, Sendable {
        case exactName = 0, namePrefix = 1, exactWord = 2, wordPrefix = 3
    }

    /// The most word keys made for one name (`a b c d …` would otherwise make one per word);
    /// words after it are still found as part of the whole name.
    static let maximumWordsPerName = 32

    init(names: [String], asciiNames: [String]) {
        placeCount = names.count
        var bytes: [UInt8] = []
        bytes.reserveCapacity(names.count * 24)
        var starts: [UInt32] = [], lengths: [UInt16] = [], places: [UInt32] = [], kinds: [UInt8] = []
        starts.reserveCapacity(names.count * 3)
        // Each folded name is stored once; its word keys are suffixes of it, so they point into
        // the same bytes (a name's keys cost its length, not its length times its words).
        // Lengths are 16-bit and offsets 32-bit: longer keys are cut, and names past 4 GiB of
        // keys are left out of the index (gazetteer names are at most 1,000 bytes).
        func addWithWords(_ key: [UInt8], place: Int) {
            guard !key.isEmpty, bytes.count + key.count <= Int(UInt32.max), let base = UInt32(exactly: bytes.count),
                let place = UInt32(exactly: place)
            else { return }
            bytes.append(contentsOf: key)
            func add(_ offset: Int, kind: UInt8) {
                starts.append(base + UInt32(offset))
                lengths.append(UInt16(min(key.count - offset, Int(UInt16.max))))
                places.append(place)
                kinds.append(kind)
            }
            add(0, kind: 0)
            var words = 0
            for position in key.indices where key[position] == 0x20 && position + 1 < key.count {
                words += 1
                if words > Self.maximumWordsPerName { break }
                add(position + 1, kind: 1)
            }
        }
        for place in names.indices {
            let name = TextFolding.fold(names[place])
            addWithWords(name, place: place)
            if asciiNames[place] != names[place] {
                let ascii = TextFolding.fold(asciiNames[place])
                if ascii != name { addWithWords(ascii, place: place) }
            }
        }
        // Counting sort of key numbers by bucket.
        var counts = [UInt32](repeating: 0, count: 65537)
        var bucketOf = [UInt16](repeating: 0, count: starts.count)
        for key in starts.indices {
            let start = Int(starts[key])
            let bucket = UInt16(bytes[start]) << 8 | (lengths[key] > 1 ? UInt16(bytes[start + 1]) : 0)
            bucketOf[key] = bucket
            counts[Int(bucket) + 1] += 1
        }
        for bucket in 1..<counts.count { counts[bucket] += counts[bucket - 1] }
        bucketStart = counts
        var next = counts
        var sortedStart = [UInt32](repeating: 0, count: starts.count)
        var sortedLength = [UInt16](repeating: 0, count: starts.count)
        var sortedPlace = [UInt32](repeating: 0, count: starts.count)
        var sortedKind = [UInt8](repeating: 0, count: starts.count)
        for key in starts.indices {
            let bucket = Int(bucketOf[key])
            let slot = Int(next[bucket])
            next[bucket] += 1
            sortedStart[slot] = starts[key]
            sortedLength[slot] = lengths[key]
            sortedPlace[slot] = places[key]
            sortedKind[slot] = kinds[key]
        }
        self.bytes = bytes
        keyStart = sortedStart
        keyLength = sortedLength
        keyPlace = sortedPlace
        keyKind = sortedKind
    }

    /// The number of keys (for diagnostics and benchmarks).
    var keyCount: Int { keyStart.count }

    /// Places whose name or a word in it starts with `query` (folded), ranked by match quality,
    /// then population (descending), then name; answers one page and the total number of matches.
    func search(
        _ query: String, offset: Int, limit: Int, populations: [Int], names: [String]
    ) -> (results: [(place: Int, quality: Quality)], total: Int) {
        let folded = TextFolding.fold(query)
        guard !folded.isEmpty, limit > 0 else { return ([], 0) }
        let buckets: Range<Int>
        if folded.count == 1 {
            buckets = Int(folded[0]) << 8..<(Int(folded[0]) << 8 + 256)
        } else {
            let bucket = Int(folded[0]) << 8 | Int(folded[1])
            buckets = bucket..<bucket + 1
        }
        // best[place] = quality + 1 (0 = not matched).
        var best = [UInt8](repeating: 0, count: placeCount)
        var matched: [Int32] = []
        bytes.withUnsafeBufferPointer { bytes in
            folded.withUnsafeBufferPointer { query in
                let queryLength = query.count
                for key in Int(bucketStart[buckets.lowerBound])..<Int(bucketStart[buckets.upperBound]) {
                    let length = Int(keyLength[key])
                    guard length >= queryLength else { continue }
                    let start = Int(keyStart[key])
                    var equal = true
                    var position = 0
                    while position < queryLength {
                        if bytes[start + position] != query[position] {
                            equal = false
                            break
                        }
                        position += 1
                    }
                    guard equal else { continue }
                    let quality = keyKind[key] * 2 + (length == queryLength ? 0 : 1) + 1
                    let place = Int(keyPlace[key])
                    let previous = best[place]
                    if previous == 0 {
                        matched.append(Int32(place))
                        best[place] = quality
                    } else if quality < previous {
                        best[place] = quality
                    }
                }
            }
        }
        let total = matched.count
        let wanted = min(total, offset + limit)
        guard offset < wanted else { return ([], total) }
        // Keep the best `wanted` places in a small sorted array.
        func before(_ a: Int32, _ b: Int32) -> Bool {
            let qa = best[Int(a)], qb = best[Int(b)]
            if qa != qb { return qa < qb }
            let pa = populations[Int(a)], pb = populations[Int(b)]
            if pa != pb { return pa > pb }
            return names[Int(a)] < names[Int(b)]
        }
        var top: [Int32] = []
        top.reserveCapacity(wanted + 1)
        for place in matched {
            if top.count == wanted, let last = top.last, !before(place, last) { continue }
            var low = 0, high = top.count
            while low < high {
                let mid = (low + high) / 2
                if before(place, top[mid]) { high = mid } else { low = mid + 1 }
            }
            top.insert(place, at: low)
            if top.count > wanted { top.removeLast() }
        }
        return (top[offset...].map { (Int($0), Quality(rawValue: best[Int($0)] &- 1) ?? .wordPrefix) }, total)
    }
}

/// A k-d tree over points on the unit sphere (x, y, z), for nearest-place lookups: the nearest
/// point by chord length is the nearest by great-circle distance.
struct KDTree: Sendable {
    private let xs: [Double]
    private let ys: [Double]
    private let zs: [Double]
    /// The place index of each tree slot.
    private let places: [Int32]
    /// The split axis of each node (0, 1, 2).
    private let axes: [UInt8]
    /// Each node's bounding box (over its whole subtree), at the node's slot: min x, max x, min y,
    /// max y, min z, max z. Pruning on boxes rather than split planes keeps lookups far from any
    /// place (oceans, Antarctica) fast.
    private let boxes: [Double]

    init(latitudes: [Double], longitudes: [Double]) {
        let count = latitudes.count
        // Coordinates are permuted in place with their place numbers, so every pass is sequential.
        var xs = [Double](repeating: 0, count: count)
        var ys = [Double](repeating: 0, count: count)
        var zs = [Double](repeating: 0, count: count)
        var order = [Int32](repeating: 0, count: count)
        var axes = [UInt8](repeating: 0, count: count)
        var boxes = [Double](repeating: 0, count: count * 6)
        for index in 0..<count {
            (xs[index], ys[index], zs[index]) = Geo.unitVector(latitude: latitudes[index], longitude: longitudes[index])
            order[index] = Int32(index)
        }
        boxes.withUnsafeMutableBufferPointer { boxes in
        xs.withUnsafeMutableBufferPointer { xs in
            ys.withUnsafeMutableBufferPointer { ys in
                zs.withUnsafeMutableBufferPointer { zs in
                    order.withUnsafeMutableBufferPointer { order in
                        axes.withUnsafeMutableBufferPointer { axes in
                            func swap(_ i: Int, _ j: Int) {
                                xs.swapAt(i, j)
                                ys.swapAt(i, j)
                                zs.swapAt(i, j)
                                order.swapAt(i, j)
                            }
                            var stack: [(Int, Int)] = [(0, count)]
                            while let (low, high) = stack.popLast() {
                                guard high - low > 1 else { continue }
                                // Split on the axis with the largest spread.
                                var minX = Double.infinity, maxX = -Double.infinity
                                var minY = Double.infinity, maxY = -Double.infinity
                                var minZ = Double.infinity, maxZ = -Double.infinity
                                for slot in low..<high {
                                    let x = xs[slot], y = ys[slot], z = zs[slot]
                                    minX = min(minX, x); maxX = max(maxX, x)
                                    minY = min(minY, y); maxY = max(maxY, y)
                                    minZ = min(minZ, z); maxZ = max(maxZ, z)
                                }
                                let spreadX = maxX - minX, spreadY = maxY - minY, spreadZ = maxZ - minZ
                                let axis: UInt8 = spreadX >= spreadY && spreadX >= spreadZ ? 0 : (spreadY >= spreadZ ? 1 : 2)
                                let column = axis == 0 ? xs : axis == 1 ? ys : zs
                                let middle = (low + high) / 2
                                // Quickselect the median into `middle`.
                                var left = low, right = high - 1
                                while left < right {
                                    let pivot = column[(left + right) / 2]
                                    var i = left, j = right
                                    while i <= j {
                                        while column[i] < pivot { i += 1 }
                                        while column[j] > pivot { j -= 1 }
                                        if i <= j {
                                            swap(i, j)
                                            i += 1
                                            j -= 1
                                        }
                                    }
                                    if middle <= j { right = j } else if middle >= i { left = i } else { break }
                                }
                                axes[middle] = axis
                                let box = middle * 6
                                (boxes[box], boxes[box + 1], boxes[box + 2]) = (minX, maxX, minY)
                                (boxes[box + 3], boxes[box + 4], boxes[box + 5]) = (maxY, minZ, maxZ)
                                stack.append((low, middle))
                                stack.append((middle + 1, high))
                            }
                        }
                    }
                }
            }
        }
        }
        self.boxes = boxes
        self.xs = xs
        self.ys = ys
        self.zs = zs
        places = order
        self.axes = axes
    }

    /// The `count` nearest places to the unit vector (x, y, z), nearest first, with squared chord
    /// lengths.
    func nearest(_ x: Double, _ y: Double, _ z: Double, count: Int) -> [(index: Int32, chordSquared: Double)] {
        guard !places.isEmpty, count > 0 else { return [] }
        var best: [(index: Int32, chordSquared: Double)] = []
        best.reserveCapacity(count + 1)
        var worst = Double.infinity
        xs.withUnsafeBufferPointer { xs in
            ys.withUnsafeBufferPointer { ys in
                zs.withUnsafeBufferPointer { zs in
                    axes.withUnsafeBufferPointer { axes in
                      boxes.withUnsafeBufferPointer { boxes in
                        func visit(_ low: Int, _ high: Int) {
                            guard low < high else { return }
                            let middle = (low + high) / 2
                            if high - low > 1, best.count == count {
                                // Squared distance from the query to the subtree's box.
                                let box = middle * 6
                                let ox = x < boxes[box] ? boxes[box] - x : (x > boxes[box + 1] ? x - boxes[box + 1] : 0)
                                let oy = y < boxes[box + 2] ? boxes[box + 2] - y : (y > boxes[box + 3] ? y - boxes[box + 3] : 0)
                                let oz = z < boxes[box + 4] ? boxes[box + 4] - z : (z > boxes[box + 5] ? z - boxes[box + 5] : 0)
                                if ox * ox + oy * oy + oz * oz >= worst { return }
                            }
                            let dx = xs[middle] - x, dy = ys[middle] - y, dz = zs[middle] - z
                            let distance = dx * dx + dy * dy + dz * dz
                            if best.count < count || distance < worst {
                                var position = best.count
                                while position > 0, best[position - 1].chordSquared > distance { position -= 1 }
                                best.insert((places[middle], distance), at: position)
                                if best.count > count { best.removeLast() }
                                if best.count == count { worst = best[count - 1].chordSquared }
                            }
                            guard high - low > 1 else { return }
                            let axis = axes[middle]
                            let delta = axis == 0 ? dx : axis == 1 ? dy : dz  // node - query
                            // Query on the low side when node - query > 0.
                            if delta > 0 {
                                visit(low, middle)
                                if best.count < count || delta * delta < worst { visit(middle + 1, high) }
                            } else {
                                visit(middle + 1, high)
                                if best.count < count || delta * delta < worst { visit(low, middle) }
                            }
                        }
                        visit(0, places.count)
                      }
                    }
                }
            }
        }
        return best
    }
}
