/* Freestanding link of the scoring path: no libc, no crt, no allocator.
 * Built with -ffreestanding -nostdlib -static against the no_std
 * libranklet_ffi.a (--no-default-features, panic = "abort"); supplies the
 * memory primitives rustc may call and exits through the Linux x86-64 exit
 * syscall. ffi/tests/c_consumers.rs builds, inspects (no malloc) and runs it. */
#include <stddef.h>
#include <stdint.h>

#include "ranklet.h"
#include "fixtures.h"

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

static float fabsf_(float x) { return x < 0 ? -x : x; }

static unsigned char storage[512];

static int run(void) {
    if (rk_model_storage_size() > sizeof storage) return 2;
    for (size_t i = 0; i < FIX_MODELS; i++) {
        const fixture_model *fx = &fix_models[i];
        const rk_model *m = 0;
        if (rk_model_parse(fx->bytes, fx->len, storage, sizeof storage, &m) != RK_STATUS_OK) return 3;
        float scores[FIX_ROWS];
        uint32_t top[3];
        if (rk_rank_dense(m, fix_rows, FIX_ROWS * FIX_DIM, scores, FIX_ROWS, top, 3) != RK_STATUS_OK) return 4;
        for (size_t r = 0; r < FIX_ROWS; r++)
            if (fabsf_(scores[r] - fx->dense_scores[r]) > 1e-6f * fabsf_(fx->dense_scores[r])) return 5;
        for (size_t r = 0; r < 3; r++)
            if (top[r] != fx->order[r]) return 6;
        float s;
        if (rk_score_sparse(m, fix_indices, fix_values, fix_row_ptr[1], &s) != RK_STATUS_OK) return 7;
        if (rk_model_parse(fx->bytes, fx->len - 1, storage, sizeof storage, &m) != RK_STATUS_FORMAT_TRUNCATED)
            return 8;
    }
    return 0;
}

__attribute__((noreturn)) void freestanding_entry(void) {
    long code = run();
    __asm__ volatile("syscall" ::"a"(60L), "D"(code) : "rcx", "r11", "memory");
    for (;;) {
    }
}

/* The kernel enters _start with rsp 16-byte aligned; a C function expects
 * rsp = 8 mod 16 on entry, so _start is a two-instruction trampoline. */
__asm__(".globl _start\n_start:\n  andq $-16, %rsp\n  call freestanding_entry\n");
