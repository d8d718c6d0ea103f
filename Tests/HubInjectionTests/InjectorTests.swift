import Foundation
import HubCore
import HubInjection
import Testing

// Objection's and motion-objection's specs (BasicUsage, ModuleUsage, AddAndRemoveModules, CircularDependency,
// Inheritance, Initializer, InjectionErrors), ported to Swift key paths instead of KVC.

protocol Brakes: AnyObject {}
final class DiscBrakes: Brakes, Injectable { init() {} }
final class ABSBrakes: Brakes, Injectable { init() {} }

class Engine: Injectable {
    var crankShaft: CrankShaft?
    required init() {}
    class var composition: Composition { Composition(Engine.self) { $0.requires(\.crankShaft) } }
}
final class CrankShaft: Injectable { init() {} }
final class Rod: Injectable { init() {} }
final class V6Engine: Engine {
    var rod: Rod?
    var factory: ObjectFactory?
    override class var composition: Composition {
        Composition(V6Engine.self, inheriting: Engine.composition) { c in
            c.requires(\.rod)
            c.requires(\.factory)
        }
    }
}

final class Car: Injectable {
    var engine: Engine?
    var brakes: Brakes?
    var awoken: [String] = []
    init() {}
    static var composition: Composition {
        Composition(Car.self) { c in
            c.requires(\.engine)
            c.requires(\.brakes)
            c.awoken { $0.awoken.append("first") }
            c.awoken { $0.awoken.append("second:\($0.engine != nil)") }
        }
    }
}

final class Garage: Injectable {
    init() {}
    static var composition: Composition { Composition(Garage.self) { $0.singleton() } }
}

/// Counts its instances for the one test that builds it (no other test does, so parallel tests cannot race it).
final class Shed: Injectable {
    nonisolated(unsafe) static var built = 0
    init() { Shed.built += 1 }
    static var composition: Composition { Composition(Shed.self) { $0.singleton() } }
}

final class Holder: Injectable {
    var awakened = false
    init() {}
    static var composition: Composition {
        Composition(Holder.self) { c in
            c.singleton()
            c.awoken { $0.awakened = true }
        }
    }
}

// Two singletons that need each other (CircularDependency spec).
final class Chicken: Injectable {
    var egg: Egg?
    init() {}
    static var composition: Composition {
        Composition(Chicken.self) { c in
            c.singleton()
            c.requires(\.egg)
        }
    }
}
final class Egg: Injectable {
    var chicken: Chicken?
    init() {}
    static var composition: Composition {
        Composition(Egg.self) { c in
            c.singleton()
            c.requires(\.chicken)
        }
    }
}
// Two normal-scope classes that need each other: an error naming the cycle.
final class Ping: Injectable {
    var pong: Pong?
    init() {}
    static var composition: Composition { Composition(Ping.self) { $0.requires(\.pong) } }
}
final class Pong: Injectable {
    var ping: Ping?
    init() {}
    static var composition: Composition { Composition(Pong.self) { $0.requires(\.ping) } }
}

/// motion-objection's `initializer "initWithNibName:bundle:", "Home"`.
final class ViewController: Injectable {
    let name: String
    let bundle: String?
    var car: Car?
    init(name: String, bundle: String?) {
        self.name = name
        self.bundle = bundle
    }
    convenience init() { self.init(name: "plain", bundle: nil) }
    static var composition: Composition {
        Composition(ViewController.self) { c in
            c.requires(\.car)
            c.initializer("init(nibName:bundle:)", defaults: ["Home", "main"]) { args in
                ViewController(name: try args.at(0), bundle: try args.optional(1))
            }
        }
    }
}

final class NeedsUnboundProtocol: Injectable {
    var brakes: Brakes?
    init() {}
    static var composition: Composition { Composition(NeedsUnboundProtocol.self) { $0.requires(\.brakes) } }
}

final class WheelNamed: Injectable {
    var front: Rod?
    var back: Rod?
    init() {}
    static var composition: Composition {
        Composition(WheelNamed.self) { c in
            c.requires(\.front, named: "front")
            c.requires(\.back, named: "back")
        }
    }
}

final class CarModule: Module {
    override func configure(_ binder: Binder) {
        binder.bindClass(ABSBrakes.self, to: Brakes.self)
    }
}

final class OtherModule: Module {
    let engine = Engine()
    override func configure(_ binder: Binder) {
        binder.bind(engine, to: Engine.self)
    }
}

