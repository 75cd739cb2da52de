/* Integer scoring on an FPU-less core: the firmware of
 * tests/firmware/run_quant.sh (QEMU mps2-an385, Cortex-M3) and of
 * bench/device_quant.sh (Cortex-M0/M3/M4F). It parses the quantised models
 * (kind 7) embedded by quanttool.py (quant_fw.h) into static storage,
 * quantises every f32 row as the model says (rk_quantize_dense), scores the
 * i16 rows (rk_score_dense_i16_batch and rk_score_dense_i16) and the f32
 * rows directly (rk_score_dense_quant), checks that all three agree, and
 * prints the integer scores for run_quant.sh to compare with `ranklet
 * score` on the host. No libc, no heap.
 *
 * QF_VARIANT 0  baseline for .text: the same data, summed without ranklet
 * QF_VARIANT 1  correctness run (default): the lines below
 * QF_VARIANT 2  bench: as 1, plus SysTick ticks (instructions under
 *               `qemu -icount shift=0`, 40 per tick) of the integer paths and
 *               of a plain C int16 dot product over the same rows
 * QF_VARIANT 3  .text of the integer path alone: rk_model_parse +
 *               rk_score_dense_i16 (no float code)
 *
 * Output lines:
 *   model <name> kind <k> dim <d> bytes <n> bits <8|16>
 *   qscore <name> <row> <decimal int64>
 *   stack <name> parse <bytes> i16 <bytes> quant <bytes>
 *   ticks <name> rows <n> dim <d> i16_batch <t> i16_single <t> quant <t> plain <t>
 *   QUANT FIRMWARE OK | QUANT FIRMWARE FAIL <what> */
#include <stddef.h>
#include <stdint.h>

#include "quant_fw.h"
#include "ranklet.h"
#include "semihost.h"

#ifndef QF_VARIANT
#define QF_VARIANT 1
#endif
#if QF_VARIANT == 1 || QF_VARIANT == 2
#include "stackpaint.h"
#endif

/* Not every variant uses every buffer. */
#define MAYBE_UNUSED __attribute__((unused))
static MAYBE_UNUSED unsigned char storage[256];
static MAYBE_UNUSED int16_t qrows[QF_MAX_CELLS];
static MAYBE_UNUSED int64_t scores[QF_MAX_ROWS];

static MAYBE_UNUSED int fail(const char *what, const char *name, uint32_t v) {
    sh_puts("QUANT FIRMWARE FAIL ");
    sh_puts(what);
    sh_puts(" ");
    sh_puts(name);
    sh_puts(" ");
    sh_put_u32(v);
    sh_puts("\n");
    return 1;
}

static MAYBE_UNUSED void put_i64(int64_t v) {
    char b[21];
    int i = 20;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    b[i] = 0;
    do {
        b[--i] = (char)('0' + (int)(u % 10u));
        u /= 10u;
    } while (u);
    if (v < 0) b[--i] = '-';
    sh_puts(&b[i]);
}

static void put_kv(const char *k, uint32_t v) {
    sh_puts(" ");
    sh_puts(k);
    sh_puts(" ");
    sh_put_u32(v);
}

#if QF_VARIANT == 0
/* The data alone: what a firmware holds anyway. */
static int run_set(const qf_set *s) {
    uint32_t acc = 0;
    for (size_t i = 0; i < *s->len; i++) acc += s->bytes[i];
    for (size_t i = 0; i < (size_t)s->n_rows * s->dim; i++) acc += (uint32_t)(int32_t)s->rows[i];
    put_kv("sum", acc);
    return 0;
}
#elif QF_VARIANT == 3
/* Parse + integer scoring only: the code an integer-only firmware links. */
static int run_set(const qf_set *s) {
    const rk_model *m = 0;
    int64_t v = 0;
    if (rk_model_parse(s->bytes, *s->len, storage, sizeof storage, &m) != RK_STATUS_OK) return fail("parse", s->name, 0);
    for (size_t i = 0; i < s->dim; i++) qrows[i] = (int16_t)s->rows[i];
    if (rk_score_dense_i16(m, qrows, s->dim, &v) != RK_STATUS_OK) return fail("score", s->name, 0);
    put_kv("score_low", (uint32_t)v);
    return 0;
}
#else
#if QF_VARIANT == 2
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
static uint32_t now(void) { return SYST_CVR; }
static uint32_t since(uint32_t t0) { return (t0 - SYST_CVR) & 0xFFFFFFu; }
static volatile int64_t sink;

/* The plain loop a firmware author would write for the same model: the
 * weights as int16 (read once from the model through rk_quant_weights is
 * not offered, so the bench passes them from quant_fw.h) and an int64 sum. */
static int64_t plain_dot(const int16_t *w, int64_t b, const int16_t *q, size_t n) {
    int64_t acc = b;
    for (size_t j = 0; j < n; j++) acc += (int32_t)w[j] * (int32_t)q[j];
    return acc;
}
#endif

