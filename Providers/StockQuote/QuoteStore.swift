#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import ContextProviderKit
import ProviderSupport

/// A symbol the provider can quote: from a price file, the symbols file, or both.
struct SymbolEntry: Hashable, Sendable {
    var symbol: String
    var name: String?
    var exchange: String?
    var currency: String?
    /// The price file's full path, if there is one.
    var path: String?
    /// The price file's name, for messages.
    var fileName: String?
}

/// Where a history came from.
struct QuoteSource: Hashable, Sendable {
    /// `file` or `http`.
    var kind: String
    /// The file name or the URL (never with a key: the host injects it).
    var location: String
    /// The fetch failed and this is the last good answer, kept in the data folder.
    var stale: Bool = false
    /// When an `http` history was fetched (`YYYY-MM-DDTHH:MM:SSZ`).
    var fetchedAt: String? = nil
}

/// A symbol's history, ready to quote.
struct LoadedHistory: Sendable {
    var entry: SymbolEntry
    var history: PriceHistory
    var source: QuoteSource
    /// Remarks about how it was obtained (e.g. the HTTP source failed and the file was used).
    var notes: [DataDiagnostic]
}

/// Why a symbol cannot be quoted; the message goes to the symbol field.
struct LookupFailure: Error, Sendable {
    var message: String
}

/// Reads the quotes folder and symbols file lazily, caches what it parsed (re-reading a file only
/// when its size or modification time changes), and fetches from the HTTP source.
final class QuoteStore: @unchecked Sendable {
    let directory: String
    let symbolsFile: String?
    /// The web source, if any (`source` setting).
    let remote: RemoteSource?
    let httpTimeout: Double
    let httpCacheSeconds: Double
    let diskCache: QuoteDiskCache

    private let lock = Lock()
    private var catalog: Catalog?
    private var histories: [String: (stamp: FileStamp, history: PriceHistory)] = [:]
    private var httpCache: [String: (fetchedAt: Double, wallClock: Double, history: PriceHistory)] = [:]
    /// After a source's retries failed: no fetch before this (monotonic seconds).
    private var pausedUntil: Double = 0

    struct Catalog {
        var directoryStamp: FileStamp?
        var symbolsStamp: FileStamp?
        /// Sorted by symbol.
        var entries: [SymbolEntry]
        var bySymbol: [String: Int]
        var diagnostics: [DataDiagnostic]
        /// Why the folder cannot be read, if it cannot.
        var folderProblem: String?
        var priceFileCount: Int
    }

    init(directory: String, symbolsFile: String?, remote: RemoteSource?, httpTimeout: Double, httpCacheSeconds: Double, cacheFolder: String?) {
        self.directory = directory
        self.symbolsFile = symbolsFile
        self.remote = remote
        self.httpTimeout = httpTimeout
        self.httpCacheSeconds = httpCacheSeconds
        self.diskCache = QuoteDiskCache(folder: cacheFolder)
    }

    // MARK: Catalog

    /// The current catalog, rebuilt when the folder or the symbols file changed.
    func currentCatalog() -> Catalog {
        lock.withLock {
            let directoryStamp = FileStamp(path: directory)
            let symbolsStamp = symbolsFile.flatMap { FileStamp(path: $0) }
            if let catalog, catalog.directoryStamp == directoryStamp, catalog.symbolsStamp == symbolsStamp {
                return catalog
            }
            let built = buildCatalog(directoryStamp: directoryStamp, symbolsStamp: symbolsStamp)
            for diagnostic in built.diagnostics { StockLog.write(diagnostic) }
            catalog = built
            return built
        }
    }

