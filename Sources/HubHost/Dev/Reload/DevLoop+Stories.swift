import FoundationEssentials
import HubCore

/// A story of the gallery (`hubhost dev --gallery`) on a canvas of its own, as Storybook opens one: the story's
/// model alone in a live view, which the page taps, inspects and edits as it does a view file's. A plugin rebuilt
/// meanwhile draws the story as its new build declares it, unless the page edited it (the edit stays, as controls
/// do in Storybook). The story open is part of the workbench a restarted worker carries on with.
extension DevLoop {
    /// Opens `key` on the canvas, or with nil goes back to the gallery's sheet. Returns what the page shows the
    /// user. Call on `queue`.
    public func open(story key: StoryKey?) -> String {
        host.adoptCurrentThread()
        guard options.gallery else { return Self.notTheGallery + "stories are opened in hubhost dev --gallery" }
        guard let key else {
            guard options.openStory != nil else { return "the gallery is shown" }
            closeStory()
            render(Reload(file: viewName, result: .story, detail: "closed; the sheet again"))
            return "the gallery is shown"
        }
        // Asked again (a second tab's link, the page's Back and forward): kept as it is, edits included.
        if key == options.openStory, viewModel != nil { return "opened \(key.component) — \(key.story)" }
        guard let view = storyView(key) else {
            return Self.noSuchStory + "\(TerminalText.quoted(key.story)) of \(key.component) in the loaded plugins"
        }
        options.openStory = key
        viewModel = view
        isEditedInMemory = false
        render(Reload(file: viewName, result: .story, detail: "opened \(key.component) — \(key.story)"))
        return "opened \(key.component) — \(key.story)"
    }

    /// How `open(story:)` answers a story no loaded plugin has, and a loop that shows a view file (the preview
    /// server answers 404 and 409 for them).
    public static let noSuchStory = "no story "
    public static let notTheGallery = "not the gallery: "

    /// The story's view from the plugins loaded now: its model alone in the body; nil when no loaded plugin
    /// declares it (or it is not a component model). What is wrong with it that still lets it draw is kept for the
    /// page, as the sheet says it.
    func storyView(_ key: StoryKey) -> ViewModel? {
        guard let identifier = ComponentIdentifier(strict: key.component),
            let story = Showcase.stories(of: identifier, host: host)?.first(where: { $0.name == key.story }),
            let decoded = Showcase.decodedView(of: story)
        else { return nil }
        let label = "\(key.component) story \(TerminalText.quoted(key.story)): "
        openStoryWarnings = Showcase.warnings(
            of: story, decoded: decoded, registry: host.registry, unavailable: host.unavailableNamespaces
        ).map { label + $0 }
        return decoded.viewModel
    }

    /// Before a render that plugins changed: the open story as its plugin declares it now, unless the page edited
    /// it. Returns what the terminal and page say when the story went away (and the sheet is shown again).
    func refreshOpenStory() -> String? {
        guard options.gallery, let key = options.openStory, !isEditedInMemory else { return nil }
        if let view = storyView(key) {
            viewModel = view
            return nil
        }
        closeStory()
        return "story \(TerminalText.quoted(key.story)) of \(key.component) is gone; back to the sheet"
    }

    private func closeStory() {
        options.openStory = nil
        openStoryWarnings = []
        viewModel = nil
        isEditedInMemory = false
        engine = nil
    }
}
