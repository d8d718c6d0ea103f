/*
 * A test plugin, compiled by the tests with -D options into many variants:
 *   FIXTURE_ID, FIXTURE_VERSION, FIXTURE_NAMESPACE   strings (defaults below)
 *   FIXTURE_MAGIC, FIXTURE_ABI_MAJOR, FIXTURE_ABI_MINOR   to build broken descriptors
 *   FIXTURE_FAIL_INIT "message"   init registers its namespace, then fails with the message
 *   FIXTURE_NO_ENTRY   exports no hub_plugin_entry at all
 *   FIXTURE_CRASH_INIT_IF "path"   init crashes (SIGSEGV) when that file exists
 *   FIXTURE_HANG_INIT_IF "path"    init never returns when that file exists
 *   FIXTURE_EXIT_INIT_IF "path"    init calls exit(0) when that file exists
 *   FIXTURE_CRASH_AT_EXIT_IF "path"  init registers an atexit handler that crashes, when that file exists
 *   FIXTURE_EXIT_INIT   init ends the process with exit(0)
 *   FIXTURE_TERM_GROUP_INIT   init sends its whole process group SIGTERM (kill(0, SIGTERM))
 *   FIXTURE_CRASH_ENTRY   hub_plugin_entry crashes (SIGSEGV)
 *   FIXTURE_CRASH_CONSTRUCTOR   a constructor of the image crashes (SIGSEGV) as it is loaded
 *   FIXTURE_UNREGISTER_IN_DRAW  draw unregisters its own namespace (and counts instances destroyed meanwhile)
 *   FIXTURE_TRUSTS_CHILD_DELEGATE  box's configure creates every child through its delegate, never checking NULL
 *   FIXTURE_UNIQUE_SYMBOL  exports a GNU unique data symbol (what C++ inline statics are with GCC's defaults)
 * It registers a component factory (components "label" and "box", "box" has children and performs actions), a
 * layout manager, an action factory and an action handler, all keyed by its namespace so variants can coexist,
 * and exports `fixture_stats` so tests can see what the host called.
 */
#include <hub_plugin.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef FIXTURE_ID
#define FIXTURE_ID "com.example.fixture"
#endif
#ifndef FIXTURE_VERSION
#define FIXTURE_VERSION "1.0.0"
#endif
#ifndef FIXTURE_NAMESPACE
#define FIXTURE_NAMESPACE "fixture"
#endif
#ifndef FIXTURE_MAGIC
#define FIXTURE_MAGIC HUB_PLUGIN_MAGIC
#endif
#ifndef FIXTURE_ABI_MAJOR
#define FIXTURE_ABI_MAJOR HUB_ABI_MAJOR
#endif
#ifndef FIXTURE_ABI_MINOR
#define FIXTURE_ABI_MINOR HUB_ABI_MINOR
#endif

/* What the host did to us, for the tests. */
typedef struct fixture_stats_t {
    int created, destroyed, configured, factory_destroyed, action_factory_destroyed, deinit_called, timer_fired;
    int destroyed_in_draw; /* FIXTURE_UNREGISTER_IN_DRAW: instances destroyed while draw was still running */
} fixture_stats_t;
static fixture_stats_t stats;
__attribute__((visibility("default"))) fixture_stats_t *fixture_stats(void) { return &stats; }

static const hub_host *host;

#ifdef FIXTURE_UNIQUE_SYMBOL
__attribute__((visibility("default"), used)) int fixture_shared_counter = 1;
__asm__(".type fixture_shared_counter, @gnu_unique_object");
#endif

/* ----- components ----- */

typedef struct instance {
    const char *name;
    const hub_model *model;
    const hub_child_delegate *children;
    const hub_action_performer *performer;
    hub_selection_state selection;
} instance;

