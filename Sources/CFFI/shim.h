// libffi from Debian's libffi-dev (multiarch include path is on the default search path).
#include <ffi.h>
