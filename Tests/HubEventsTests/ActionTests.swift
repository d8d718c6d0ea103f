import Foundation
import HubCore
import HubHost
import HubTestKit
import Testing

/// The action pipeline across real C plugins: selection flow, handlers, custom and async actions, observers.
@Suite(.pluginCode) struct ActionTests {
    /// Plugin A ("a") has the action handler; plugin B ("b") has the components.
    @Test func selectionFlowAcrossTwoPlugins() throws {
        let fixture = try EventsFixture()
        defer { fixture.cleanUp() }
        let a = PluginLog(record: try fixture.load(namespace: "a", handler: true))
        let b = PluginLog(record: try fixture.load(namespace: "b"))
        let engine = try fixture.engine(
            """
            {"id": "two-plugins", "body": [
              {"id": "x", "component": {"id": "b:probe"}, "custom": {"handler": "a"}, "target": {"uri": "hub:x"}},
              {"id": "y", "component": {"id": "b:probe"}, "target": {"uri": "hub:y", "actions": ["b:no", "b:ok", "a:ok"]}},
              {"id": "z", "component": {"id": "b:probe"}, "target": {"uri": "hub:z", "actions": ["b:no", "nowhere:go"]}},
              {"id": "none", "component": {"id": "b:probe"}}]}
            """)
        a.clear()
        b.clear()

        // Plugin A's handler handles the default selection of B's component: nothing is opened.
        engine.apply(.tap(.indexPath([0])))
        let viewURI = try #require(engine.viewURI)
        #expect(
            a.lines.filter { $0.hasPrefix("handler") } == [
                "handler default trigger=0 model=x view=two-plugins uri=\(viewURI) custom=null target=hub:x"
            ])
        #expect(fixture.host.services.openedURIs == [])

