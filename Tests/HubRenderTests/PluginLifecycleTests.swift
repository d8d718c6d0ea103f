import Foundation
import HubCore
import HubHost
import HubTestKit
import Testing

/// The lifecycle traced through a C plugin compiled at test time: every call the host makes into its component
/// is appended to a trace file, so the order is what really crossed the ABI.
@Suite(.serialized, .pluginCode) struct PluginLifecycleTests {
    static let includeDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/CHubPlugin/include")

    /// namespace "rec", component "row": fullWidth, 50 high; UI state "<configure count>-<model id>".
    static let source = #"""
        #include "hub_plugin.h"
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>

        static const hub_host *g_host;
        static FILE *g_trace;
        static int g_next_id;

        typedef struct rec { int id; int configures; char state[96]; } rec;

        static void trace(const char *line) { fputs(line, g_trace); fputc('\n', g_trace); fflush(g_trace); }

        static const char *rec_traits(void *instance) { (void)instance; return "fullWidth"; }
        static void rec_load(void *instance) {
            char line[64]; snprintf(line, sizeof line, "load#%d", ((rec *)instance)->id); trace(line);
        }
        static hub_size rec_size(void *instance, const hub_model *model, hub_size container) {
            (void)instance; (void)model; return (hub_size){container.width, 50};
        }
        static void rec_prepare(void *instance) {
            rec *self = instance; self->state[0] = 0;
            char line[64]; snprintf(line, sizeof line, "prepare#%d", self->id); trace(line);
        }
        static void rec_configure(void *instance, const hub_model *model, hub_size container) {
            (void)container;
            rec *self = instance;
            const char *id = g_host->model_string(g_host, model, HUB_MODEL_ID);
            self->configures++;
            snprintf(self->state, sizeof self->state, "%d-%s", self->configures, id ? id : "?");
            char line[128]; snprintf(line, sizeof line, "configure#%d:%s", self->id, id ? id : "?"); trace(line);
        }
        static void rec_draw(void *instance, const hub_view_builder *view, hub_size size) {
            (void)instance;
            hub_rect_style style = {sizeof(hub_rect_style), 0xFFFFFFFFu, 0, 0, 0};
            view->rect(view, (hub_rect){0, 0, size.width, size.height}, &style);
        }
        static const char *rec_current_state(void *instance) {
            rec *self = instance; return self->state[0] ? self->state : NULL;
        }
        static void rec_restore_state(void *instance, const char *state) {
            rec *self = instance;
            char line[160]; snprintf(line, sizeof line, "restore#%d:%s", self->id, state); trace(line);
            snprintf(self->state, sizeof self->state, "%s", state);
        }
        static const hub_ui_state_ext ui_state = {sizeof(hub_ui_state_ext), rec_current_state, rec_restore_state};
        static const void *rec_extension(void *instance, const char *id) {
            (void)instance; return strcmp(id, HUB_EXT_UI_STATE) == 0 ? &ui_state : NULL;
        }
        static void rec_destroy(void *instance) {
            char line[64]; snprintf(line, sizeof line, "destroy#%d", ((rec *)instance)->id); trace(line);
            free(instance);
        }
        static const hub_component_class rec_class = {
            sizeof(hub_component_class), rec_traits, rec_load, rec_size, rec_prepare, rec_configure, rec_draw,
            rec_extension, rec_destroy,
        };

        static bool create(const hub_component_factory *factory, const char *name, hub_component *out) {
            (void)factory;
            if (strcmp(name, "row") != 0) return false;
            rec *self = calloc(1, sizeof(rec));
            self->id = g_next_id++;
            char line[64]; snprintf(line, sizeof line, "create#%d", self->id); trace(line);
            out->klass = &rec_class;
            out->instance = self;
            return true;
        }
        static const char *const names[] = {"row", NULL};
        static const char *const *component_names(const hub_component_factory *factory) { (void)factory; return names; }
        static const hub_component_factory factory = {sizeof(hub_component_factory), NULL, create, component_names, NULL};

        static bool init(const hub_host *host, char *error, size_t capacity) {
            g_host = host;
            g_trace = fopen(getenv("HUB_LIFECYCLE_TRACE"), "a");
            if (!g_trace) { snprintf(error, capacity, "cannot open the trace file"); return false; }
            return host->register_component_factory(host, "rec", &factory, error, capacity);
        }
        static void deinit(void) { if (g_trace) fclose(g_trace); g_trace = NULL; }

        static const hub_plugin_descriptor descriptor = {
            HUB_PLUGIN_MAGIC, sizeof(hub_plugin_descriptor), {HUB_ABI_MAJOR, HUB_ABI_MINOR}, "com.example.lifecycle",
            "Lifecycle recorder", "1.0.0", "Traces every lifecycle call", "hubhost tests", init, deinit,
        };
        HUB_EXPORT const hub_plugin_descriptor *hub_plugin_entry(void) { return &descriptor; }
        """#

    @Test func lifecycleOrderAcrossTheABI() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent(
            "hubhost-lifecycle-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: root) }
        let sourceFile = root.appendingPathComponent("lifecycle.c")
        let library = root.appendingPathComponent("liblifecycle.so")
        try Self.source.write(to: sourceFile, atomically: true, encoding: .utf8)
        try FixtureCompiler.compile(sourceFile, to: library)

        let traceFile = root.appendingPathComponent("trace.txt")
        setenv("HUB_LIFECYCLE_TRACE", traceFile.path, 1)
        var consumed = 0
        func newLines() -> [String] {
            let lines = ((try? String(contentsOf: traceFile, encoding: .utf8)) ?? "").split(separator: "\n").map(
                String.init)
            defer { consumed = lines.count }
            return Array(lines.dropFirst(consumed))
        }

        let host = PluginHost(cacheDirectory: root.appendingPathComponent("cache"))
        let record = host.load(file: library)
        try #require(record.isLoaded, "\(record.reason ?? "")")
        let pipeline = RenderPipeline(registry: host.registry)
        let viewport = Size(width: 320, height: 480)
        func render(_ id: String) -> RenderTree {
            pipeline.render(
                ViewModel(body: [
                    ComponentModel(
                        identifier: id, componentIdentifier: ComponentIdentifier(namespace: "rec", name: "row"))
                ]),
                viewport: viewport)
        }

        // #0 is the sizing instance: traits and sizes only, never loadView.
        let first = render("a")
        #expect(newLines() == ["create#0", "create#1", "load#1", "configure#1:a"])
        #expect(first.body[0].frame == Rect(x: 0, y: 15, width: 320, height: 50))
        #expect(first.body[0].source == .factory(namespace: "rec", owner: record.owner))

        // An equal model is not configured again.
        _ = render("a")
        #expect(newLines() == [])

        // Another model: prepare before configure; the state "1-a" is saved for a.
        _ = render("b")
        #expect(newLines() == ["prepare#1", "configure#1:b"])

        // Back to a: its saved state is restored after configure.
        _ = render("a")
        #expect(newLines() == ["prepare#1", "configure#1:a", "restore#1:1-a"])
        #expect(pipeline.pool.uiStates.restoreState(forModelIdentifier: "b") == "2-b")

        // Unloading destroys both instances; the next render falls back.
        host.unload(record)
        #expect(Set(newLines()) == ["destroy#0", "destroy#1"])
        let after = render("a")
        #expect(after.body[0].source == .fallback(category: "row"))
        #expect(newLines() == [])
    }
}
