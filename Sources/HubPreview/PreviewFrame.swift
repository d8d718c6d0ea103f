import Foundation
import HubCore
import HubHost

/// One render of the view as the preview page shows it: the view's HTML, a clickable box per component, and an
/// overlay of problems (quarantined plugins, JSON errors). Pushed to every open page over server-sent events.
public struct PreviewFrame: Codable, Sendable {
    /// A component's frame in view coordinates, for clicks and highlights.
    public struct Box: Codable, Sendable {
        public var indexPath: [Int]
        /// "body", "header" or "overlay".
        public var section: String
        public var id: String
        public var component: String
        public var x: Double, y: Double, width: Double, height: Double
        public init(
            indexPath: [Int], section: String, id: String, component: String,
            x: Double, y: Double, width: Double, height: Double
        ) {
            self.indexPath = indexPath
            self.section = section
            self.id = id
            self.component = component
            self.x = x
            self.y = y
            self.width = width
            self.height = height
        }
    }

    /// A problem the page shows over the view.
    public struct Problem: Codable, Sendable {
        /// "quarantine", "json", "reload".
        public var kind: String
        public var message: String
        public init(kind: String, message: String) {
            self.kind = kind
            self.message = message
        }
    }

    /// Increases with every render.
    public var sequence: Int
    /// The rendered view (the HTML renderer's output).
    public var html: String
    public var width: Double
    public var height: Double
    public var boxes: [Box]
    public var problems: [Problem]
    /// The reload that caused this render ("initial" for the first), as the terminal printed it.
    public var cause: String
    /// The index path the last tap went to, highlighted by the page, and its section.
    public var tapped: [Int]?
    public var tappedSection: String?
    /// Every plugin file of the session, for the plugin panel.
    public var plugins: [DevLoop.PluginRow]?
    /// The view at more widths, drawn beside the interactive one.
    public var extras: [Extra]?
    /// The interactive view's width, as `--width` or the page's menu set it (the gallery's sheet is wider).
    public var viewWidth: Double?
    /// The widths asked for beside the interactive one (the gallery draws them in its sheet, with no extras).
    public var extraWidths: [Double]?

    /// A static drawing of the view at another width.
    public struct Extra: Codable, Sendable {
        public var width: Double
        public var height: Double
        public var html: String
        public init(width: Double, height: Double, html: String) {
            self.width = width
            self.height = height
            self.html = html
        }
    }
    /// A large view is drawn near where the page is scrolled only: `html` and `boxes` cover content y from `top`
    /// to `bottom` of the `height`, and the page asks for another part (`POST /scroll`) as it scrolls.
    public struct Window: Codable, Sendable, Equatable {
        public var top: Double
        public var bottom: Double
        /// The view's body components (all of them, drawn or not).
        public var components: Int
        public init(top: Double, bottom: Double, components: Int) {
            self.top = top
            self.bottom = bottom
            self.components = components
        }
    }
    /// nil: the whole view is drawn.
    public var window: Window?

    /// Gallery mode: where each story is drawn on the sheet (a click there opens it on the canvas).
    public struct StoryPlace: Codable, Sendable {
        public var component: String
        public var story: String
        public var width: Double
        public var x: Double, y: Double, w: Double, h: Double
        public init(component: String, story: String, width: Double, place: Rect) {
            self.component = component
            self.story = story
            self.width = width
            (x, y, w, h) = (place.x, place.y, place.width, place.height)
        }
    }
    /// Gallery mode, no story open: every drawing on the sheet.
    public var stories: [StoryPlace]?
    /// Gallery mode: the story open on the canvas (the frame is then that story as a live view, with its boxes).
    public var story: StoryKey?
    /// The frame answers a scroll of the page: nothing changed but what is drawn (the page logs nothing).
    public var scrolled: Bool?
    /// The page whose scroll it answers (the id the page sent): other pages draw it only where it covers them.
    public var scrolledBy: String?

    /// Monotonic seconds (CLOCK_MONOTONIC, shared by processes on this machine): when the change that caused
    /// this render settled, and when the render was ready to push. For latency measurements.
    public var settledAt: Double?
    public var lastEventAt: Double?
    public var renderedAt: Double

    public init(
        sequence: Int, html: String, width: Double, height: Double, boxes: [Box], problems: [Problem],
        cause: String, tapped: [Int]? = nil, tappedSection: String? = nil, plugins: [DevLoop.PluginRow]? = nil,
        settledAt: Double? = nil, lastEventAt: Double? = nil, renderedAt: Double
    ) {
        self.tappedSection = tappedSection
        self.plugins = plugins
        self.sequence = sequence
        self.html = html
        self.width = width
        self.height = height
        self.boxes = boxes
        self.problems = problems
        self.cause = cause
        self.tapped = tapped
        self.settledAt = settledAt
        self.lastEventAt = lastEventAt
        self.renderedAt = renderedAt
    }
}
