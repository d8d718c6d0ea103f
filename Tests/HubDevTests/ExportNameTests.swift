import Testing

@testable import HubPreview

/// The name an export downloads as comes from the view file's name, which may hold anything.
@Suite struct ExportNameTests {
    @Test func aNameAHeaderCannotHoldIsQuotedSafelyAndGivenWhole() {
        #expect(PreviewServer.attachment("home.svg") == #"attachment; filename="home.svg""#)
        // A quote made a malformed header; raw UTF-8 went into it.
        #expect(
            PreviewServer.attachment(#"q"<b>x.svg"#)
                == #"attachment; filename="q_<b>x.svg"; filename*=UTF-8''q%22%3Cb%3Ex.svg"#)
        #expect(
            PreviewServer.attachment("café.png") == #"attachment; filename="caf_.png"; filename*=UTF-8''caf%C3%A9.png"#)
    }
}
