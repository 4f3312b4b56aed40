// libFuzzer's entry for programs with a main of their own (compiler-rt's FuzzerInterface.h).
// The symbol is linked only with -sanitize=fuzzer; FuzzSupport calls it only when built so.
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerRunDriver(int *argc, char ***argv, int (*UserCb)(const uint8_t *Data, size_t Size));
