/* Loads the plugin with dlopen (which loads libamarena.so through it) and runs
 * its check. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: host PLUGIN.so\n");
    return 2;
  }
  void* h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (h == NULL) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  int (*check)(void) = (int (*)(void))dlsym(h, "plugin_check");
  if (check == NULL) {
    fprintf(stderr, "dlsym: %s\n", dlerror());
    return 1;
  }
  if (check() != 0) return 1;
  /* amarena's threads live on: libamarena.so is NODELETE, so unloading the
   * plugin leaves it mapped. */
  if (dlclose(h) != 0) {
    fprintf(stderr, "dlclose: %s\n", dlerror());
    return 1;
  }
  printf("plugin ran and was unloaded\n");
  return 0;
}
