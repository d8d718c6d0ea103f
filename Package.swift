// swift-tools-version:6.1
import Foundation
//
// hubhost: a headless Hub Framework component host that loads plugins (.so) through a versioned C ABI.
// Module map (one folder per concern, see README.md):
//   CHubPlugin   the public C header hub_plugin.h, the plugin contract
//   CFFI         libffi (Debian's libffi-dev), for calls whose signature is only known at run time
//   CCrypto      libcrypto, loaded on first use (Debian's libssl3), SHA-256 for --trusted-hashes
//   CRsvg        librsvg and cairo, loaded on the first PNG (Debian's librsvg2-2), SVG to PNG
//   CHubSystem      Linux calls Swift's Glibc module leaves out
//   HubVocabulary geometry, colour, text style, traits, selection state, action trigger, JSON value and parser:
//                the vocabulary HubCore and HubPluginKit share (no host code)
//   HubCore      models, view decoding, registry, layout, lifecycle, events, render tree (pure Swift, no dlopen)
//   HubInjection service locator and injector with owners on every registration
//   HubHost      plugin discovery, validation, loading, the C-ABI bridge, unload, reload
//   HubRender    JSON, SVG, HTML and text output of a render tree
//   HubPreview   the live preview HTTP server
//   HubPluginKit the Swift SDK plugin authors link statically
//   HubCLI       the command line: every command, shared by the two executables
//   hubhost      the command-line tool (everything but the preview's HTTP server, so it starts fast)
//   hubhost-dev  the same command line with the live preview's HTTP server; `hubhost dev` continues there
import PackageDescription

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().path

/// Plugins export only `hub_plugin_entry`, so two plugins can never interpose on each other's symbols.
/// lld, because gold keeps the hidden Swift symbols as LOCAL entries in `.dynsym` (harmless, but noisy in `nm -D`).
let pluginLinkerSettings: [LinkerSetting] = [
    .unsafeFlags(["-use-ld=lld", "-Xlinker", "--version-script=\(packageRoot)/Plugins/exports.map"])
]

/// SwiftPM links every product with swiftc, which adds `swiftrt.o`: Swift metadata sections, so the host would
/// pin the C plugin like a Swift one instead of unloading it. `-nostartfiles` leaves it out. (`libswiftCore` stays
/// in NEEDED, unused and already loaded by the host.)
let cPluginLinkerSettings: [LinkerSetting] =
    pluginLinkerSettings + [
        .unsafeFlags(["-nostartfiles"])
    ]

/// The decode, layout and output loops run per component: in release builds they skip the runtime exclusivity
/// checks (7–9% of a 100k render; the compiler's static checks stay, and debug builds and tests keep the runtime
/// ones).
let hotPathSettings: [SwiftSetting] = [
    .unsafeFlags(["-enforce-exclusivity=unchecked", "-cross-module-optimization"], .when(configuration: .release))
]

/// The hubhost executables export `pthread_create` (CHubSystem's), so threads plugin code starts in a worker get a
/// signal stack of their own and a stack overflow on one is named; `kill`, so plugin code that signals the
/// supervisor is caught in its call; `alarm`, `setitimer` and `setrlimit`, so the signal an alarm or a limit set by
/// plugin code brings later is blamed on the call that set it (see csystem.c).
let hostLinkerSettings: [LinkerSetting] = [
    .unsafeFlags(["-Xlinker", "--export-dynamic-symbol=pthread_create", "-Xlinker", "--export-dynamic-symbol=kill",
        "-Xlinker", "--export-dynamic-symbol=alarm", "-Xlinker", "--export-dynamic-symbol=setitimer",
        "-Xlinker", "--export-dynamic-symbol=setrlimit", "-Xlinker", "--export-dynamic-symbol=sigaction",
        "-Xlinker", "--export-dynamic-symbol=signal",
    ])
]

