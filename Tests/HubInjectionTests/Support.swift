import Foundation
import HubTestKit
import Testing

/// Compiles the C test plugins below at test time (`cc -shared -fPIC -I Sources/CHubPlugin/include`, without the
/// version script, so their extra exports are visible to dlsym and module files) into a fresh temporary folder.
struct CPlugins {
    static let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let includeDir = packageRoot.appendingPathComponent("Sources/CHubPlugin/include")

    let root: URL
    var plugins: URL { root.appendingPathComponent("plugins") }
    var cache: URL { root.appendingPathComponent("cache") }

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("hubhost-injection-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("plugins"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("src"), withIntermediateDirectories: true)
    }

    func cleanUp() { try? FileManager.default.removeItem(at: root) }

    /// Compiles `source` with `defines` into `plugins/<name>` (written elsewhere, then renamed in, as builds do).
    @discardableResult
    func compile(_ source: String, as name: String, defines: [String: String] = [:], into folder: URL? = nil) throws
        -> URL
    {
        let sourceFile = root.appendingPathComponent("src/\(UUID().uuidString).c")
        try source.write(to: sourceFile, atomically: true, encoding: .utf8)
        let temporary = root.appendingPathComponent("src/\(UUID().uuidString).so")
        let flags = defines.sorted { $0.key < $1.key }.map { "-D\($0.key)=\($0.value)" }
        try Self.run(
            ["cc", "-shared", "-fPIC", "-I", Self.includeDir.path] + flags + [sourceFile.path, "-o", temporary.path])
        let output = (folder ?? plugins).appendingPathComponent(name)
        if FileManager.default.fileExists(atPath: output.path) { try FileManager.default.removeItem(at: output) }
        try FileManager.default.moveItem(at: temporary, to: output)
        return output
    }

    static func run(_ arguments: [String]) throws {
        let result = try ProcessRunner.run(URL(fileURLWithPath: "/usr/bin/env"), arguments)
        guard result.status == 0 else {
            throw CompileError(message: "\(arguments.joined(separator: " ")) failed: \(result.stderr)")
        }
    }

    struct CompileError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// A C string literal for -D.
    static func quoted(_ text: String) -> String { "\"\(text)\"" }
}

