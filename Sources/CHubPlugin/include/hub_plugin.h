/*
 * hub_plugin.h — the hubhost plugin ABI, version 1.1 (HUB_ABI_MAJOR.HUB_ABI_MINOR below).
 *
 * This header is the whole contract between the `hubhost` executable and a plugin. A plugin is an ELF shared
 * object that exports exactly one function, `hub_plugin_entry`, and talks to the host only through the tables
 * declared here. Plugins never link against the host executable.
 *
 * Conventions (they hold for every declaration below unless its comment says otherwise):
 *
 *  - Versions. The descriptor carries HUB_PLUGIN_MAGIC and the ABI version the plugin was built against. The host
 *    checks the magic, then `hub_version_is_compatible()`, before it calls anything else. Within a major version
 *    every table is append-only: new members are added at the end under an "Added in 1.x" comment, and every
 *    struct that crosses the boundary begins with `struct_size`, so either side can tell which members exist.
 *    A member may be read only when `struct_size` covers it (use HUB_HAS_MEMBER).
 *  - Strings are NUL-terminated UTF-8. A `const char *` argument is borrowed: it is valid until the call returns
 *    and the callee copies what it wants to keep. A returned `const char *` says in its comment who owns it and
 *    until when. Nothing crossing the boundary is freed by the other side.
 *  - Names. What a plugin registers something under (component and action namespaces, layout manager ids,
 *    service interface ids and names) is 1 to 256 bytes of UTF-8 without control characters; a component
 *    namespace holds no ':'. Any other name is refused, with the reason in `out_error`.
 *  - Errors. Functions that can fail return `bool` and, where they take `out_error`/`out_error_capacity`, write a
 *    one-line human-readable reason (truncated, always NUL-terminated) into that caller-owned buffer.
 *  - Threads. [main-thread] means the host's main thread: the host makes every call into a plugin from it, and a
 *    plugin must call host functions marked [main-thread] from it too (normally: from inside a host call).
 *    [any-thread] functions may be called from any thread at any time while the plugin is loaded.
 *  - Enums are C enums: 4 bytes (a C `int`) in structs and as results on the Linux ABIs hubhost runs on (x86_64,
 *    aarch64); another language declares them as 32-bit integers. Their values are small and non-negative.
 *  - Geometry is in points, as doubles; the origin is the top-left corner and y grows downwards. A component
 *    always works in its own coordinates; the host owns frames.
 *  - Colours are 0xRRGGBBAA.
 *
 * Rationale (1.0): the shape follows CLAP (descriptor + versioned extension ids + explicit self pointers), SQLite
 * (a host function table, so plugins need no host symbols), Vulkan (size-prefixed structs) and PostgreSQL's magic
 * block (a precise message when a plugin was built for another ABI).
 */
#ifndef HUB_PLUGIN_H
#define HUB_PLUGIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------------------------
 * Versioning
 * ------------------------------------------------------------------------------------------------------------- */

/** The first field of every plugin descriptor: the bytes "HUBP" read as a little-endian uint32. */
#define HUB_PLUGIN_MAGIC 0x50425548u
/** The ABI major version of this header. A host loads only plugins of its own major version. */
#define HUB_ABI_MAJOR 1u
/**
 * The ABI minor version of this header. A host loads plugins of an equal or lower minor version.
 * 1.1 added HUB_EXT_SHOWCASE (stories for the gallery and snapshots) and `hub_host.inject` (injector keys
 * resolved for plugins); nothing of 1.0 changed.
 */
#define HUB_ABI_MINOR 1u

/** Marks the one symbol a plugin exports. */
#define HUB_EXPORT __attribute__((visibility("default")))

/** True when the struct pointed to by `ptr` (which starts with `uint32_t struct_size`) contains `member`. */
#define HUB_HAS_MEMBER(ptr, type, member) \
    ((ptr)->struct_size >= offsetof(type, member) + sizeof(((type *)0)->member))

/** An ABI version. */
typedef struct hub_version {
    uint32_t major;
    uint32_t minor;
} hub_version;

/**
 * The one compatibility rule, shared by host and plugin: the majors are equal and the plugin was not built for a
 * newer minor than the host speaks (it might call members the host's tables do not have).
 */
static inline bool hub_version_is_compatible(hub_version host, hub_version plugin) {
    return host.major == plugin.major && plugin.minor <= host.minor;
}

/* ---------------------------------------------------------------------------------------------------------------
 * Basic types
 * ------------------------------------------------------------------------------------------------------------- */

typedef struct hub_size {
    double width;
    double height;
} hub_size;

typedef struct hub_point {
    double x;
    double y;
} hub_point;

typedef struct hub_rect {
    double x;
    double y;
    double width;
    double height;
} hub_rect;

/** A set of layout traits: `count` trait names (e.g. "compactWidth"), owned by the caller, valid for the call. */
typedef struct hub_traits {
    const char *const *names;
    size_t count;
} hub_traits;

/*
 * The five standard layout traits (Hub Framework's). The host's layout manager places components left to right by
 * their preferred sizes, starting a new row when the next one does not fit the width; traits change only the
 * margins, which are m (15 points by default) unless a trait says otherwise:
 *  - fullWidth: no left or right margin (a component as wide as its container then fills it edge to edge).
 *  - stackable: no top or bottom edge margin, and no vertical margin between two stackable components.
 *  - centered: a row of centered components is centred as a whole; a centered and a non-centered component never
 *    share a row.
 *  - alwaysStackUpwards: no vertical margin above this component, whatever is above it.
 *  - compactWidth: Hub's mark for a component narrower than its container; the default layout manager gives it
 *    the normal margins (a plugin's layout manager may read it).
 * Traits are extensible strings: a plugin's own layout manager may define and read others.
 */
#define HUB_TRAIT_COMPACT_WIDTH "compactWidth"
#define HUB_TRAIT_FULL_WIDTH "fullWidth"
#define HUB_TRAIT_STACKABLE "stackable"
#define HUB_TRAIT_CENTERED "centered"
#define HUB_TRAIT_ALWAYS_STACK_UPWARDS "alwaysStackUpwards"

