/* Device-scoring measurements (bench/device_footprint.sh), one source for
 * three firmwares on QEMU mps2-an386 and two freestanding x86-64 programs:
 *
 *   FP_VARIANT 0  baseline: the same model bytes and rows, summed without
 *                 any ranklet call (what every firmware has anyway)
 *   FP_VARIANT 1  scoring path: rk_model_parse + rk_score_dense of a linear
 *                 model; minus variant 0 = the code ranklet adds
 *   FP_VARIANT 2  (firmware only) stack painting around parse and score,
 *                 and throughput: rk_score_dense_batch / rk_score_dense vs
 *                 a plain C f32 dot product over the same rows, timed with
 *                 SysTick under `qemu -icount shift=0` (one virtual ns per
 *                 instruction, so ticks count instructions, 40 per tick at
 *                 the AN386's 25 MHz); and the same batch on a copy of
 *                 the model at an odd address (weights read as bytes, not
 *                 through the aligned fast path), which must give the same
 *                 bits
 *
 * On the ARM side output goes over semihosting (tests/firmware/startup.c);
 * on x86-64 the program only exits (start code in host_start.c). */
#include <stddef.h>
#include <stdint.h>

#include "bench_model.h"
#include "ranklet.h"

#ifdef __arm__
#include "semihost.h"
#define OUT(s) sh_puts(s)
#define OUT_U(v) sh_put_u32(v)
#define OUT_X(v) sh_put_hex32(v)
#else
#define OUT(s) ((void)(s))
#define OUT_U(v) ((void)(v))
#define OUT_X(v) ((void)(v))
#endif

static uint32_t bits(float f) {
    union { float f; uint32_t u; } v = {f};
    return v.u;
}

#if FP_VARIANT == 0
int fp_main(void) {
    uint32_t sum = 0;
    for (size_t i = 0; i < BM_MODEL_LEN; i++) sum += bm_model[i];
    for (size_t i = 0; i < BM_DIM; i++) sum += bits(bm_rows[i]);
    OUT("baseline ");
    OUT_X(sum);
    OUT("\n");
    return sum == 0;
}

#elif FP_VARIANT == 1
static unsigned char storage[512];
int fp_main(void) {
    const rk_model *m;
    float s;
    if (rk_model_parse(bm_model, BM_MODEL_LEN, storage, sizeof storage, &m) != RK_STATUS_OK) return 1;
    if (rk_score_dense(m, bm_rows, BM_DIM, &s) != RK_STATUS_OK) return 2;
    OUT("score ");
    OUT_X(bits(s));
    OUT("\n");
    return 0;
}

#elif FP_VARIANT == 2
static unsigned char storage[512];
static float out_scores[BM_ROWS];
/* The model copied one byte past an 8-aligned address. */
_Alignas(8) static uint8_t model_odd[BM_MODEL_LEN + 1];
static unsigned char storage_odd[512];
static float out_odd[BM_ROWS];

#include "stackpaint.h"

/* ---- SysTick: 24-bit down-counter at the processor clock ---- */
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
static uint32_t now(void) { return SYST_CVR; }
static uint32_t since(uint32_t t0) { return (t0 - SYST_CVR) & 0xFFFFFFu; }

/* The plain C baseline: one f32 multiply-add per feature, in order. */
__attribute__((noinline)) static float plain_dot(const float *w, float b, const float *x, size_t d) {
    float s = 0.0f;
    for (size_t j = 0; j < d; j++) s += w[j] * x[j];
    return s + b;
}

#define REPS 20
static volatile float sink;

