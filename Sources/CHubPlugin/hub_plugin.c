// The ABI is header-only; SwiftPM needs one source file to make a C target.
#include "hub_plugin.h"