typedef enum hub_log_level {
    HUB_LOG_TRACE = 0,
    HUB_LOG_DEBUG = 1,
    HUB_LOG_INFO = 2,
    HUB_LOG_WARNING = 3,
    HUB_LOG_ERROR = 4,
} hub_log_level;

/** A component model: opaque, owned by the host, read through the `model_*` functions of `hub_host`. */
typedef struct hub_model hub_model;

/** String fields of a component model, for `hub_host.model_string`. */
typedef enum hub_model_field {
    HUB_MODEL_ID = 0,                   /* the model identifier ("id") */
    HUB_MODEL_COMPONENT_ID = 1,         /* "namespace:name" */
    HUB_MODEL_COMPONENT_NAMESPACE = 2,  /* namespace part of the component identifier */
    HUB_MODEL_COMPONENT_NAME = 3,       /* name part of the component identifier */
    HUB_MODEL_CATEGORY = 4,             /* component category, e.g. "row", "card" */
    HUB_MODEL_TITLE = 5,                /* text.title */
    HUB_MODEL_SUBTITLE = 6,             /* text.subtitle */
    HUB_MODEL_ACCESSORY = 7,            /* text.accessory */
    HUB_MODEL_DESCRIPTION = 8,          /* text.description */
    HUB_MODEL_GROUP = 9,                /* group */
    HUB_MODEL_TARGET_URI = 10,          /* target.uri */
} hub_model_field;

/** Dictionary fields of a component model, returned as JSON text by `hub_host.model_json`. */
typedef enum hub_model_dictionary {
    HUB_MODEL_CUSTOM = 0,   /* custom */
    HUB_MODEL_METADATA = 1, /* metadata */
    HUB_MODEL_LOGGING = 2,  /* logging */
    HUB_MODEL_TARGET_CUSTOM = 3, /* target.custom */
} hub_model_dictionary;

/** The three kinds of component images (Hub Framework's HUBComponentImageType). */
typedef enum hub_image_kind {
    HUB_IMAGE_MAIN = 0,
    HUB_IMAGE_BACKGROUND = 1,
    HUB_IMAGE_CUSTOM = 2,
} hub_image_kind;

/** Content edges, for `hub_layout_manager.margin_to_edge`. */
typedef enum hub_content_edge {
    HUB_EDGE_TOP = 0,
    HUB_EDGE_RIGHT = 1,
    HUB_EDGE_BOTTOM = 2,
    HUB_EDGE_LEFT = 3,
} hub_content_edge;

/** Selection states (Hub Framework's HUBComponentSelectionState). */
typedef enum hub_selection_state {
    HUB_SELECTION_NONE = 0,
    HUB_SELECTION_HIGHLIGHTED = 1,
    HUB_SELECTION_SELECTED = 2,
} hub_selection_state;

/** How an image fills its frame. */
typedef enum hub_content_mode {
    HUB_CONTENT_SCALE_TO_FILL = 0,
    HUB_CONTENT_ASPECT_FIT = 1,
    HUB_CONTENT_ASPECT_FILL = 2,
} hub_content_mode;

typedef enum hub_text_alignment {
    HUB_TEXT_LEFT = 0,
    HUB_TEXT_CENTER = 1,
    HUB_TEXT_RIGHT = 2,
} hub_text_alignment;

/* ---------------------------------------------------------------------------------------------------------------
 * Drawing: a component draws its view into a display list through a view builder, in its own coordinates.
 * ------------------------------------------------------------------------------------------------------------- */

/** Fill and stroke of a rectangle. A colour with alpha 0 is not drawn. */
typedef struct hub_rect_style {
    uint32_t struct_size;
    uint32_t fill_color;
    uint32_t stroke_color;
    double stroke_width;
    double corner_radius;
} hub_rect_style;

/** How text is drawn and measured. */
typedef struct hub_text_style {
    uint32_t struct_size;
    double font_size;        /* points; <= 0 means 14 */
    uint32_t weight;         /* 100…900, CSS-style; 0 means 400 */
    uint32_t color;
    hub_text_alignment alignment;
    uint32_t line_limit;     /* maximum number of lines; 0 means unlimited */
} hub_text_style;

/**
 * The builder a component draws its view with. Given to `hub_component_class.draw_view`; owned by the host and
 * valid until `draw_view` returns. Every call appends one item to the view's display list, in drawing order.
 */
typedef struct hub_view_builder {
    uint32_t struct_size;
    /** Reserved for the host. */
    void *builder_data;

    /** Appends a rectangle. `style` is borrowed. [main-thread] */
    void (*rect)(const struct hub_view_builder *view, hub_rect frame, const hub_rect_style *style);

    /**
     * Appends text, wrapped to `frame.width` and cut to `style->line_limit` lines with an ellipsis, measured as
     * `hub_host.measure_text` measures it. `text` and `style` are borrowed. [main-thread]
     */
    void (*text)(const struct hub_view_builder *view, hub_rect frame, const char *text, const hub_text_style *style);

    /**
     * Appends an image by URI (for example the model's main image URI). When the host has loaded the image it
     * draws the loaded data; otherwise it draws `placeholder_color`. `uri` is borrowed. [main-thread]
     */
    void (*image)(const struct hub_view_builder *view, hub_rect frame, const char *uri, hub_content_mode mode,
                  uint32_t placeholder_color);

    /**
     * Places the child component created for child index `child_index` (see `hub_child_delegate.create_child`)
     * at `frame` inside this view. The child draws itself there. An index with no created child is ignored.
     * [main-thread]
     */
    void (*child)(const struct hub_view_builder *view, hub_rect frame, size_t child_index);
} hub_view_builder;

/* ---------------------------------------------------------------------------------------------------------------
 * Components (Hub Framework's HUBComponent) and their factories (HUBComponentFactory)
 * ------------------------------------------------------------------------------------------------------------- */

struct hub_component_class;

/**
 * A component instance: the plugin's class table plus its instance pointer. Created by a factory, destroyed by
 * the host through `klass->destroy(instance)`.
 */
typedef struct hub_component {
    const struct hub_component_class *klass;
    void *instance;
} hub_component;

