import CHubPlugin

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Keeps a Swift component alive behind the C `instance` pointer, with what the ABI says the plugin owns for it.
final class ComponentBox {
    let component: HubComponent
    /// The comma-separated layout traits, read once per instance by the host.
    let traits: UnsafeMutablePointer<CChar>
    /// The last `current_ui_state` answer; valid until the next call on the instance.
    var uiState: UnsafeMutablePointer<CChar>?

    // The optional protocols, resolved once at creation (one dynamic cast each).
    let children: HubComponentWithChildren?
    let images: HubComponentWithImageHandling?
    let restorable: HubComponentWithRestorableUIState?
    let selection: HubComponentWithSelectionState?
    let offsetObserver: HubComponentContentOffsetObserver?
    let viewObserver: HubComponentViewObserver?
    let performer: HubComponentActionPerformer?
    let actionObserver: HubComponentActionObserver?
    let storyteller: HubComponentWithStories?
    /// The stories' C strings, made on the first request.
    var stories: StoryStrings?

    init(_ component: HubComponent) {
        self.component = component
        // Sorted, so the string is the same for every instance of the class.
        traits = makeCString(component.layoutTraits.map(\.rawValue).sorted().joined(separator: ","))
        children = component as? HubComponentWithChildren
        images = component as? HubComponentWithImageHandling
        restorable = component as? HubComponentWithRestorableUIState
        selection = component as? HubComponentWithSelectionState
        offsetObserver = component as? HubComponentContentOffsetObserver
        viewObserver = component as? HubComponentViewObserver
        performer = component as? HubComponentActionPerformer
        actionObserver = component as? HubComponentActionObserver
        storyteller = component as? HubComponentWithStories
    }

    deinit {
        free(traits)
        free(uiState)
    }

    /// The box behind a C `instance`; every component call from the host comes through here.
    @inline(__always)
    static func from(_ instance: UnsafeMutableRawPointer?) -> ComponentBox {
        HubMainThread.check("a component method")
        return Unmanaged<ComponentBox>.fromOpaque(instance!).takeUnretainedValue()
    }
}

/// The one C class table shared by every Swift component, and the extension tables.
enum ComponentBridge {
    /// A C component for `component`; the host releases it through `destroy`.
    static func make(_ component: HubComponent) -> hub_component {
        hub_component(klass: klass, instance: Unmanaged.passRetained(ComponentBox(component)).toOpaque())
    }

    static let klass = staticTable(
        hub_component_class(
            struct_size: structSize(hub_component_class.self),
            layout_traits: { UnsafePointer(ComponentBox.from($0).traits) },
            load_view: { ComponentBox.from($0).component.loadView() },
            preferred_view_size: { instance, model, container in
                guard let model else { return hub_size(width: 0, height: 0) }
                let size = ComponentBox.from(instance).component.preferredViewSize(
                    for: HubModel(model),
                    containerSize: Size(container))
                // The ABI requires finite, non-negative sizes.
                func clean(_ value: Double) -> Double { value.isFinite ? max(0, value) : 0 }
                return hub_size(width: clean(size.width), height: clean(size.height))
            },
            prepare_view_for_reuse: { ComponentBox.from($0).component.prepareViewForReuse() },
            configure_view: { instance, model, container in
                guard let model else { return }
                ComponentBox.from(instance).component.configureView(
                    with: HubModel(model), containerSize: Size(container))
            },
            draw_view: { instance, builder, size in
                guard let builder else { return }
                ComponentBox.from(instance).component.draw(in: HubView(builder), size: Size(size))
            },
            get_extension: { instance, id in
                guard let id else { return nil }
                return ComponentBridge.extensionTable(for: ComponentBox.from(instance), id: String(cString: id))
            },
            destroy: { Unmanaged<ComponentBox>.fromOpaque($0!).release() }
        ))

    /// The table for extension `id` when the component conforms to its protocol, else nil.
    static func extensionTable(for box: ComponentBox, id: String) -> UnsafeRawPointer? {
        switch id {
        case HUB_EXT_CHILDREN: return box.children == nil ? nil : UnsafeRawPointer(childrenExt)
        case HUB_EXT_IMAGE_HANDLING: return box.images == nil ? nil : UnsafeRawPointer(imageExt)
        case HUB_EXT_UI_STATE: return box.restorable == nil ? nil : UnsafeRawPointer(uiStateExt)
        case HUB_EXT_SELECTION_STATE: return box.selection == nil ? nil : UnsafeRawPointer(selectionExt)
        case HUB_EXT_CONTENT_OFFSET_OBSERVER: return box.offsetObserver == nil ? nil : UnsafeRawPointer(offsetExt)
        case HUB_EXT_VIEW_OBSERVER: return box.viewObserver == nil ? nil : UnsafeRawPointer(viewObserverExt)
        case HUB_EXT_ACTION_PERFORMER: return box.performer == nil ? nil : UnsafeRawPointer(performerExt)
        case HUB_EXT_ACTION_OBSERVER: return box.actionObserver == nil ? nil : UnsafeRawPointer(actionObserverExt)
        case HUB_EXT_SHOWCASE: return box.storyteller == nil ? nil : UnsafeRawPointer(showcaseExt)
        default: return nil
        }
    }

