import ArgumentParser
import ContextHost
import ContextNetwork
import ContextProviderKit
import Logging

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ContextHostCommand {
    /// `secrets set|list|remove`: providers' secret settings (`type: secret`), kept encrypted
    /// (docs/cli.md, docs/security.md "Secrets"). A value is never taken from the command line.
    struct Secrets: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Set, list or remove providers' secret settings (API keys, passwords).",
            discussion: "Values are read from standard input or a prompt that does not echo, never from arguments, and stored encrypted (libsodium secretbox) in $CONTEXT_HOST_SECRETS_DIR, else $XDG_DATA_HOME/context-host/secrets, else ~/.local/share/context-host/secrets. The key is kept in the Secret Service keyring when the session has one (an existing key file is kept), else in a 0600 file there; CONTEXT_HOST_SECRETS_BACKEND=file or secret-service forces one. The host injects a secret only into the provider's brokered requests, where its manifest says.",
            subcommands: [SetSecret.self, ListSecrets.self, RemoveSecret.self])

        static func store() throws -> EncryptedSecretStore {
            guard let directory = EncryptedSecretStore.defaultDirectory() else {
                writeStandardError("error: no HOME, XDG_DATA_HOME or CONTEXT_HOST_SECRETS_DIR: nowhere to keep secrets.")
                throw ExitCode(2)
            }
            do {
                return EncryptedSecretStore(directory: directory, keyBackend: try EncryptedSecretStore.KeyBackend.fromEnvironment())
            } catch {
                writeStandardError("error: \(error)")
                throw ExitCode(2)
            }
        }

        /// The provider's manifest, if the manifest folders have it; exits 2 when the provider or
        /// the secret setting is unknown.
        static func checkDeclared(_ options: HostOptions, provider: String, name: String) throws {
            var configuration = options.hostConfiguration()
            configuration.stateDirectory = nil
            configuration.fetcher = nil
            let host = Host(configuration: configuration, logger: Logger(label: "context-host secrets"))
            guard let manifest = host.registry.entry(id: provider)?.manifest else {
                writeStandardError("error: no provider has id '\(provider)' in the manifest folders; `context-host list` shows the ids.")
                throw ExitCode(2)
            }
            let secrets = manifest.settings.filter { $0.type == .secret }.map(\.name)
            guard secrets.contains(name) else {
                writeStandardError("error: \(provider) has no secret setting '\(name)'"
                    + (secrets.isEmpty ? " (its manifest declares none: a setting with 'type: secret')." : "; its secret settings: \(secrets.joined(separator: ", ")).")
                    + "\n  manifest: \(manifest.manifestPath)")
                throw ExitCode(2)
            }
        }

        struct SetSecret: ParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "set",
                abstract: "Set a secret: the value is read from standard input (one line, or all of it when piped) or a prompt that does not echo.")
            @OptionGroup var options: HostOptions
            @Argument(help: "The provider id.") var provider: String
            @Argument(help: "The secret setting's name, as its manifest declares it.") var name: String

            func run() throws {
                try Secrets.checkDeclared(options, provider: provider, name: name)
                var value = try Self.readValue(prompt: "Secret \(name) for \(provider): ")
                defer { for index in value.indices { value[index] = 0 } }
                guard !value.isEmpty else {
                    writeStandardError("error: the secret is empty; nothing was stored.")
                    throw ExitCode(2)
                }
                guard value.count <= SecretLimits.maximumBytes else {
                    writeStandardError("error: the secret is \(value.count) bytes; at most \(SecretLimits.maximumBytes) are kept.")
                    throw ExitCode(2)
                }
                let store = try Secrets.store()
                do {
                    try store.set(provider: provider, name: name, value: value)
                } catch {
                    writeStandardError("error: \(error)")
                    throw ExitCode(1)
                }
                writeStandardError("Secret \(name) of \(provider) set (\(store.directory); its key is in \(store.keyLocation ?? "?")).")
            }

            /// From a terminal: a prompt on stderr with echo off, one line. Otherwise: standard
            /// input to its end, less one final newline.
            static func readValue(prompt: String) throws -> [UInt8] {
                let terminal = isatty(STDIN_FILENO) == 1
                var saved = termios()
                if terminal {
                    writeStandardError(prompt.hasSuffix(" ") ? String(prompt.dropLast()) : prompt)
                    tcgetattr(STDIN_FILENO, &saved)
                    var quiet = saved
                    quiet.c_lflag &= ~tcflag_t(ECHO)
                    tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet)
                }
                defer {
                    if terminal {
                        tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved)
                        writeStandardError("")
                    }
                }
                var bytes: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while bytes.count <= SecretLimits.maximumBytes {
                    let count = read(STDIN_FILENO, &buffer, buffer.count)
                    if count < 0, errno == EINTR { continue }
                    guard count > 0 else { break }
                    bytes.append(contentsOf: buffer[..<count])
                    if terminal, bytes.contains(0x0A) { break }
                }
                for index in buffer.indices { buffer[index] = 0 }
                if terminal, let newline = bytes.firstIndex(of: 0x0A) { bytes.removeSubrange(newline...) }
                if bytes.last == 0x0A { bytes.removeLast() }
                if bytes.last == 0x0D { bytes.removeLast() }
                return bytes
            }
        }

        struct ListSecrets: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "list", abstract: "List the secrets that are set (names only, never values).")
            @Argument(help: "Only this provider's.") var provider: String?

            func run() throws {
                let names: [String: [String]]
                do {
                    names = try Secrets.store().names()
                } catch let exit as ExitCode {
                    throw exit
                } catch {
                    writeStandardError("error: \(error)")
                    throw ExitCode(1)
                }
                for id in names.keys.sorted() where provider == nil || provider == id {
                    for name in names[id] ?? [] { print("\(id) \(name)") }
                }
            }
        }

        struct RemoveSecret: ParsableCommand {
            static let configuration = CommandConfiguration(commandName: "remove", abstract: "Remove a secret.")
            @Argument(help: "The provider id.") var provider: String
            @Argument(help: "The secret setting's name.") var name: String

            func run() throws {
                do {
                    if try Secrets.store().remove(provider: provider, name: name) {
                        writeStandardError("Secret \(name) of \(provider) removed.")
                    } else {
                        writeStandardError("error: \(provider) has no secret '\(name)' set; `context-host secrets list` shows those set.")
                        throw ExitCode(1)
                    }
                } catch let exit as ExitCode {
                    throw exit
                } catch {
                    writeStandardError("error: \(error)")
                    throw ExitCode(1)
                }
            }
        }
    }
}