let package = Package(
    name: "hubhost",
    products: [
        .executable(name: "hubhost", targets: ["hubhost"]),
        .executable(name: "hubhost-dev", targets: ["hubhost-dev"]),
        .executable(name: "hubhost-bench", targets: ["HubBench"]),
        .library(name: "HubPluginKit", targets: ["HubPluginKit"]),
        // The plugins we ship, each its own shared object; `make plugins` copies them into ./plugins.
        .library(name: "HubDemoSwift", type: .dynamic, targets: ["HubDemoSwift"]),
        .library(name: "HubDemoC", type: .dynamic, targets: ["HubDemoC"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        // The live preview's HTTP server. Its swift-configuration support is left out (not used, and a package
        // less to build).
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
        // Hummingbird's own foundation: the preview reads the bound port and a bind error's errno from it.
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        // Hummingbird's HTTP parts (already built for it): the preview answers `Expect: 100-continue` with them.
        .package(url: "https://github.com/apple/swift-nio-extras", from: "1.35.2"),
    ],
    targets: [
        .target(name: "CHubPlugin", path: "Sources/CHubPlugin"),
        .systemLibrary(
            name: "CFFI", path: "Sources/CFFI", pkgConfig: "libffi",
            providers: [.apt(["libffi-dev"])]),
        // Loaded with dlopen on the first digest, not linked: see Sources/CCrypto/include/ccrypto.h.
        .target(name: "CCrypto", path: "Sources/CCrypto"),
        // Loaded with dlopen on the first PNG, not linked: see Sources/CRsvg/include/crsvg.h.
        .target(name: "CRsvg", path: "Sources/CRsvg"),
        // Linux calls Swift's Glibc module leaves out (gettid).
        .target(name: "CHubSystem", path: "Sources/CHubSystem"),
        // The vocabulary HubCore and the plugin SDK share, with no host code: geometry, colour, text style, layout
        // traits, selection state, action trigger, the JSON value and parser. Plugins link it statically.
        .target(name: "HubVocabulary", path: "Sources/HubVocabulary", swiftSettings: hotPathSettings),
        .target(
            name: "HubCore", dependencies: ["HubVocabulary", "CHubSystem"], path: "Sources/HubCore",
            swiftSettings: hotPathSettings),
        .target(name: "HubInjection", dependencies: ["HubCore"], path: "Sources/HubInjection"),
        .target(
            name: "HubHost",
            dependencies: [
                "HubCore", "HubInjection", "CHubPlugin", "CFFI", "CCrypto", "CHubSystem",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/HubHost",
            swiftSettings: hotPathSettings
        ),
        .target(
            name: "HubRender", dependencies: ["HubCore", "CRsvg"], path: "Sources/HubRender",
            swiftSettings: hotPathSettings),
        .target(
            name: "HubPreview",
            dependencies: [
                "HubHost", "HubRender", .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTPTypes", package: "swift-nio-extras"),
                .product(name: "NIOHTTPTypesHTTP1", package: "swift-nio-extras"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/HubPreview"
        ),
        .target(name: "HubPluginKit", dependencies: ["CHubPlugin", "HubVocabulary"], path: "Sources/HubPluginKit"),
        .target(
            name: "HubCLI",
            dependencies: [
                "HubCore", "HubInjection", "HubHost", "HubRender",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Sources/HubCLI"
        ),
        // No HTTP server here: it would cost every start FoundationNetworking's libraries (see DevFrontEnd).
        .executableTarget(
            name: "hubhost", dependencies: ["HubCLI"], path: "Sources/hubhost", linkerSettings: hostLinkerSettings),
        .executableTarget(
            name: "hubhost-dev", dependencies: ["HubCLI", "HubHost", "HubPreview"], path: "Sources/hubhost-dev",
            linkerSettings: hostLinkerSettings),
        .executableTarget(
            name: "HubBench",
            dependencies: ["HubCore", "HubInjection", "HubHost", "HubRender", "HubPreview", "CHubPlugin", "CFFI"],
            path: "Sources/HubBench"
        ),

        // Shipped plugins.
        .target(
            name: "HubDemoSwift", dependencies: ["HubPluginKit"], path: "Plugins/DemoSwift",
            linkerSettings: pluginLinkerSettings),
        .target(
            name: "HubDemoC", dependencies: ["CHubPlugin"], path: "Plugins/DemoC", publicHeadersPath: ".",
            linkerSettings: cPluginLinkerSettings),

        // Tests. HubTestKit: what every test target shares (paths, a process runner that reads stdout and stderr
        // together, the fixture compiler, temporary folders).
        .target(name: "HubTestKit", path: "Tests/HubTestKit"),
        .testTarget(name: "HubVocabularyTests", dependencies: ["HubVocabulary"], path: "Tests/HubVocabularyTests"),
        .testTarget(name: "HubCoreTests", dependencies: ["HubTestKit", "HubCore"], path: "Tests/HubCoreTests"),
        .testTarget(
            name: "HubInjectionTests", dependencies: ["HubTestKit", "HubInjection", "HubHost"],
            path: "Tests/HubInjectionTests"),
        .testTarget(
            name: "HubHostTests", dependencies: ["HubTestKit", "HubHost", "HubCore", "CHubPlugin"],
            path: "Tests/HubHostTests", exclude: ["Fixtures"]),
        .testTarget(
            name: "HubRenderTests", dependencies: ["HubTestKit", "HubRender", "HubCore", "HubHost"],
            path: "Tests/HubRenderTests", exclude: ["Fixtures"]),
        .testTarget(
            name: "HubPluginKitTests",
            dependencies: [
                "HubTestKit", "HubPluginKit", "HubHost", "HubCore", "HubInjection",
                "CHubPlugin",
            ],
            path: "Tests/HubPluginKitTests"),
        .testTarget(
            name: "HubCLITests", dependencies: ["HubTestKit"], path: "Tests/HubCLITests", exclude: ["Golden"]),
        .testTarget(
            name: "HubDevTests", dependencies: ["HubTestKit", "HubHost", "HubCore", "HubPreview"],
            path: "Tests/HubDevTests", exclude: ["Fixtures"]),
        .testTarget(
            name: "HubIsolationTests", dependencies: ["HubTestKit", "HubHost", "HubCore"],
            path: "Tests/HubIsolationTests", exclude: ["Fixtures"]),
        .testTarget(
            name: "HubEventsTests", dependencies: ["HubTestKit", "HubCore", "HubHost", "HubRender"],
            path: "Tests/HubEventsTests", exclude: ["Fixtures"]),
    ],
    swiftLanguageModes: [.v5]
)
