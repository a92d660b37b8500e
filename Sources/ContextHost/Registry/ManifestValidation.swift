/// What `context-host validate` checks for one file: the manifest itself, its library's
/// resolution, and the sha256 pin against the file's bytes (the library is not loaded).
package enum ManifestValidation {
    package static func check(file: String, configuration: HostConfiguration) -> [ManifestDiagnostic] {
        let manifest: Manifest
        do {
            manifest = try Manifest.load(file: file)
        } catch {
            return error.diagnostics
        }
        let resolver = configuration.libraryResolver()
        let path: String
        do {
            path = try resolver.resolve(manifest)
        } catch {
            return [error]
        }
        if let pin = manifest.sha256, let actual = SHA256.hex(ofFile: path), actual != pin.lowercased() {
            return [manifest.sha256MismatchDiagnostic(actual: actual, libraryPath: path)]
        }
        return []
    }
}