/**
 * The methods of a component. The table is owned by the plugin and must stay valid while any instance using it
 * exists. Every method receives the instance pointer the factory returned. All methods are [main-thread].
 *
 * Lifecycle, as the host drives it (Hub Framework's):
 *  - `load_view` is called exactly once per instance, before the first `configure_view`. Instances the host uses
 *    only for sizing (`layout_traits` and `preferred_view_size`) never get `load_view`.
 *  - `configure_view` is called for each new model; a model equal to the current one is not configured again.
 *  - before an instance shows a different model the host calls `prepare_view_for_reuse`, then `configure_view`.
 *  - `draw_view` is called whenever the host renders the instance, after its frame is known.
 */
typedef struct hub_component_class {
    uint32_t struct_size;

    /**
     * Returns the component's layout traits as a comma-separated list ("compactWidth,stackable"; "" for none).
     * Must be the same for every instance of the class. The string is owned by the plugin and valid while the
     * instance exists; the host reads it once per instance.
     */
    const char *(*layout_traits)(void *instance);

    /**
     * Creates the view state of the instance (Hub's -loadView). Called once, before the first configure. May be NULL
     * (nothing to create).
     */
    void (*load_view)(void *instance);

    /**
     * Returns the size the component prefers for displaying `model` inside a container of size `container`
     * (Hub's -preferredViewSizeForDisplayingModel:containerViewSize:). `model` is borrowed for the call. The
     * result must be finite and non-negative; the host clamps the width to the container.
     */
    hub_size (*preferred_view_size)(void *instance, const hub_model *model, hub_size container);

    /**
     * Resets view state (highlights, held model references) before the instance shows another model. May be NULL
     * (nothing to reset).
     */
    void (*prepare_view_for_reuse)(void *instance);

    /**
     * Binds `model` to the view (Hub's -configureViewWithModel:containerViewSize:). `model` is owned by the host
     * and stays valid until the instance is configured with another model, prepared for reuse, or destroyed;
     * the component may keep the pointer until then. May be NULL for a component that shows no model data.
     */
    void (*configure_view)(void *instance, const hub_model *model, hub_size container);

    /** Draws the view at `size` into `view` (see hub_view_builder). `view` is valid until the call returns. */
    void (*draw_view)(void *instance, const hub_view_builder *view, hub_size size);

    /**
     * Returns the table for an optional extension (HUB_EXT_* below) or NULL when the component does not implement
     * it. `extension_id` is borrowed. The returned table is owned by the plugin and valid while the instance
     * exists. May be NULL itself, meaning no extensions.
     */
    const void *(*get_extension)(void *instance, const char *extension_id);

    /** Destroys the instance. The host never uses `instance` afterwards. */
    void (*destroy)(void *instance);
} hub_component_class;

/**
 * A component factory, registered for one namespace (Hub's HUBComponentFactory). Owned by the plugin; must stay
 * valid until the host calls `destroy` (when the namespace is unregistered or the plugin unloads). All methods
 * are [main-thread].
 */
typedef struct hub_component_factory {
    uint32_t struct_size;
    /** Reserved for the plugin. */
    void *factory_data;

    /**
     * Creates a component for `name` (the name part of "namespace:name"). Returns true and fills
     * `out_component` on success; returns false when the factory has no component of that name, and the host
     * then uses its fallback for the model's category. `name` is borrowed.
     */
    bool (*create_component)(const struct hub_component_factory *factory, const char *name,
                             hub_component *out_component);

    /**
     * Returns the names of the components the factory offers, as a NULL-terminated array, for listings and
     * validation. Owned by the plugin, valid until `destroy`. May be NULL itself.
     */
    const char *const *(*component_names)(const struct hub_component_factory *factory);

    /** Called once when the host no longer uses the factory. May be NULL. */
    void (*destroy)(const struct hub_component_factory *factory);
} hub_component_factory;

/* ---------------------------------------------------------------------------------------------------------------
 * Optional component extensions (Hub's protocol extensions), queried with `hub_component_class.get_extension`.
 * Each id names one released table; a breaking change gets a new "/2" id.
 * ------------------------------------------------------------------------------------------------------------- */

#define HUB_EXT_CHILDREN "hub.children/1"
#define HUB_EXT_IMAGE_HANDLING "hub.image-handling/1"
#define HUB_EXT_UI_STATE "hub.ui-state/1"
#define HUB_EXT_SELECTION_STATE "hub.selection-state/1"
#define HUB_EXT_CONTENT_OFFSET_OBSERVER "hub.content-offset-observer/1"
#define HUB_EXT_VIEW_OBSERVER "hub.view-observer/1"
#define HUB_EXT_ACTION_PERFORMER "hub.action-performer/1"
#define HUB_EXT_ACTION_OBSERVER "hub.action-observer/1"
/** Added in 1.1. */
#define HUB_EXT_SHOWCASE "hub.showcase/1"

/**
 * What the host gives a component with children (Hub's HUBComponentChildDelegate). Owned by the host; valid until
 * the host sets another delegate or destroys the instance. All functions are [main-thread].
 */
typedef struct hub_child_delegate {
    uint32_t struct_size;
    /** Reserved for the host. */
    void *delegate_data;

    /**
     * Creates (or reuses) the child component for the child model at `child_index` of the component's current
     * model, loads and configures it with the parent's size as its container, and returns the child's preferred
     * size. Draw it with `hub_view_builder.child`. Returns {0,0} when the index is out of range.
     *
     * Inside `preferred_view_size` (a sizing instance also gets its delegate), it sizes child `child_index` of
     * the model being sized instead, keeping nothing: a parent sizes itself from its children's sizes.
     */
    hub_size (*create_child)(const struct hub_child_delegate *delegate, size_t child_index);

    /** Tells the host the child at `child_index` became visible inside the component. */
    void (*will_display_child)(const struct hub_child_delegate *delegate, size_t child_index);

    /** Tells the host the child at `child_index` is no longer visible inside the component. */
    void (*did_stop_displaying_child)(const struct hub_child_delegate *delegate, size_t child_index);

    /**
     * Tells the host the user selected the child at `child_index`, drawn by the component itself (not a child
     * component). `custom_json` (borrowed, may be NULL) reaches the action context. Out-of-range indexes are ignored.
     */
    void (*child_selected)(const struct hub_child_delegate *delegate, size_t child_index, const char *custom_json);
} hub_child_delegate;

