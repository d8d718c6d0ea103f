import Foundation
import HubTestKit
import Testing

/// `hubhost dev` continues in `hubhost-dev`, which carries the preview's HTTP server.
@Suite("hubhost dev front end (process)")
struct DevFrontEndCLITests {
    @Test("hubhost holds no HTTP server and maps no Foundation beyond FoundationEssentials; hubhost-dev holds it")
    func onlyTheDevFrontEndLinksTheServer() throws {
        let hubhostMaps = try ProcessRunner.tool("ldd", [TestPaths.hubhost.path]).stdout
        let devMaps = try ProcessRunner.tool(
            "ldd", [TestPaths.binDirectory.appendingPathComponent("hubhost-dev").path]
        ).stdout
        #expect(!hubhostMaps.contains("libFoundationNetworking"))
        #expect(!hubhostMaps.contains("libcurl"))
        #expect(!hubhostMaps.contains("libcrypto"))  // loaded on the first --trusted-hashes digest
        // The server (Hummingbird, on SwiftNIO) is in hubhost-dev alone, and needs no libcurl or FoundationNetworking.
        let serverModule = Data("HummingbirdCore".utf8)
        #expect(try Data(contentsOf: TestPaths.hubhost).range(of: serverModule) == nil)
        #expect(
            try Data(contentsOf: TestPaths.binDirectory.appendingPathComponent("hubhost-dev")).range(of: serverModule)
                != nil)
        #expect(!devMaps.contains("libFoundationNetworking"))
        #expect(!devMaps.contains("libcurl"))
        // FoundationEssentials only: Foundation and ICU cost every start (and every worker and scanner) ~6 ms.
        #expect(!hubhostMaps.contains("libFoundation.so"), "\(hubhostMaps)")
        #expect(!hubhostMaps.contains("libFoundationInternationalization"))
        #expect(!hubhostMaps.contains("ICU"))
    }

    @Test("hubhost dev without hubhost-dev beside it says so and exits 2")
    func missingFrontEndIsNamed() throws {
        let folder = try TemporaryFolder()
        let lonely = folder.appending("hubhost")
        try ProcessRunner.copyExecutable(TestPaths.hubhost, to: lonely)
        let view = folder.appending("view.json")
        try Data(#"{"body": []}"#.utf8).write(to: view)
        let run = try ProcessRunner.run(lonely, ["dev", view.path, "--plugins", folder.url.path, "--port", "0"])
        #expect(run.status == 2)
        #expect(run.stderr.contains(folder.appending("hubhost-dev").path))
        #expect(run.stderr.contains("cannot be started"))
    }
}
