#include "hub_plugin.h"
