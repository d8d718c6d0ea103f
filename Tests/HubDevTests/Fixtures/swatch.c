/*
 * swatch.c — the test plugin of the dev-loop tests. One source, many builds: -D switches pick the visible
 * change (the colour) and the way a build is broken, so a test can "rebuild the plugin" by recompiling it.
 *
 *   -DSWATCH_COLOR=0x00FF00FFu   the fill of every swatch (the visible change between builds)
 *   -DPLUGIN_VERSION='"2"'       the version the host reports
 *   -DPLUGIN_ID='"x"' -DNAMESPACE='"x"'  identity, so several copies can be loaded side by side
 *   -DCRASH_IN_INIT              segfaults in init
 *   -DSTDERR_BEFORE_CRASH        with CRASH_IN_INIT: says so on stderr first
 *   -DHANG_IN_INIT               never returns from init
 *   -DFAIL_IN_INIT               init returns false with a message
 *   -DCRASH_IN_CONFIGURE         segfaults in configure_view
 *   -DCRASH_ON_TRENDING          segfaults in draw for a model titled "Trending", except in a probe child
 *   -DINFINITE_SIZE              preferred_view_size returns an infinite height
 *   -DLOSE_UI_STATE              restore_ui_state ignores what it is given
 *   -DINCOMPLETE_EXTENSION       the UI-state table has a NULL function
 *   -DMAKE_CRASHES               swatch_make (a function a module file can bind) segfaults
 *   -DPROVIDES_WORD='"v1"'       registers the service "test.word", whose word() returns that text
 *   -DUSES_WORD                  configure acquires "test.word" and keeps its word (or "none"); draw shows it
 *   -DTHREAD_OUTLIVES_UNLOAD     init starts a thread (not in a probe) that is never stopped
 *   -DHANG_IN_DESTRUCTOR         a static destructor (run by dlclose) never returns, outside a probe child
 *   -DREGISTERS_NOTHING          init returns true without registering anything (a forgotten call)
 *   -DINJECTS_THING              configure injects "swatch.thing" (a module file binds it); draw shows
 *                                "word:made" or "word:not made"
 *
 * Components: "swatch" (full width; a coloured rectangle with the model's title and a tap counter kept as UI
 * state; a selection counts as a tap) and "label" (compact width; the title as text).
 */
#include "hub_plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef SWATCH_COLOR
#define SWATCH_COLOR 0xFF0000FFu
#endif
#ifndef PLUGIN_VERSION
#define PLUGIN_VERSION "1"
#endif
#ifndef PLUGIN_ID
#define PLUGIN_ID "test.dev.swatch"
#endif
#ifndef NAMESPACE
#define NAMESPACE "swatch"
#endif

static const hub_host *host;

typedef struct swatch {
    int is_label;
    int taps;
    const hub_model *model;
    char state[64];
    char word[32];
} swatch;

typedef struct word_table {
    uint32_t struct_size;
    const char *(*word)(void *context);
} word_table;

static const char *traits(void *instance) {
    return ((swatch *)instance)->is_label ? HUB_TRAIT_COMPACT_WIDTH : HUB_TRAIT_FULL_WIDTH;
}

static void load_view(void *instance) { (void)instance; }

static hub_size preferred_size(void *instance, const hub_model *model, hub_size container) {
    (void)model;
#ifdef INFINITE_SIZE
    (void)instance;
    return (hub_size){container.width, 1.0 / 0.0};
#else
    return ((swatch *)instance)->is_label ? (hub_size){120, 40} : (hub_size){container.width, 60};
#endif
}

static void prepare_for_reuse(void *instance) {
    swatch *s = instance;
    s->taps = 0;
    s->model = NULL;
}