int fp_main(void) {
    const rk_model *m;
    float s;
    uint32_t sp;
    rk_status st;

    sp = current_sp();
    paint(sp - PAINT_GAP);
    st = rk_model_parse(bm_model, BM_MODEL_LEN, storage, sizeof storage, &m);
    uint32_t stack_parse = stack_used(sp);
    if (st != RK_STATUS_OK) return 1;

    sp = current_sp();
    paint(sp - PAINT_GAP);
    st = rk_score_dense(m, bm_rows, BM_DIM, &s);
    uint32_t stack_score = stack_used(sp);
    if (st != RK_STATUS_OK) return 2;

    sp = current_sp();
    paint(sp - PAINT_GAP);
    st = rk_score_dense_batch(m, bm_rows, BM_ROWS * BM_DIM, out_scores, BM_ROWS);
    uint32_t stack_batch = stack_used(sp);
    if (st != RK_STATUS_OK) return 3;

    OUT("stack parse ");
    OUT_U(stack_parse);
    OUT(" score_dense ");
    OUT_U(stack_score);
    OUT(" score_dense_batch ");
    OUT_U(stack_batch);
    OUT("\n");

    /* Agreement (so the timed loops compute the same thing). */
    float worst = 0.0f;
    for (size_t r = 0; r < BM_ROWS; r++) {
        float p = plain_dot(bm_w, bm_b, &bm_rows[r * BM_DIM], BM_DIM);
        float e = p > out_scores[r] ? p - out_scores[r] : out_scores[r] - p;
        float a = p < 0 ? -p : p;
        if (e > worst * a) worst = e / (a > 0 ? a : 1.0f);
    }
    OUT("agreement plain_vs_ranklet_rel_bits ");
    OUT_X(bits(worst));
    OUT("\n");

    /* The byte path: the same model at an odd address, same bits. */
    const rk_model *m_odd;
    for (size_t i = 0; i < BM_MODEL_LEN; i++) model_odd[i + 1] = bm_model[i];
    if (rk_model_parse(model_odd + 1, BM_MODEL_LEN, storage_odd, sizeof storage_odd, &m_odd) != RK_STATUS_OK) return 6;
    if (rk_score_dense_batch(m_odd, bm_rows, BM_ROWS * BM_DIM, out_odd, BM_ROWS) != RK_STATUS_OK) return 7;
    uint32_t differ = 0;
    for (size_t r = 0; r < BM_ROWS; r++) differ += bits(out_odd[r]) != bits(out_scores[r]);
    OUT("odd_address_rows_differing ");
    OUT_U(differ);
    OUT("\n");
    if (differ) return 8;

    SYST_RVR = 0xFFFFFFu;
    SYST_CVR = 0;
    SYST_CSR = 5; /* enable, processor clock, no interrupt */

    uint32_t t_batch = 0, t_single = 0, t_plain = 0, t_odd = 0, t0;
    for (int rep = 0; rep < REPS; rep++) {
        t0 = now();
        if (rk_score_dense_batch(m, bm_rows, BM_ROWS * BM_DIM, out_scores, BM_ROWS) != RK_STATUS_OK) return 4;
        t_batch += since(t0);

        t0 = now();
        for (size_t r = 0; r < BM_ROWS; r++) {
            if (rk_score_dense(m, &bm_rows[r * BM_DIM], BM_DIM, &s) != RK_STATUS_OK) return 5;
            sink = s;
        }
        t_single += since(t0);

        t0 = now();
        for (size_t r = 0; r < BM_ROWS; r++) sink = plain_dot(bm_w, bm_b, &bm_rows[r * BM_DIM], BM_DIM);
        t_plain += since(t0);

        t0 = now();
        if (rk_score_dense_batch(m_odd, bm_rows, BM_ROWS * BM_DIM, out_odd, BM_ROWS) != RK_STATUS_OK) return 9;
        t_odd += since(t0);
    }
    OUT("ticks rows ");
    OUT_U(REPS * BM_ROWS);
    OUT(" dim ");
    OUT_U(BM_DIM);
    OUT(" batch ");
    OUT_U(t_batch);
    OUT(" single ");
    OUT_U(t_single);
    OUT(" plain ");
    OUT_U(t_plain);
    OUT(" odd_batch ");
    OUT_U(t_odd);
    OUT("\n");
    return 0;
}
#endif

#ifdef __arm__
int main(void) {
    int rc = fp_main();
    OUT(rc ? "FOOTPRINT FAIL\n" : "FOOTPRINT OK\n");
    return rc;
}
#endif
