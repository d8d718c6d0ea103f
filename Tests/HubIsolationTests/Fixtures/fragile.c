/*
 * fragile.c — the test plugin of the isolation tests: it faults only on specific data, and never while probed,
 * as a plugin under development does. -D switches pick where and how:
 *
 *   -DFAULT_IN=N      the call that faults: 1 create, 2 size, 3 configure, 4 draw, 5 action handler,
 *                     6 selection state, 7 save UI state, 8 deinit, 9 children (set delegate), 10 layout traits,
 *                     11 a thread of its own (started by configure, it faults 50 ms later, whatever the host is doing)
 *   -DFAULT_HOW=N     1 SIGSEGV (default), 2 abort(), 3 exit(3), 4 hang (sleeps forever), 5 raise(SIGSTOP),
 *                     6 a shell it starts sends its process SIGTERM (system("kill -TERM $PPID; sleep 2")),
 *                     7 it sends its whole process group SIGTERM (kill(0, SIGTERM)),
 *                     8 it overflows its stack (unbounded recursion)
 *   -DFAULT_WHEN_PROBED  faults in probe and validate children too (still only on "Trending" data)
 *   -DBAD_VALUES      hands the host NaN, infinite and absurd values (sizes, frames, font sizes, measure_text)
 *   -DBAD_TRAITS      layout_traits returns bytes that are not UTF-8 (as a freed string reads)
 *   -DRUST_PANIC      before faulting, writes what a Rust panic in an extern "C" function writes (the panic, a
 *                     backtrace of 40 frames, the second panic "in a function that cannot unwind"), as a Rust
 *                     plugin would before its abort()
 *   -DREAD_OFF_THREAD configure reads its model's title on a thread of its own (and waits for it)
 *   -DLOG_THROUGH_SERVICE  configure of "Trending" logs a warning through the hub.logger service
 *   -DCLASS_SIZE=N / -DFACTORY_SIZE=N  the component class's / factory's struct_size (a Rust or Go author's slip)
 *   -DNULL_TRAITS                     the component class leaves layout_traits NULL (the header requires it)
 *   -DPLUGIN_VERSION='"2"'
 *   -DSLOW_CONFIGURE=N  configure sleeps N microseconds (a render then spends its time inside plugin code)
 *   -DPLUGIN_NAME='"sluggish"'  the namespace, and the id's last part (default "fragile"): a second plugin
 *
 * The fault happens only for a model whose title is "Trending" (create, which has no model, faults when asked for
 * "fragile:hot"; deinit once a "Trending" model was configured), and never in a probe child (HUBHOST_PROBE_CHILD
 * is set there).
 * Components: "fragile:card" and "fragile:hot" (the same: full width, 50 high, a filled rectangle, the title and "taps:N", the number of
 * selections, kept as UI state).
 */
#include "hub_plugin.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef FAULT_IN
#define FAULT_IN 0
#endif
#ifndef FAULT_HOW
#define FAULT_HOW 1
#endif
#ifndef PLUGIN_NAME
#define PLUGIN_NAME "fragile"
#endif
#ifndef PLUGIN_VERSION
#define PLUGIN_VERSION "1.0.0"
#endif

static const hub_host *host;
static int probed;
static int seen_trending;

typedef struct card {
    const hub_model *model;
    int taps;
    char state[32];
} card;

static int is_trending(const hub_model *model) {
    const char *title = model ? host->model_string(host, model, HUB_MODEL_TITLE) : NULL;
    return title && strcmp(title, "Trending") == 0;
}

/* Faults when `where` is the call chosen, `when` holds (the data says so) and the process is not a probe. */
/* Recursion the compiler cannot turn into a loop: each frame keeps a page, and adds after the call. */
__attribute__((noinline)) static int overflow(int depth) {
    volatile char page[4096];
    page[0] = (char)depth;
    return overflow(depth + 1) + page[0];
}