@Suite("Injector (Objection and motion-objection semantics)")
struct InjectorTests {
    @Test("an unregistered Injectable class is built with its dependencies (auto-registration)")
    func builtWithDependencies() throws {
        let injector = try Injector(CarModule())
        let car = try injector.get(Car.self)
        #expect(car.engine != nil)
        #expect(car.engine?.crankShaft != nil)
        #expect(car.brakes is ABSBrakes)
    }

    @Test("awoken hooks run in declaration order after the dependencies are set")
    func awokenInOrder() throws {
        let car = try Injector(CarModule()).get(Car.self)
        #expect(car.awoken == ["first", "second:true"])
    }

    @Test("normal scope gives a new instance per get; singleton the same per injector, another in another injector")
    func scopes() throws {
        let a = try Injector(CarModule())
        let b = try Injector(CarModule())
        #expect(try a.get(Car.self) !== a.get(Car.self))
        #expect(try a.get(Garage.self) === a.get(Garage.self))
        #expect(try a.get(Garage.self) !== b.get(Garage.self))
    }

    @Test("a singleton never referenced before is still a singleton (declared in its composition)")
    func lazySingleton() throws {
        let injector = try Injector()
        let first = try injector.get(Shed.self)
        #expect(try injector.get(Shed.self) === first)
        #expect(Shed.built == 1)
    }

    @Test("injectDependencies fills an object made elsewhere and runs its awoken hooks")
    func injectOutside() throws {
        let injector = try Injector(CarModule())
        let car = Car()
        try injector.injectDependencies(car)
        #expect(car.engine != nil && car.brakes != nil)
        #expect(car.awoken == ["first", "second:true"])
    }

    @Test("subscripting works and nil comes back for what cannot be built")
    func subscripting() throws {
        let injector = try Injector(CarModule())
        #expect(injector[Car.self] != nil)
        #expect(injector[Brakes.self] is ABSBrakes)
        #expect(try Injector()[Brakes.self] == nil)
    }

    @Test("ObjectFactory is bound per injector and forwards arguments")
    func objectFactory() throws {
        let injector = try Injector(CarModule())
        let engine = try injector.get(V6Engine.self)
        let factory = try #require(engine.factory)
        #expect(factory.injector === injector)
        #expect(factory[Car.self] != nil)
        let controller = try factory.get(ViewController.self, with: "Work")
        #expect(controller.name == "Work")
        #expect(try injector.get(ObjectFactory.self) === factory)
    }

    @Test("inherited compositions merge: V6Engine gets crank shaft, rod and factory")
    func inheritance() throws {
        let engine = try Injector().get(V6Engine.self)
        #expect(engine.crankShaft != nil && engine.rod != nil && engine.factory != nil)
        // The base class alone is fine too.
        #expect(try Injector().get(Engine.self).crankShaft != nil)
    }

    @Test("a bound instance is returned and fills other objects' dependencies")
    func boundInstance() throws {
        let module = OtherModule()
        let injector = try Injector(module, CarModule())
        #expect(try injector.get(Engine.self) === module.engine)
        #expect(try injector.get(Car.self).engine === module.engine)
    }

