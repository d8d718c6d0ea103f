/*
 * The event tests' plugin, compiled at test time into variants with -D options:
 *   EV_ID "com.example.events.a"   the plugin id
 *   EV_NS "a"                      its component and action namespace
 *   EV_HANDLER                     also register an action handler (see handler_handle)
 *
 * Components (namespace EV_NS):
 *   "probe"  every extension: children, image handling, UI state, selection state, content offset, view observer,
 *            action performer, action observer. Each callback appends a line to a log the tests read with
 *            `events_log()` (the plugin is built without a version script, so the symbol is visible).
 *   "plain"  no extensions.
 * Model keys the probe reads: custom.height (default 100), custom.performOnSelect ("ns:name": performs it through
 * its action performer when selected), custom.noImages (preferred image size 0).
 *
 * Actions (namespace EV_NS): "ok" performed; "no" not performed; "async" pending, finished 1 s later (host
 * clock) and chaining to custom.chain when present; "loop" finishes inside perform, chaining to itself.
 * Handler (EV_HANDLER): handles the default selection of models whose custom.handler is EV_NS, and every action
 * named EV_NS:handled; it logs the whole context.
 */
#include <hub_plugin.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef EV_ID
#define EV_ID "com.example.events"
#endif
#ifndef EV_NS
#define EV_NS "ev"
#endif

static const hub_host *host;

/* ----- the log ----- */

static char log_buffer[1 << 20];
static size_t log_length;

__attribute__((visibility("default"))) const char *events_log(void) { return log_buffer; }
__attribute__((visibility("default"))) void events_log_clear(void) { log_length = 0; log_buffer[0] = 0; }