static void fault_if(int where, int when) {
    if (where != FAULT_IN || probed || !when) return;
    fprintf(stderr, "fragile: about to fail in call %d\n", where);
#ifdef RUST_PANIC
    /* As rustc 1.95 writes it for a thread the host started, with RUST_BACKTRACE=1's short frames (no addresses)
       for the first panic and full ones for the second. */
    for (int panic = 0; panic < 2; panic++) {
        fprintf(stderr, "\nthread '<unnamed>' (5448) panicked at %s:\n%s\nstack backtrace:\n",
                panic ? "library/core/src/panicking.rs:221:5" : "src/lib.rs:27:26",
                panic ? "panic in a function that cannot unwind" : "fragile: deliberate panic in the call");
        for (int frame = 0; frame < 40; frame++) {
            if (panic)
                fprintf(stderr, "  %2d:     0x55e3c65af%03x - std::rt::frame_%d\n"
                                "                               at /rustc/0123/library/std/src/rt.rs:%d:5\n",
                        frame, frame, frame, frame + 100);
            else
                fprintf(stderr, "  %2d: std::rt::frame_%d\n             at ./src/rt.rs:%d:5\n", frame, frame, frame + 100);
        }
        fprintf(stderr, "note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.\n");
    }
    fprintf(stderr, "thread caused non-unwinding panic. aborting.\n");
#endif
    fflush(stderr);
    switch (FAULT_HOW) {
    case 2: abort();
    case 3: exit(3);
    case 4: for (;;) pause();
    case 5: raise(SIGSTOP); break;
    /* The shell outlives the signal: once it has exited and been reaped, nothing says it was this process's. */
    case 6: system("kill -TERM $PPID; sleep 2"); for (;;) pause();
    case 7: kill(0, SIGTERM); for (;;) pause();
    case 8: overflow(0); break;
    default: *(volatile int *)0 = 1;
    }
}

static void *fault_later(void *unused) {
    (void)unused;
    usleep(50 * 1000);
    fault_if(11, 1);
    return NULL;
}

/* Faults for a "Trending" model. */
static void fault(int where, const hub_model *model) { fault_if(where, model && is_trending(model)); }

static const char *traits(void *instance) {
    (void)instance;
    fault_if(10, seen_trending);
#ifdef BAD_TRAITS
    return "\x03\xff\xfe" "fullWidth";
#endif
    return HUB_TRAIT_FULL_WIDTH;
}

static void load_view(void *instance) { (void)instance; }

static hub_size preferred_size(void *instance, const hub_model *model, hub_size container) {
    (void)instance;
    fault(2, model);
#ifdef BAD_VALUES
    if (is_trending(model)) return (hub_size){0.0 / 0.0, 1.0 / 0.0};
#endif
    return (hub_size){container.width, 50};
}

static void prepare_for_reuse(void *instance) { ((card *)instance)->model = NULL; }

#ifdef READ_OFF_THREAD
static void *read_title(void *model) { return (void *)host->model_string(host, model, HUB_MODEL_TITLE); }
#endif

static void configure(void *instance, const hub_model *model, hub_size container) {
    (void)container;
    if (is_trending(model)) seen_trending = 1;
    fault(3, model);
    if (FAULT_IN == 11 && !probed && is_trending(model)) {
        pthread_t thread;
        pthread_create(&thread, NULL, fault_later, NULL);
        pthread_detach(thread);
    }
#ifdef SLOW_CONFIGURE
    usleep(SLOW_CONFIGURE);
#endif
#ifdef READ_OFF_THREAD
    pthread_t reader;
    if (pthread_create(&reader, NULL, read_title, (void *)model) == 0) pthread_join(reader, NULL);
#endif
#ifdef LOG_THROUGH_SERVICE
    hub_service logger;
    char error[256];
    if (is_trending(model) && host->acquire_service(host, HUB_SERVICE_LOGGER, NULL, 1, &logger, error, sizeof error)) {
        ((const hub_logger_service *)logger.table)->log(logger.context, HUB_LOG_WARNING, "fragile: through hub.logger");
        host->release_service(host, &logger);
    }
#endif
    ((card *)instance)->model = model;
}

static void draw(void *instance, const hub_view_builder *view, hub_size size) {
    card *c = instance;
    fault(4, c->model);
    const char *title = c->model ? host->model_string(host, c->model, HUB_MODEL_TITLE) : NULL;
    hub_rect_style fill = {sizeof fill, 0x3366CCFFu, 0, 0, 0};
    hub_text_style style = {sizeof style, 14, 400, 0x000000FFu, HUB_TEXT_LEFT, 1};
#ifdef BAD_VALUES
    if (is_trending(c->model)) {
        fill.stroke_width = 0.0 / 0.0;
        fill.corner_radius = 1.0 / 0.0;
        style.font_size = 1e-300;
        style.line_limit = 4000000000u;
        hub_text_style nan_style = style;
        nan_style.font_size = 0.0 / 0.0;
        host->measure_text(host, title, &nan_style, 1.0 / 0.0);
        host->measure_text(host, title, &style, 0.0 / 0.0);
        view->rect(view, (hub_rect){0.0 / 0.0, 1e300, -5, 1.0 / 0.0}, &fill);
    }
#endif
    view->rect(view, (hub_rect){0, 0, size.width, size.height}, &fill);
    char text[160];
    snprintf(text, sizeof text, "%s taps:%d", title ? title : "", c->taps);
    view->text(view, (hub_rect){8, 8, size.width - 16, size.height - 16}, text, &style);
}