/** HUB_EXT_CHILDREN: the component can contain child components. */
typedef struct hub_children_ext {
    uint32_t struct_size;
    /** Gives the component its child delegate, right after creation. `delegate` is owned by the host. */
    void (*set_child_delegate)(void *instance, const hub_child_delegate *delegate);
} hub_children_ext;

/** An image the host loaded for a component. Owned by the host; valid until the callback returns. */
typedef struct hub_image {
    uint32_t struct_size;
    hub_image_kind kind;
    const char *custom_id;   /* the key in images.custom for HUB_IMAGE_CUSTOM, else NULL */
    const char *uri;         /* the URI that was loaded */
    hub_size size;           /* pixel size when the host could read it, else {0,0} */
    const uint8_t *bytes;    /* the encoded image data */
    size_t length;
} hub_image;

/** HUB_EXT_IMAGE_HANDLING: the host loads the model's images for this component. */
typedef struct hub_image_handling_ext {
    uint32_t struct_size;
    /**
     * Returns the size the component wants for the image of `kind` (`custom_id` for custom images, else NULL) of
     * `model`. {0,0} means "do not load this image".
     */
    hub_size (*preferred_image_size)(void *instance, hub_image_kind kind, const char *custom_id,
                                     const hub_model *model, hub_size container);
    /**
     * Tells the component an image of its current model has loaded. `animated` is true when the load took long
     * enough that a real UI would fade the image in. Results for models the instance no longer shows are dropped
     * by the host and never delivered.
     */
    void (*image_loaded)(void *instance, const hub_image *image, bool animated);
} hub_image_handling_ext;

/** HUB_EXT_UI_STATE: UI state (a scroll offset, a toggle) that survives reuse, saved per model identifier. */
typedef struct hub_ui_state_ext {
    uint32_t struct_size;
    /**
     * Returns the current UI state as a string (any encoding the component likes, JSON recommended), or NULL for
     * "no state" (which removes a saved state). Owned by the component, valid until the next call on the instance.
     */
    const char *(*current_ui_state)(void *instance);
    /** Restores a state previously returned by `current_ui_state` for the model just configured. Borrowed. */
    void (*restore_ui_state)(void *instance, const char *state);
} hub_ui_state_ext;

/** HUB_EXT_SELECTION_STATE: the view reacts to highlight and selection. The same state is never sent twice. */
typedef struct hub_selection_state_ext {
    uint32_t struct_size;
    void (*update_selection_state)(void *instance, hub_selection_state state);
} hub_selection_state_ext;

/** HUB_EXT_CONTENT_OFFSET_OBSERVER: the component follows the scroll position of the view it is in. */
typedef struct hub_content_offset_observer_ext {
    uint32_t struct_size;
    void (*content_offset_changed)(void *instance, hub_point offset);
} hub_content_offset_observer_ext;

/** HUB_EXT_VIEW_OBSERVER: the component observes its view. */
typedef struct hub_view_observer_ext {
    uint32_t struct_size;
    /** The view's size changed (not called for an unchanged size). */
    void (*view_did_resize)(void *instance, hub_size size);
    /** The view is about to appear. */
    void (*view_will_appear)(void *instance);
} hub_view_observer_ext;

struct hub_action_context;

/** Given to components with HUB_EXT_ACTION_PERFORMER. Owned by the host; valid until the instance is destroyed. */
typedef struct hub_action_performer {
    uint32_t struct_size;
    /** Reserved for the host. */
    void *performer_data;
    /**
     * Performs the action `action_id` ("namespace:name") with `custom_json` (may be NULL) on behalf of the
     * component, trigger HUB_TRIGGER_COMPONENT. Returns true when the action was performed or handled. [main-thread]
     */
    bool (*perform)(const struct hub_action_performer *performer, const char *action_id, const char *custom_json);
} hub_action_performer;

/** HUB_EXT_ACTION_PERFORMER: the component can perform actions. */
typedef struct hub_action_performer_ext {
    uint32_t struct_size;
    void (*set_action_performer)(void *instance, const hub_action_performer *performer);
} hub_action_performer_ext;

/** HUB_EXT_ACTION_OBSERVER: the component sees every action performed in its view while it is visible. */
typedef struct hub_action_observer_ext {
    uint32_t struct_size;
    void (*action_performed)(void *instance, const struct hub_action_context *context);
} hub_action_observer_ext;

/**
 * One story of a component (Storybook's stories, Hub's showcase): a named Hub JSON component model to draw it with,
 * for `hubhost gallery` and `hubhost snapshot`. Added in 1.1.
 */
typedef struct hub_story {
    uint32_t struct_size;
    /** "default", "long title", "no image", "selected"…: unique per component. */
    const char *name;
    /**
     * One Hub JSON component model (the object a view's body holds), as UTF-8 JSON text. Its "component" may be
     * left out: the host fills in this component's "namespace:name". Owned by the plugin; valid until the host's
     * next call into this instance.
     */
    const char *model_json;
    /** Container widths (points) this story matters at, or NULL with `width_count` 0 for the host's widths. */
    const double *widths;
    size_t width_count;
} hub_story;

/**
 * HUB_EXT_SHOWCASE (added in 1.1): the component's stories. The host creates an instance only to read them (it is
 * never configured or drawn) and destroys it after. What a story points to (name, model, widths) must stay valid
 * until the host's next call into the instance: the host copies it as soon as `story` returns.
 */
typedef struct hub_showcase_ext {
    uint32_t struct_size;
    /** How many stories the component has. */
    size_t (*story_count)(void *instance);
    /** Fills `out` (whose struct_size the host set) with story `index` (< story_count); false to skip it. */
    bool (*story)(void *instance, size_t index, hub_story *out);
} hub_showcase_ext;

/* ---------------------------------------------------------------------------------------------------------------
 * Actions (Hub's HUBAction, HUBActionFactory, HUBActionHandler)
 * ------------------------------------------------------------------------------------------------------------- */

