/// Every kind of call the host makes into plugin code, as a fault report names it ("crashed in draw").
///
/// The raw values are part of the black box's layout (`BlackBox`): append new cases, never renumber.
public enum PluginCall: UInt8, CaseIterable, Sendable {
    case none = 0
    case initialize = 1
    case deinitialize = 2
    case componentNames = 3
    case createComponent = 4
    case layoutTraits = 5
    case loadView = 6
    case size = 7
    case configure = 8
    case draw = 9
    case prepareForReuse = 10
    case destroy = 11
    case getExtension = 12
    case childDelegate = 13
    case imageSize = 14
    case imageLoaded = 15
    case saveUIState = 16
    case restoreUIState = 17
    case selectionState = 18
    case contentOffset = 19
    case viewResize = 20
    case viewWillAppear = 21
    case actionPerformer = 22
    case actionObserver = 23
    case createAction = 24
    case actionHandler = 25
    case layoutManager = 26
    case service = 27
    case timer = 28
    case factoryDestroy = 29
    case serviceObserver = 30
    case stories = 31
    case exportedFunction = 32
    case provider = 33
    /// Not a call: a thread the plugin started itself (a fault there is named by address).
    case ownThread = 34
    /// Not a call: its code ran on the main thread between calls (a destructor or atexit handler as the process
    /// ended, a signal handler); named by address.
    case outsideCalls = 35
    /// An action's `perform` (a handler is `actionHandler`).
    case actionPerform = 36
    /// Not a call: its code ran where its image was after the image was unmapped (a thread it started and did not
    /// stop in deinit); named by address.
    case afterUnload = 37
    /// `dlclose`: the image's static destructors (`__attribute__((destructor))`, C++ globals) run in it.
    case unload = 38

    /// The name reports use: "draw", "configure", "action handler".
    public var name: String {
        switch self {
        case .none: return "host code"
        case .initialize: return "init"
        case .deinitialize: return "deinit"
        case .componentNames: return "component_names"
        case .createComponent: return "create"
        case .layoutTraits: return "layout_traits"
        case .loadView: return "load_view"
        case .size: return "size"
        case .configure: return "configure"
        case .draw: return "draw"
        case .prepareForReuse: return "prepare_for_reuse"
        case .destroy: return "destroy"
        case .getExtension: return "get_extension"
        case .childDelegate: return "children"
        case .imageSize: return "image size"
        case .imageLoaded: return "image loaded"
        case .saveUIState: return "save UI state"
        case .restoreUIState: return "restore UI state"
        case .selectionState: return "selection state"
        case .contentOffset: return "content offset observer"
        case .viewResize: return "view resize"
        case .viewWillAppear: return "view will appear"
        case .actionPerformer: return "action performer"
        case .actionObserver: return "action observer"
        case .createAction: return "create action"
        case .actionHandler: return "action handler"
        case .actionPerform: return "action perform"
        case .layoutManager: return "layout manager"
        case .service: return "service retain or release"
        case .timer: return "timer"
        case .factoryDestroy: return "factory destroy"
        case .serviceObserver: return "service observer"
        case .stories: return "stories"
        case .exportedFunction: return "an exported function called through libffi"
        case .provider: return "an injector provider"
        case .ownThread: return "a thread of its own"
        case .outsideCalls: return "its own code outside any call (a destructor, an atexit handler, a signal handler)"
        case .afterUnload:
            return "its code after it was unloaded (a thread it started still ran: stop and join threads in deinit)"
        case .unload: return "its static destructors, as it was unloaded (dlclose)"
        }
    }
}
