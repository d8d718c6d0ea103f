// A minimal Swift plugin for the loader tests, compiled by them with
//   swiftc -emit-library -parse-as-library -module-name SwiftFixture<N> -I <dir with a CHubPlugin module map>
// after replacing __FIXTURE_VERSION__, so "a changed copy" is the same source with another version string.
// It uses Swift classes, generics and protocol casts so its image carries real Swift metadata (swift5_* sections).
import CHubPlugin

#if canImport(Glibc)
    import Glibc
#endif

let fixtureVersion = "__FIXTURE_VERSION__"

protocol Drawable { func line() -> String }
final class Label: Drawable { func line() -> String { "swift label \(fixtureVersion)" } }

var host: UnsafePointer<hub_host>?

let componentClass: UnsafeMutablePointer<hub_component_class> = {
    var c = hub_component_class()
    c.struct_size = UInt32(MemoryLayout<hub_component_class>.size)
    c.layout_traits = { _ in UnsafePointer(staticTraits) }
    c.preferred_view_size = { _, _, container in hub_size(width: container.width, height: 30) }
    c.draw_view = { instance, view, size in
        let object = Unmanaged<AnyObject>.fromOpaque(instance!).takeUnretainedValue()
        let text = (object as? Drawable)?.line() ?? "not drawable"
        var style = hub_text_style()
        style.struct_size = UInt32(MemoryLayout<hub_text_style>.size)
        style.font_size = 12
        text.withCString { view!.pointee.text(view, hub_rect(x: 0, y: 0, width: size.width, height: 20), $0, &style) }
    }
    c.destroy = { instance in Unmanaged<AnyObject>.fromOpaque(instance!).release() }
    let pointer = UnsafeMutablePointer<hub_component_class>.allocate(capacity: 1)
    pointer.initialize(to: c)
    return pointer
}()
let staticTraits = strdup("fullWidth")!

let factory: UnsafeMutablePointer<hub_component_factory> = {
    var f = hub_component_factory()
    f.struct_size = UInt32(MemoryLayout<hub_component_factory>.size)
    f.create_component = { _, name, out in
        guard String(cString: name!) == "label" else { return false }
        out!.pointee.klass = UnsafePointer(componentClass)
        out!.pointee.instance = Unmanaged.passRetained(Label() as AnyObject).toOpaque()
        return true
    }
    let pointer = UnsafeMutablePointer<hub_component_factory>.allocate(capacity: 1)
    pointer.initialize(to: f)
    return pointer
}()

let descriptor: UnsafeMutablePointer<hub_plugin_descriptor> = {
    var d = hub_plugin_descriptor()
    d.magic = HUB_PLUGIN_MAGIC
    d.struct_size = UInt32(MemoryLayout<hub_plugin_descriptor>.size)
    d.abi = hub_version(major: HUB_ABI_MAJOR, minor: HUB_ABI_MINOR)
    d.id = UnsafePointer(strdup("com.example.swiftfixture"))
    d.name = UnsafePointer(strdup("Swift fixture"))
    d.version = UnsafePointer(strdup(fixtureVersion))
    d.`init` = { h, error, capacity in
        host = h
        return h!.pointee.register_component_factory(h, "swiftfixture", factory, error, capacity)
    }
    let pointer = UnsafeMutablePointer<hub_plugin_descriptor>.allocate(capacity: 1)
    pointer.initialize(to: d)
    return pointer
}()

// swift-format-ignore: AlwaysUseLowerCamelCase
@_cdecl("hub_plugin_entry")
public func hub_plugin_entry() -> UnsafePointer<hub_plugin_descriptor> { UnsafePointer(descriptor) }
