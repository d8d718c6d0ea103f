import Foundation
import Testing

@testable import HubCore

/// hubhost links FoundationEssentials only (it starts faster without Foundation and ICU); the small helpers that
/// replace Foundation's NSString paths, trimming, percent decoding and `String(format:)` must answer as Foundation
/// does on the inputs hubhost gives them.
struct EssentialsSupportTests {
    /// "Did you mean" finds typos, and answers a name far longer than any candidate without comparing it (a 10 MB
    /// unknown event name in a script took 53 s and 1.6 GB, in a table of its length by each candidate's).
    @Test func nearestNamesFindTyposAndSkipWhatCannotBeOne() {
        let events = ["tap", "highlight", "scroll", "resize", "snapshot"]
        #expect(Spelling.nearest("tpa", in: events) == "tap")
        #expect(Spelling.nearest("scrol", in: events) == "scroll")
        #expect(Spelling.nearest("snapshots", in: events) == "snapshot")
        #expect(Spelling.nearest("zzzzzz", in: events) == nil)
        #expect(Spelling.nearest(String(repeating: "x", count: 5_000_000), in: events) == nil)
        #expect(Spelling.nearest("x", in: []) == nil)
    }

    /// A `data:` URI is held to --max-image-bytes as a file is (decoded); it was only held to the pixel limit, so
    /// a view could inline any number of megabytes.
    @Test func aDataURIOverTheByteLimitIsRefused() {
        let png: [UInt8] = [
            0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1,
            0, 0, 0, 1, 8, 2, 0, 0, 0,
        ]
        let uri = "data:image/png;base64," + Data(png).base64EncodedString()
        guard case .failure(let error) = ImageAccess(viewFile: nil, maxBytes: 10).check(uri) else {
            Issue.record("accepted")
            return
        }
        #expect(error.reason.contains("over the limit of 10 (--max-image-bytes)"), "\(error.reason)")
        guard case .success = ImageAccess(viewFile: nil, maxBytes: 1000).check(uri) else {
            Issue.record("refused under the limit")
            return
        }
        guard case .failure = ImageSource(access: ImageAccess(viewFile: nil, maxBytes: 10)).load(uri) else {
            Issue.record("loaded")
            return
        }
    }

    @Test func trimmingMatchesFoundation() {
        for text in ["", " ", "a", "  a b  ", "\t\na\r\n", "\u{00A0}x\u{2003}", "é ", " \u{1F600} "] {
            #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespacesAndNewlines), "\(text)")
        }
    }

    @Test func percentDecodingMatchesFoundation() {
        for text in ["", "plain", "a%20b", "%E2%82%AC", "%e2%82%ac", "100%", "%zz", "%4", "%FF", "a%2Fb%3F"] {
            #expect(PercentDecoding.decode(text) == text.removingPercentEncoding, "\(text)")
        }
    }

    @Test func printfMatchesFoundationsFormat() {
        #expect(String(printf: "%08x", UInt32(0x1234_abcd)) == String(format: "%08x", UInt32(0x1234_abcd)))
        #expect(String(printf: "%02x", UInt8(7)) == "07")
        #expect(String(printf: "%.1f s", 2.25) == String(format: "%.1f s", 2.25))
        #expect(String(printf: "%ld of %ld (%.3f%%)", 3, 40, 7.5) == "3 of 40 (7.500%)")
        #expect(String(printf: "%ld", Int.max) == "9223372036854775807")
        let long = String(printf: "%.60f", 1.0 / 3)
        #expect(long == String(format: "%.60f", 1.0 / 3))
    }

    @Test func pathsFoldAsTheirTextSays() {
        let cases: [(String, String)] = [
            ("", ""), ("/", "/"), ("/a/./b/../c/", "/a/c"), ("//a//b", "/a/b"), ("/..", "/"), ("/a/../..", "/"),
            ("a/b/..", "a"), ("a/..", "."), ("../a", "../a"), ("../../a/..", "../.."), ("./x", "x"),
        ]
        for (path, folded) in cases { #expect(PathText.normalized(path) == folded, "\(path)") }
        #expect(PathText.appending("b.png", to: "/a") == "/a/b.png")
        #expect(PathText.appending("b.png", to: "/a/") == "/a/b.png")
        #expect(PathText.appending("b", to: "") == "b")
        for path in ["/a/b.c/x.png", "x.tar.gz", ".hidden", "noext", "/a.b/", "dir/.hidden"] {
            #expect(PathText.fileExtension(path) == (path as NSString).pathExtension, "\(path)")
        }
    }

    @Test func fileErrorsAreSaidInWords() {
        #expect(throws: FileReadError.self) { try readWholeFile("/nonexistent/hubhost-test") }
        do {
            _ = try readWholeFile("/nonexistent/hubhost-test")
        } catch {
            #expect("\(error)" == "No such file or directory")
        }
        do {
            _ = try Data(contentsOf: URL(fileURLWithPath: "/nonexistent/hubhost-test"))
        } catch {
            #expect(ErrorText.describe(error) == "/nonexistent/hubhost-test: No such file or directory")
        }
    }

    @Test func theMainThreadIsKnownFromOtherThreads() async {
        let onMain = Threads.isMainThread
        #expect(onMain == Thread.isMainThread)
        let fromThread = await withCheckedContinuation { continuation in
            let started = Threads.detach(name: "hubhost.test") {
                continuation.resume(returning: Threads.isMainThread)
            }
            #expect(started)
        }
        #expect(fromThread == false)
    }

    /// A forked child is a new process: its one thread is its main thread, whatever the forking thread had cached.
    @Test func aForkedChildsThreadIsItsMainThread() {
        _ = Threads.isMainThread  // cache this (test) thread's answer, false unless it is the runner's main thread
        let pid = fork()
        if pid == 0 { _exit(Threads.isMainThread ? 0 : 1) }  // only a C call between fork and _exit
        #expect(pid > 0)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        #expect(status == 0, "the child saw isMainThread false (status \(status))")
    }
}