static const char *current_state(void *instance) {
    card *c = instance;
    fault(7, c->model);
    if (c->taps == 0) return NULL;
    snprintf(c->state, sizeof c->state, "{\"taps\":%d}", c->taps);
    return c->state;
}

static void restore_state(void *instance, const char *state) {
    int taps = 0;
    if (state && sscanf(state, "{\"taps\":%d}", &taps) == 1) ((card *)instance)->taps = taps;
}

static void update_selection(void *instance, hub_selection_state state) {
    card *c = instance;
    fault(6, c->model);
    if (state == HUB_SELECTION_SELECTED) c->taps += 1;
}

static void set_child_delegate(void *instance, const hub_child_delegate *delegate) {
    (void)delegate;
    fault(9, ((card *)instance)->model);
}

static const hub_ui_state_ext ui_state = {sizeof ui_state, current_state, restore_state};
static const hub_selection_state_ext selection = {sizeof selection, update_selection};
static const hub_children_ext children = {sizeof children, set_child_delegate};

static const void *get_extension(void *instance, const char *id) {
    (void)instance;
    if (strcmp(id, HUB_EXT_UI_STATE) == 0) return &ui_state;
    if (strcmp(id, HUB_EXT_SELECTION_STATE) == 0) return &selection;
    if (FAULT_IN == 9 && strcmp(id, HUB_EXT_CHILDREN) == 0) return &children;
    return NULL;
}

static void destroy(void *instance) { free(instance); }

#ifndef CLASS_SIZE
#define CLASS_SIZE sizeof(hub_component_class)
#endif
#ifndef FACTORY_SIZE
#define FACTORY_SIZE sizeof(hub_component_factory)
#endif

#ifdef NULL_TRAITS
#define TRAITS_MEMBER NULL
#else
#define TRAITS_MEMBER traits
#endif
static const hub_component_class card_class = {
    CLASS_SIZE, TRAITS_MEMBER, load_view, preferred_size, prepare_for_reuse, configure, draw, get_extension, destroy,
};

static bool create_component(const hub_component_factory *factory, const char *name, hub_component *out) {
    (void)factory;
    if (strcmp(name, "hot") == 0) {
        fault_if(1, 1); /* "hot" is how a view asks create to fault */
    } else if (strcmp(name, "card") != 0) {
        return false;
    }
    out->klass = &card_class;
    out->instance = calloc(1, sizeof(card));
    return true;
}

static const char *const names[] = {"card", "hot", NULL};
static const char *const *component_names(const hub_component_factory *factory) {
    (void)factory;
    return names;
}

static const hub_component_factory factory = {FACTORY_SIZE, NULL, create_component, component_names, NULL};

static bool handle_action(const hub_action_handler *handler, const hub_action_context *context) {
    (void)handler;
    fault(5, context->component_model);
    return false;
}

static const hub_action_handler action_handler = {sizeof action_handler, NULL, handle_action};

static bool init(const hub_host *h, char *error, size_t capacity) {
    host = h;
#ifdef FAULT_WHEN_PROBED
    probed = 0;
#else
    probed = getenv("HUBHOST_PROBE_CHILD") != NULL;
#endif
    return h->register_component_factory(h, PLUGIN_NAME, &factory, error, capacity) &&
           h->register_action_handler(h, &action_handler, error, capacity);
}

static void deinit(void) {
    fault_if(8, seen_trending);
    host = NULL;
}

static const hub_plugin_descriptor descriptor = {
    HUB_PLUGIN_MAGIC, sizeof descriptor, {HUB_ABI_MAJOR, HUB_ABI_MINOR}, "com.example." PLUGIN_NAME, "Fragile (test)",
    PLUGIN_VERSION, "Isolation test plugin", "hubhost tests", init, deinit,
};

HUB_EXPORT const hub_plugin_descriptor *hub_plugin_entry(void) { return &descriptor; }
