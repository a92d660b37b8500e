import ContextHost
import Testing

/// The `PackageError` `body` throws; when it throws none, nil, and the test fails naming `what`
/// and what `body` gave.
func packageRefusal<T>(
    _ what: String, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws(PackageError) -> T
) -> PackageError? {
    do throws(PackageError) {
        let accepted = try body()
        Issue.record("\(what) was accepted: \(accepted)", sourceLocation: sourceLocation)
        return nil
    } catch {
        return error
    }
}