    private func buildCatalog(directoryStamp: FileStamp?, symbolsStamp: FileStamp?) -> Catalog {
        var diagnostics: [DataDiagnostic] = []
        var entries: [String: SymbolEntry] = [:]
        var folderProblem: String? = nil
        var priceFiles = 0
        if let stamp = directoryStamp, stamp.isDirectory {
            let names = FileIO.list(directory) ?? []
            var considered = 0
            for name in names.sorted() {
                guard !name.hasPrefix("."), let symbol = Self.symbol(forFileName: name) else { continue }
                considered += 1
                guard considered <= Limits.maximumPriceFiles else {
                    diagnostics.append(DataDiagnostic(
                        source: directory, line: nil, severity: .problem,
                        message: "more than \(Limits.maximumPriceFiles) price files; \(Limits.quote(name)) and the files after it (by name) are ignored"))
                    break
                }
                let path = directory + "/" + name
                guard let stamp = FileStamp(path: path), stamp.isRegularFile else { continue }
                if let symbolsFile, FileSystem.samePath(path, symbolsFile) { continue }
                guard Ticker.isValid(symbol) else {
                    diagnostics.append(DataDiagnostic(
                        source: Limits.quote(name), line: nil, severity: .problem,
                        message: "the file name does not make a valid symbol; name files like ACME.csv or acme.us.txt; file ignored"))
                    continue
                }
                if let existing = entries[symbol] {
                    diagnostics.append(DataDiagnostic(
                        source: name, line: nil, severity: .problem,
                        message: "symbol \(symbol) already comes from \(existing.fileName ?? "?"); file ignored (remove one of them)"))
                    continue
                }
                entries[symbol] = SymbolEntry(symbol: symbol, path: path, fileName: name)
                priceFiles += 1
            }
        } else if directoryStamp == nil {
            folderProblem = "the quotes folder \(directory) does not exist"
        } else {
            folderProblem = "\(directory) is not a folder"
        }
        // A folder here is what an empty `symbolsFile` setting resolves to (the manifest's folder): no symbols file.
        if let symbolsFile, let symbolsStamp, !symbolsStamp.isDirectory {
            let fileName = FileSystem.lastComponent(symbolsFile)
            if !symbolsStamp.isRegularFile {
                diagnostics.append(DataDiagnostic(source: fileName, line: nil, severity: .problem, message: "is not a regular file; ignored"))
            } else if symbolsStamp.size > Int64(Limits.maximumSymbolsFile) {
                diagnostics.append(DataDiagnostic(
                    source: fileName, line: nil, severity: .problem,
                    message: "is larger than \(Limits.maximumSymbolsFile >> 20) MB (\(symbolsStamp.size) bytes); ignored"))
            } else if let bytes = FileSystem.read(symbolsFile, limit: Limits.maximumSymbolsFile) {
                let (symbols, problems) = SymbolsFile.parse(bytes, source: fileName)
                diagnostics += problems
                for symbol in symbols {
                    var entry = entries[symbol.symbol] ?? SymbolEntry(symbol: symbol.symbol)
                    entry.name = symbol.name ?? entry.name
                    entry.exchange = symbol.exchange ?? entry.exchange
                    entry.currency = symbol.currency ?? entry.currency
                    entries[symbol.symbol] = entry
                }
            } else {
                diagnostics.append(DataDiagnostic(source: fileName, line: nil, severity: .problem, message: "cannot be read: \(String(cString: strerror(errno)))"))
            }
        }
        let sorted = entries.values.sorted { $0.symbol < $1.symbol }
        var bySymbol: [String: Int] = [:]
        for (index, entry) in sorted.enumerated() { bySymbol[entry.symbol] = index }
        return Catalog(
            directoryStamp: directoryStamp, symbolsStamp: symbolsStamp, entries: sorted, bySymbol: bySymbol,
            diagnostics: diagnostics, folderProblem: folderProblem, priceFileCount: priceFiles)
    }

    /// The symbol a price file stands for: its name without `.csv`/`.txt`, upper-cased, without
    /// Stooq's `.US` market suffix (`aapl.us.txt` → `AAPL`, `sap.de.txt` → `SAP.DE`); `nil` for other files.
    static func symbol(forFileName name: String) -> String? {
        let lower = name.lowercased()
        guard lower.hasSuffix(".csv") || lower.hasSuffix(".txt") else { return nil }
        var stem = String(name.dropLast(4)).uppercased()
        if stem.hasSuffix(".US"), stem.count > 3 { stem.removeLast(3) }
        return stem
    }

    // MARK: Histories