static void logf_(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void logf_(const char *format, ...) {
    va_list args;
    va_start(args, format);
    if (log_length < sizeof log_buffer - 512) {
        int n = vsnprintf(log_buffer + log_length, sizeof log_buffer - log_length - 1, format, args);
        if (n > 0) log_length += (size_t)n;
        log_buffer[log_length++] = '\n';
        log_buffer[log_length] = 0;
    }
    va_end(args);
}

/* ----- components ----- */

typedef struct probe {
    int plain;
    char model_id[64];
    const hub_model *model;
    const hub_child_delegate *children;
    const hub_action_performer *performer;
    int pages;                 /* the UI state: how many times it was selected */
    char state_text[32];
    size_t child_count;
    hub_size child_sizes[16];
} probe;

static const char *id_of(const hub_model *model) {
    const char *id = model ? host->model_string(host, model, HUB_MODEL_ID) : NULL;
    return id ? id : "?";
}

static const char *traits(void *self) { (void)self; return "fullWidth"; }
static void load_view(void *self) { logf_("[%s] loadView", ((probe *)self)->model_id); }

static hub_size preferred(void *self, const hub_model *model, hub_size container) {
    (void)self;
    double height = 100;
    host->model_custom_number(host, model, "height", &height);
    return (hub_size){container.width, height};
}

static void prepare(void *self) {
    probe *p = self;
    logf_("[%s] prepareForReuse", p->model_id);
    p->pages = 0;
    p->child_count = 0;
}

static void configure(void *self, const hub_model *model, hub_size container) {
    probe *p = self;
    snprintf(p->model_id, sizeof p->model_id, "%s", id_of(model));
    p->model = model;
    logf_("[%s] configure %gx%g", p->model_id, container.width, container.height);
    if (p->plain || p->children == NULL) return;
    p->child_count = host->model_child_count(host, model);
    if (p->child_count > 16) p->child_count = 16;
    for (size_t i = 0; i < p->child_count; i++) p->child_sizes[i] = p->children->create_child(p->children, i);
    for (size_t i = 0; i < p->child_count; i++) p->children->will_display_child(p->children, i);
}

static void draw(void *self, const hub_view_builder *view, hub_size size) {
    probe *p = self;
    (void)size;
    /* Children side by side, 100 points apart. */
    for (size_t i = 0; i < p->child_count; i++) {
        view->child(view, (hub_rect){100.0 * (double)i, 0, p->child_sizes[i].width, p->child_sizes[i].height}, i);
    }
}

static void destroy(void *self) { free(self); }

static void set_child_delegate(void *self, const hub_child_delegate *d) { ((probe *)self)->children = d; }

static hub_size image_size(void *self, hub_image_kind kind, const char *custom_id, const hub_model *model, hub_size container) {
    (void)container;
    probe *p = self;
    double no = 0;
    logf_("[%s] preferredImageSize %d %s", id_of(model), (int)kind, custom_id ? custom_id : "-");
    (void)p;
    if (host->model_custom_number(host, model, "noImages", &no) && no != 0) return (hub_size){0, 0};
    return (hub_size){50, 50};
}

static void image_loaded(void *self, const hub_image *image, bool animated) {
    probe *p = self;
    logf_("[%s] imageLoaded %d %s %zu bytes %gx%g animated=%d", p->model_id, (int)image->kind, image->uri, image->length,
          image->size.width, image->size.height, animated ? 1 : 0);
}

static const char *current_ui_state(void *self) {
    probe *p = self;
    logf_("[%s] currentUIState %d", p->model_id, p->pages);
    if (p->pages == 0) return NULL;
    snprintf(p->state_text, sizeof p->state_text, "%d", p->pages);
    return p->state_text;
}

static void restore_ui_state(void *self, const char *state) {
    probe *p = self;
    p->pages = atoi(state);
    logf_("[%s] restoreUIState %s", p->model_id, state);
}

static void update_selection(void *self, hub_selection_state state) {
    probe *p = self;
    static const char *names[] = {"none", "highlighted", "selected"};
    logf_("[%s] selection %s", p->model_id, names[state]);
    if (state != HUB_SELECTION_SELECTED) return;
    p->pages++;
    const char *perform = p->model ? host->model_custom_string(host, p->model, "performOnSelect") : NULL;
    if (perform && p->performer) {
        bool ok = p->performer->perform(p->performer, perform, "{\"from\":\"probe\"}");
        logf_("[%s] performed %s -> %d", p->model_id, perform, ok ? 1 : 0);
    }
}

static void offset_changed(void *self, hub_point offset) { logf_("[%s] offset %g", ((probe *)self)->model_id, offset.y); }
static void did_resize(void *self, hub_size size) { logf_("[%s] resize %gx%g", ((probe *)self)->model_id, size.width, size.height); }
static void will_appear(void *self) { logf_("[%s] appear", ((probe *)self)->model_id); }
static void set_performer(void *self, const hub_action_performer *performer) { ((probe *)self)->performer = performer; }

static void observe(void *self, const hub_action_context *context) {
    logf_("[%s] observed %s trigger=%d", ((probe *)self)->model_id, context->action_id ? context->action_id : "default",
          (int)context->trigger);
}

static const hub_children_ext children_ext = {sizeof children_ext, set_child_delegate};
static const hub_image_handling_ext images_ext = {sizeof images_ext, image_size, image_loaded};
static const hub_ui_state_ext ui_state_ext = {sizeof ui_state_ext, current_ui_state, restore_ui_state};
static const hub_selection_state_ext selection_ext = {sizeof selection_ext, update_selection};
static const hub_content_offset_observer_ext offset_ext = {sizeof offset_ext, offset_changed};
static const hub_view_observer_ext view_ext = {sizeof view_ext, did_resize, will_appear};
static const hub_action_performer_ext performer_ext = {sizeof performer_ext, set_performer};
static const hub_action_observer_ext observer_ext = {sizeof observer_ext, observe};

static const void *get_extension(void *self, const char *id) {
    if (((probe *)self)->plain) return NULL;
    if (strcmp(id, HUB_EXT_CHILDREN) == 0) return &children_ext;
    if (strcmp(id, HUB_EXT_IMAGE_HANDLING) == 0) return &images_ext;
    if (strcmp(id, HUB_EXT_UI_STATE) == 0) return &ui_state_ext;
    if (strcmp(id, HUB_EXT_SELECTION_STATE) == 0) return &selection_ext;
    if (strcmp(id, HUB_EXT_CONTENT_OFFSET_OBSERVER) == 0) return &offset_ext;
    if (strcmp(id, HUB_EXT_VIEW_OBSERVER) == 0) return &view_ext;
    if (strcmp(id, HUB_EXT_ACTION_PERFORMER) == 0) return &performer_ext;
    if (strcmp(id, HUB_EXT_ACTION_OBSERVER) == 0) return &observer_ext;
    return NULL;
}

static const hub_component_class probe_class = {
    sizeof(hub_component_class), traits, load_view, preferred, prepare, configure, draw, get_extension, destroy,
};

static bool create_component(const hub_component_factory *factory, const char *name, hub_component *out) {
    (void)factory;
    int plain = strcmp(name, "plain") == 0;
    if (!plain && strcmp(name, "probe") != 0) return false;
    probe *p = calloc(1, sizeof(probe));
    p->plain = plain;
    strcpy(p->model_id, "-");
    out->klass = &probe_class;
    out->instance = p;
    return true;
}

static const char *const names[] = {"probe", "plain", NULL};
static const char *const *component_names(const hub_component_factory *factory) { (void)factory; return names; }
static const hub_component_factory component_factory = {sizeof component_factory, NULL, create_component, component_names, NULL};

/* ----- actions ----- */

typedef struct async_action {
    const hub_action_completion *completion;
    char chain[128];
} async_action;

static void finish_async(void *data) {
    async_action *a = data;
    logf_("async finishing chain=%s", a->chain[0] ? a->chain : "-");
    a->completion->finish(a->completion, a->chain[0] ? a->chain : NULL, a->chain[0] ? "{\"chained\":true}" : NULL);
}

static hub_action_result perform_action(void *instance, const hub_action_context *context, const hub_action_completion *completion) {
    const char *name = instance;
    logf_("action %s:%s perform trigger=%d model=%s custom=%s", EV_NS, name, (int)context->trigger, id_of(context->component_model),
          context->custom_json ? context->custom_json : "null");
    if (strcmp(name, "ok") == 0) return HUB_ACTION_PERFORMED;
    if (strcmp(name, "async") == 0) {
        async_action *a = calloc(1, sizeof(async_action));
        a->completion = completion;
        /* custom {"chain": "ns:name"} → chain to it */
        const char *chain = context->custom_json ? strstr(context->custom_json, "\"chain\":\"") : NULL;
        if (chain) {
            chain += 9;
            size_t n = 0;
            while (chain[n] && chain[n] != '"' && n < sizeof a->chain - 1) { a->chain[n] = chain[n]; n++; }
            a->chain[n] = 0;
        }
        host->schedule(host, 1.0, finish_async, a);
        return HUB_ACTION_PENDING;
    }
    if (strcmp(name, "loop") == 0) {
        /* Finishes inside perform, chaining to itself: a loop without end. */
        char self_id[128];
        snprintf(self_id, sizeof self_id, "%s:loop", EV_NS);
        completion->finish(completion, self_id, NULL);
        return HUB_ACTION_PENDING;
    }
    return HUB_ACTION_NOT_PERFORMED;
}

static void destroy_action(void *instance) { logf_("action %s:%s destroyed", EV_NS, (const char *)instance); }

static const hub_action_class action_class = {sizeof action_class, perform_action, destroy_action};

/* A class declared shorter than the header's: the host refuses it, and says why every time it is asked for. */
static const hub_action_class short_action_class = {4, perform_action, destroy_action};

static bool create_action(const hub_action_factory *factory, const char *name, hub_action *out) {
    (void)factory;
    if (strcmp(name, "short") == 0) {
        out->klass = &short_action_class;
        out->instance = (void *)"short";
        return true;
    }
    static const char *known[] = {"ok", "no", "async", "loop"};
    for (size_t i = 0; i < 4; i++) {
        if (strcmp(name, known[i]) == 0) {
            out->klass = &action_class;
            out->instance = (void *)known[i];
            return true;
        }
    }
    return false;
}

static const hub_action_factory action_factory = {sizeof action_factory, NULL, create_action, NULL};

static bool handler_handle(const hub_action_handler *handler, const hub_action_context *context) {
    (void)handler;
    const char *who = context->component_model ? host->model_custom_string(host, context->component_model, "handler") : NULL;
    int mine = (context->action_id == NULL && who && strcmp(who, EV_NS) == 0) ||
               (context->action_id && strcmp(context->action_id, EV_NS ":handled") == 0);
    if (!mine) return false;
    logf_("handler %s trigger=%d model=%s view=%s uri=%s custom=%s target=%s", context->action_id ? context->action_id : "default",
          (int)context->trigger, id_of(context->component_model), context->view_id ? context->view_id : "null",
          context->view_uri ? context->view_uri : "null", context->custom_json ? context->custom_json : "null",
          context->component_model ? (host->model_string(host, context->component_model, HUB_MODEL_TARGET_URI) ?: "null") : "null");
    return true;
}

static const hub_action_handler action_handler = {sizeof action_handler, NULL, handler_handle};

/* ----- entry ----- */

static bool init(const hub_host *h, char *error, size_t capacity) {
    host = h;
    events_log_clear();
    if (!h->register_component_factory(h, EV_NS, &component_factory, error, capacity)) return false;
    if (!h->register_action_factory(h, EV_NS, &action_factory, error, capacity)) return false;
#ifdef EV_HANDLER
    if (!h->register_action_handler(h, &action_handler, error, capacity)) return false;
#else
    (void)action_handler;
#endif
    return true;
}

static const hub_plugin_descriptor descriptor = {
    HUB_PLUGIN_MAGIC, sizeof(hub_plugin_descriptor), {HUB_ABI_MAJOR, HUB_ABI_MINOR}, EV_ID, "Event test plugin", "1.0.0",
    "Probes every component extension for the event tests.", "hubhost tests", init, NULL,
};

HUB_EXPORT const hub_plugin_descriptor *hub_plugin_entry(void) { return &descriptor; }
