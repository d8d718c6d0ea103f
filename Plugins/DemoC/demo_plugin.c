/*
 * The C demo plugin: four components in the namespace "cdemo" and one action, written against hub_plugin.h only.
 *
 * Copy this file to start a C plugin. The pieces, top to bottom:
 *   1. the host table, kept from init;
 *   2. small helpers (colour parsing, text measurement);
 *   3. one component per section: its instance struct, its methods, its class table;
 *   4. the component factory (names + create);
 *   5. the action factory for the action namespace "cdemo" (the action "cdemo:log");
 *   6. init/deinit, the descriptor and the exported entry point.
 *
 * Build it alone:  cc -shared -fPIC -O2 -I Sources/CHubPlugin/include \
 *                     -Wl,--version-script=Plugins/exports.map -o libHubDemoC.so Plugins/DemoC/demo_plugin.c
 *
 * Everything here runs on the host's main thread (every call comes from the host), so there are no locks.
 */
#include "hub_plugin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ----- 1. The host table: owned by the host, valid from init until deinit returns. ----- */

static const hub_host *g_host;

/* ----- 2. Helpers ----- */

#define PADDING 16.0

/* Parses "#RRGGBB" or "#RRGGBBAA" (the leading '#' optional) into 0xRRGGBBAA; `fallback` for anything else. */
static uint32_t parse_color(const char *text, uint32_t fallback) {
    if (text == NULL) return fallback;
    if (text[0] == '#') text++;
    size_t length = strlen(text);
    if (length != 6 && length != 8) return fallback;
    char *end = NULL;
    unsigned long value = strtoul(text, &end, 16);
    if (end == NULL || *end != '\0') return fallback;
    return length == 6 ? (uint32_t)(value << 8 | 0xFFu) : (uint32_t)value;
}

/* A text style; the host's measure_text and view_builder.text agree on what it means. */
static hub_text_style text_style(double font_size, uint32_t weight, uint32_t color, hub_text_alignment alignment,
                                 uint32_t line_limit) {
    hub_text_style style = {sizeof(hub_text_style), font_size, weight, color, alignment, line_limit};
    return style;
}

static hub_size measure(const char *text, const hub_text_style *style, double max_width) {
    return g_host->measure_text(g_host, text ? text : "", style, max_width);
}

static void fill_rect(const hub_view_builder *view, hub_rect frame, uint32_t color, double corner_radius) {
    hub_rect_style style = {sizeof(hub_rect_style), color, 0, 0, corner_radius};
    view->rect(view, frame, &style);
}

/* ----- 2b. Stories (ABI 1.1, HUB_EXT_SHOWCASE): named models `hubhost gallery` and `hubhost snapshot` draw each
 * component with. A story's "component" is left out: the host fills in the component's own. A width of 0 means
 * "the host's widths". The tables are static, so the strings outlive every call, as the ABI asks. ----- */

typedef struct story_def {
    const char *name;
    const char *model_json;
    double width;
} story_def;

static const story_def banner_stories[] = {
    {"default", "{\"id\":\"banner\",\"text\":{\"title\":\"Your weekly mix is ready\"}}", 0},
    {"custom colour", "{\"id\":\"banner\",\"text\":{\"title\":\"Offline mode\"},\"custom\":{\"color\":\"#333333\"}}", 0},
    {"long title",
     "{\"id\":\"banner\",\"text\":{\"title\":\"A banner whose title is long enough to wrap onto a second line, "
     "and then to be cut there\"}}",
     320},
};
static const story_def badge_stories[] = {
    {"default", "{\"id\":\"badge\",\"text\":{\"title\":\"New\"}}", 0},
    {"red", "{\"id\":\"badge\",\"text\":{\"title\":\"Trending\"},\"custom\":{\"color\":\"#FF3B30\"}}", 0},
};
static const story_def tile_stories[] = {
    {"default", "{\"id\":\"tile\",\"text\":{\"title\":\"Podcasts\"},\"custom\":{\"color\":\"#AF52DE\"}}", 0},
    {"no image, no colour", "{\"id\":\"tile\",\"text\":{\"title\":\"Live\"}}", 0},
};
static const story_def divider_stories[] = {
    {"default", "{\"id\":\"divider\"}", 0},
    {"thick and red", "{\"id\":\"divider\",\"custom\":{\"height\":24,\"color\":\"#FF3B30\"}}", 0},
};