    /// The history for `symbol`: from the web source first when one is set (through the host's
    /// broker), falling back to its last good answer (stale) and then the local file; else from
    /// the local file.
    ///
    /// Not optimised: with `-O -sanitize=fuzzer` (Fuzz/run.sh) Swift 6.3.1's LLVM crashed splitting
    /// this coroutine (`emitSetAndGetSwiftErrorValueAround`, signal 11). The fetch it awaits
    /// dominates its cost anyway.
    @_optimize(none)
    func history(
        for symbol: String, fetch: @Sendable (ProviderHTTPRequest) async throws -> ProviderHTTPResponse
    ) async throws -> LoadedHistory {
        let catalog = currentCatalog()
        let entry = catalog.bySymbol[symbol].map { catalog.entries[$0] } ?? SymbolEntry(symbol: symbol)
        var notes: [DataDiagnostic] = []
        if let remote {
            let url = remote.url(for: symbol)
            switch await fetchHistory(remote, symbol: symbol, url: url, fetch: fetch) {
            case .fresh(let history, let fetchedAt):
                if !history.rows.isEmpty {
                    return LoadedHistory(entry: entry, history: history, source: QuoteSource(kind: "http", location: url, fetchedAt: Self.iso(fetchedAt)), notes: [])
                }
                let first = history.diagnostics.first?.text ?? "no rows"
                notes.append(DataDiagnostic(source: url, line: nil, severity: .problem, message: "the web source returned no usable price rows (\(first))"))
            case .failed(let reason):
                notes.append(DataDiagnostic(source: url, line: nil, severity: .problem, message: "the web source failed: \(reason)"))
                if let (bytes, fetchedAt) = diskCache.read(remote, symbol) {
                    let history = PriceParser.parse(bytes, source: url)
                    if !history.rows.isEmpty {
                        let note = DataDiagnostic(
                            source: url, line: nil, severity: .problem,
                            message: "the web source failed (\(reason)); showing the data fetched at \(Self.iso(fetchedAt))")
                        StockLog.write(note)
                        return LoadedHistory(
                            entry: entry, history: history,
                            source: QuoteSource(kind: "http", location: url, stale: true, fetchedAt: Self.iso(fetchedAt)), notes: [note])
                    }
                }
            }
            for note in notes { StockLog.write(note) }
        }
        guard let path = entry.path, let fileName = entry.fileName else {
            if let failure = notes.first {
                throw LookupFailure(message: "No data for \(symbol): \(failure.message), and there is no local file \(symbol).csv in \(directory).")
            }
            if let name = entry.name {
                throw LookupFailure(message:
                    "\(symbol) (\(name)) has no local price file (e.g. \(symbol).csv in \(directory)) and no web source is set (source: stooq or alphavantage).")
            }
            throw LookupFailure(message: "Unknown symbol \(symbol): there is no price file for it (e.g. \(symbol).csv) in \(directory). Pick a symbol from the search results.")
        }
        let history = try localHistory(path: path, fileName: fileName)
        if !notes.isEmpty {
            notes = notes.map { note in
                var note = note
                note.message += "; used the local file \(fileName) instead"
                return note
            }
        }
        return LoadedHistory(entry: entry, history: history, source: QuoteSource(kind: "file", location: fileName), notes: notes)
    }

    enum FetchResult {
        case fresh(PriceHistory, fetchedAt: Double)
        case failed(String)
    }