        // The target's actions run in order until one succeeds; the default action is not needed.
        engine.apply(.advance(seconds: 1))
        engine.apply(.tap(.indexPath([1])))
        #expect(
            b.lines.filter { $0.hasPrefix("action") && $0.contains("perform") } == [
                "action b:no perform trigger=0 model=y custom=null",
                "action b:ok perform trigger=0 model=y custom=null",
            ])
        #expect(!a.lines.contains { $0.hasPrefix("action a:ok") })
        #expect(fixture.host.services.openedURIs == [])

        // None succeeds (an unknown namespace is a clear result): the default action opens the target URI.
        engine.apply(.advance(seconds: 1))
        engine.apply(.tap(.indexPath([2])))
        #expect(fixture.host.services.openedURIs == ["hub:z"])
        #expect(
            engine.trace!.messages(.action).contains(
                "nowhere:go (selection) for [z]: not performed: no action factory for namespace 'nowhere'"))
        #expect(engine.trace!.messages(.action).last == "default selection (selection) for [z]: performed")

        // No target and no actions: not handled.
        engine.apply(.advance(seconds: 1))
        #expect(engine.select(engine.viewModel.body[3], customData: nil, wrapper: nil) == false)
    }

    @Test func componentActionsReachHandlersAndEveryDisplayedObserver() throws {
        let fixture = try EventsFixture()
        defer { fixture.cleanUp() }
        let a = PluginLog(record: try fixture.load(namespace: "a", handler: true))
        let b = PluginLog(record: try fixture.load(namespace: "b"))
        let engine = try fixture.engine(
            """
            {"id": "v", "body": [
              {"id": "performer", "component": {"id": "b:probe"}, "custom": {"performOnSelect": "a:handled"}},
              {"id": "watcher", "component": {"id": "b:probe"}}]}
            """)
        a.clear()
        b.clear()
        // Selecting the probe makes it perform a:handled through its C action performer (trigger component).
        engine.apply(.tap(.indexPath([0])))
        #expect(
            a.lines.filter { $0.hasPrefix("handler") } == [
                "handler a:handled trigger=1 model=performer view=v uri=\(engine.viewURI!) custom={\"from\":\"probe\"} target=null"
            ])
        #expect(b.lines(for: "performer").contains("performed a:handled -> 1"))
        // Observers see the component's action and then the selection's default action.
        #expect(
            b.lines(for: "watcher").filter { $0.hasPrefix("observed") } == [
                "observed a:handled trigger=1", "observed default trigger=0",
            ])

        // The script's action event goes the same way.
        b.clear()
        engine.apply(
            .action(
                .indexPath([1]), identifier: ComponentIdentifier(namespace: "b", name: "ok"),
                custom: JSONObject([("n", .number(1))])))
        #expect(b.lines.contains("action b:ok perform trigger=1 model=watcher custom={\"n\":1}"))
        #expect(b.lines.contains("action b:ok destroyed"), "a synchronous action is destroyed once performed")
        #expect(b.lines(for: "performer").contains("observed b:ok trigger=1"))
    }

    @Test func asyncActionsStayAliveUntilTheyFinishAndChain() throws {
        let fixture = try EventsFixture()
        defer { fixture.cleanUp() }
        let b = PluginLog(record: try fixture.load(namespace: "b"))
        let engine = try fixture.engine(probeList(1))
        b.clear()
        let outcome = engine.perform(
            trigger: .component, identifier: ComponentIdentifier(namespace: "b", name: "async"),
            customData: JSONObject([("chain", .string("b:ok"))]), model: engine.viewModel.body[0])
        #expect(outcome == .pending)
        #expect(engine.actions.pendingCount == 1)
        #expect(!b.lines.contains("action b:async destroyed"))

        engine.apply(.advance(seconds: 0.5))
        #expect(engine.actions.pendingCount == 1)
        engine.apply(.advance(seconds: 0.5))
        #expect(engine.actions.pendingCount == 0)
        #expect(
            Array(b.lines.suffix(4)) == [
                "async finishing chain=b:ok", "action b:async destroyed",
                "action b:ok perform trigger=1 model=p0 custom={\"chained\":true}", "action b:ok destroyed",
            ])
        #expect(
            engine.trace!.messages(.action).suffix(2) == [
                "b:async (component) for [p0] finished, chains to b:ok", "b:ok (component) for [p0]: performed",
            ])
    }

    @Test func actionsThatChainToThemselvesStopAtTheChainLimit() throws {
        let fixture = try EventsFixture()
        defer { fixture.cleanUp() }
        let b = PluginLog(record: try fixture.load(namespace: "b"))
        let engine = try fixture.engine(probeList(1))
        b.clear()
        // Finished inside perform and chained to itself: without a limit, a recursion that overflowed the stack.
        let outcome = engine.perform(
            trigger: .component, identifier: ComponentIdentifier(namespace: "b", name: "loop"), customData: nil,
            model: engine.viewModel.body[0])
        #expect(outcome == .pending)
        #expect(b.lines.filter { $0.hasPrefix("action b:loop perform") }.count == ActionDispatcher.chainLimit)
        #expect(engine.actions.pendingCount == 0)
        #expect(engine.problems.contains { $0.1.contains("100 actions already chained") }, "a problem of the step")
        // Reported as each returns: the refused 101st first.
        #expect(
            engine.trace!.messages(.action).first { !$0.contains("finished") }
                == "b:loop (component) for [p0]: not performed: action 'b:loop' not run: 100 actions already chained from one trigger (do they chain to each other without end?)"
        )
    }

    @Test func unknownNamespacesAndNamesAreClearResults() throws {
        let fixture = try EventsFixture()
        defer { fixture.cleanUp() }
        _ = try fixture.load(namespace: "b")
        let engine = try fixture.engine(probeList(1))
        let model = engine.viewModel.body[0]
        let unknown = engine.perform(
            trigger: .component, identifier: ComponentIdentifier(namespace: "nope", name: "x"), customData: nil,
            model: model)
        #expect(unknown == .failed(.unknownNamespace("nope")))
        #expect(unknown.description == "not performed: no action factory for namespace 'nope'")
        let noName = engine.perform(
            trigger: .component, identifier: ComponentIdentifier(namespace: "b", name: "zzz"), customData: nil,
            model: model)
        #expect(noName == .failed(.unknownName(ComponentIdentifier(namespace: "b", name: "zzz"))))
        // An action the factory has but the host refused says why on every attempt, not only the first (it said
        // "has no action" after that).
        for _ in 0..<2 {
            let refused = engine.perform(
                trigger: .component, identifier: ComponentIdentifier(namespace: "b", name: "short"), customData: nil,
                model: model)
            #expect(
                refused.description.contains("action 'b:short' refused: ")
                    && refused.description.contains("struct_size 4"), "\(refused)")
        }
        #expect(
            engine.perform(
                trigger: .component, identifier: ComponentIdentifier(namespace: "b", name: "no"), customData: nil,
                model: model) == .notPerformed)
    }

    @Test func actionNamespacesAreOwnedAndFreedOnUnload() throws {
        let fixture = try EventsFixture()
        defer { fixture.cleanUp() }
        let record = try fixture.load(namespace: "b")
        #expect(fixture.host.actionFactories["b"] != nil)
        // A second claim of the namespace is refused; the first keeps it.
        final class Nothing: ActionFactory { func createAction(forName name: String) -> Action? { nil } }
        #expect(throws: (any Error).self) {
            try fixture.host.actionFactories.register(Nothing(), forKey: "b", owner: .host)
        }
        fixture.host.unload(record)
        #expect(fixture.host.actionFactories["b"] == nil)
        let engine = try fixture.engine("{\"id\": \"v\", \"body\": [{\"id\": \"p0\"}]}")
        #expect(
            engine.perform(
                trigger: .selection, identifier: ComponentIdentifier(namespace: "b", name: "ok"), customData: nil,
                model: engine.viewModel.body[0]) == .failed(.unknownNamespace("b")))
    }
}
