/* Freestanding x86-64 start for bench/device/footprint.c (as
 * tests/c/freestanding.c): memory primitives, _start, exit syscall. */
#include <stddef.h>

int fp_main(void);

void *memcpy(void *d, const void *s, size_t n) {
    unsigned char *dp = d;
    const unsigned char *sp = s;
    while (n--) *dp++ = *sp++;
    return d;
}
void *memmove(void *d, const void *s, size_t n) {
    unsigned char *dp = d;
    const unsigned char *sp = s;
    if (dp < sp) {
        while (n--) *dp++ = *sp++;
    } else {
        dp += n;
        sp += n;
        while (n--) *--dp = *--sp;
    }
    return d;
}
void *memset(void *d, int c, size_t n) {
    unsigned char *dp = d;
    while (n--) *dp++ = (unsigned char)c;
    return d;
}
int memcmp(const void *a, const void *b, size_t n) {
    const unsigned char *x = a, *y = b;
    for (; n; n--, x++, y++)
        if (*x != *y) return *x - *y;
    return 0;
}
int bcmp(const void *a, const void *b, size_t n) { return memcmp(a, b, n); }

__attribute__((noreturn)) void fp_entry(void) {
    long code = fp_main();
    __asm__ volatile("syscall" ::"a"(60L), "D"(code) : "rcx", "r11", "memory");
    for (;;) {
    }
}
__asm__(".globl _start\n_start:\n  andq $-16, %rsp\n  call fp_entry\n");