static bool fill_story(const story_def *stories, size_t count, size_t index, hub_story *out) {
    if (index >= count) return false;
    out->name = stories[index].name;
    out->model_json = stories[index].model_json;
    out->widths = stories[index].width > 0 ? &stories[index].width : NULL;
    out->width_count = stories[index].width > 0 ? 1 : 0;
    return true;
}

/* One showcase table per component: its functions know which stories are theirs. */
#define DEMO_SHOWCASE(kind)                                                                                  \
    static size_t kind##_story_count(void *instance) {                                                       \
        (void)instance;                                                                                      \
        return sizeof kind##_stories / sizeof kind##_stories[0];                                             \
    }                                                                                                        \
    static bool kind##_story(void *instance, size_t index, hub_story *out) {                                 \
        (void)instance;                                                                                      \
        return fill_story(kind##_stories, sizeof kind##_stories / sizeof kind##_stories[0], index, out);     \
    }                                                                                                        \
    static const hub_showcase_ext kind##_showcase_ext = {sizeof(hub_showcase_ext), kind##_story_count,      \
                                                         kind##_story};                                      \
    static const void *kind##_get_extension(void *instance, const char *extension_id) {                     \
        (void)instance;                                                                                      \
        return strcmp(extension_id, HUB_EXT_SHOWCASE) == 0 ? &kind##_showcase_ext : NULL;                    \
    }

DEMO_SHOWCASE(banner)
DEMO_SHOWCASE(tile)
DEMO_SHOWCASE(divider)

static size_t badge_story_count(void *instance) {
    (void)instance;
    return sizeof badge_stories / sizeof badge_stories[0];
}
static bool badge_story(void *instance, size_t index, hub_story *out) {
    (void)instance;
    return fill_story(badge_stories, sizeof badge_stories / sizeof badge_stories[0], index, out);
}
static const hub_showcase_ext badge_showcase_ext = {sizeof(hub_showcase_ext), badge_story_count, badge_story};

/* ----- 3a. cdemo:banner — a full-width coloured banner with a centred title. -----
 *
 * Model: text.title (up to 2 lines, white, centred); custom.color ("#RRGGBB") for the background (default green).
 * Height: the measured title plus padding, at least 64 points.
 */

/* The title is the host's string, not a copy: it stays valid while the instance shows its model, until it is
 * prepared for reuse, configured with another model or destroyed (hub_plugin.h, configure_view). */
typedef struct banner {
    const char *title;
    uint32_t color;
} banner;

static const hub_text_style *banner_title_style(void) {
    static hub_text_style style;
    style = text_style(20, 700, 0xFFFFFFFFu, HUB_TEXT_CENTER, 2);
    return &style;
}

static const char *banner_layout_traits(void *instance) {
    (void)instance;
    return HUB_TRAIT_FULL_WIDTH;
}

static void banner_load_view(void *instance) { (void)instance; }

static hub_size banner_preferred_view_size(void *instance, const hub_model *model, hub_size container) {
    (void)instance;
    const char *title = g_host->model_string(g_host, model, HUB_MODEL_TITLE);
    hub_size text = measure(title, banner_title_style(), container.width - 2 * PADDING);
    double height = text.height + 2 * PADDING;
    return (hub_size){container.width, height < 64 ? 64 : height};
}

static void banner_prepare_view_for_reuse(void *instance) {
    banner *self = instance;
    self->title = NULL;
}

static void banner_configure_view(void *instance, const hub_model *model, hub_size container) {
    (void)container;
    banner *self = instance;
    self->title = g_host->model_string(g_host, model, HUB_MODEL_TITLE);
    self->color = parse_color(g_host->model_custom_string(g_host, model, "color"), 0x1DB954FFu);
}

static void banner_draw_view(void *instance, const hub_view_builder *view, hub_size size) {
    banner *self = instance;
    fill_rect(view, (hub_rect){0, 0, size.width, size.height}, self->color, 0);
    double width = size.width - 2 * PADDING;
    hub_size text = measure(self->title, banner_title_style(), width);
    hub_rect frame = {PADDING, (size.height - text.height) / 2, width, text.height};
    view->text(view, frame, self->title ? self->title : "", banner_title_style());
}

static void banner_destroy(void *instance) { free(instance); }