    /// One symbol from the web source: the memory cache, else up to `QuoteBackoff.attempts`
    /// fetches (waiting between them on 429 and 5xx), else the source is paused a while.
    private func fetchHistory(
        _ remote: RemoteSource, symbol: String, url: String, fetch: @Sendable (ProviderHTTPRequest) async throws -> ProviderHTTPResponse
    ) async -> FetchResult {
        let now = Double(monotonicNanoseconds()) / 1e9
        let (cached, paused): ((history: PriceHistory, wallClock: Double)?, Bool) = lock.withLock {
            let entry = httpCache[url].flatMap { now - $0.fetchedAt < httpCacheSeconds ? ($0.history, $0.wallClock) : nil }
            return (entry, now < pausedUntil)
        }
        if let cached { return .fresh(cached.history, fetchedAt: cached.wallClock) }
        if paused { return .failed("paused after repeated rate limits or server errors; trying again later") }
        var lastReason = "no answer"
        var lastRetryAfter: Double?
        for attempt in 1...QuoteBackoff.attempts {
            let response: ProviderHTTPResponse
            do {
                response = try await fetch(ProviderHTTPRequest(url: url, headers: [("Accept", "text/csv, application/json")], timeoutSeconds: httpTimeout))
            } catch let error as ProviderError {
                return .failed(error.message)
            } catch {
                return .failed(String(describing: error))
            }
            switch remote.interpret(response) {
            case .csv(let bytes):
                let history = PriceParser.parse(bytes, source: url)
                StockLog.write(history)
                let wallClock = Double(ItemIdentity.nowSecondsSince1970())
                if !history.rows.isEmpty {
                    lock.withLock { httpCache[url] = (now, wallClock, history) }
                    diskCache.store(remote, symbol, bytes)
                }
                return .fresh(history, fetchedAt: wallClock)
            case .failed(let reason):
                return .failed(reason)
            case .retry(let reason, let after):
                lastReason = reason
                lastRetryAfter = after
                guard attempt < QuoteBackoff.attempts else { break }
                let delay = QuoteBackoff.delay(retry: attempt, retryAfter: after)
                do {
                    try await Task.sleep(nanoseconds: UInt64(delay * 1e9))
                } catch {
                    return .failed("cancelled")
                }
            }
        }
        let pause = QuoteBackoff.pause(retryAfter: lastRetryAfter)
        lock.withLock { pausedUntil = Double(monotonicNanoseconds()) / 1e9 + pause }
        return .failed("\(lastReason) after \(QuoteBackoff.attempts) tries")
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` of seconds since 1970.
    static func iso(_ seconds: Double) -> String {
        ItemIdentity.rfc3339(secondsSince1970: Int(seconds.isFinite ? max(0, min(seconds, 1e11)) : 0))
    }

    private func localHistory(path: String, fileName: String) throws(LookupFailure) -> PriceHistory {
        let stamp = FileStamp(path: path)
        let cached: PriceHistory? = lock.withLock {
            guard let stamp, let entry = histories[path], entry.stamp == stamp else { return nil }
            return entry.history
        }
        if let cached { return cached }
        if let stamp, stamp.size > Int64(Limits.maximumPriceFile) {
            throw LookupFailure(message: "\(fileName) is larger than \(Limits.maximumPriceFile >> 20) MB (\(stamp.size) bytes); the provider reads price files up to that size. Keep one file per symbol with daily rows.")
        }
        guard let stamp, let bytes = FileSystem.read(path, limit: Limits.maximumPriceFile) else {
            throw LookupFailure(message: "\(fileName) cannot be read: \(String(cString: strerror(errno))). Check the file's permissions.")
        }
        let history = PriceParser.parse(bytes, source: fileName)
        StockLog.write(history)
        lock.withLock { histories[path] = (stamp, history) }
        return history
    }

}

/// The optional symbols file: `symbol,name,exchange,currency` (header required, any order; only
/// `symbol` is required).
enum SymbolsFile {
    struct Row {
        var symbol: String
        var name: String?
        var exchange: String?
        var currency: String?
    }

    package static func parse(_ bytes: [UInt8], source: String) -> ([Row], [DataDiagnostic]) {
        var rows: [Row] = []
        var problemList: [DataDiagnostic] = []
        var omitted = 0
        /// Kept up to `Limits.maximumDiagnostics`; the rest are counted in one last line.
        func addProblem(_ problem: DataDiagnostic) {
            if problemList.count < Limits.maximumDiagnostics { problemList.append(problem) } else { omitted += 1 }
        }
        var seen: [String: Int] = [:]
        var lines = CSV.lines(bytes)
        guard let headerIndex = lines.firstIndex(where: { !CSV.isBlank($0.bytes) }) else { return ([], []) }
        let header = lines[headerIndex]
        lines.removeFirst(headerIndex + 1)
        guard header.bytes.count <= Limits.maximumLine else {
            return ([], [DataDiagnostic(
                source: source, line: header.number, severity: .problem,
                message: "the header line is longer than \(Limits.maximumLine >> 10) KB (\"\(Limits.quote(header.bytes))\"); expected symbol,name,exchange,currency; file ignored")])
        }
        let separator = CSV.separator(forHeader: header.bytes)
        let names = CSV.fields(header.bytes, separator: separator).map { $0.trimmingSpaces.lowercased() }
        func index(_ candidates: [String]) -> Int? { names.firstIndex { candidates.contains($0) } }
        guard let symbolIndex = index(["symbol", "ticker", "code"]) else {
            addProblem(DataDiagnostic(
                source: source, line: header.number, severity: .problem,
                message: "the header has no symbol column; expected symbol,name,exchange,currency; file ignored"))
            return ([], problemList)
        }
        let nameIndex = index(["name", "company", "description"])
        let exchangeIndex = index(["exchange", "market"])
        let currencyIndex = index(["currency"])
        for line in lines where !CSV.isBlank(line.bytes) {
            guard line.bytes.count <= Limits.maximumLine else {
                addProblem(DataDiagnostic(
                    source: source, line: line.number, severity: .problem,
                    message: "the line is longer than \(Limits.maximumLine >> 10) KB; row skipped"))
                continue
            }
            let fields = CSV.fields(line.bytes, separator: separator).map(\.trimmingSpaces)
            func value(_ index: Int?) -> String? {
                guard let index, index < fields.count, !fields[index].isEmpty else { return nil }
                let field = fields[index]
                return field.count <= Limits.maximumNameLength ? field : String(field.prefix(Limits.maximumNameLength)) + "…"
            }
            guard let raw = value(symbolIndex) else {
                addProblem(DataDiagnostic(source: source, line: line.number, severity: .problem, message: "no symbol; row skipped"))
                continue
            }
            let symbol = raw.uppercased()
            guard Ticker.isValid(symbol) else {
                addProblem(DataDiagnostic(
                    source: source, line: line.number, severity: .problem, message: "\"\(Limits.quote(raw))\" is not a valid symbol (\(Ticker.rule)); row skipped"))
                continue
            }
            if let first = seen[symbol] {
                addProblem(DataDiagnostic(
                    source: source, line: line.number, severity: .problem, message: "\(symbol) is listed again (first on line \(first)); row skipped"))
                continue
            }
            seen[symbol] = line.number
            var currency = value(currencyIndex)?.uppercased()
            if let code = currency, code.count != 3 || !code.allSatisfy({ $0.isASCII && $0.isLetter }) {
                addProblem(DataDiagnostic(
                    source: source, line: line.number, severity: .problem,
                    message: "currency \"\(Limits.quote(code))\" is not a 3-letter ISO 4217 code; the default currency is used"))
                currency = nil
            }
            rows.append(Row(symbol: symbol, name: value(nameIndex), exchange: value(exchangeIndex), currency: currency))
        }
        if omitted > 0 {
            problemList.append(DataDiagnostic(source: source, line: nil, severity: .problem, message: "\(omitted) more problems not listed"))
        }
        return (rows, problemList)
    }
}

/// What a ticker symbol may look like.
enum Ticker {
    static let rule = "1 to 20 letters, digits, '.', '-', '_', '=' or '^', starting with a letter, digit or '^', e.g. ACME or UMBR.DE"

    static func isValid(_ symbol: String) -> Bool {
        guard (1...20).contains(symbol.utf8.count), let first = symbol.first, first.isASCII,
            first.isLetter || first.isNumber || first == "^"
        else { return false }
        return symbol.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || ".-_=^".contains($0)) }
    }
}

/// Diagnostics for the operator, on stderr (the host's log stream).
enum StockLog {
    /// Every kept diagnostic of a history, then how many problems were not kept.
    static func write(_ history: PriceHistory) {
        for diagnostic in history.diagnostics { write(diagnostic) }
        if history.omittedProblems > 0, let source = history.diagnostics.last?.source {
            write(DataDiagnostic(source: source, line: nil, severity: .problem, message: "\(history.omittedProblems) more problems not listed"))
        }
    }

    static func write(_ diagnostic: DataDiagnostic) {
        let level = diagnostic.severity == .problem ? "warning" : "note"
        writeStandardError("stock-quote: \(level): \(diagnostic.text)")
    }
}

/// A file's identity for caching: size, modification time and type.
struct FileStamp: Hashable, Sendable {
    var size: Int64
    var seconds: Int
    var nanoseconds: Int
    var mode: UInt32

    init?(path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        size = Int64(info.st_size)
        #if canImport(Darwin)
        seconds = Int(info.st_mtimespec.tv_sec)
        nanoseconds = Int(info.st_mtimespec.tv_nsec)
        #else
        seconds = Int(info.st_mtim.tv_sec)
        nanoseconds = Int(info.st_mtim.tv_nsec)
        #endif
        mode = UInt32(info.st_mode)
    }

    var isDirectory: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFDIR) }
    var isRegularFile: Bool { mode & UInt32(S_IFMT) == UInt32(S_IFREG) }
}

/// Plain POSIX file access (no Foundation).
enum FileSystem {
    /// A whole file, or `nil` (see `errno`).
    static func read(_ path: String, limit: Int) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            errno = EINVAL
            return nil
        }
        bytes.reserveCapacity(Int(clamping: min(Int64(info.st_size), Int64(limit))))
        var buffer = [UInt8](repeating: 0, count: 256 * 1024)
        while true {
            let count = buffer.withUnsafeMutableBytes { systemRead(fd, $0.baseAddress, $0.count) }
            if count > 0 {
                guard bytes.count + count <= limit else {
                    errno = EFBIG
                    return nil
                }
                bytes.append(contentsOf: buffer[0..<count])
            } else if count == 0 {
                return bytes
            } else if errno != EINTR {
                return nil
            }
        }
    }

    static func lastComponent(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// Whether two paths name the same file (same device and inode).
    static func samePath(_ lhs: String, _ rhs: String) -> Bool {
        var left = stat(), right = stat()
        guard stat(lhs, &left) == 0, stat(rhs, &right) == 0 else { return false }
        return left.st_dev == right.st_dev && left.st_ino == right.st_ino
    }
}

@inline(__always)
private func systemRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int) -> Int { read(fd, buffer, count) }