static const char *traits(void *self) { return strcmp(((instance *)self)->name, "box") == 0 ? "fullWidth" : "compactWidth,stackable"; }
static void load_view(void *self) { (void)self; }
static hub_size preferred(void *self, const hub_model *model, hub_size container) {
    (void)self;
    double extra = 0;
    host->model_custom_number(host, model, "extra", &extra);
    return (hub_size){container.width / 2, 40 + extra};
}
static void prepare(void *self) { ((instance *)self)->model = NULL; }
static void configure(void *self, const hub_model *model, hub_size container) {
    (void)container;
    ((instance *)self)->model = model;
    stats.configured++;
#ifdef FIXTURE_TRUSTS_CHILD_DELEGATE
    /* The header gives the delegate right after creation: a configure may use it without a NULL check. */
    instance *me = self;
    if (strcmp(me->name, "box") == 0)
        for (size_t i = 0; i < host->model_child_count(host, model); i++) me->children->create_child(me->children, i);
#endif
}
static void draw(void *self, const hub_view_builder *view, hub_size size) {
    instance *me = self;
    hub_rect_style fill = {sizeof fill, 0x112233FF, 0, 0, 4};
    view->rect(view, (hub_rect){0, 0, size.width, size.height}, &fill);
    const char *title = me->model ? host->model_string(host, me->model, HUB_MODEL_TITLE) : NULL;
    char text[256];
    snprintf(text, sizeof text, "%s:%s %s sel=%d", FIXTURE_NAMESPACE, me->name, title ? title : "(none)", (int)me->selection);
    hub_text_style style = {sizeof style, 12, 400, 0x000000FF, HUB_TEXT_LEFT, 1};
    view->text(view, (hub_rect){4, 4, size.width - 8, 16}, text, &style);
    const char *custom = me->model ? host->model_json(host, me->model, HUB_MODEL_CUSTOM) : NULL;
    if (custom) view->text(view, (hub_rect){4, 20, size.width - 8, 16}, custom, &style);
    if (me->children && me->model && host->model_child_count(host, me->model) > 0) {
        hub_size child = me->children->create_child(me->children, 0);
        view->child(view, (hub_rect){0, 40, child.width, child.height}, 0);
    }
#ifdef FIXTURE_UNREGISTER_IN_DRAW
    /* Its own namespace unregistered from inside its own draw: the header allows it. */
    int before = stats.destroyed;
    host->unregister_component_factory(host, FIXTURE_NAMESPACE);
    stats.destroyed_in_draw = stats.destroyed - before;
#endif
}
static void destroy_instance(void *self) { free(self); stats.destroyed++; }

static void set_child_delegate(void *self, const hub_child_delegate *delegate) { ((instance *)self)->children = delegate; }
static const hub_children_ext children_ext = {sizeof children_ext, set_child_delegate};
static void set_performer(void *self, const hub_action_performer *performer) { ((instance *)self)->performer = performer; }
static const hub_action_performer_ext performer_ext = {sizeof performer_ext, set_performer};
static void update_selection(void *self, hub_selection_state state) { ((instance *)self)->selection = state; }
static const hub_selection_state_ext selection_ext = {sizeof selection_ext, update_selection};

static const void *get_extension(void *self, const char *id) {
    if (strcmp(id, HUB_EXT_SELECTION_STATE) == 0) return &selection_ext;
    if (strcmp(((instance *)self)->name, "box") != 0) return NULL;
    if (strcmp(id, HUB_EXT_CHILDREN) == 0) return &children_ext;
    if (strcmp(id, HUB_EXT_ACTION_PERFORMER) == 0) return &performer_ext;
    return NULL;
}

static const hub_component_class component_class = {
    sizeof component_class, traits, load_view, preferred, prepare, configure, draw, get_extension, destroy_instance,
};

static bool create_component(const hub_component_factory *factory, const char *name, hub_component *out) {
    (void)factory;
    const char *known = strcmp(name, "label") == 0 ? "label" : strcmp(name, "box") == 0 ? "box" : NULL;
    if (!known) return false;
    instance *me = calloc(1, sizeof *me);
    me->name = known;
    out->klass = &component_class;
    out->instance = me;
    stats.created++;
    return true;
}
static const char *const names[] = {"box", "label", NULL};
static const char *const *component_names(const hub_component_factory *factory) { (void)factory; return names; }
static void destroy_factory(const hub_component_factory *factory) { (void)factory; stats.factory_destroyed++; }
static const hub_component_factory factory = {sizeof factory, NULL, create_component, component_names, destroy_factory};

/* ----- layout manager: every margin is 7 ----- */

static double margin_edge(const hub_layout_manager *m, hub_traits t, hub_content_edge e) { (void)m; (void)t; (void)e; return 7; }
static double margin_header(const hub_layout_manager *m, hub_traits t, hub_traits h) { (void)m; (void)t; (void)h; return 7; }
static double margin_pair(const hub_layout_manager *m, hub_traits t, hub_traits p) {
    (void)m; (void)p;
    return t.count; /* how many traits the host passed, so tests can see them cross */
}
static double offset_row(const hub_layout_manager *m, const hub_traits *row, size_t n, double l, double r) {
    (void)m; (void)row; (void)l; (void)r; return (double)n;
}
static const hub_layout_manager layout_manager = {sizeof layout_manager, NULL, margin_edge, margin_header, margin_pair,
                                                  margin_pair, offset_row};