    @Test("an instance bound to a protocol it does not conform to is refused with Objection's message")
    func nonConformingInstance() {
        let module = Module { $0.bind(Rod(), to: Brakes.self) }
        #expect {
            try Injector(module)
        } throws: { error in
            "\(error)".contains("does not conform to the") && "\(error)".contains("Brakes protocol")
        }
    }

    @Test("eager singletons are instantiated when the injector is created; non-singletons are refused")
    func eagerSingletons() throws {
        let module = Module { b in
            b.bindClass(Holder.self, inScope: .singleton)
            b.registerEagerSingleton(Holder.self)
        }
        let injector = try Injector(module)
        let holder = try injector.get(Holder.self)
        #expect(holder.awakened)
        #expect(throws: InjectionError.eagerSingletonNotSingleton(ServiceKey(Car.self))) {
            try Injector(Module { $0.registerEagerSingleton(Car.self) })
        }
    }

    @Test("providers receive arguments, blocks do not; both may return nil and the property is then nil")
    func providersAndBlocks() throws {
        var received: [Any] = []
        let module = Module { b in
            b.bindProvider(to: Rod.self, named: "counted") { _, args in
                received = args
                return Rod()
            }
            b.bindBlock(to: Brakes.self) { _ in nil }
        }
        let injector = try Injector(module)
        _ = try injector.get(Rod.self, named: "counted", with: 1, "two")
        #expect(received.count == 2 && received[1] as? String == "two")
        let car = try injector.get(Car.self)
        #expect(car.brakes == nil)
        #expect(car.engine != nil)
    }

    @Test("providers, blocks and bound instances are not injected or awoken")
    func providersNotInjected() throws {
        let injector = try Injector(Module { b in b.bindBlock(to: Car.self) { _ in Car() } })
        let car = try injector.get(Car.self)
        #expect(car.engine == nil && car.awoken.isEmpty)
    }

    @Test("class-to-protocol and subclass-to-superclass bindings work and arguments pass through")
    func classBindings() throws {
        let injector = try Injector(
            Module { b in
                b.bindClass(DiscBrakes.self, to: Brakes.self)
                b.bindClass(V6Engine.self, to: Engine.self)
                b.bindClass(ViewController.self, to: AnyObject.self, named: "vc")
            })
        #expect(try injector.get(Brakes.self) is DiscBrakes)
        #expect(try injector.get(Engine.self) is V6Engine)
        let vc = try injector.get(AnyObject.self, named: "vc", with: "Work") as? ViewController
        #expect(vc?.name == "Work")
    }

    @Test("bindings of several modules merge; a later module's binding shadows an earlier one")
    func mergedModules() throws {
        let injector = try Injector(
            Module { $0.bindClass(DiscBrakes.self, to: Brakes.self) }, CarModule(), OtherModule())
        #expect(try injector.get(Brakes.self) is ABSBrakes)
        #expect(injector.hasBinding(for: Engine.self))
        #expect(!injector.hasBinding(for: Engine.self, named: "x"))
    }

    @Test("singleton and normal scope apply to classes, providers and blocks")
    func scopesForAllKinds() throws {
        let injector = try Injector(
            Module { b in
                b.bindProvider(to: Rod.self, scope: .singleton) { _, _ in Rod() }
                b.bindBlock(to: CrankShaft.self, scope: .normal) { _ in CrankShaft() }
                b.bindClass(Car.self, inScope: .singleton)
                b.bindClass(DiscBrakes.self, to: Brakes.self)
            })
        #expect(try injector.get(Rod.self) === injector.get(Rod.self))
        #expect(try injector.get(CrankShaft.self) !== injector.get(CrankShaft.self))
        #expect(try injector.get(Car.self) === injector.get(Car.self))
    }

    @Test("named bindings: separate objects, alongside unnamed, singleton per name")
    func namedBindings() throws {
        let injector = try Injector(
            Module { b in
                b.bindProvider(to: Rod.self, named: "front", scope: .singleton) { _, _ in Rod() }
                b.bindProvider(to: Rod.self, named: "back", scope: .singleton) { _, _ in Rod() }
            })
        let wheel = try injector.get(WheelNamed.self)
        #expect(wheel.front != nil && wheel.back != nil)
        #expect(wheel.front !== wheel.back)
        #expect(try injector.get(Rod.self, named: "front") === wheel.front)
        #expect(try injector.get(Rod.self) !== wheel.front)
        #expect(injector.hasBinding(for: Rod.self, named: "front"))
    }

    @Test("withModules adds bindings and fires the new module's eager singletons; withoutModules removes them")
    func addAndRemoveModules() throws {
        let base = try Injector(OtherModule())
        #expect(base[Brakes.self] == nil)
        let added = try base.withModules(
            CarModule(),
            Module { b in
                b.bindClass(Holder.self, inScope: .singleton)
                b.registerEagerSingleton(Holder.self)
            })
        #expect(added[Brakes.self] is ABSBrakes)
        #expect(added.modules.count == 3)
        let removed = try added.withoutModules(ofType: CarModule.self)
        #expect(removed[Brakes.self] == nil)
        #expect(removed.modules.count == 2)
    }

    @Test("two singletons that require each other resolve to the same pair")
    func circularSingletons() throws {
        let injector = try Injector()
        let chicken = try injector.get(Chicken.self)
        let egg = try injector.get(Egg.self)
        #expect(chicken.egg === egg)
        #expect(egg.chicken === chicken)
    }

    @Test("a cycle between normal-scope classes is an error naming the cycle")
    func normalCycle() {
        #expect(throws: InjectionError.cycle([ServiceKey(Ping.self), ServiceKey(Pong.self), ServiceKey(Ping.self)])) {
            try Injector().get(Ping.self)
        }
    }

    @Test("a provider cycle is an error naming it even when singletons are involved but not yet cached")
    func providerCycle() {
        let injector = try! Injector(
            Module { b in
                b.bindProvider(to: Rod.self, scope: .singleton) { i, _ in
                    _ = try i.get(CrankShaft.self)
                    return Rod()
                }
                b.bindProvider(to: CrankShaft.self, scope: .singleton) { i, _ in
                    _ = try i.get(Rod.self)
                    return CrankShaft()
                }
            })
        #expect(
            throws: InjectionError.cycle([ServiceKey(Rod.self), ServiceKey(CrankShaft.self), ServiceKey(Rod.self)])
        ) {
            try injector.get(Rod.self)
        }
    }

    @Test("default initializer arguments are used and the caller's replace them")
    func initializerDefaults() throws {
        let injector = try Injector(CarModule())
        let home = try injector.get(ViewController.self)
        #expect(home.name == "Home" && home.bundle == "main")
        #expect(home.car != nil)
        let work = try injector.get(ViewController.self, with: "Work")
        #expect(work.name == "Work" && work.bundle == "main")
    }

    @Test("an ad-hoc initializer works, with and without arguments")
    func adHocInitializer() throws {
        let injector = try Injector(CarModule())
        let custom = try injector.get(ViewController.self, initializer: "init(custom:)", arguments: ["Custom"]) {
            args in
            ViewController(name: try args.at(0), bundle: nil)
        }
        #expect(custom.name == "Custom" && custom.car != nil)
        let empty = try injector.get(ViewController.self, initializer: "init(empty:)") { _ in
            ViewController(name: "empty", bundle: nil)
        }
        #expect(empty.name == "empty")
    }

    @Test("initializer argument errors name the initializer and position")
    func initializerArgumentErrors() {
        #expect {
            try Injector().get(ViewController.self, with: 42)
        } throws: { error in
            "\(error)".contains("argument 0 of") && "\(error)".contains("init(nibName:bundle:)")
                && "\(error)".contains("Swift.String")
        }
        #expect(throws: InjectionError.noInitializer(type: String(reflecting: Rod.self), arguments: 1)) {
            try Injector().get(Rod.self, with: 1)
        }
    }

    @Test("an unbound protocol dependency names the property, named or not")
    func unboundProtocol() {
        #expect {
            try Injector().get(NeedsUnboundProtocol.self)
        } throws: { error in
            "\(error)".contains("Cannot find an instance that is bound to") && "\(error)".contains("'brakes'")
        }
        #expect {
            try Injector().get(WheelNamed.self)
        } throws: { error in
            "\(error)".contains("Rod:front") && "\(error)".contains("'front'")
        }
        #expect(throws: InjectionError.noBinding(ServiceKey(Brakes.self))) { try Injector().get(Brakes.self) }
    }

    @Test("a metatype can be bound like any instance; a non-metatype bound to a metatype key is refused")
    func metatypeBinding() throws {
        let injector = try Injector(Module { $0.bind(V6Engine.self, to: Engine.Type.self) })
        let engineType = try injector.get(Engine.Type.self)
        #expect(engineType == V6Engine.self)
        #expect(
            throws: InjectionError.doesNotConform(
                instance: String(reflecting: Engine.self),
                key: ServiceKey(Engine.Type.self))
        ) {
            try Injector(Module { $0.bind(Engine(), to: Engine.Type.self) })
        }
    }

    @Test("namespaced (nested) types are keys of their own, even with the same short name")
    func namespacedTypes() throws {
        enum Front { final class Wheel: Injectable { init() {} } }
        enum Back { final class Wheel: Injectable { init() {} } }
        #expect(ServiceKey(Front.Wheel.self) != ServiceKey(Back.Wheel.self))
        let injector = try Injector(
            Module { b in
                b.bindClass(Front.Wheel.self, inScope: .singleton)
            })
        #expect(try injector.get(Front.Wheel.self) === injector.get(Front.Wheel.self))
        #expect(try injector.get(Back.Wheel.self) !== injector.get(Back.Wheel.self))
    }

    @Test("the default injector can be set, resolves through its modules, and can be cleared")
    func defaultInjector() throws {
        let previous = Injector.defaultInjector
        defer { Injector.defaultInjector = previous }
        let injector = try Injector(CarModule())
        Injector.defaultInjector = injector
        #expect(Injector.defaultInjector === injector)
        #expect(Injector.defaultInjector?[Car.self] != nil)
        Injector.defaultInjector = try Injector()
        #expect(Injector.defaultInjector !== injector)
    }
}
