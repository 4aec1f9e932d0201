/* A C program using the installed (or add_subdirectory'd) library: the
 * version, and one kernel checked against a naive loop. */
#include <stdio.h>
#include <string.h>

#include "../check_matmul.h"
#include "amarena/amarena.h"

int main(void) {
  if (strcmp(amarena_version(), AMARENA_VERSION_STRING) != 0) {
    fprintf(stderr, "library %s, header %s\n", amarena_version(),
            AMARENA_VERSION_STRING);
    return 1;
  }
  if (amarena_check_matmul() != 0) return 1;
  printf("c consumer: amarena %s ok\n", amarena_version());
  return 0;
}
