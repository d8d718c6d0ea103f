// librsvg and cairo, loaded when a PNG is first drawn rather than linked.
//
// Why: librsvg brings about forty libraries (cairo, pango, glib, harfbuzz, fontconfig…). Linked, the dynamic
// loader maps and relocates all of them in every hubhost process — each command, render worker and probe
// child — though only PNG output uses them. Loaded on first use, they cost a start-up only to the processes
// that draw.
//
// The declarations below are the few stable parts of the librsvg 2 / cairo 1 / GLib 2 ABIs hubhost calls,
// so building needs no development headers; the run-time library is Debian's librsvg2-2.
#ifndef HUB_CRSVG_H
#define HUB_CRSVG_H

#include <stddef.h>
#include <stdint.h>

// cairo_status_t and cairo_format_t values hubhost uses (cairo.h).
#define HUB_CAIRO_STATUS_SUCCESS 0
#define HUB_CAIRO_STATUS_READ_ERROR 10
#define HUB_CAIRO_STATUS_WRITE_ERROR 11
#define HUB_CAIRO_FORMAT_ARGB32 0
#define HUB_CAIRO_FORMAT_RGB24 1

/// RsvgRectangle.
typedef struct hub_rsvg_rectangle {
    double x, y, width, height;
} hub_rsvg_rectangle;

/// GError.
typedef struct hub_gerror {
    uint32_t domain;
    int code;
    char *message;
} hub_gerror;

typedef struct hub_cairo_surface hub_cairo_surface;
typedef struct hub_cairo hub_cairo;
typedef struct hub_rsvg_handle hub_rsvg_handle;
typedef int (*hub_cairo_write_fn)(void *closure, const unsigned char *data, unsigned int length);
typedef int (*hub_cairo_read_fn)(void *closure, unsigned char *data, unsigned int length);

/// The functions hubhost calls, resolved from the loaded librsvg and the libraries it depends on.
typedef struct hub_rsvg_api {
    hub_cairo_surface *(*image_surface_create)(int format, int width, int height);
    hub_cairo_surface *(*image_surface_create_from_png_stream)(hub_cairo_read_fn read, void *closure);
    void (*surface_destroy)(hub_cairo_surface *surface);
    int (*surface_status)(hub_cairo_surface *surface);
    void (*surface_flush)(hub_cairo_surface *surface);
    void (*surface_mark_dirty)(hub_cairo_surface *surface);
    int (*surface_write_to_png_stream)(hub_cairo_surface *surface, hub_cairo_write_fn write, void *closure);
    int (*image_surface_get_width)(hub_cairo_surface *surface);
    int (*image_surface_get_height)(hub_cairo_surface *surface);
    int (*image_surface_get_stride)(hub_cairo_surface *surface);
    int (*image_surface_get_format)(hub_cairo_surface *surface);
    unsigned char *(*image_surface_get_data)(hub_cairo_surface *surface);
    hub_cairo *(*create)(hub_cairo_surface *target);
    void (*destroy)(hub_cairo *cr);
    void (*scale)(hub_cairo *cr, double sx, double sy);
    hub_rsvg_handle *(*rsvg_handle_new_from_data)(const uint8_t *data, size_t length, hub_gerror **error);
    int (*rsvg_handle_render_document)(
        hub_rsvg_handle *handle, hub_cairo *cr, const hub_rsvg_rectangle *viewport, hub_gerror **error);
    void (*g_object_unref)(void *object);
    void (*g_error_free)(hub_gerror *error);
} hub_rsvg_api;

/// Loads librsvg once (later calls return the same table) and resolves every function of `hub_rsvg_api`.
/// Returns NULL when the library or one of its functions is missing, with the reason in `error` (`size` bytes);
/// a later call tries again. Thread-safe.
const hub_rsvg_api *hub_rsvg_load(char *error, size_t size);

/// The family fontconfig draws `family` with (the same name when it is installed; else its substitute), copied into
/// `out` (`size` bytes), returning 1. Returns -1 when fontconfig finds no font at all (text would be drawn as
/// boxes), 0 when fontconfig's functions cannot be found (then nothing is known). Loads librsvg (whose dependencies
/// include fontconfig) as `hub_rsvg_load` does.
int hub_rsvg_matched_family(const char *family, char *out, size_t size);

#endif