typedef enum hub_action_trigger {
    HUB_TRIGGER_SELECTION = 0,
    HUB_TRIGGER_COMPONENT = 1,
    HUB_TRIGGER_CONTENT_OPERATION = 2,
} hub_action_trigger;

/** What an action is performed with. Owned by the host; valid until the call it is passed to returns. */
typedef struct hub_action_context {
    uint32_t struct_size;
    hub_action_trigger trigger;
    const char *action_id;          /* "namespace:name"; NULL for the default selection action */
    /* The action's custom data as JSON, or NULL: what its trigger carried (a component's `perform`, a child's
     * selection, a script's action event, the action it was chained from), as in Hub. A plain tap carries none: a
     * target action reads its target's data from `component_model` (`model_json(…, HUB_MODEL_TARGET_CUSTOM)`). */
    const char *custom_json;
    const char *view_uri;           /* the URI of the view, or NULL */
    const char *view_id;            /* the view model identifier, or NULL */
    const hub_model *component_model; /* the component's model, or NULL (content operations) */
} hub_action_context;

typedef enum hub_action_result {
    HUB_ACTION_NOT_PERFORMED = 0,
    HUB_ACTION_PERFORMED = 1,
    /** Asynchronous: the host keeps the action alive until it calls `completion->finish`. */
    HUB_ACTION_PENDING = 2,
} hub_action_result;

/** How an asynchronous action finishes. Owned by the host; valid until `finish` is called (exactly once). */
typedef struct hub_action_completion {
    uint32_t struct_size;
    void *completion_data;
    /**
     * Finishes the action. When `chain_action_id` is not NULL the host then performs that action with
     * `chain_custom_json` and the same trigger and models. Both strings are borrowed. [main-thread]
     */
    void (*finish)(const struct hub_action_completion *completion, const char *chain_action_id,
                   const char *chain_custom_json);
} hub_action_completion;

struct hub_action_class;

/** An action instance, created fresh for each event by an action factory. */
typedef struct hub_action {
    const struct hub_action_class *klass;
    void *instance;
} hub_action;

/** The methods of an action. Owned by the plugin, valid while any instance exists. [main-thread] */
typedef struct hub_action_class {
    uint32_t struct_size;
    /**
     * Performs the action. Returns HUB_ACTION_PERFORMED, HUB_ACTION_NOT_PERFORMED, or HUB_ACTION_PENDING after
     * keeping `completion` to finish later. `context` is valid until the call returns; `completion` until finish.
     */
    hub_action_result (*perform)(void *instance, const hub_action_context *context,
                                 const hub_action_completion *completion);
    /** Destroys the instance; the host calls it once the action is finished. */
    void (*destroy)(void *instance);
} hub_action_class;

/** An action factory, registered for one action namespace. Owned by the plugin, valid until `destroy`. */
typedef struct hub_action_factory {
    uint32_t struct_size;
    void *factory_data;
    /** Creates the action named `name`; false when the factory has no such action. [main-thread] */
    bool (*create_action)(const struct hub_action_factory *factory, const char *name, hub_action *out_action);
    /** Called once when the host no longer uses the factory. May be NULL. */
    void (*destroy)(const struct hub_action_factory *factory);
} hub_action_factory;

/**
 * An action handler sees every action (the default selection action included) before it runs; returning true
 * means "handled": the action itself is not performed and the outcome counts as performed. Owned by the plugin,
 * valid until unregistered or unload.
 */
typedef struct hub_action_handler {
    uint32_t struct_size;
    void *handler_data;
    bool (*handle)(const struct hub_action_handler *handler, const hub_action_context *context);
} hub_action_handler;

/* ---------------------------------------------------------------------------------------------------------------
 * Layout manager (Hub's HUBComponentLayoutManager): the one source of margins. The host has a default (Hub's
 * HUBDefaultComponentLayoutManager); a plugin may register others, chosen by id (`--layout-manager ID`).
 * ------------------------------------------------------------------------------------------------------------- */

/** Returned by `horizontal_margin` to force the component onto a new row (Hub's CGFLOAT_MAX). */
#define HUB_MARGIN_NEW_ROW 1.7976931348623157e308

/** Owned by the plugin, valid until unregistered or unload. All functions are [main-thread] and must be pure. */
typedef struct hub_layout_manager {
    uint32_t struct_size;
    void *manager_data;
    /** The margin between a component with `traits` and the content edge `edge`. */
    double (*margin_to_edge)(const struct hub_layout_manager *manager, hub_traits traits, hub_content_edge edge);
    /** The vertical margin between the first row's component with `traits` and the header above it. */
    double (*vertical_margin_to_header)(const struct hub_layout_manager *manager, hub_traits traits,
                                        hub_traits header_traits);
    /** The whole horizontal gap between a component and the one before it on its row. */
    double (*horizontal_margin)(const struct hub_layout_manager *manager, hub_traits traits, hub_traits preceding);
    /** The whole vertical gap between a component and a component in the row above it. */
    double (*vertical_margin)(const struct hub_layout_manager *manager, hub_traits traits, hub_traits preceding);
    /**
     * An x-shift for a whole row of `count` components (their traits in order), given the space before the first
     * and after the last. Used for centring; 0 for none.
     */
    double (*horizontal_offset)(const struct hub_layout_manager *manager, const hub_traits *row, size_t count,
                                double leading, double trailing);
} hub_layout_manager;

/* ---------------------------------------------------------------------------------------------------------------
 * Services: interfaces shared between plugins (and the host) by id and version.
 * ------------------------------------------------------------------------------------------------------------- */

/**
 * A service a plugin (or the host) provides. `table` is the interface's function table and `context` its first
 * argument by convention. Both are owned by the provider and valid until the service is unregistered or the
 * provider unloads; `retain`/`release` (may be NULL) keep `context` alive while a consumer holds it.
 *
 * Keys are `interface_id` plus `name`: one provider per key. The host's own services (HUB_SERVICE_* below) are
 * registered by the host under its own name and may be shadowed by one plugin: while that plugin is loaded its
 * provider serves, and when it unloads the host's comes back. Any other second claim of a key is refused.
 *
 * In what `acquire_service` fills in, `retain` and `release` are NULL: consumers release through
 * `hub_host.release_service`, which never calls into a provider that has unloaded.
 */
