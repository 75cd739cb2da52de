/* Firmware test: parse the ranklet models embedded by run.sh (fw_models.h)
 * into static storage through the C ABI, score and rank fixed rows, and
 * print everything over semihosting for run.sh to compare with
 * `ranklet score` on the host. Scores are printed as f32 bit patterns in
 * hex (exact; the host converts them). No libc, no heap.
 *
 * Output lines (one fact per line, parsed by run.sh):
 *   model <name> kind <k> dim <d> basis <b> bytes <n>
 *   score <name> <row> <f32 bits hex>
 *   order <name> <row> <row> ...          (rk_rank_dense, k = all rows)
 *   top3 <name> <row> <row> <row>         (rk_rank_dense, k = 3)
 *   stack <name> parse <bytes> rank <bytes>
 *   FIRMWARE OK | FIRMWARE FAIL <what> */
#include <stddef.h>
#include <stdint.h>

#include "fw_models.h"
#include "ranklet.h"
#include "semihost.h"

static unsigned char storage[256];
static float scores[FW_ROWS];
static uint32_t order[FW_ROWS];
static uint32_t top3[3];

/* ---- stack painting ---- */
extern uint32_t __stack_bottom[];
#define PAINT 0xC5AC5AC5u
#define PAINT_GAP 64u /* left unpainted below the caller's sp for paint()'s own frame */

static inline uint32_t current_sp(void) {
    uint32_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    return sp;
}
__attribute__((noinline)) static void paint(uint32_t below) {
    for (volatile uint32_t *p = __stack_bottom; (uint32_t)p < below; p++) *p = PAINT;
}
/* Bytes between `sp` and the lowest painted word that was overwritten. */
static uint32_t stack_used(uint32_t sp) {
    uint32_t *p = __stack_bottom;
    while ((uint32_t)p < sp - PAINT_GAP && *p == PAINT) p++;
    return sp - (uint32_t)p;
}

static int fail(const char *what, const char *name, uint32_t status) {
    sh_puts("FIRMWARE FAIL ");
    sh_puts(what);
    sh_puts(" ");
    sh_puts(name);
    sh_puts(" status ");
    sh_put_u32(status);
    sh_puts(" ");
    sh_puts(rk_status_str(status));
    sh_puts("\n");
    return 1;
}

static void put_kv(const char *k, uint32_t v) {
    sh_puts(" ");
    sh_puts(k);
    sh_puts(" ");
    sh_put_u32(v);
}

static int run_model(const fw_model *fm) {
    const rk_model *m = 0;
    rk_status st;
    uint32_t sp;

    if (rk_model_storage_size() > sizeof storage) return fail("storage", fm->name, rk_model_storage_size());

    sp = current_sp();
    paint(sp - PAINT_GAP);
    st = rk_model_parse(fm->bytes, *fm->len, storage, sizeof storage, &m);
    uint32_t stack_parse = stack_used(sp);
    if (st != RK_STATUS_OK) return fail("parse", fm->name, st);

    rk_model_info info;
    if ((st = rk_model_get_info(m, &info)) != RK_STATUS_OK) return fail("info", fm->name, st);
    if (info.dim != FW_DIM) return fail("dim", fm->name, (uint32_t)info.dim);
    sh_puts("model ");
    sh_puts(fm->name);
    put_kv("kind", info.kind);
    put_kv("dim", (uint32_t)info.dim);
    put_kv("basis", (uint32_t)info.basis_rows);
    put_kv("bytes", (uint32_t)info.bytes);
    sh_puts("\n");

    sp = current_sp();
    paint(sp - PAINT_GAP);
    st = rk_rank_dense(m, fw_rows, FW_ROWS * FW_DIM, scores, FW_ROWS, order, FW_ROWS);
    uint32_t stack_rank = stack_used(sp);
    if (st != RK_STATUS_OK) return fail("rank_dense", fm->name, st);

    /* One row at a time must give the same bits as the batch. */
    for (uint32_t r = 0; r < FW_ROWS; r++) {
        float s;
        if ((st = rk_score_dense(m, &fw_rows[r * FW_DIM], FW_DIM, &s)) != RK_STATUS_OK)
            return fail("score_dense", fm->name, st);
        union { float f; uint32_t u; } a = {s}, b = {scores[r]};
        if (a.u != b.u) return fail("score_dense differs from batch", fm->name, r);
        sh_puts("score ");
        sh_puts(fm->name);
        sh_puts(" ");
        sh_put_u32(r);
        sh_puts(" ");
        sh_put_hex32(a.u);
        sh_puts("\n");
    }
    sh_puts("order ");
    sh_puts(fm->name);
    for (uint32_t r = 0; r < FW_ROWS; r++) {
        sh_puts(" ");
        sh_put_u32(order[r]);
    }
    sh_puts("\n");

    float again[FW_ROWS];
    if ((st = rk_rank_dense(m, fw_rows, FW_ROWS * FW_DIM, again, FW_ROWS, top3, 3)) != RK_STATUS_OK)
        return fail("top3", fm->name, st);
    sh_puts("top3 ");
    sh_puts(fm->name);
    for (uint32_t r = 0; r < 3; r++) {
        sh_puts(" ");
        sh_put_u32(top3[r]);
    }
    sh_puts("\n");

    /* A damaged copy must be refused, not scored. */
    if ((st = rk_model_parse(fm->bytes, *fm->len - 1, storage, sizeof storage, &m)) != RK_STATUS_FORMAT_TRUNCATED)
        return fail("truncated model not refused", fm->name, st);

    sh_puts("stack ");
    sh_puts(fm->name);
    put_kv("parse", stack_parse);
    put_kv("rank", stack_rank);
    sh_puts("\n");
    return 0;
}

int main(void) {
    sh_puts("ranklet firmware test, library ");
    sh_puts(rk_version());
    sh_puts("\n");
    for (size_t i = 0; i < sizeof fw_models / sizeof fw_models[0]; i++)
        if (run_model(&fw_models[i])) return 1;
    sh_puts("FIRMWARE OK\n");
    return 0;
}
