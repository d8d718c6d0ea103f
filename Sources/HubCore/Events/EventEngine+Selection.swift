import FoundationEssentials

/// Selection states, the touch gesture and the selection action, and what components report back through
/// `ComponentWrapperDelegate`.
extension EventEngine {
    // MARK: Selection (hub-framework.md §4.6)

    func beginGesture(on wrapper: ComponentWrapper) {
        if let active = gestureWrapper {
            note(
                "touch on [\(wrapper.model?.identifier ?? "?")] ignored: a touch on [\(active.model?.identifier ?? "?")] is active (one gesture at a time)"
            )
            return
        }
        gestureWrapper = wrapper
        nextToken += 1
        let token = nextToken
        pendingHighlight = (wrapper, token)
        trace?.add(
            .state, "[\(wrapper.model?.identifier ?? "?")] will highlight in \(Self.highlightDelay)s",
            [("model", .optional(wrapper.model?.identifier)), ("pending", .string("highlighted"))])
        clock.schedule(after: Self.highlightDelay) { [weak self, weak wrapper] in
            guard let self, let wrapper, let pending = self.pendingHighlight, pending.token == token,
                pending.wrapper === wrapper
            else { return }
            self.setSelectionState(.highlighted, of: wrapper)
        }
    }

    /// Hub's update rule: any update of a component cancels its pending highlight; the same state is never sent
    /// twice; None ends the touch.
    func setSelectionState(_ state: SelectionState, of wrapper: ComponentWrapper) {
        // Highlighted is the pending highlight arriving; Selected replaces it (a tap); None ends the touch first.
        // Only this component's: another's deselect (0.2 s after its tap) cancelled a touch held on this one.
        if let pending = pendingHighlight, pending.wrapper === wrapper {
            if state == .none { cancelPendingHighlight() } else { pendingHighlight = nil }
        }
        if state == .none, gestureWrapper === wrapper { gestureWrapper = nil }
        guard wrapper.selectionState != state, !wrapper.isDestroyed else { return }
        wrapper.selectionState = state
        trace?.add(
            .state, "[\(wrapper.model?.identifier ?? "?")] \(state)",
            [
                ("model", .optional(wrapper.model?.identifier)), ("state", .string(state.description)),
                ("instance", .optional(wrapper.traceName)),
            ])
        wrapper.component.selectionStateHandling?.updateViewForSelectionState(state)
    }

    /// Drops a highlight still waiting for its delay, and says why (by default: the touch ended before it showed).
    func cancelPendingHighlight(because why: String = "the touch ended before it showed") {
        guard let pending = pendingHighlight else { return }
        pendingHighlight = nil
        trace?.add(
            .state,
            "[\(pending.wrapper.model?.identifier ?? "?")] highlight cancelled (\(why))",
            [("model", .optional(pending.wrapper.model?.identifier)), ("pending", .string("cancelled"))])
    }

    /// Hub resets the highlighted component on every scroll event and on resize.
    func resetHighlight() {
        cancelPendingHighlight(because: "a scroll or resize ended the touch")
        if let wrapper = gestureWrapper {
            gestureWrapper = nil
            setSelectionState(.none, of: wrapper)
        }
    }

    /// Hub's selectComponentWithModel: Selected (None after the delay), the target's actions in order until one
    /// succeeds, else the default selection action. Returns whether it was handled.
    @discardableResult
    public func select(_ model: ComponentModel, customData: JSONObject?, wrapper: ComponentWrapper?) -> Bool {
        if let wrapper {
            setSelectionState(.selected, of: wrapper)
            clock.schedule(after: Self.deselectDelay) { [weak self, weak wrapper] in
                guard let self, let wrapper, wrapper.model === model, wrapper.selectionState == .selected else {
                    return
                }
                self.setSelectionState(.none, of: wrapper)
            }
        }
        for identifier in model.target?.actions ?? [] {
            if perform(trigger: .selection, identifier: identifier, customData: customData, model: model).succeeded {
                return true
            }
        }
        let handled = perform(trigger: .selection, identifier: nil, customData: customData, model: model).succeeded
        if !handled {
            trace?.add(.note, "[\(model.identifier)] selected: nothing handled it (no target URI or actions)")
        }
        return handled
    }

    /// Hub's view-controller perform: build the context, run the handler chain and the action, then tell every
    /// displayed action observer.
    @discardableResult
    public func perform(
        trigger: ActionTrigger, identifier: ComponentIdentifier?, customData: JSONObject?,
        model: ComponentModel?
    ) -> ActionOutcome {
        let context = ActionContext(
            trigger: trigger, actionIdentifier: identifier, customData: customData,
            viewURI: viewURI, viewModel: viewModel, componentModel: model)
        let outcome = actions.handle(context)
        for wrapper in registeredWrappers where wrapper.component.actionObserver != nil {
            wrapper.component.actionObserver?.actionPerformed(with: context)
        }
        return outcome
    }

    // MARK: ComponentWrapperDelegate

    public func componentWrapper(
        _ wrapper: ComponentWrapper, performAction identifier: ComponentIdentifier,
        customData: JSONObject?
    ) -> Bool {
        perform(trigger: .component, identifier: identifier, customData: customData, model: wrapper.model).succeeded
    }

    public func componentWrapper(_ wrapper: ComponentWrapper, willDisplayChildAt index: Int) {
        // Children appear with their parent: nothing happens while the parent is not displayed (its own
        // will-appear runs them).
        guard registered[wrapper.id] != nil, let child = wrapper.children[index],
            index < (wrapper.model?.children.count ?? 0)
        else { return }
        appear(child)
        childDidAppear(child)
    }

    public func componentWrapper(_ wrapper: ComponentWrapper, didStopDisplayingChildAt index: Int) {
        guard let child = wrapper.children[index], registered[child.id] != nil else { return }
        endDisplay(child)
    }

    public func componentWrapper(_ wrapper: ComponentWrapper, childSelectedAt index: Int, customData: JSONObject?) {
        // Hub bounds-checks the index and selects the child model with the custom data (no visual state).
        guard let model = wrapper.model?.child(at: index) else {
            note("child \(index) of [\(wrapper.model?.identifier ?? "?")] selected, but it has no such child: ignored")
            return
        }
        trace?.add(.state, "child \(index) of [\(wrapper.model?.identifier ?? "?")] selected (drawn by its parent)")
        select(model, customData: customData, wrapper: nil)
    }
}
