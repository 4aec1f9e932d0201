/* A shared library that uses amarena (itself shared), as an inference
 * engine's backend would. */
#include "../check_matmul.h"

__attribute__((visibility("default"))) int plugin_check(void) {
  return amarena_check_matmul();
}
