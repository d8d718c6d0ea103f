// librsvg draws hubhost's SVG into a cairo image surface, which cairo writes as PNG (Debian's librsvg2-dev).
#include <librsvg/rsvg.h>
#include <cairo.h>