static const hub_component_class banner_class = {
    .struct_size = sizeof(hub_component_class),
    .layout_traits = banner_layout_traits,
    .load_view = banner_load_view,
    .preferred_view_size = banner_preferred_view_size,
    .prepare_view_for_reuse = banner_prepare_view_for_reuse,
    .configure_view = banner_configure_view,
    .draw_view = banner_draw_view,
    .get_extension = banner_get_extension, /* stories only */
    .destroy = banner_destroy,
};

/* ----- 3b. cdemo:badge — a small centred pill with a short text. -----
 *
 * Model: text.title (1 line); custom.color for the pill (default blue).
 * Size: the title's width plus padding (at most the container's width), 28 points high. Centred rows of badges group together.
 * It highlights with the selection state (HUB_EXT_SELECTION_STATE), to show how a C component adds an extension.
 */

typedef struct badge {
    const char *title; /* the host's, as the banner's */
    uint32_t color;
    hub_selection_state selection;
} badge;

static const hub_text_style *badge_title_style(void) {
    static hub_text_style style;
    style = text_style(12, 600, 0xFFFFFFFFu, HUB_TEXT_CENTER, 1);
    return &style;
}

static const char *badge_layout_traits(void *instance) {
    (void)instance;
    return HUB_TRAIT_CENTERED;
}

static void badge_load_view(void *instance) { (void)instance; }

static hub_size badge_preferred_view_size(void *instance, const hub_model *model, hub_size container) {
    (void)instance;
    /* One line, cut with an ellipsis when it would not fit the container. */
    hub_size text = measure(g_host->model_string(g_host, model, HUB_MODEL_TITLE), badge_title_style(),
                            container.width - 24);
    return (hub_size){text.width + 24, 28};
}

static void badge_prepare_view_for_reuse(void *instance) {
    badge *self = instance;
    self->title = NULL;
    self->selection = HUB_SELECTION_NONE;
}

static void badge_configure_view(void *instance, const hub_model *model, hub_size container) {
    (void)container;
    badge *self = instance;
    self->title = g_host->model_string(g_host, model, HUB_MODEL_TITLE);
    self->color = parse_color(g_host->model_custom_string(g_host, model, "color"), 0x007AFFFFu);
}

static void badge_draw_view(void *instance, const hub_view_builder *view, hub_size size) {
    badge *self = instance;
    /* Highlighted and selected badges are drawn darker: the colour at 60% alpha over black. */
    if (self->selection != HUB_SELECTION_NONE) fill_rect(view, (hub_rect){0, 0, size.width, size.height}, 0x000000FFu, 14);
    uint32_t color = self->selection == HUB_SELECTION_NONE ? self->color : ((self->color & 0xFFFFFF00u) | 0x99u);
    fill_rect(view, (hub_rect){0, 0, size.width, size.height}, color, size.height / 2);
    hub_size text = measure(self->title, badge_title_style(), 0);
    view->text(view, (hub_rect){0, (size.height - text.height) / 2, size.width, text.height},
               self->title ? self->title : "", badge_title_style());
}

static void badge_update_selection_state(void *instance, hub_selection_state state) {
    ((badge *)instance)->selection = state;
}

static const hub_selection_state_ext badge_selection_ext = {
    .struct_size = sizeof(hub_selection_state_ext),
    .update_selection_state = badge_update_selection_state,
};

static const void *badge_get_extension(void *instance, const char *extension_id) {
    (void)instance;
    if (strcmp(extension_id, HUB_EXT_SELECTION_STATE) == 0) return &badge_selection_ext;
    if (strcmp(extension_id, HUB_EXT_SHOWCASE) == 0) return &badge_showcase_ext;
    return NULL;
}

static void badge_destroy(void *instance) { free(instance); }

static const hub_component_class badge_class = {
    .struct_size = sizeof(hub_component_class),
    .layout_traits = badge_layout_traits,
    .load_view = badge_load_view,
    .preferred_view_size = badge_preferred_view_size,
    .prepare_view_for_reuse = badge_prepare_view_for_reuse,
    .configure_view = badge_configure_view,
    .draw_view = badge_draw_view,
    .get_extension = badge_get_extension,
    .destroy = badge_destroy,
};

/* ----- 3c. cdemo:tile — a compact square tile: the main image with the title over its bottom edge. -----
 *
 * Model: images.main; text.title (1 line); custom.color for the placeholder behind the image (default grey).
 * Size: 120×120, smaller when two do not fit the container.
 */

typedef struct tile {
    const char *title;     /* the host's, as the banner's */
    const char *image_uri; /* the host's too */
    uint32_t color;
} tile;

