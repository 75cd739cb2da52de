/* Entry point for the freestanding proof: no libc, no crt, no allocator.
 * Supplies the four memory primitives rustc may emit calls to and exits via
 * the Linux x86-64 exit syscall. */
#include <stddef.h>

int ranklet_proof_main(void);

void *memcpy(void *d, const void *s, size_t n) {
    unsigned char *dp = d; const unsigned char *sp = s;
    while (n--) *dp++ = *sp++;
    return d;
}
void *memmove(void *d, const void *s, size_t n) {
    unsigned char *dp = d; const unsigned char *sp = s;
    if (dp < sp) { while (n--) *dp++ = *sp++; }
    else { dp += n; sp += n; while (n--) *--dp = *--sp; }
    return d;
}
void *memset(void *d, int c, size_t n) {
    unsigned char *dp = d;
    while (n--) *dp++ = (unsigned char)c;
    return d;
}
int memcmp(const void *a, const void *b, size_t n) {
    const unsigned char *x = a, *y = b;
    for (; n; n--, x++, y++) if (*x != *y) return *x - *y;
    return 0;
}
int bcmp(const void *a, const void *b, size_t n) { return memcmp(a, b, n); }

__attribute__((noreturn)) void proof_entry(void) {
    long code = ranklet_proof_main();
    __asm__ volatile("syscall" :: "a"(60L), "D"(code) : "rcx", "r11", "memory");
    for (;;) {}
}

/* The kernel enters _start with rsp 16-byte aligned; a C function expects
 * rsp = 8 mod 16 on entry, so _start is a two-instruction trampoline. */
__asm__(".globl _start\n_start:\n  andq $-16, %rsp\n  call proof_entry\n");