    // MARK: - Extension tables

    static let childrenExt = staticTable(
        hub_children_ext(
            struct_size: structSize(hub_children_ext.self),
            set_child_delegate: { instance, delegate in
                ComponentBox.from(instance).children?.childDelegate = delegate.map(HubChildDelegate.init)
            }
        ))

    static let imageExt = staticTable(
        hub_image_handling_ext(
            struct_size: structSize(hub_image_handling_ext.self),
            preferred_image_size: { instance, kind, customID, model, container in
                guard let model, let images = ComponentBox.from(instance).images else {
                    return hub_size(width: 0, height: 0)
                }
                return images.preferredSizeForImage(
                    HubImageKind(kind), customID: swiftString(customID),
                    model: HubModel(model), containerSize: Size(container)
                ).c
            },
            image_loaded: { instance, image, animated in
                guard let image, let images = ComponentBox.from(instance).images else { return }
                let c = image.pointee
                let bytes = c.bytes.map { Array(UnsafeBufferPointer(start: $0, count: c.length)) } ?? []
                images.updateView(
                    forLoadedImage: HubLoadedImage(
                        kind: HubImageKind(c.kind), customID: swiftString(c.custom_id),
                        uri: swiftString(c.uri) ?? "", pixelSize: Size(c.size),
                        bytes: bytes),
                    animated: animated)
            }
        ))

    static let uiStateExt = staticTable(
        hub_ui_state_ext(
            struct_size: structSize(hub_ui_state_ext.self),
            current_ui_state: { instance in
                let box = ComponentBox.from(instance)
                free(box.uiState)
                box.uiState = box.restorable?.currentUIState.map(makeCString)
                return UnsafePointer(box.uiState)
            },
            restore_ui_state: { instance, state in
                guard let state else { return }
                ComponentBox.from(instance).restorable?.restoreUIState(String(cString: state))
            }
        ))

    static let showcaseExt = staticTable(
        hub_showcase_ext(
            struct_size: structSize(hub_showcase_ext.self),
            story_count: { instance in
                let box = ComponentBox.from(instance)
                if box.stories == nil { box.stories = StoryStrings(box.storyteller?.stories ?? []) }
                return box.stories?.stories.count ?? 0
            },
            story: { instance, index, out in
                let box = ComponentBox.from(instance)
                if box.stories == nil { box.stories = StoryStrings(box.storyteller?.stories ?? []) }
                guard let strings = box.stories, let out, index < strings.stories.count else { return false }
                let story = strings.story(Int(index))
                out.pointee.name = story.name
                out.pointee.model_json = story.model
                out.pointee.widths = story.widths
                out.pointee.width_count = story.widths == nil ? 0 : strings.stories[Int(index)].widths.count
                return true
            }
        ))

    static let selectionExt = staticTable(
        hub_selection_state_ext(
            struct_size: structSize(hub_selection_state_ext.self),
            update_selection_state: { instance, state in
                let swiftState: HubSelectionState
                switch state {
                case HUB_SELECTION_HIGHLIGHTED: swiftState = .highlighted
                case HUB_SELECTION_SELECTED: swiftState = .selected
                default: swiftState = .none
                }
                ComponentBox.from(instance).selection?.updateViewForSelectionState(swiftState)
            }
        ))

    static let offsetExt = staticTable(
        hub_content_offset_observer_ext(
            struct_size: structSize(hub_content_offset_observer_ext.self),
            content_offset_changed: { instance, offset in
                ComponentBox.from(instance).offsetObserver?.updateViewForChangedContentOffset(Point(offset))
            }
        ))

    static let viewObserverExt = staticTable(
        hub_view_observer_ext(
            struct_size: structSize(hub_view_observer_ext.self),
            view_did_resize: { instance, size in ComponentBox.from(instance).viewObserver?.viewDidResize(to: Size(size))
            },
            view_will_appear: { instance in ComponentBox.from(instance).viewObserver?.viewWillAppear() }
        ))

    static let performerExt = staticTable(
        hub_action_performer_ext(
            struct_size: structSize(hub_action_performer_ext.self),
            set_action_performer: { instance, performer in
                ComponentBox.from(instance).performer?.actionPerformer = performer.map(HubActionPerformer.init)
            }
        ))

    static let actionObserverExt = staticTable(
        hub_action_observer_ext(
            struct_size: structSize(hub_action_observer_ext.self),
            action_performed: { instance, context in
                guard let context else { return }
                ComponentBox.from(instance).actionObserver?.actionPerformed(with: HubActionContext(context))
            }
        ))
}