typedef struct hub_service {
    uint32_t struct_size;
    const char *interface_id;  /* e.g. "com.example.weather"; copied by the host */
    uint32_t version;          /* the interface version; consumers ask for a minimum */
    const char *name;          /* an optional binding name, NULL for the default binding; copied */
    const void *table;
    void *context;
    void (*retain)(void *context);
    void (*release)(void *context);
} hub_service;

/**
 * Told when a service becomes available or goes away (its provider unloaded or unregistered it). When a
 * provider is replaced (a shadowing plugin unloads and the host's provider comes back) the observer is told
 * `false` then `true`: drop what was acquired, then look it up again. `interface_id` is borrowed. Never called
 * for the plugin's own registrations while it unloads. [main-thread]
 */
typedef void (*hub_service_changed_fn)(void *user_data, const char *interface_id, bool available);

/** What an observer set with `set_service_event_observer` is told (added in 1.1). Valid during the call. */
typedef struct hub_service_event {
    uint32_t struct_size;
    const char *interface_id;
    /** The binding's name; NULL for the default binding. */
    const char *name;
    /** The serving provider's interface version (0 when none serves any more). */
    uint32_t version;
    /** True: a provider serves the key now; false: the provider went away (and none serves). */
    bool available;
    /** The serving provider, "com.example.sky 1.0.0 (libsky.so)", or NULL when none serves. */
    const char *provider;
} hub_service_event;

typedef void (*hub_service_event_fn)(void *user_data, const hub_service_event *event);

/* ----- Host services: interfaces the host provides under these ids (owner "hubhost"), version 1. ----- */

/** The image loader the host renders with. Table: hub_image_loader_service. */
#define HUB_SERVICE_IMAGE_LOADER "hub.image-loader"
/** Opens URIs (the default selection action). Table: hub_uri_opener_service. */
#define HUB_SERVICE_URI_OPENER "hub.uri-opener"
/** The host's log. Table: hub_logger_service. */
#define HUB_SERVICE_LOGGER "hub.logger"

/** An image as a loader returns it. */
typedef struct hub_loaded_image {
    uint32_t struct_size;
    const uint8_t *bytes;  /* the encoded image data, owned by the provider (see `load`) */
    size_t length;
    hub_size size;         /* pixel size when known, else {0,0} */
} hub_loaded_image;

/** HUB_SERVICE_IMAGE_LOADER, version 1. */
typedef struct hub_image_loader_service {
    uint32_t struct_size;
    /**
     * Loads the image at `uri` (borrowed). Returns true and fills `out_image`, whose bytes stay valid until the
     * next `load` on the same context; returns false writing the reason otherwise. [main-thread]
     */
    bool (*load)(void *context, const char *uri, hub_loaded_image *out_image, char *out_error,
                 size_t out_error_capacity);
} hub_image_loader_service;

/** HUB_SERVICE_URI_OPENER, version 1. */
typedef struct hub_uri_opener_service {
    uint32_t struct_size;
    /** Opens `uri` (borrowed); true when it was handled. [main-thread] */
    bool (*open)(void *context, const char *uri);
} hub_uri_opener_service;

/** HUB_SERVICE_LOGGER, version 1. */
typedef struct hub_logger_service {
    uint32_t struct_size;
    /** Logs `message` (borrowed) at `level`. [any-thread] */
    void (*log)(void *context, hub_log_level level, const char *message);
} hub_logger_service;

/* ---------------------------------------------------------------------------------------------------------------
 * The host table
 * ------------------------------------------------------------------------------------------------------------- */

/** What `inject` resolved (added in 1.1). Exactly one member is meaningful, as `type` says. */
typedef enum hub_value_type {
    HUB_VALUE_NONE = 0,    /* the binding produced nothing (void, or a NULL pointer) */
    HUB_VALUE_INT = 1,     /* `i` (signed and unsigned integers up to 64 bits) */
    HUB_VALUE_DOUBLE = 2,  /* `d` */
    HUB_VALUE_STRING = 3,  /* `s`, UTF-8, owned by the host (valid until this plugin's next `inject`) */
    HUB_VALUE_POINTER = 4, /* `p`, owned by whoever made it (the binding's plugin) */
} hub_value_type;

typedef struct hub_value {
    uint32_t struct_size;
    hub_value_type type;
    int64_t i;
    double d;
    const char *s;
    void *p;
} hub_value;

/**
 * A provider a plugin binds to an injector key (`hub_host.bind`, added in 1.1): fills `out` (whose struct_size
 * the host has set) from `arguments_json` (the caller's arguments, a JSON array, "[]" when none) and returns
 * true, or writes why into `out_error` and returns false. A string result (`HUB_VALUE_STRING`, `s`) stays the
 * plugin's: it must be valid until the provider returns, and the host copies it before it does anything else.
 * [main-thread]
 */
typedef bool (*hub_provider_fn)(void *user_data, const char *arguments_json, struct hub_value *out, char *out_error,
                                size_t out_error_capacity);

/**
 * What the host gives a plugin in `init`. Owned by the host; valid until `deinit` returns. Each plugin gets its
 * own table, so everything registered through it belongs to that plugin and is revoked when it unloads. Every
 * function takes the table itself as its first argument.
 */
