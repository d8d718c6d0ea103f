/*
 * Test fixture: a plugin whose image-loader service supplies images for https://art.test/ (a 2×2 PNG, all
 * #00FF00), and a component "art:cover" that draws its main image over a grey placeholder. The drawings of
 * `render`, `events` and `snapshot` must show the supplied image, as hubhost never fetches a remote URI itself.
 */
#include "hub_plugin.h"

#include <stdlib.h>
#include <string.h>

static const hub_host *host_table;

/* A 2×2 PNG, every pixel #00FF00. */
static const uint8_t green_png[] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00,
    0x00, 0x02, 0x00, 0x00, 0x00, 0x02, 0x08, 0x02, 0x00, 0x00, 0x00, 0xfd, 0xd4, 0x9a, 0x73, 0x00, 0x00, 0x00,
    0x0f, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x60, 0xf8, 0xcf, 0x00, 0x42, 0x10, 0x0a, 0x00, 0x1b, 0xf2,
    0x03, 0xfd, 0x6d, 0x54, 0xb8, 0xc7, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82};

static bool load_image(void *context, const char *uri, hub_loaded_image *out, char *error, size_t capacity) {
    (void)context;
    if (strncmp(uri, "https://art.test/", 17) != 0) {
        strncpy(error, "only https://art.test/ is served", capacity);
        return false;
    }
    out->bytes = green_png;
    out->length = sizeof green_png;
    out->size = (hub_size){2, 2};
    return true;
}
static const hub_image_loader_service loader = {sizeof loader, load_image};

typedef struct cover {
    const char *uri;
} cover;

static const char *traits(void *instance) { (void)instance; return "fullWidth"; }
static void load_view(void *instance) { (void)instance; }
static hub_size preferred_size(void *instance, const hub_model *model, hub_size container) {
    (void)instance; (void)model; (void)container;
    return (hub_size){100, 100};
}
static void prepare(void *instance) { ((cover *)instance)->uri = NULL; }
static void configure(void *instance, const hub_model *model, hub_size container) {
    (void)container;
    ((cover *)instance)->uri = host_table->model_image_uri(host_table, model, HUB_IMAGE_MAIN, NULL);
}
static void draw(void *instance, const hub_view_builder *view, hub_size size) {
    cover *self = instance;
    if (self->uri) view->image(view, (hub_rect){0, 0, size.width, size.height}, self->uri, HUB_CONTENT_SCALE_TO_FILL, 0x888888FFu);
}
static hub_size image_size(void *instance, hub_image_kind kind, const char *custom_id, const hub_model *model, hub_size container) {
    (void)instance; (void)kind; (void)custom_id; (void)model; (void)container;
    return (hub_size){100, 100};
}
static void image_loaded(void *instance, const hub_image *image, bool animated) { (void)instance; (void)image; (void)animated; }
static const hub_image_handling_ext images = {sizeof images, image_size, image_loaded};
static const void *extension(void *instance, const char *id) {
    (void)instance;
    return strcmp(id, HUB_EXT_IMAGE_HANDLING) == 0 ? &images : NULL;
}
static void destroy(void *instance) { free(instance); }

static const hub_component_class cover_class = {
    sizeof cover_class, traits, load_view, preferred_size, prepare, configure, draw, extension, destroy};

static bool create(const hub_component_factory *factory, const char *name, hub_component *out) {
    (void)factory;
    if (strcmp(name, "cover") != 0) return false;
    out->klass = &cover_class;
    out->instance = calloc(1, sizeof(cover));
    return out->instance != NULL;
}
static const char *const names[] = {"cover", NULL};
static const char *const *component_names(const hub_component_factory *factory) { (void)factory; return names; }
static const hub_component_factory factory = {sizeof factory, NULL, create, component_names, NULL};

static bool init(const hub_host *host, char *error, size_t capacity) {
    host_table = host;
    if (!host->register_component_factory(host, "art", &factory, error, capacity)) return false;
    hub_service service = {sizeof service, HUB_SERVICE_IMAGE_LOADER, 1, NULL, &loader, NULL, NULL, NULL};
    return host->register_service(host, &service, error, capacity);
}
static void deinit(void) { host_table = NULL; }

static const hub_plugin_descriptor descriptor = {
    .magic = HUB_PLUGIN_MAGIC,
    .struct_size = sizeof descriptor,
    .abi = {HUB_ABI_MAJOR, HUB_ABI_MINOR},
    .id = "com.test.remote-art",
    .name = "Remote art",
    .version = "1.0.0",
    .init = init,
    .deinit = deinit,
};
HUB_EXPORT const hub_plugin_descriptor *hub_plugin_entry(void) { return &descriptor; }
