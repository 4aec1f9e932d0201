// amarena_version(): the version of the library linked, from the header it
// was built with.
#include "amarena/version.h"

#include "amarena/amarena.h"

extern "C" const char* amarena_version(void) { return AMARENA_VERSION_STRING; }
