#include "crsvg.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static hub_rsvg_api api;
static int loaded;

// Resolves `name` into `*slot` from `handle` (dlsym searches the library and its dependencies); false, with the
// reason in `error`, when it is missing.
static int resolve(void *handle, const char *name, void **slot, char *error, size_t size) {
    *slot = dlsym(handle, name);
    if (*slot) return 1;
    snprintf(error, size, "librsvg has no %s", name);
    return 0;
}

static void *library;

const hub_rsvg_api *hub_rsvg_load(char *error, size_t size) {
    pthread_mutex_lock(&lock);
    if (loaded) {
        pthread_mutex_unlock(&lock);
        return &api;
    }
    // The versioned name first (the run-time package); the bare name only exists with the -dev package.
    void *handle = dlopen("librsvg-2.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!handle) handle = dlopen("librsvg-2.so", RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char *reason = dlerror();
        snprintf(error, size, "cannot load librsvg (Debian's librsvg2-2): %s", reason ? reason : "not found");
        pthread_mutex_unlock(&lock);
        return NULL;
    }
    hub_rsvg_api table;
    struct {
        const char *name;
        void **slot;
    } symbols[] = {
        {"cairo_image_surface_create", (void **)&table.image_surface_create},
        {"cairo_image_surface_create_from_png_stream", (void **)&table.image_surface_create_from_png_stream},
        {"cairo_surface_destroy", (void **)&table.surface_destroy},
        {"cairo_surface_status", (void **)&table.surface_status},
        {"cairo_surface_flush", (void **)&table.surface_flush},
        {"cairo_surface_mark_dirty", (void **)&table.surface_mark_dirty},
        {"cairo_surface_write_to_png_stream", (void **)&table.surface_write_to_png_stream},
        {"cairo_image_surface_get_width", (void **)&table.image_surface_get_width},
        {"cairo_image_surface_get_height", (void **)&table.image_surface_get_height},
        {"cairo_image_surface_get_stride", (void **)&table.image_surface_get_stride},
        {"cairo_image_surface_get_format", (void **)&table.image_surface_get_format},
        {"cairo_image_surface_get_data", (void **)&table.image_surface_get_data},
        {"cairo_create", (void **)&table.create},
        {"cairo_destroy", (void **)&table.destroy},
        {"cairo_scale", (void **)&table.scale},
        {"rsvg_handle_new_from_data", (void **)&table.rsvg_handle_new_from_data},
        {"rsvg_handle_render_document", (void **)&table.rsvg_handle_render_document},
        {"g_object_unref", (void **)&table.g_object_unref},
        {"g_error_free", (void **)&table.g_error_free},
    };
    for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; i++) {
        if (!resolve(handle, symbols[i].name, symbols[i].slot, error, size)) {
            dlclose(handle);
            pthread_mutex_unlock(&lock);
            return NULL;
        }
    }
    api = table;
    library = handle;
    loaded = 1;  // the library stays loaded for the life of the process
    pthread_mutex_unlock(&lock);
    return &api;
}

// fontconfig's stable C API (fontconfig.h), as much as the font check needs.
typedef void *(*fc_name_parse_fn)(const unsigned char *name);
typedef int (*fc_config_substitute_fn)(void *config, void *pattern, int kind);
typedef void (*fc_default_substitute_fn)(void *pattern);
typedef void *(*fc_font_match_fn)(void *config, void *pattern, int *result);
typedef int (*fc_pattern_get_string_fn)(const void *pattern, const char *object, int n, unsigned char **value);
typedef void (*fc_pattern_destroy_fn)(void *pattern);

int hub_rsvg_matched_family(const char *family, char *out, size_t size) {
    char error[256];
    if (!hub_rsvg_load(error, sizeof error) || size == 0) return 0;
    fc_name_parse_fn parse = (fc_name_parse_fn)dlsym(library, "FcNameParse");
    fc_config_substitute_fn substitute = (fc_config_substitute_fn)dlsym(library, "FcConfigSubstitute");
    fc_default_substitute_fn defaults = (fc_default_substitute_fn)dlsym(library, "FcDefaultSubstitute");
    fc_font_match_fn match = (fc_font_match_fn)dlsym(library, "FcFontMatch");
    fc_pattern_get_string_fn get_string = (fc_pattern_get_string_fn)dlsym(library, "FcPatternGetString");
    fc_pattern_destroy_fn destroy = (fc_pattern_destroy_fn)dlsym(library, "FcPatternDestroy");
    if (!parse || !substitute || !defaults || !match || !get_string || !destroy) return 0;
    void *pattern = parse((const unsigned char *)family);
    if (!pattern) return 0;
    substitute(NULL, pattern, 0 /* FcMatchPattern */);
    defaults(pattern);
    int result = 0;
    void *font = match(NULL, pattern, &result);
    destroy(pattern);
    // No match, or one without a family: fontconfig knows no font at all (an empty or broken configuration).
    if (!font) return -1;
    unsigned char *name = NULL;
    int found = get_string(font, "family", 0, &name) == 0 /* FcResultMatch */ && name;
    if (found) snprintf(out, size, "%s", (const char *)name);
    destroy(font);
    return found ? 1 : -1;
}