static const hub_text_style *tile_title_style(void) {
    static hub_text_style style;
    style = text_style(13, 600, 0xFFFFFFFFu, HUB_TEXT_LEFT, 1);
    return &style;
}

static const char *tile_layout_traits(void *instance) {
    (void)instance;
    return HUB_TRAIT_COMPACT_WIDTH;
}

static void tile_load_view(void *instance) { (void)instance; }

static hub_size tile_preferred_view_size(void *instance, const hub_model *model, hub_size container) {
    (void)instance;
    (void)model;
    double side = (container.width - 45) / 2; /* two across with 15-point margins */
    if (side > 120) side = 120;
    if (side < 48) side = 48;
    return (hub_size){side, side};
}

static void tile_prepare_view_for_reuse(void *instance) {
    tile *self = instance;
    self->title = NULL;
    self->image_uri = NULL;
}

static void tile_configure_view(void *instance, const hub_model *model, hub_size container) {
    (void)container;
    tile *self = instance;
    self->title = g_host->model_string(g_host, model, HUB_MODEL_TITLE);
    self->image_uri = g_host->model_image_uri(g_host, model, HUB_IMAGE_MAIN, NULL);
    self->color = parse_color(g_host->model_custom_string(g_host, model, "color"), 0x8E8E93FFu);
}

static void tile_draw_view(void *instance, const hub_view_builder *view, hub_size size) {
    tile *self = instance;
    view->image(view, (hub_rect){0, 0, size.width, size.height}, self->image_uri, HUB_CONTENT_ASPECT_FILL, self->color);
    if (self->title == NULL) return;
    hub_size text = measure(self->title, tile_title_style(), size.width - 16);
    double scrim_height = text.height + 12;
    fill_rect(view, (hub_rect){0, size.height - scrim_height, size.width, scrim_height}, 0x00000080u, 0);
    view->text(view, (hub_rect){8, size.height - scrim_height + 6, size.width - 16, text.height}, self->title,
               tile_title_style());
}

static void tile_destroy(void *instance) { free(instance); }

static const hub_component_class tile_class = {
    .struct_size = sizeof(hub_component_class),
    .layout_traits = tile_layout_traits,
    .load_view = tile_load_view,
    .preferred_view_size = tile_preferred_view_size,
    .prepare_view_for_reuse = tile_prepare_view_for_reuse,
    .configure_view = tile_configure_view,
    .draw_view = tile_draw_view,
    .get_extension = tile_get_extension,
    .destroy = tile_destroy,
};

/* ----- 3d. cdemo:divider — a hairline that sticks to the component above it (alwaysStackUpwards). ----- */

typedef struct divider {
    uint32_t color;
    double height;
} divider;

static const char *divider_layout_traits(void *instance) {
    (void)instance;
    /* Full width, and no vertical margin above it whatever comes before: it belongs to the component above. */
    return HUB_TRAIT_FULL_WIDTH "," HUB_TRAIT_ALWAYS_STACK_UPWARDS;
}

static void divider_load_view(void *instance) { (void)instance; }

static hub_size divider_preferred_view_size(void *instance, const hub_model *model, hub_size container) {
    (void)instance;
    double height = 9; /* custom.height overrides; never less than the 1-point line */
    g_host->model_custom_number(g_host, model, "height", &height);
    if (!(height >= 1)) height = 1;
    return (hub_size){container.width, height};
}

static void divider_prepare_view_for_reuse(void *instance) { (void)instance; }

static void divider_configure_view(void *instance, const hub_model *model, hub_size container) {
    (void)container;
    divider *self = instance;
    self->color = parse_color(g_host->model_custom_string(g_host, model, "color"), 0xC7C7CCFFu);
}

static void divider_draw_view(void *instance, const hub_view_builder *view, hub_size size) {
    divider *self = instance;
    fill_rect(view, (hub_rect){PADDING, (size.height - 1) / 2, size.width - 2 * PADDING, 1}, self->color, 0);
}

static void divider_destroy(void *instance) { free(instance); }

static const hub_component_class divider_class = {
    .struct_size = sizeof(hub_component_class),
    .layout_traits = divider_layout_traits,
    .load_view = divider_load_view,
    .preferred_view_size = divider_preferred_view_size,
    .prepare_view_for_reuse = divider_prepare_view_for_reuse,
    .configure_view = divider_configure_view,
    .draw_view = divider_draw_view,
    .get_extension = divider_get_extension,
    .destroy = divider_destroy,
};

