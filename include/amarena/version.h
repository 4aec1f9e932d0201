/* amarena's version: the one place it is written (CMakeLists.txt reads the
 * project version from here, so the library, its package files and this
 * header always agree). amarena_version() (amarena/amarena.h) gives the
 * version of the library actually linked, which may differ from the header
 * an application was compiled with. */
#ifndef AMARENA_VERSION_H_
#define AMARENA_VERSION_H_

#define AMARENA_VERSION_MAJOR 0
#define AMARENA_VERSION_MINOR 1
#define AMARENA_VERSION_PATCH 0
#define AMARENA_VERSION_STRING "0.1.0"

/* One integer to compare against: 10000 * major + 100 * minor + patch. */
#define AMARENA_VERSION                                              \
  (AMARENA_VERSION_MAJOR * 10000 + AMARENA_VERSION_MINOR * 100 + \
   AMARENA_VERSION_PATCH)

#endif /* AMARENA_VERSION_H_ */
