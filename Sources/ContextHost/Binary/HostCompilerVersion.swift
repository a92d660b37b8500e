/// The version of the Swift compiler that built this host (`#if compiler`), to the patch level
/// for 5.9.0 through 7.2.5 (`nil` outside what this ladder lists); on Linux it is also the
/// runtime the host runs with (see `HostRuntime.swiftVersion`).
let hostCompilerVersion: String? = {
    #if compiler(>=7.3)
        nil
    #elseif compiler(>=7.2.6)
        nil
    #elseif compiler(>=7.2.5)
        "7.2.5"
    #elseif compiler(>=7.2.4)
        "7.2.4"
    #elseif compiler(>=7.2.3)
        "7.2.3"
    #elseif compiler(>=7.2.2)
        "7.2.2"
    #elseif compiler(>=7.2.1)
        "7.2.1"
    #elseif compiler(>=7.2.0)
        "7.2.0"
    #elseif compiler(>=7.1.6)
        nil
    #elseif compiler(>=7.1.5)
        "7.1.5"
    #elseif compiler(>=7.1.4)
        "7.1.4"
    #elseif compiler(>=7.1.3)
        "7.1.3"
    #elseif compiler(>=7.1.2)
        "7.1.2"
    #elseif compiler(>=7.1.1)
        "7.1.1"
    #elseif compiler(>=7.1.0)
        "7.1.0"
    #elseif compiler(>=7.0.6)
        nil
    #elseif compiler(>=7.0.5)
        "7.0.5"
    #elseif compiler(>=7.0.4)
        "7.0.4"
    #elseif compiler(>=7.0.3)
        "7.0.3"
    #elseif compiler(>=7.0.2)
        "7.0.2"
    #elseif compiler(>=7.0.1)
        "7.0.1"
    #elseif compiler(>=7.0.0)
        "7.0.0"
    #elseif compiler(>=6.6.6)
        nil
    #elseif compiler(>=6.6.5)
        "6.6.5"
    #elseif compiler(>=6.6.4)
        "6.6.4"
    #elseif compiler(>=6.6.3)
        "6.6.3"
    #elseif compiler(>=6.6.2)
        "6.6.2"
    #elseif compiler(>=6.6.1)
        "6.6.1"
    #elseif compiler(>=6.6.0)
        "6.6.0"
    #elseif compiler(>=6.5.6)
        nil
    #elseif compiler(>=6.5.5)
        "6.5.5"
    #elseif compiler(>=6.5.4)
        "6.5.4"
    #elseif compiler(>=6.5.3)
        "6.5.3"
    #elseif compiler(>=6.5.2)
        "6.5.2"
    #elseif compiler(>=6.5.1)
        "6.5.1"
    #elseif compiler(>=6.5.0)
        "6.5.0"
    #elseif compiler(>=6.4.6)
        nil
    #elseif compiler(>=6.4.5)
        "6.4.5"
    #elseif compiler(>=6.4.4)
        "6.4.4"
    #elseif compiler(>=6.4.3)
        "6.4.3"
    #elseif compiler(>=6.4.2)
        "6.4.2"
    #elseif compiler(>=6.4.1)
        "6.4.1"
    #elseif compiler(>=6.4.0)
        "6.4.0"
    #elseif compiler(>=6.3.6)
        nil
    #elseif compiler(>=6.3.5)
        "6.3.5"
    #elseif compiler(>=6.3.4)
        "6.3.4"
    #elseif compiler(>=6.3.3)
        "6.3.3"
    #elseif compiler(>=6.3.2)
        "6.3.2"
    #elseif compiler(>=6.3.1)
        "6.3.1"
    #elseif compiler(>=6.3.0)
        "6.3.0"
    #elseif compiler(>=6.2.6)
        nil
    #elseif compiler(>=6.2.5)
        "6.2.5"
    #elseif compiler(>=6.2.4)
        "6.2.4"
    #elseif compiler(>=6.2.3)
        "6.2.3"
    #elseif compiler(>=6.2.2)
        "6.2.2"
    #elseif compiler(>=6.2.1)
        "6.2.1"
    #elseif compiler(>=6.2.0)
        "6.2.0"
    #elseif compiler(>=6.1.6)
        nil
    #elseif compiler(>=6.1.5)
        "6.1.5"
    #elseif compiler(>=6.1.4)
        "6.1.4"
    #elseif compiler(>=6.1.3)
        "6.1.3"
    #elseif compiler(>=6.1.2)
        "6.1.2"
    #elseif compiler(>=6.1.1)
        "6.1.1"
    #elseif compiler(>=6.1.0)
        "6.1.0"
    #elseif compiler(>=6.0.6)
        nil
    #elseif compiler(>=6.0.5)
        "6.0.5"
    #elseif compiler(>=6.0.4)
        "6.0.4"
    #elseif compiler(>=6.0.3)
        "6.0.3"
    #elseif compiler(>=6.0.2)
        "6.0.2"
    #elseif compiler(>=6.0.1)
        "6.0.1"
    #elseif compiler(>=6.0.0)
        "6.0.0"
    #elseif compiler(>=5.10.6)
        nil
    #elseif compiler(>=5.10.5)
        "5.10.5"
    #elseif compiler(>=5.10.4)
        "5.10.4"
    #elseif compiler(>=5.10.3)
        "5.10.3"
    #elseif compiler(>=5.10.2)
        "5.10.2"
    #elseif compiler(>=5.10.1)
        "5.10.1"
    #elseif compiler(>=5.10.0)
        "5.10.0"
    #elseif compiler(>=5.9.6)
        nil
    #elseif compiler(>=5.9.5)
        "5.9.5"
    #elseif compiler(>=5.9.4)
        "5.9.4"
    #elseif compiler(>=5.9.3)
        "5.9.3"
    #elseif compiler(>=5.9.2)
        "5.9.2"
    #elseif compiler(>=5.9.1)
        "5.9.1"
    #elseif compiler(>=5.9.0)
        "5.9.0"
    #else
        nil
    #endif
}()