static void configure(void *instance, const hub_model *model, hub_size container) {
    (void)container;
#ifdef CRASH_IN_CONFIGURE
    *(volatile int *)0 = 1; /* a real fault: raise() would return after a handler ran */
#endif
    ((swatch *)instance)->model = model;
#ifdef USES_WORD
    /* A consumer as docs/services.md shows it: it acquires the service when it is configured. */
    swatch *s = instance;
    hub_service service;
    char error[128];
    snprintf(s->word, sizeof s->word, "none");
    if (host->acquire_service(host, "test.word", NULL, 1, &service, error, sizeof error)) {
        snprintf(s->word, sizeof s->word, "%s", ((const word_table *)service.table)->word(service.context));
        host->release_service(host, &service);
    }
#endif
#ifdef INJECTS_THING
    hub_value made = {sizeof made};
    char why[256];
    bool injected = host->inject(host, "swatch.thing", NULL, NULL, &made, why, sizeof why);
    snprintf(((swatch *)instance)->word, sizeof ((swatch *)instance)->word, "%s", injected ? "made" : "not made");
#endif
}

static void draw(void *instance, const hub_view_builder *view, hub_size size) {
    swatch *s = instance;
    const char *title = s->model ? host->model_string(host, s->model, HUB_MODEL_TITLE) : NULL;
#ifdef CRASH_ON_TRENDING
    if (title && strcmp(title, "Trending") == 0 && !getenv("HUBHOST_PROBE_CHILD")) *(volatile int *)0 = 1;
#endif
    char text[160];
    snprintf(text, sizeof text, "%s taps:%d%s%s", title ? title : "", s->taps, s->word[0] ? " word:" : "", s->word);
    hub_text_style style = {sizeof style, 14, 400, 0x000000FFu, HUB_TEXT_LEFT, 1};
    if (!s->is_label) {
        hub_rect_style fill = {sizeof fill, SWATCH_COLOR, 0, 0, 4};
        view->rect(view, (hub_rect){0, 0, size.width, size.height}, &fill);
    }
    view->text(view, (hub_rect){8, 8, size.width - 16, size.height - 16}, text, &style);
#ifdef STORY_IMAGE
    const char *uri = s->model ? host->model_image_uri(host, s->model, HUB_IMAGE_MAIN, NULL) : NULL;
    if (uri) view->image(view, (hub_rect){0, 0, 20, 20}, uri, HUB_CONTENT_SCALE_TO_FILL, 0x808080FFu);
#endif
}

static const char *current_state(void *instance) {
    swatch *s = instance;
    if (s->taps == 0) return NULL;
    snprintf(s->state, sizeof s->state, "{\"taps\":%d}", s->taps);
    return s->state;
}

static void restore_state(void *instance, const char *state) {
#ifdef LOSE_UI_STATE
    (void)instance; (void)state;
#else
    int taps = 0;
    if (state && sscanf(state, "{\"taps\":%d}", &taps) == 1) ((swatch *)instance)->taps = taps;
#endif
}

static void update_selection(void *instance, hub_selection_state state) {
#ifdef CRASH_WHEN_SELECTED
    if (state == HUB_SELECTION_SELECTED && !getenv("HUBHOST_PROBE_CHILD")) *(volatile int *)0 = 1;
#endif
    if (state == HUB_SELECTION_SELECTED) ((swatch *)instance)->taps += 1;
}

static const hub_ui_state_ext ui_state = {
    sizeof ui_state, current_state,
#ifdef INCOMPLETE_EXTENSION
    NULL,
#else
    restore_state,
#endif
};
static const hub_selection_state_ext selection = {sizeof selection, update_selection};

#ifdef STORY_IMAGE
/* One story whose main image is a file name: a story has no folder, so the host must draw its placeholder. */
static size_t story_count(void *instance) { (void)instance; return 1; }
static bool story(void *instance, size_t index, hub_story *out) {
    (void)instance;
    if (index != 0) return false;
    out->name = "file image";
    out->model_json = "{\"id\":\"s\",\"text\":{\"title\":\"Pic\"},\"images\":{\"main\":{\"uri\":\"" STORY_IMAGE "\"}}}";
    return true;
}
static const hub_showcase_ext showcase = {sizeof showcase, story_count, story};
#endif

