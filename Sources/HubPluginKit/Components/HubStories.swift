#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One story of a component (ABI 1.1's HUB_EXT_SHOWCASE): a named Hub JSON component model that `hubhost gallery`
/// draws and `hubhost snapshot` records, optionally with the container widths that matter for it.
///
/// ```swift
/// extension RowComponent: HubComponentWithStories {
///     var stories: [HubStory] {
///         [
///             HubStory("default", model: #"{"text": {"title": "Row", "subtitle": "Subtitle"}}"#),
///             HubStory("long title", model: .object(["text": .object(["title": .string(long)])]), widths: [320]),
///         ]
///     }
/// }
/// ```
/// The model's "component" may be left out: the host fills in this component's "namespace:name".
public struct HubStory: Sendable {
    public var name: String
    /// One component model as JSON text.
    public var model: String
    /// Widths (points) this story matters at; empty for the host's.
    public var widths: [Double]

    public init(_ name: String, model: String, widths: [Double] = []) {
        self.name = name
        self.model = model
        self.widths = widths
    }

    public init(_ name: String, model: JSONValue, widths: [Double] = []) {
        self.init(name, model: model.jsonText, widths: widths)
    }
}

/// A component that declares its stories (Hub's showcaseable components). The host makes an instance only to
/// read them: it is neither configured nor drawn.
public protocol HubComponentWithStories: HubComponent {
    var stories: [HubStory] { get }
}

/// The C strings of one instance's stories, kept until the instance is destroyed (the ABI's lifetime).
final class StoryStrings {
    let stories: [HubStory]
    private var names: [UnsafeMutablePointer<CChar>] = []
    private var models: [UnsafeMutablePointer<CChar>] = []
    private var widths: [UnsafeMutablePointer<Double>] = []

    init(_ stories: [HubStory]) { self.stories = stories }

    /// Story `index` as C pointers valid until `deinit`.
    func story(_ index: Int) -> (
        name: UnsafePointer<CChar>, model: UnsafePointer<CChar>, widths: UnsafePointer<Double>?
    ) {
        let story = stories[index]
        let name = makeCString(story.name)
        let model = makeCString(story.model)
        names.append(name)
        models.append(model)
        var list: UnsafeMutablePointer<Double>?
        if !story.widths.isEmpty {
            let pointer = UnsafeMutablePointer<Double>.allocate(capacity: story.widths.count)
            pointer.initialize(from: story.widths, count: story.widths.count)
            widths.append(pointer)
            list = pointer
        }
        return (UnsafePointer(name), UnsafePointer(model), list.map { UnsafePointer($0) })
    }

    deinit {
        for pointer in names + models { free(pointer) }
        for pointer in widths { pointer.deallocate() }
    }
}
