import CHubPlugin

/// hubhost's own version and the plugin ABI it speaks, as `hubhost --version` prints them and plugins read them
/// (`hub_host.host_version`).
public enum HostVersion {
    public static let version = "0.1.0"
    public static let abi = "\(HUB_ABI_MAJOR).\(HUB_ABI_MINOR)"
    /// "hubhost 0.1.0 (plugin ABI 1.0)".
    public static let description = "hubhost \(version) (plugin ABI \(abi))"
}