typedef struct hub_host {
    uint32_t struct_size;
    /** The ABI version the host speaks. */
    hub_version abi;
    /** Reserved for the host. */
    void *host_data;
    /** The host's name and version, e.g. "hubhost 0.1.0". Owned by the host. */
    const char *host_version;

    /* ----- Component registry ----- */

    /**
     * Registers `factory` for `namespace_`. Returns false, writing the reason, when the namespace is invalid or
     * another plugin holds it (the message names the owner). A namespace two plugins claim is not kept by either:
     * after loading, both plugins are refused, whatever their file order, unless the user names one with
     * `--prefer PLUGIN_ID`. `factory` must stay valid until its
     * `destroy` is called. On failure the host keeps nothing and never calls `destroy`: the factory is still the
     * plugin's to free. [main-thread]
     */
    bool (*register_component_factory)(const struct hub_host *host, const char *namespace_,
                                       const hub_component_factory *factory, char *out_error,
                                       size_t out_error_capacity);

    /**
     * Unregisters this plugin's factory for `namespace_`, destroying its live components first. A namespace that
     * is not registered by this plugin is a no-op. Called from inside a call the host made into this plugin (a
     * component's draw, a timer), it takes effect once that call has returned, so no instance is destroyed while
     * one of its functions runs. [main-thread]
     */
    void (*unregister_component_factory)(const struct hub_host *host, const char *namespace_);

    /* ----- Logging ----- */

    /** Logs `message` (borrowed) under the plugin's id. [any-thread] */
    void (*log)(const struct hub_host *host, hub_log_level level, const char *message);

    /* ----- Models ----- */

    /**
     * Returns a string field of `model`, or NULL when the model has none. Owned by the host, valid as long as
     * `model` is. [main-thread]
     */
    const char *(*model_string)(const struct hub_host *host, const hub_model *model, hub_model_field field);

    /**
     * Returns a dictionary of `model` as JSON object text, or NULL when absent. Owned by the host, valid as long
     * as `model` is. [main-thread]
     */
    const char *(*model_json)(const struct hub_host *host, const hub_model *model, hub_model_dictionary which);

    /**
     * Reads `custom[key]` of `model` as a string (JSON strings only). Returns NULL when absent or not a string.
     * Owned by the host, valid as long as `model` is. [main-thread]
     */
    const char *(*model_custom_string)(const struct hub_host *host, const hub_model *model, const char *key);

    /**
     * Reads `custom[key]` of `model` as a number (JSON numbers and booleans). Returns false and leaves
     * `out_value` alone when absent or of another type. [main-thread]
     */
    bool (*model_custom_number)(const struct hub_host *host, const hub_model *model, const char *key,
                                double *out_value);

    /**
     * Returns the URI of an image of `model` (`custom_id` for HUB_IMAGE_CUSTOM, else NULL), or NULL. Owned by the
     * host, valid as long as `model` is. [main-thread]
     */
    const char *(*model_image_uri)(const struct hub_host *host, const hub_model *model, hub_image_kind kind,
                                   const char *custom_id);

    /** Returns the number of child models of `model`. [main-thread] */
    size_t (*model_child_count)(const struct hub_host *host, const hub_model *model);

    /** Returns child `index` of `model`, or NULL when out of range. Valid as long as `model` is. [main-thread] */
    const hub_model *(*model_child)(const struct hub_host *host, const hub_model *model, size_t index);

    /* ----- Text ----- */

    /**
     * Measures `text` drawn with `style` and wrapped to `max_width` (<= 0: no wrapping), the way the host's
     * renderers draw it. Deterministic: the same input gives the same size on every machine. The model is a
     * fixed-advance font (0.55 × font size per character, 0.6 × from weight 600; lines 1.25 × font size), where
     * a wide character (CJK, Hangul, fullwidth forms, emoji) takes two advances and a zero-width space, joiner or
     * soft hyphen none; lines break at spaces, and a word wider than the line is cut between characters.
     * [any-thread]
     */
    hub_size (*measure_text)(const struct hub_host *host, const char *text, const hub_text_style *style,
                             double max_width);

    /* ----- Layout managers ----- */

    /**
     * Registers a layout manager under `id` (chosen with `--layout-manager ID`). Returns false, writing the
     * reason, when the id is invalid (see Names above) or taken. `manager` must stay valid until unload. [main-thread]
     */
    bool (*register_layout_manager)(const struct hub_host *host, const char *id, const hub_layout_manager *manager,
                                    char *out_error, size_t out_error_capacity);

    /* ----- Actions ----- */

    /**
     * Registers an action factory for the action namespace `namespace_`. Returns false, writing the reason, when
     * the namespace is invalid or taken; as with component namespaces, two plugins claiming one are both refused
     * unless the user prefers one (`--prefer`). `factory` must stay valid until its `destroy` is called; on
     * failure the host keeps nothing and never calls `destroy`. [main-thread]
     */
    bool (*register_action_factory)(const struct hub_host *host, const char *namespace_,
                                    const hub_action_factory *factory, char *out_error, size_t out_error_capacity);

    /** Unregisters this plugin's action factory for `namespace_`; anything else is a no-op. [main-thread] */
    void (*unregister_action_factory)(const struct hub_host *host, const char *namespace_);

    /** Adds an action handler; handlers are asked in registration order. [main-thread] */
    bool (*register_action_handler)(const struct hub_host *host, const hub_action_handler *handler,
                                    char *out_error, size_t out_error_capacity);

    /* ----- Time ----- */

    /**
     * Calls `fn(user_data)` once, `seconds` from now on the host's clock (which tests and event scripts advance).
     * Used by asynchronous actions. [main-thread]
     */
    void (*schedule)(const struct hub_host *host, double seconds, void (*fn)(void *user_data), void *user_data);

    /* ----- Services ----- */

    /**
     * Provides `service`. Returns false, writing the reason, when another provider holds the same interface id
     * and name (the message names it), or when `service` is malformed (NULL or empty id, NULL table, a
     * `struct_size` too small). The host copies the struct and its strings; the service is revoked when the
     * plugin unloads. Observers of other plugins are told it is available. When a new version of a plugin loads
     * beside the old one (hot reload), a key the old version provides is held for the new one (true is
     * returned) and registered when the old version unloads. [main-thread]
     */
    bool (*register_service)(const struct hub_host *host, const hub_service *service, char *out_error,
                             size_t out_error_capacity);

    /**
     * Withdraws this plugin's service `interface_id`/`name` (NULL name: the default binding); a key this plugin
     * does not provide is a no-op. Consumers still holding it may release it later. [main-thread]
     */
    void (*unregister_service)(const struct hub_host *host, const char *interface_id, const char *name);

    /**
     * Looks up a service with at least `min_version` (`name` NULL: the default binding). On success fills
     * `out_service` (its strings are owned by the host and valid until the matching `release_service`; `retain`
     * and `release` are NULL) and retains its context: call `release_service` when done. The host writes the
     * `hub_service` of the ABI version the plugin declares in its descriptor (it never reads `struct_size` here,
     * which callers may leave unset) and sets `struct_size` to what it wrote; a later 1.x that grows the struct
     * still writes only what that plugin's version has. Returns false, writing
     * the reason ("no provider for com.x", "com.x is version 1 (from P); 2 was asked"), otherwise. Lookups fail
     * cleanly while no provider is loaded. [main-thread]
     */
    bool (*acquire_service)(const struct hub_host *host, const char *interface_id, const char *name,
                            uint32_t min_version, hub_service *out_service, char *out_error,
                            size_t out_error_capacity);

    /**
     * Releases a service obtained from `acquire_service` (pass the struct it filled in). Calls the provider's
     * `release` unless the provider has unloaded meanwhile; anything not acquired is ignored. [main-thread]
     */
    void (*release_service)(const struct hub_host *host, const hub_service *service);

    /**
     * Sets the plugin's service observer (NULL to remove it): told whenever any service appears or goes away,
     * so the plugin can drop what it acquired and look it up again. One observer per plugin; a second call
     * replaces the first. [main-thread]
     */
    void (*set_service_observer)(const struct hub_host *host, hub_service_changed_fn fn, void *user_data);

    /* ----- Added in 1.1 (check HUB_HAS_MEMBER(host, hub_host, inject) before calling). ----- */

    /**
     * Resolves the injector key `key` (`name` NULL: the default binding) with `arguments_json`, a JSON array of
     * numbers, strings and nulls that replace the binding's default arguments position by position (NULL or "[]":
     * the defaults), and fills `out` (whose struct_size the caller set) with what the binding produced: the
     * result of the initializer a plugin exports and a module file binds, called through libffi, with the
     * binding's scope honoured (a singleton is made once and then returned again). A string result is owned by
     * the host and valid until this plugin's next `inject` call. Returns false, writing why into `out_error`
     * (the key, the module file and binding, the plugin that provides it, and what happened: no binding, revoked
     * because its plugin unloaded, a cycle, a call that failed), otherwise; `out` is then untouched. [main-thread]
     */
    bool (*inject)(const struct hub_host *host, const char *key, const char *name, const char *arguments_json,
                   struct hub_value *out, char *out_error, size_t out_error_capacity);

    /**
     * Like `set_service_observer`, with the key's name, the provider's version and the provider itself (a
     * `hub_service_event`); NULL removes it. Told only about providers whose init returned true. One per plugin;
     * it may be set beside a `set_service_observer` one. [main-thread] (Added in 1.1.)
     */
    void (*set_service_event_observer)(const struct hub_host *host, hub_service_event_fn fn, void *user_data);

    /**
     * Binds the injector key `key` (`name` NULL: the default binding) to `provider`, owned by this plugin's load:
     * its unload revokes it. `singleton` true makes the value once (a pointer result then belongs to the plugin
     * until it unloads). Refused, writing why, when the key is bound already (both are named). When a new
     * version of a plugin loads beside the old one (hot reload), a key the old version binds is held for the new
     * one (true is returned) and bound when the old version unloads. Other plugins, module files and host code
     * resolve it with `inject`. [main-thread] (Added in 1.1.)
     */
    bool (*bind)(const struct hub_host *host, const char *key, const char *name, hub_provider_fn provider,
                 void *user_data, bool singleton, char *out_error, size_t out_error_capacity);
} hub_host;

