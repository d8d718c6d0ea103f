import Foundation
import HubCore
import HubHost
import HubRender

#if canImport(Glibc)
    import Glibc
#endif

/// Stories, the gallery and snapshots (issue 12):
/// 1. `hubhost gallery` of the shipped plugins as HTML and as one PNG sheet (processes; median of 5), against
///    `hubhost list-namespaces` on the same plugins (the same start-up and load, nothing drawn).
/// 2. `hubhost snapshot record` and `verify` of 1,000 stories (a generated C plugin: 1,000 stories of one
///    component), time per image, and the peak memory of the verify process.
/// 3. In process, per story: drawing the PNG (rasterise + encode) against writing its SVG.
enum SnapshotBench {
    static func run() throws {
        guard let (hubhost, demoC) = BenchBinaries.hubhostAndDemoC(section: "snapshot") else { return }
        let demoSwift = BenchBinaries.directory.appendingPathComponent("libHubDemoSwift.so")
        guard FileManager.default.fileExists(atPath: demoSwift.path) else {
            print("snapshot: skipped: build the HubDemoSwift product in the same configuration")
            return
        }
        let shipped = [demoC, demoSwift]
        let (root, plugins) = try BenchBinaries.workFolder("snapshot")
        defer { try? FileManager.default.removeItem(at: root) }
        for file in shipped {
            try FileManager.default.copyItem(at: file, to: plugins.appendingPathComponent(file.lastPathComponent))
        }
        let common = ["--plugins", plugins.path, "--plugin-cache", root.appendingPathComponent("cache").path]

        try LoaderBench.runQuietly(hubhost, ["gallery", "-o", "/dev/null"] + common)  // warm the probe cache
        let list = try Measure.median(repetitions: 5) {
            try LoaderBench.runQuietly(hubhost, ["list-namespaces"] + common)
        }
        let html = try Measure.median(repetitions: 5) {
            try LoaderBench.runQuietly(hubhost, ["gallery", "-o", "/dev/null", "--widths", "320,375,768"] + common)
        }
        let png = try Measure.median(repetitions: 5) {
            try LoaderBench.runQuietly(
                hubhost, ["gallery", "--format", "png", "-o", "/dev/null", "--widths", "320,375,768"] + common)
        }
        print("hubhost gallery of the shipped plugins, 3 widths (median of 5 processes):")
        print(
            "  list-namespaces (baseline) \(Measure.ms(list))   HTML \(Measure.ms(html))   PNG sheet \(Measure.ms(png))"
        )
        print("  HTML/baseline \(Measure.ratio(html, list))   PNG/baseline \(Measure.ratio(png, list))")

        // 1,000 stories of one generated C component.
        let many = root.appendingPathComponent("many")
        try FileManager.default.createDirectory(
            at: many, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let source = root.appendingPathComponent("stories.c")
        try storiesPlugin.write(to: source, atomically: true, encoding: .utf8)
        try ReloadBench.runTool(
            "/usr/bin/env",
            [
                "cc", "-shared", "-fPIC", "-O2", "-I", ReloadBench.include.path, "-o",
                many.appendingPathComponent("libstories.so").path, source.path,
            ])
        let manyCommon = ["--plugins", many.path, "--plugin-cache", root.appendingPathComponent("cache2").path]
        let golden = root.appendingPathComponent("golden").path
        let recordArguments = ["snapshot", "record", "--gallery", "--out", golden] + manyCommon
        try LoaderBench.runQuietly(hubhost, recordArguments)  // probe, cache
        let record = try Measure.median(repetitions: 3) { try LoaderBench.runQuietly(hubhost, recordArguments) }
        let verifyArguments = ["snapshot", "verify", "--gallery", "--out", golden] + manyCommon
        let verify = try Measure.median(repetitions: 3) { try LoaderBench.runQuietly(hubhost, verifyArguments) }
        // Of that one process and its worker (wait4's usage of the child), not the largest child this bench ever
        // waited for: RUSAGE_CHILDREN counted an earlier section's 100k-component run as verify's 1 GiB.
        let verifyPeakKiB = try BenchProcess.peakKiB(hubhost.path, verifyArguments)
        print("hubhost snapshot of 1,000 stories at 375 (median of 3 processes):")
        print(
            "  record \(Measure.ms(record)) (\(Measure.ms(record / 1000)) per image)   "
                + "verify \(Measure.ms(verify)) (\(Measure.ms(verify / 1000)) per image)")
        print(
            "  verify peak memory "
                + (verifyPeakKiB.map { "\($0 >> 10) MiB (the largest of hubhost and its worker)" }
                    ?? "not measured (no /usr/bin/time)"))

        // In process: SVG writing against PNG drawing of the same 1,000 trees.
        let (host, cache) = try RenderBench.loadCPlugin(many.appendingPathComponent("libstories.so"))
        defer { try? FileManager.default.removeItem(at: cache) }
        let (_, shots, _) = storyTrees(host)
        var svgTime = 0.0
        var pngTime = 0.0
        for _ in 0..<3 {
            var svgs: [String] = []
            svgTime += wall { svgs = shots.map { SVGRenderer(showFrames: false).render($0) } }
            pngTime += try wall {
                for (svg, tree) in zip(svgs, shots) {
                    let canvas = tree.canvasSize
                    _ = try PNGImage.rasterize(svg: svg, width: canvas.width, height: canvas.height).pngData()
                }
            }
        }
        let count = Double(max(1, shots.count))
        print(
            "  per image, in process (\(shots.count) stories, mean of 3 passes): SVG written "
                + String(format: "%.1f µs", svgTime / 3 / count * 1e6) + ", PNG rasterised and encoded "
                + String(format: "%.1f µs", pngTime / 3 / count * 1e6)
                + "  PNG/SVG \(Measure.ratio(pngTime, svgTime))")
    }

    /// The trees of every story of the loaded plugins at 375.
    static func storyTrees(_ host: PluginHost) -> ([Showcase.Entry], [RenderTree], Int) {
        let entries = Showcase.entries(of: host)
        var trees: [RenderTree] = []
        for entry in entries {
            for story in entry.stories {
                guard let view = Showcase.view(of: story, component: entry.component) else { continue }
                let pipeline = RenderPipeline(registry: host.registry)
                trees.append(pipeline.render(view, viewport: Size(width: 375, height: 1)))
                pipeline.tearDown()
            }
        }
        return (entries, trees, trees.count)
    }

    static func wall(_ body: () throws -> Void) rethrows -> Double {
        let start = Monotonic.now()
        try body()
        return Monotonic.now() - start
    }

    /// A C plugin with one component, `stories:card`, that has 1,000 stories (a title and a colour each).
    static let storiesPlugin = #"""
        #include "hub_plugin.h"
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        static const hub_host *host;
        typedef struct card { const hub_model *model; } card;
        static const char *traits(void *i) { (void)i; return HUB_TRAIT_FULL_WIDTH; }
        static void load_view(void *i) { (void)i; }
        static hub_size size(void *i, const hub_model *m, hub_size c) { (void)i; (void)m; return (hub_size){c.width, 60}; }
        static void reuse(void *i) { ((card *)i)->model = NULL; }
        static void configure(void *i, const hub_model *m, hub_size c) { (void)c; ((card *)i)->model = m; }
        static void draw(void *i, const hub_view_builder *v, hub_size s) {
            card *c = i;
            const char *title = c->model ? host->model_string(host, c->model, HUB_MODEL_TITLE) : "";
            const char *color = c->model ? host->model_custom_string(host, c->model, "color") : NULL;
            unsigned rgb = color ? (unsigned)strtoul(color + 1, NULL, 16) : 0x3366CC;
            hub_rect_style fill = {sizeof fill, (rgb << 8) | 0xFF, 0, 0, 6};
            hub_text_style text = {sizeof text, 14, 600, 0xFFFFFFFFu, HUB_TEXT_LEFT, 1};
            v->rect(v, (hub_rect){8, 8, s.width - 16, s.height - 16}, &fill);
            v->text(v, (hub_rect){20, 20, s.width - 40, 20}, title ? title : "", &text);
        }
        static char model[200], name[40];
        static size_t story_count(void *i) { (void)i; return 1000; }
        static bool story(void *i, size_t n, hub_story *out) {
            (void)i;
            snprintf(name, sizeof name, "story %04zu", n);
            snprintf(model, sizeof model, "{\"id\":\"s%zu\",\"text\":{\"title\":\"Story %zu\"},\"custom\":{\"color\":\"#%06zX\"}}",
                     n, n, (n * 2654435761u) & 0xFFFFFF);
            out->name = name; out->model_json = model; out->widths = NULL; out->width_count = 0;
            return true;
        }
        static const hub_showcase_ext showcase = {sizeof showcase, story_count, story};
        static const void *get_extension(void *i, const char *id) { (void)i; return strcmp(id, HUB_EXT_SHOWCASE) == 0 ? &showcase : NULL; }
        static void destroy(void *i) { free(i); }
        static const hub_component_class klass = {sizeof klass, traits, load_view, size, reuse, configure, draw, get_extension, destroy};
        static bool create(const hub_component_factory *f, const char *n, hub_component *out) {
            (void)f; if (strcmp(n, "card") != 0) return false;
            out->klass = &klass; out->instance = calloc(1, sizeof(card)); return true;
        }
        static const char *const names[] = {"card", NULL};
        static const char *const *component_names(const hub_component_factory *f) { (void)f; return names; }
        static const hub_component_factory factory = {sizeof factory, NULL, create, component_names, NULL};
        static bool init(const hub_host *h, char *e, size_t n) { host = h; return h->register_component_factory(h, "stories", &factory, e, n); }
        static void deinit(void) { host = NULL; }
        static const hub_plugin_descriptor d = {HUB_PLUGIN_MAGIC, sizeof d, {HUB_ABI_MAJOR, HUB_ABI_MINOR}, "bench.stories", "Stories", "1", "", "", init, deinit};
        HUB_EXPORT const hub_plugin_descriptor *hub_plugin_entry(void) { return &d; }
        """#
}