/* ----- 4. The component factory ----- */

static const char *const component_names[] = {"banner", "badge", "tile", "divider", NULL};

static bool factory_create_component(const hub_component_factory *factory, const char *name, hub_component *out) {
    (void)factory;
    if (strcmp(name, "banner") == 0) {
        out->klass = &banner_class;
        out->instance = calloc(1, sizeof(banner));
    } else if (strcmp(name, "badge") == 0) {
        out->klass = &badge_class;
        out->instance = calloc(1, sizeof(badge));
    } else if (strcmp(name, "tile") == 0) {
        out->klass = &tile_class;
        out->instance = calloc(1, sizeof(tile));
    } else if (strcmp(name, "divider") == 0) {
        out->klass = &divider_class;
        out->instance = calloc(1, sizeof(divider));
    } else {
        return false; /* unknown name: the host falls back on the model's category */
    }
    return out->instance != NULL;
}

static const char *const *factory_component_names(const hub_component_factory *factory) {
    (void)factory;
    return component_names;
}

/* Static, so there is nothing to free. */
static const hub_component_factory component_factory = {
    .struct_size = sizeof(hub_component_factory),
    .factory_data = NULL,
    .create_component = factory_create_component,
    .component_names = factory_component_names,
    .destroy = NULL,
};

/* ----- 5. The action "cdemo:log": logs the component's title and the action's custom data. ----- */

static hub_action_result log_action_perform(void *instance, const hub_action_context *context,
                                            const hub_action_completion *completion) {
    (void)instance;
    (void)completion; /* synchronous: never HUB_ACTION_PENDING */
    const char *title = context->component_model
                            ? g_host->model_string(g_host, context->component_model, HUB_MODEL_TITLE)
                            : NULL;
    char message[512];
    snprintf(message, sizeof message, "cdemo:log title=%s custom=%s", title ? title : "(none)",
             context->custom_json ? context->custom_json : "{}");
    g_host->log(g_host, HUB_LOG_INFO, message);
    return HUB_ACTION_PERFORMED;
}

static void log_action_destroy(void *instance) { (void)instance; }

static const hub_action_class log_action_class = {
    .struct_size = sizeof(hub_action_class),
    .perform = log_action_perform,
    .destroy = log_action_destroy,
};

static bool action_factory_create(const hub_action_factory *factory, const char *name, hub_action *out) {
    (void)factory;
    if (strcmp(name, "log") != 0) return false;
    out->klass = &log_action_class;
    out->instance = NULL; /* stateless: no instance data needed */
    return true;
}

static const hub_action_factory action_factory = {
    .struct_size = sizeof(hub_action_factory),
    .factory_data = NULL,
    .create_action = action_factory_create,
    .destroy = NULL,
};

/* ----- 6. init/deinit, the descriptor, the entry point ----- */

static bool demo_init(const hub_host *host, char *out_error, size_t out_error_capacity) {
    hub_version ours = {HUB_ABI_MAJOR, HUB_ABI_MINOR};
    if (!hub_version_is_compatible(host->abi, ours)) {
        snprintf(out_error, out_error_capacity, "built for hub plugin ABI %u.%u; the host speaks %u.%u", ours.major,
                 ours.minor, host->abi.major, host->abi.minor);
        return false;
    }
    g_host = host;
    if (!host->register_component_factory(host, "cdemo", &component_factory, out_error, out_error_capacity))
        return false;
    if (!host->register_action_factory(host, "cdemo", &action_factory, out_error, out_error_capacity))
        return false; /* the host revokes the component factory registered above */
    return true;
}

static void demo_deinit(void) {
    g_host = NULL;
}

static const hub_plugin_descriptor descriptor = {
    .magic = HUB_PLUGIN_MAGIC,
    .struct_size = sizeof(hub_plugin_descriptor),
    .abi = {HUB_ABI_MAJOR, HUB_ABI_MINOR},
    .id = "com.hubhost.cdemo",
    .name = "Hub C demo components",
    .version = "1.0.0",
    .description = "A banner, a badge, a tile and a divider in plain C, plus the action cdemo:log.",
    .vendor = "hubhost",
    .init = demo_init,
    .deinit = demo_deinit,
};

HUB_EXPORT const hub_plugin_descriptor *hub_plugin_entry(void) {
    return &descriptor;
}