/* ---------------------------------------------------------------------------------------------------------------
 * The plugin descriptor and the entry point
 * ------------------------------------------------------------------------------------------------------------- */

/**
 * Describes a plugin. Returned by `hub_plugin_entry`; owned by the plugin, static, valid while it is loaded.
 * The host reads `magic` and `abi` first and calls nothing else when they do not match.
 */
typedef struct hub_plugin_descriptor {
    uint32_t magic;        /* HUB_PLUGIN_MAGIC */
    uint32_t struct_size;  /* sizeof(hub_plugin_descriptor) */
    hub_version abi;       /* {HUB_ABI_MAJOR, HUB_ABI_MINOR} as the plugin was built */
    const char *id;        /* reverse-DNS, mandatory, never changes: "com.example.rows" */
    const char *name;      /* human-readable, mandatory */
    const char *version;   /* the plugin's own version, mandatory: "1.2.0" */
    const char *description;
    const char *vendor;

    /**
     * Initialises the plugin: registers its factories, actions, services. `host` is owned by the host and valid
     * until `deinit` returns; keep the pointer. Returns false on failure, writing why into `out_error`; the host
     * then revokes whatever the plugin registered and does not call `deinit`. Called once per load. [main-thread]
     */
    bool (*init)(const hub_host *host, char *out_error, size_t out_error_capacity);

    /**
     * Called once before unload, after the host destroyed the plugin's live components and revoked its
     * registrations. Free global state here; releasing services and logging still work, but anything registered
     * from here on (factories, layout managers, actions, services, bindings, timers) is refused: it would outlive
     * the plugin's code. Not called when the process simply exits. May be NULL. [main-thread]
     * Stop and join the threads the plugin started here: its code is unmapped once unload finishes, and a thread
     * still running it faults (reported as the plugin's). After `deinit` returns, the `hub_host` table refuses
     * every call as "not loaded" (`log` does nothing), so a late call from a destructor is harmless.
     */
    void (*deinit)(void);
} hub_plugin_descriptor;

/** The name of the entry symbol. */
#define HUB_PLUGIN_ENTRY_SYMBOL "hub_plugin_entry"

/** The type of the entry function. */
typedef const hub_plugin_descriptor *(*hub_plugin_entry_fn)(void);

/**
 * The one function a plugin exports. Returns the plugin's static descriptor; must not run any other code (the
 * host may call it in a child process to inspect the plugin). [main-thread]
 */
HUB_EXPORT const hub_plugin_descriptor *hub_plugin_entry(void);

#ifdef __cplusplus
}
#endif

#endif /* HUB_PLUGIN_H */
