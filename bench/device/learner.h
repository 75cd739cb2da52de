/* Shared by the device learners' benchmark firmwares (online.c, pref.c):
 * a check value, failure output, the save/load round trip through the A/B
 * store, and, with BENCH_MEASURE 1, stack painting and instruction counts
 * around each call (SysTick under `qemu -icount shift=0`: one virtual ns
 * per instruction, 40 per tick at 25 MHz). Each call goes through RUN or
 * TRY, which without BENCH_MEASURE is the plain call, so the variants
 * that measure code size contain nothing of the measuring. The including
 * file defines BENCH_MEASURE, BENCH_LEARNER (a variant that calls the
 * library: the model and learner storage, STORAGE_MAX bytes), BENCH_STORE
 * (one that saves and loads: the region, REGION_MAX bytes, and a second
 * learner storage), declares `rk_status st` in the function that uses
 * CHECK/RUN/TRY, and, in measured builds, the counters `s_save, t_save,
 * s_load, t_load` SAVE_LOAD fills. No libc, no heap. */
#ifndef BENCH_DEVICE_LEARNER_H
#define BENCH_DEVICE_LEARNER_H
#include <stddef.h>
#include <stdint.h>

#include "ranklet.h"
#include "semihost.h"

static inline uint32_t bits(float f) {
    union { float f; uint32_t u; } v = {f};
    return v.u;
}

/* "LABEL HEX\n": the check value every variant prints. */
static inline void put_hex_line(const char *label, uint32_t v) {
    sh_puts(label);
    sh_puts(" ");
    sh_put_hex32(v);
    sh_puts("\n");
}

#if BENCH_LEARNER
static unsigned char model_storage[512];
static unsigned char storage[STORAGE_MAX];
#endif
#if BENCH_STORE
static unsigned char region[REGION_MAX];
static unsigned char storage2[STORAGE_MAX];
#endif

static inline int fail(const char *what, uint32_t st) {
    sh_puts("FAIL ");
    sh_puts(what);
    sh_puts(" ");
    sh_put_u32(st);
    sh_puts("\n");
    return 1;
}

#if BENCH_MEASURE
#include "stackpaint.h"
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
static inline uint32_t since(uint32_t t0) { return (t0 - SYST_CVR) & 0xFFFFFFu; }
static inline void systick_start(void) {
    SYST_RVR = 0xFFFFFFu;
    SYST_CVR = 0;
    SYST_CSR = 5;
}
/* `st = call`, its instructions (ticks) into ticks_var and the deepest
 * painted stack so far into stack_var. */
#define RUN(stack_var, ticks_var, call)       \
    do {                                      \
        uint32_t sp_ = current_sp();          \
        paint(sp_ - PAINT_GAP);               \
        uint32_t t0_ = SYST_CVR;              \
        st = (call);                          \
        ticks_var = since(t0_);               \
        uint32_t u_ = stack_used(sp_);        \
        if (u_ > stack_var) stack_var = u_;   \
    } while (0)

/* "LABEL NAME VALUE NAME VALUE …\n", the figures the bench scripts read. */
static inline void put_figures(const char *label, const char *const *names, const uint32_t *values, size_t n) {
    sh_puts(label);
    for (size_t i = 0; i < n; i++) {
        sh_puts(" ");
        sh_puts(names[i]);
        sh_puts(" ");
        sh_put_u32(values[i]);
    }
    sh_puts("\n");
}
#else
#define RUN(stack_var, ticks_var, call) (st = (call))
#endif

/* `st = call`, and return fail(WHAT) unless it succeeded (not measured). */
#define CHECK(what, call)                                 \
    do {                                                  \
        st = (call);                                      \
        if (st != RK_STATUS_OK) return fail((what), st);  \
    } while (0)

/* RUN, and return fail(WHAT) unless the call succeeded. */
#define TRY(what, stack_var, ticks_var, call)             \
    do {                                                  \
        RUN(stack_var, ticks_var, call);                  \
        if (st != RK_STATUS_OK) return fail((what), st);  \
    } while (0)

/* Saves the learner H of kind KIND (online, pref) of size SIZE into
 * `region` and loads it back into `storage2`: the same calls, with the
 * same arguments, for every device learner. */
#define SAVE_LOAD(KIND, H, SIZE)                                                                          \
    do {                                                                                                  \
        uint32_t seq_;                                                                                    \
        rk_##KIND *back_;                                                                                 \
        if (rk_##KIND##_store_size(SIZE) > sizeof region) return fail("region", 0);                       \
        TRY("save", s_save, t_save, rk_##KIND##_save((H), region, sizeof region, &seq_));                 \
        TRY("load", s_load, t_load,                                                                       \
            rk_##KIND##_load(region, sizeof region, storage2, sizeof storage2, &back_, &seq_));           \
    } while (0)
#endif
