/* Fuzz targets: each file defines LLVMFuzzerTestOneInput(). Built with clang -fsanitize=fuzzer
 * by `make fuzz`; linked with driver.c (a plain main() that runs every file or directory given
 * through the target once) by `make fuzz-corpus`, so the corpus is a regression test that needs
 * no libFuzzer. */
#ifndef ZB_FUZZ_H
#define ZB_FUZZ_H

#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#endif
