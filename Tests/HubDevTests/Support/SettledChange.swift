import Foundation
import HubCore

@testable import HubHost

extension FileChange {
    /// A change of `url` as the watcher reports one that just settled, for tests that feed `DevLoop.handle`.
    static func settledNow(_ url: URL) -> FileChange {
        let now = Monotonic.now()
        return FileChange(
            url: url, kind: .changed, hash: ContentDigest.of(file: url), stamp: FileStamp.of(url),
            lastEventAt: now, settledAt: now)
    }
}