static const void *get_extension(void *instance, const char *id) {
#ifdef STORY_IMAGE
    if (strcmp(id, HUB_EXT_SHOWCASE) == 0) return &showcase;
#endif
    if (((swatch *)instance)->is_label) return NULL;
    if (strcmp(id, HUB_EXT_UI_STATE) == 0) return &ui_state;
    if (strcmp(id, HUB_EXT_SELECTION_STATE) == 0) return &selection;
    return NULL;
}

static void destroy(void *instance) { free(instance); }

static const hub_component_class swatch_class = {
    sizeof swatch_class, traits, load_view, preferred_size, prepare_for_reuse, configure, draw, get_extension, destroy,
};

static bool create_component(const hub_component_factory *factory, const char *name, hub_component *out) {
    (void)factory;
    int is_label = strcmp(name, "label") == 0;
    if (!is_label && strcmp(name, "swatch") != 0) return false;
    swatch *s = calloc(1, sizeof *s);
    s->is_label = is_label;
    out->klass = &swatch_class;
    out->instance = s;
    return true;
}

static const char *const names[] = {"swatch", "label", NULL};
static const char *const *component_names(const hub_component_factory *factory) {
    (void)factory;
    return names;
}

static const hub_component_factory factory = {sizeof factory, NULL, create_component, component_names, NULL};

#ifdef PROVIDES_WORD
static const char *the_word(void *context) {
    (void)context;
    return PROVIDES_WORD;
}
static const word_table words = {sizeof words, the_word};
#endif

#ifdef THREAD_OUTLIVES_UNLOAD
#include <pthread.h>
/* Never stopped: after the unload, it returns from usleep into code that is not mapped any more. */
static void *ticking(void *unused) {
    for (;;) usleep(2000);
    return unused;
}
#endif

#ifdef HANG_IN_DESTRUCTOR
__attribute__((destructor)) static void never_done(void) {
    if (getenv("HUBHOST_PROBE_CHILD") == NULL)
        for (;;) pause();
}
#endif

static bool init(const hub_host *h, char *error, size_t capacity) {
    host = h;
#ifdef REGISTERS_NOTHING
    (void)error;
    (void)capacity;
    return true;
#endif
#ifdef THREAD_OUTLIVES_UNLOAD
    pthread_t thread;
    if (getenv("HUBHOST_PROBE_CHILD") == NULL && pthread_create(&thread, NULL, ticking, NULL) == 0)
        pthread_detach(thread);
#endif
#ifdef PROVIDES_WORD
    hub_service service = {sizeof service, "test.word", 1, NULL, &words, NULL, NULL, NULL};
    if (!h->register_service(h, &service, error, capacity)) return false;
#endif
#ifdef CRASH_IN_INIT
#ifdef STDERR_BEFORE_CRASH
    fputs("swatch: about to crash in init\n", stderr);
#endif
    *(volatile int *)0 = 1; /* a real fault: raise() would return after a handler ran */
#endif
#ifdef HANG_IN_INIT
    for (;;) pause();
#endif
#ifdef FAIL_IN_INIT
    snprintf(error, capacity, "swatch refuses to start (FAIL_IN_INIT)");
    return false;
#endif
    return h->register_component_factory(h, NAMESPACE, &factory, error, capacity);
}

static void deinit(void) { host = NULL; }

static const hub_plugin_descriptor descriptor = {
    HUB_PLUGIN_MAGIC, sizeof descriptor, {HUB_ABI_MAJOR, HUB_ABI_MINOR}, PLUGIN_ID, "Swatch (test)", PLUGIN_VERSION,
    "Dev-loop test plugin", "hubhost tests", init, deinit,
};

HUB_EXPORT const hub_plugin_descriptor *hub_plugin_entry(void) { return &descriptor; }

/* A function a module file can bind (an eager singleton); -DMAKE_CRASHES makes it crash. */
HUB_EXPORT void *swatch_make(void) {
#ifdef MAKE_CRASHES
    *(volatile int *)0 = 1;
#endif
    static int thing;
    return &thing;
}

/* Another function a module file can bind, which never crashes. */
HUB_EXPORT void *swatch_make_safe(void) {
    static int other;
    return &other;
}