/* ----- actions ----- */

static void timer_fired(void *data) { (void)data; stats.timer_fired++; }
static hub_action_result perform(void *self, const hub_action_context *context, const hub_action_completion *completion) {
    (void)self;
    if (context->custom_json && strstr(context->custom_json, "async")) {
        host->schedule(host, 1.0, timer_fired, NULL);
        completion->finish(completion, NULL, NULL);
        return HUB_ACTION_PENDING;
    }
    return HUB_ACTION_PERFORMED;
}
static void destroy_action(void *self) { (void)self; }
static const hub_action_class action_class = {sizeof action_class, perform, destroy_action};
static bool create_action(const hub_action_factory *f, const char *name, hub_action *out) {
    (void)f;
    if (strcmp(name, "go") != 0) return false;
    out->klass = &action_class;
    out->instance = NULL;
    return true;
}
static void destroy_action_factory(const hub_action_factory *f) { (void)f; stats.action_factory_destroyed++; }
static const hub_action_factory action_factory = {sizeof action_factory, NULL, create_action, destroy_action_factory};
static bool handle(const hub_action_handler *h, const hub_action_context *c) {
    (void)h;
    return c->action_id && strcmp(c->action_id, FIXTURE_NAMESPACE ":handled") == 0;
}
static const hub_action_handler handler = {sizeof handler, NULL, handle};

/* ----- plugin ----- */

#ifdef FIXTURE_CRASH_AT_EXIT_IF
static void crash_at_exit(void) { *(volatile int *)0 = 1; }
#endif

static bool init(const hub_host *h, char *error, size_t capacity) {
    host = h;
    memset(&stats, 0, sizeof stats);
    if (!h->register_component_factory(h, FIXTURE_NAMESPACE, &factory, error, capacity)) return false;
#ifdef FIXTURE_CRASH_INIT_IF
    /* A plugin whose init reads a file the probe never saw (a config file): it crashes only once that exists. */
    if (access(FIXTURE_CRASH_INIT_IF, F_OK) == 0) *(volatile int *)0 = 1;
#endif
#ifdef FIXTURE_HANG_INIT_IF
    while (access(FIXTURE_HANG_INIT_IF, F_OK) == 0) sleep(1);
#endif
#ifdef FIXTURE_EXIT_INIT_IF
    if (access(FIXTURE_EXIT_INIT_IF, F_OK) == 0) exit(0);
#endif
#ifdef FIXTURE_CRASH_AT_EXIT_IF
    if (access(FIXTURE_CRASH_AT_EXIT_IF, F_OK) == 0) atexit(crash_at_exit);
#endif
#ifdef FIXTURE_EXIT_INIT
    exit(0);
#endif
#ifdef FIXTURE_TERM_GROUP_INIT
    kill(0, SIGTERM);
    sleep(5);
#endif
#ifdef FIXTURE_FAIL_INIT
    snprintf(error, capacity, "%s", FIXTURE_FAIL_INIT);
    return false;
#endif
    if (!h->register_layout_manager(h, FIXTURE_NAMESPACE, &layout_manager, error, capacity)) return false;
    if (!h->register_action_factory(h, FIXTURE_NAMESPACE, &action_factory, error, capacity)) return false;
    if (!h->register_action_handler(h, &handler, error, capacity)) return false;
    h->log(h, HUB_LOG_DEBUG, "fixture initialised");
    return true;
}
static void deinit(void) { stats.deinit_called++; }

static const hub_plugin_descriptor descriptor = {
    FIXTURE_MAGIC, sizeof descriptor, {FIXTURE_ABI_MAJOR, FIXTURE_ABI_MINOR}, FIXTURE_ID, "Fixture", FIXTURE_VERSION,
    "A test plugin", "hubhost tests", init, deinit,
};

#ifndef FIXTURE_NO_ENTRY
HUB_EXPORT const hub_plugin_descriptor *hub_plugin_entry(void) {
#ifdef FIXTURE_CRASH_ENTRY
    *(volatile int *)0 = 1;
#endif
    return &descriptor;
}
#ifdef FIXTURE_CRASH_CONSTRUCTOR
__attribute__((constructor)) static void crash_on_load(void) { *(volatile int *)0 = 1; }
#endif
#else
HUB_EXPORT const hub_plugin_descriptor *some_other_entry(void) { return &descriptor; }
#endif