/// Plugin A: provides the greeter service (interface "com.test.greeter", version GREETER_VERSION) and exports
/// functions that module files bind to (mixed argument types).
let providerSource = #"""
    #include <hub_plugin.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>

    #ifndef GREETING
    #define GREETING "Hello"
    #endif
    #ifndef GREETER_VERSION
    #define GREETER_VERSION 2
    #endif
    #ifndef PLUGIN_ID
    #define PLUGIN_ID "com.test.provider"
    #endif

    typedef struct greeter_table {
        uint32_t struct_size;
        const char *(*greet)(void *context, const char *who);
    } greeter_table;

    typedef struct greeter_state { int retains; int releases; char buffer[256]; } greeter_state;
    static greeter_state state;

    static const char *greet(void *context, const char *who) {
        greeter_state *s = context;
    #ifdef GREET_CRASHES_FOR
        if (who && strcmp(who, GREET_CRASHES_FOR) == 0) *(volatile int *)0 = 1;  /* a bug in the service */
    #endif
        snprintf(s->buffer, sizeof s->buffer, "%s, %s", GREETING, who ? who : "?");
        return s->buffer;
    }
    static void retain_context(void *context) { ((greeter_state *)context)->retains++; }
    static void release_context(void *context) { ((greeter_state *)context)->releases++; }
    static const greeter_table table = { sizeof(greeter_table), greet };

    HUB_EXPORT int provider_retains(void) { return state.retains; }
    HUB_EXPORT int provider_releases(void) { return state.releases; }

    #ifdef BIND_KEY
    /* -DBIND_KEY='"k"': binds k with hub_host.bind to a provider answering GREETING. */
    static bool provide_greeting(void *user_data, const char *arguments_json, struct hub_value *out, char *error,
                                 size_t capacity) {
    #ifdef ECHO_ARGUMENTS
        /* Legal: the arguments are borrowed until return, and the host copies a string result at once. */
        out->type = HUB_VALUE_STRING;
        out->s = arguments_json;
        return true;
    #endif
    #ifdef FAIL_UNTERMINATED
        /* A slip: the whole error buffer filled, with no NUL. */
        memset(error, 'Q', capacity);
        return false;
    #endif
        out->type = HUB_VALUE_STRING;
        out->s = GREETING;
        return true;
    }
    #endif

    #ifdef REGISTER_IN_DEINIT
    /* A slip: registering as it unloads (the registration would outlive its code). */
    static const hub_host *saved_host;
    static void deinit(void) {
        hub_service late = { sizeof(hub_service), "com.test.late", 1, NULL, &table, &state, NULL, NULL };
        char error[256];
        saved_host->register_service(saved_host, &late, error, sizeof error);
    }
    #else
    #define deinit NULL
    #endif

    static bool init(const hub_host *host, char *error, size_t capacity) {
    #ifdef REGISTER_IN_DEINIT
        saved_host = host;
    #endif
        hub_service service = { sizeof(hub_service), "com.test.greeter", GREETER_VERSION, NULL, &table, &state,
                                retain_context, release_context };
        bool registered = host->register_service(host, &service, error, capacity);
    #ifdef REGISTER_TWICE
        /* The same service again in init: the header promises false (another provider holds it). */
        if (registered && host->register_service(host, &service, error, capacity)) {
            snprintf(error, capacity, "the second registration of com.test.greeter returned true");
            return false;
        }
    #endif
    #ifdef BIND_KEY
        if (registered && !host->bind(host, BIND_KEY, NULL, provide_greeting, NULL, false, error, capacity))
            return false;
    #ifdef BIND_TWICE
        /* A slip: the same key again, whose refusal init passes on. */
        if (!host->bind(host, BIND_KEY, NULL, provide_greeting, NULL, false, error, capacity)) return false;
    #endif
    #endif
    #ifdef FAIL_AFTER_REGISTER
        snprintf(error, capacity, "init fails after registering (FAIL_AFTER_REGISTER)");
        return false;
    #endif
        return registered;
    }

    static const hub_plugin_descriptor descriptor = {
        HUB_PLUGIN_MAGIC, sizeof(hub_plugin_descriptor), {HUB_ABI_MAJOR, HUB_ABI_MINOR},
        PLUGIN_ID, "Greeter provider", "1.0.0", "provides com.test.greeter", "tests", init, deinit };
    HUB_EXPORT const hub_plugin_descriptor *hub_plugin_entry(void) { return &descriptor; }

    /* --- functions module files bind (the C form of `initializer "initWithNibName:bundle:", "Home"`) --- */
    typedef struct controller {
        char name[64]; char bundle[64]; int32_t count; double scale; uint8_t flags; int64_t big; float ratio;
    } controller;

    HUB_EXPORT void *make_controller(const char *name, const char *bundle, int32_t count, double scale, uint8_t flags,
                                     int64_t big, float ratio) {
        controller *c = calloc(1, sizeof *c);
        snprintf(c->name, sizeof c->name, "%s", name ? name : "(null)");
        snprintf(c->bundle, sizeof c->bundle, "%s", bundle ? bundle : "(null)");
        c->count = count; c->scale = scale; c->flags = flags; c->big = big; c->ratio = ratio;
        return c;
    }
    HUB_EXPORT const char *controller_name(void *c) { return ((controller *)c)->name; }
    HUB_EXPORT const char *controller_bundle(void *c) { return ((controller *)c)->bundle; }
    HUB_EXPORT int32_t controller_count(void *c) { return ((controller *)c)->count; }
    HUB_EXPORT double controller_scale(void *c) { return ((controller *)c)->scale; }
    HUB_EXPORT uint8_t controller_flags(void *c) { return ((controller *)c)->flags; }
    HUB_EXPORT int64_t controller_big(void *c) { return ((controller *)c)->big; }
    HUB_EXPORT float controller_ratio(void *c) { return ((controller *)c)->ratio; }
    HUB_EXPORT void free_controller(void *c) { free(c); }
    static int awakenings;
    HUB_EXPORT void awake_controller(void *c) { (void)c; awakenings++; }
    HUB_EXPORT int32_t awakened(void) { return awakenings; }

    HUB_EXPORT int8_t negate_i8(int8_t v) { return (int8_t)-v; }
    HUB_EXPORT uint8_t add_u8(uint8_t a, uint8_t b) { return (uint8_t)(a + b); }
    HUB_EXPORT int16_t negate_i16(int16_t v) { return (int16_t)-v; }
    HUB_EXPORT uint16_t add_u16(uint16_t a, uint16_t b) { return (uint16_t)(a + b); }
    HUB_EXPORT int32_t negate_i32(int32_t v) { return -v; }
    HUB_EXPORT uint32_t add_u32(uint32_t a, uint32_t b) { return a + b; }
    HUB_EXPORT int64_t negate_i64(int64_t v) { return -v; }
    HUB_EXPORT uint64_t add_u64(uint64_t a, uint64_t b) { return a + b; }
    HUB_EXPORT float half_f32(float v) { return v / 2; }
    HUB_EXPORT double mix(int8_t a, uint16_t b, int32_t c, uint64_t d, float e, double f) {
        return (double)a + (double)b + (double)c + (double)d + (double)e + f;
    }
    HUB_EXPORT size_t length_of(const char *s) { return s ? strlen(s) : (size_t)-1; }
    HUB_EXPORT const char *echo(const char *s) { return s; }
    HUB_EXPORT void nothing(void) {}
    """#

/// Plugin B: a component ("consumer:greeting") that uses the greeter service when it is configured, and falls
/// back to a visible message when there is none; it observes service changes.
let consumerSource = #"""
    #include <hub_plugin.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>

    typedef struct greeter_table {
        uint32_t struct_size;
        const char *(*greet)(void *context, const char *who);
    } greeter_table;

    static const hub_host *host_table;
    static int changes, last_available = -1;
    static char last_interface[128];
    static hub_service held;

    static void on_change(void *user_data, const char *interface_id, bool available) {
        changes++;
        last_available = available;
        snprintf(last_interface, sizeof last_interface, "%s", interface_id);
    }
    HUB_EXPORT int consumer_changes(void) { return changes; }
    HUB_EXPORT int consumer_last_available(void) { return last_available; }
    HUB_EXPORT const char *consumer_last_interface(void) { return last_interface; }
    /* Acquires the greeter and keeps it (a consumer that does not let go). */
    HUB_EXPORT int consumer_hold(void) {
        char error[256];
        return host_table->acquire_service(host_table, "com.test.greeter", NULL, 1, &held, error, sizeof error);
    }
    HUB_EXPORT void consumer_let_go(void) { host_table->release_service(host_table, &held); }

    typedef struct instance { char text[256]; } instance;

    static const char *traits(void *i) { return ""; }
    static void load_view(void *i) {}
    static hub_size preferred(void *i, const hub_model *m, hub_size c) { hub_size s = { c.width, 40 }; return s; }
    static void reuse(void *i) {}
    static void configure(void *i, const hub_model *model, hub_size container) {
        instance *self = i;
        const char *who = host_table->model_string(host_table, model, HUB_MODEL_TITLE);
        hub_service service;
        char error[256];
        if (host_table->acquire_service(host_table, "com.test.greeter", NULL, 2, &service, error, sizeof error)) {
            const greeter_table *table = service.table;
            snprintf(self->text, sizeof self->text, "%s", table->greet(service.context, who));
            host_table->release_service(host_table, &service);
        } else {
            snprintf(self->text, sizeof self->text, "fallback: %s", error);
        }
    }
    static void draw(void *i, const hub_view_builder *view, hub_size size) {
        hub_rect frame = { 0, 0, size.width, size.height };
        hub_text_style style = { sizeof(hub_text_style), 14, 400, 0x000000FF, HUB_TEXT_LEFT, 1 };
        view->text(view, frame, ((instance *)i)->text, &style);
    }
    static void destroy(void *i) { free(i); }
    static const hub_component_class klass = {
        sizeof(hub_component_class), traits, load_view, preferred, reuse, configure, draw, NULL, destroy };

    static bool create(const hub_component_factory *f, const char *name, hub_component *out) {
        if (strcmp(name, "greeting") != 0) return false;
        out->klass = &klass;
        out->instance = calloc(1, sizeof(instance));
        return true;
    }
    static const char *names[] = { "greeting", NULL };
    static const char *const *component_names(const hub_component_factory *f) { return names; }
    static const hub_component_factory factory = { sizeof(hub_component_factory), NULL, create, component_names, NULL };

    static bool init(const hub_host *host, char *error, size_t capacity) {
        host_table = host;
        host->set_service_observer(host, on_change, NULL);
    #ifdef HOLD_IN_INIT
        consumer_hold();  /* a consumer that acquires at load and never lets go */
    #endif
        return host->register_component_factory(host, "consumer", &factory, error, capacity);
    }
    static const hub_plugin_descriptor descriptor = {
        HUB_PLUGIN_MAGIC, sizeof(hub_plugin_descriptor), {HUB_ABI_MAJOR, HUB_ABI_MINOR},
        "com.test.consumer", "Greeter consumer", "1.0.0", "uses com.test.greeter", "tests", init, NULL };
    HUB_EXPORT const hub_plugin_descriptor *hub_plugin_entry(void) { return &descriptor; }
    """#

/// Plugin C: shadows the host's URI opener (HUB_SERVICE_URI_OPENER) and counts what it opened.
let uriOpenerSource = #"""
    #include <hub_plugin.h>
    #include <string.h>

    static int opened;
    static bool open_uri(void *context, const char *uri) { opened++; return strncmp(uri, "test:", 5) == 0; }
    static const hub_uri_opener_service table = { sizeof(hub_uri_opener_service), open_uri };
    HUB_EXPORT int opener_count(void) { return opened; }

    static bool init(const hub_host *host, char *error, size_t capacity) {
        hub_service service = { sizeof(hub_service), HUB_SERVICE_URI_OPENER, 1, NULL, &table, NULL, NULL, NULL };
        return host->register_service(host, &service, error, capacity);
    }
    static const hub_plugin_descriptor descriptor = {
        HUB_PLUGIN_MAGIC, sizeof(hub_plugin_descriptor), {HUB_ABI_MAJOR, HUB_ABI_MINOR},
        "com.test.opener", "URI opener", "1.0.0", "opens test: URIs", "tests", init, NULL };
    HUB_EXPORT const hub_plugin_descriptor *hub_plugin_entry(void) { return &descriptor; }
    """#

/// Plugin D: registers malformed services; each `MODE` exercises one refusal, and `init` reports what the
/// host wrote into the error buffer through `bad_last_error`.
let badServiceSource = #"""
    #include <hub_plugin.h>
    #include <stdio.h>
    #include <string.h>

    static char last_error[512];
    static int dummy_table;
    HUB_EXPORT const char *bad_last_error(void) { return last_error; }

    static bool init(const hub_host *host, char *error, size_t capacity) {
        hub_service service = { sizeof(hub_service), "com.test.bad", 1, NULL, &dummy_table, NULL, NULL, NULL };
    #if MODE == 1
        service.interface_id = "";
    #elif MODE == 2
        service.table = NULL;
    #elif MODE == 3
        service.struct_size = 8;
    #endif
        bool ok = MODE == 4 ? host->register_service(host, NULL, last_error, sizeof last_error)
                            : host->register_service(host, &service, last_error, sizeof last_error);
        hub_service out;
        char lookup[256] = "";
        host->acquire_service(host, "com.test.nothing", "named", 1, &out, lookup, sizeof lookup);
        snprintf(last_error + strlen(last_error), sizeof last_error - strlen(last_error), " | %s", lookup);
        return true;
    }
    static const hub_plugin_descriptor descriptor = {
        HUB_PLUGIN_MAGIC, sizeof(hub_plugin_descriptor), {HUB_ABI_MAJOR, HUB_ABI_MINOR},
        "com.test.bad", "Bad services", "1.0.0", "", "tests", init, NULL };
    HUB_EXPORT const hub_plugin_descriptor *hub_plugin_entry(void) { return &descriptor; }
    """#