static int run_set(const qf_set *s) {
    const rk_model *m = 0;
    rk_status st;
    const size_t d = s->dim, n = s->n_rows;
    if (n > QF_MAX_ROWS || n * d > QF_MAX_CELLS) return fail("too many rows", s->name, (uint32_t)n);
    if (rk_model_storage_size() > sizeof storage) return fail("storage", s->name, (uint32_t)rk_model_storage_size());

    uint32_t sp = current_sp();
    paint(sp - PAINT_GAP);
    st = rk_model_parse(s->bytes, *s->len, storage, sizeof storage, &m);
    uint32_t st_parse = stack_used(sp);
    if (st != RK_STATUS_OK) return fail("parse", s->name, st);

    rk_model_info info;
    rk_quant_info qi;
    if (rk_model_get_info(m, &info) != RK_STATUS_OK || info.dim != d) return fail("info", s->name, 0);
    if (rk_quant_get_info(m, &qi) != RK_STATUS_OK) return fail("quant info", s->name, 0);
    sh_puts("model ");
    sh_puts(s->name);
    put_kv("kind", info.kind);
    put_kv("dim", (uint32_t)info.dim);
    put_kv("bytes", (uint32_t)info.bytes);
    put_kv("bits", qi.weight_bits);
    sh_puts("\n");

    for (size_t r = 0; r < n; r++) {
        st = rk_quantize_dense(m, &s->rows[r * d], d, &qrows[r * d], d);
        if (st != RK_STATUS_OK) return fail("quantize", s->name, st);
    }
    sp = current_sp();
    paint(sp - PAINT_GAP);
    st = rk_score_dense_i16_batch(m, qrows, n * d, scores, n);
    uint32_t st_i16 = stack_used(sp);
    if (st != RK_STATUS_OK) return fail("i16 batch", s->name, st);

    uint32_t st_quant = 0;
    for (size_t r = 0; r < n; r++) {
        int64_t a, b;
        if ((st = rk_score_dense_i16(m, &qrows[r * d], d, &a)) != RK_STATUS_OK) return fail("i16", s->name, st);
        sp = current_sp();
        paint(sp - PAINT_GAP);
        st = rk_score_dense_quant(m, &s->rows[r * d], d, &b);
        uint32_t used = stack_used(sp);
        if (used > st_quant) st_quant = used;
        if (st != RK_STATUS_OK) return fail("quant", s->name, st);
        if (a != scores[r] || b != scores[r]) return fail("i16, batch and quant differ", s->name, (uint32_t)r);
        sh_puts("qscore ");
        sh_puts(s->name);
        sh_puts(" ");
        sh_put_u32((uint32_t)r);
        sh_puts(" ");
        put_i64(scores[r]);
        sh_puts("\n");
    }
    sh_puts("stack ");
    sh_puts(s->name);
    put_kv("parse", st_parse);
    put_kv("i16", st_i16);
    put_kv("quant", st_quant);
    sh_puts("\n");

#if QF_VARIANT == 2
    SYST_RVR = 0xFFFFFFu;
    SYST_CVR = 0;
    SYST_CSR = 5; /* enable, processor clock, no interrupt */
    uint32_t t_batch, t_single, t_quant, t_plain, t0;
    int64_t v;
    t0 = now();
    if (rk_score_dense_i16_batch(m, qrows, n * d, scores, n) != RK_STATUS_OK) return fail("bench batch", s->name, 0);
    t_batch = since(t0);
    t0 = now();
    for (size_t r = 0; r < n; r++) {
        if (rk_score_dense_i16(m, &qrows[r * d], d, &v) != RK_STATUS_OK) return fail("bench i16", s->name, 0);
        sink = v;
    }
    t_single = since(t0);
    t0 = now();
    for (size_t r = 0; r < n; r++) {
        if (rk_score_dense_quant(m, &s->rows[r * d], d, &v) != RK_STATUS_OK) return fail("bench quant", s->name, 0);
        sink = v;
    }
    t_quant = since(t0);
    t0 = now();
    for (size_t r = 0; r < n; r++) sink = plain_dot(s->weights, qi.bias, &qrows[r * d], d);
    t_plain = since(t0);
    for (size_t r = 0; r < n; r++)
        if (plain_dot(s->weights, qi.bias, &qrows[r * d], d) != scores[r]) return fail("plain differs", s->name, (uint32_t)r);
    sh_puts("ticks ");
    sh_puts(s->name);
    put_kv("rows", (uint32_t)n);
    put_kv("dim", (uint32_t)d);
    put_kv("i16_batch", t_batch);
    put_kv("i16_single", t_single);
    put_kv("quant", t_quant);
    put_kv("plain", t_plain);
    sh_puts("\n");
#endif
    return 0;
}
#endif

int main(void) {
    for (size_t i = 0; i < QF_SETS; i++) {
        if (run_set(&qf_sets[i])) return 1;
    }
    sh_puts("QUANT FIRMWARE OK\n");
    return 0;
}
