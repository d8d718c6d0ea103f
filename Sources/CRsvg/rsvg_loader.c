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
    loaded = 1;  // the library stays loaded for the life of the process
    pthread_mutex_unlock(&lock);
    return &api;
}
