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
 *   online w <j> <f32 bits hex>           (after the recorded feedback)
 *   online count <n>
 *   online next <i> <j> ratio <f32 bits hex>
 *   online saved seq <s> bytes <n>; online reloaded seq <s>
 *   online torn: previous state loads (seq <s>)
 *   stack online observe <bytes> next <bytes> save <bytes> load <bytes>
 *   model bilinear kind 3 dim <d> dim_v <d> work <n> bytes <n>
 *   pscore bilinear <u> <row> <f32 bits hex> (rk_rank_candidates for node u)
 *   porder bilinear <u> <row> <row> ...
 *   stack bilinear rank <bytes>
 *   pref mean <i> <f32 bits hex>            (preference GP after the observations)
 *   pref cov <k> <f32 bits hex>             (packed lower triangle)
 *   pref count <n>
 *   pref next <i> <j> ratio <f32 bits hex>
 *   pref prob <i> <j> <f32 bits hex> var <f32 bits hex>
 *   pref order <item> <item> ...
 *   pref saved seq <s>; pref torn: previous state loads (seq <s>)
 *   stack pref observe <bytes> prob <bytes> next <bytes> save <bytes> load <bytes>
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

/* The online learner (dimension FW_DIM) and its two-slot store. */
#define ONLINE_STORAGE 512
#define ONLINE_REGION 512
static unsigned char online_storage[ONLINE_STORAGE];
static unsigned char online_reloaded[ONLINE_STORAGE];
static unsigned char online_region[ONLINE_REGION];
static float online_work[FW_ROWS * FW_DIM + 4 * FW_ROWS + 16];

/* The pair model (kind 3): a symmetric bilinear model written by
 * core/examples/pair_fixture.rs on the host (run.sh embeds it). */
extern const uint8_t fw_model_bilinear[];
extern const size_t fw_model_bilinear_len;
static float pair_work[FW_DIM + 8];

/* The preference GP (kind 8): a prior over FW_PREF_N items written by
 * core/examples/pref_fixture.rs on the host, with the observations it
 * drew (pref_obs.h); run.sh compares the device posterior with the host's
 * f64 ADF from the same file. */
#include "pref_obs.h"
extern const uint8_t fw_model_pref[];
extern const size_t fw_model_pref_len;
#define PREF_FLOATS (2 * FW_PREF_N + FW_PREF_N * (FW_PREF_N + 1) / 2)
#define PREF_STORAGE (4 * PREF_FLOATS + 64)
#define PREF_REGION (2 * (4 * (FW_PREF_N + FW_PREF_N * (FW_PREF_N + 1) / 2) + 128))
static unsigned char pref_storage[PREF_STORAGE];
static unsigned char pref_reloaded[PREF_STORAGE];
static unsigned char pref_region[PREF_REGION];
static float pref_mean[FW_PREF_N], pref_cov[FW_PREF_N * (FW_PREF_N + 1) / 2];
static uint32_t pref_order[FW_PREF_N];

#include "stackpaint.h"

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

static void put_w(const char *tag, const float *w) {
    for (uint32_t j = 0; j < FW_DIM; j++) {
        union { float f; uint32_t u; } a = {w[j]};
        sh_puts("online ");
        sh_puts(tag);
        sh_puts(" ");
        sh_put_u32(j);
        sh_puts(" ");
        sh_put_hex32(a.u);
        sh_puts("\n");
    }
}

/* Learning on the device: start from the linear model, apply the
 * recorded feedback, ask for the next pair, save to the A/B store, reload,
 * and check that a torn save keeps the previous state. */
static int run_online(void) {
    const rk_model *prior = 0;
    rk_online *o = 0, *back = 0;
    rk_status st;
    uint32_t sp, seq = 0, seq2 = 0;
    float w[FW_DIM], w2[FW_DIM];
    uint64_t count = 0, count2 = 0;

    if ((st = rk_model_parse(fw_model_linear, fw_model_linear_len, storage, sizeof storage, &prior)) != RK_STATUS_OK)
        return fail("parse", "online prior", st);
    if (rk_online_storage_size(FW_DIM) > sizeof online_storage)
        return fail("storage", "online", (uint32_t)rk_online_storage_size(FW_DIM));
    if (rk_online_store_size(FW_DIM) > sizeof online_region)
        return fail("region", "online", (uint32_t)rk_online_store_size(FW_DIM));
    if (rk_online_next_pair_work_size(FW_ROWS, FW_DIM) > (size_t)sizeof online_work)
        return fail("work", "online", (uint32_t)rk_online_next_pair_work_size(FW_ROWS, FW_DIM));
    if ((st = rk_online_init(prior, 1.0f, online_storage, sizeof online_storage, &o)) != RK_STATUS_OK)
        return fail("init", "online", st);

    uint32_t stack_observe = 0;
    for (uint32_t k = 0; k < FW_FEEDBACK; k++) {
        const fw_pair *p = &fw_feedback[k];
        sp = current_sp();
        paint(sp - PAINT_GAP);
        st = rk_online_observe(o, &fw_rows[p->winner * FW_DIM], &fw_rows[p->loser * FW_DIM], FW_DIM, p->magnitude);
        uint32_t used = stack_used(sp);
        if (used > stack_observe) stack_observe = used;
        if (st != RK_STATUS_OK) return fail("observe", "online", k);
    }
    /* Bad input is refused and changes nothing. */
    float nan_row[FW_DIM];
    for (uint32_t j = 0; j < FW_DIM; j++) nan_row[j] = fw_rows[j];
    nan_row[0] = __builtin_nanf("");
    if ((st = rk_online_observe(o, nan_row, &fw_rows[FW_DIM], FW_DIM, 1.0f)) != RK_STATUS_NON_FINITE_INPUT)
        return fail("NaN row not refused", "online", st);
    if ((st = rk_online_observe(o, fw_rows, &fw_rows[FW_DIM], FW_DIM, -1.0f)) != RK_STATUS_BAD_ARGUMENT)
        return fail("negative magnitude not refused", "online", st);

    if ((st = rk_online_weights(o, w, FW_DIM, &count)) != RK_STATUS_OK) return fail("weights", "online", st);
    put_w("w", w);
    sh_puts("online count ");
    sh_put_u32((uint32_t)count);
    sh_puts("\n");

    uint32_t ni = 0, nj = 0;
    float ratio = 0;
    sp = current_sp();
    paint(sp - PAINT_GAP);
    st = rk_online_next_pair(o, fw_rows, FW_ROWS * FW_DIM, FW_ROWS, online_work, sizeof online_work, &ni, &nj, &ratio);
    uint32_t stack_next = stack_used(sp);
    if (st != RK_STATUS_OK) return fail("next_pair", "online", st);
    if (!(ni < nj && nj < FW_ROWS)) return fail("next_pair out of range", "online", nj);
    union { float f; uint32_t u; } r = {ratio};
    sh_puts("online next ");
    sh_put_u32(ni);
    sh_puts(" ");
    sh_put_u32(nj);
    sh_puts(" ratio ");
    sh_put_hex32(r.u);
    sh_puts("\n");

    /* Save, reload into other storage: the same weights, bit for bit. */
    sp = current_sp();
    paint(sp - PAINT_GAP);
    st = rk_online_save(o, online_region, sizeof online_region, &seq);
    uint32_t stack_save = stack_used(sp);
    if (st != RK_STATUS_OK) return fail("save", "online", st);
    size_t model_bytes = 0;
    if ((st = rk_online_model_size(o, &model_bytes)) != RK_STATUS_OK) return fail("model_size", "online", st);
    sh_puts("online saved seq ");
    sh_put_u32(seq);
    put_kv("bytes", (uint32_t)model_bytes);
    sh_puts("\n");
    sp = current_sp();
    paint(sp - PAINT_GAP);
    st = rk_online_load(online_region, sizeof online_region, online_reloaded, sizeof online_reloaded, &back, &seq2);
    uint32_t stack_load = stack_used(sp);
    if (st != RK_STATUS_OK) return fail("load", "online", st);
    if ((st = rk_online_weights(back, w2, FW_DIM, &count2)) != RK_STATUS_OK) return fail("weights", "reloaded", st);
    for (uint32_t j = 0; j < FW_DIM; j++) {
        union { float f; uint32_t u; } a = {w[j]}, b = {w2[j]};
        if (a.u != b.u || count2 != count || seq2 != seq) return fail("reloaded state differs", "online", j);
    }
    sh_puts("online reloaded seq ");
    sh_put_u32(seq2);
    sh_puts("\n");

    /* One more answer, saved into the other slot; then power "fails"
     * during a later save: simulated by damaging one byte of the newest
     * slot. The previous save must load. */
    if ((st = rk_online_observe(o, &fw_rows[0], &fw_rows[FW_DIM], FW_DIM, 1.0f)) != RK_STATUS_OK)
        return fail("observe", "online", st);
    if ((st = rk_online_save(o, online_region, sizeof online_region, &seq2)) != RK_STATUS_OK)
        return fail("save 2", "online", st);
    size_t half = sizeof online_region / 2, newest = (seq2 & 1) ? 0 : half;
    online_region[newest + 40] ^= 0x10;
    if ((st = rk_online_load(online_region, sizeof online_region, online_reloaded, sizeof online_reloaded, &back, &seq2)) !=
        RK_STATUS_OK)
        return fail("load after damage", "online", st);
    if (seq2 != seq) return fail("damaged save was loaded", "online", seq2);
    if ((st = rk_online_weights(back, w2, FW_DIM, &count2)) != RK_STATUS_OK || count2 != count)
        return fail("previous state after damage", "online", (uint32_t)count2);
    sh_puts("online torn: previous state loads (seq ");
    sh_put_u32(seq2);
    sh_puts(")\n");

    sh_puts("stack online");
    put_kv("observe", stack_observe);
    put_kv("next", stack_next);
    put_kv("save", stack_save);
    put_kv("load", stack_load);
    sh_puts("\n");
    return 0;
}

/* Pair scoring on the device: every row as a candidate for the nodes u =
 * rows 0 and 1, ranked; exact symmetry; the single-row entry points refuse
 * the model. */
static int run_pairs(void) {
    const rk_model *m = 0;
    rk_status st;
    if ((st = rk_model_parse(fw_model_bilinear, fw_model_bilinear_len, storage, sizeof storage, &m)) != RK_STATUS_OK)
        return fail("parse", "bilinear", st);
    rk_model_info info;
    if ((st = rk_model_get_info(m, &info)) != RK_STATUS_OK) return fail("info", "bilinear", st);
    if (info.kind != RK_MODEL_KIND_BILINEAR || info.pair != RK_PAIR_KERNEL_SYMMETRIC || info.dim != FW_DIM ||
        info.dim_v != FW_DIM)
        return fail("info fields", "bilinear", (uint32_t)info.kind);
    if (info.pair_work_len > sizeof pair_work / sizeof pair_work[0])
        return fail("work", "bilinear", (uint32_t)info.pair_work_len);
    sh_puts("model bilinear");
    put_kv("kind", (uint32_t)info.kind);
    put_kv("dim", (uint32_t)info.dim);
    put_kv("dim_v", (uint32_t)info.dim_v);
    put_kv("work", (uint32_t)info.pair_work_len);
    put_kv("bytes", (uint32_t)info.bytes);
    sh_puts("\n");
    uint32_t stack_rank = 0;
    for (uint32_t u = 0; u < 2; u++) {
        const float *xu = &fw_rows[u * FW_DIM];
        uint32_t sp = current_sp();
        paint(sp - PAINT_GAP);
        st = rk_rank_candidates(m, xu, FW_DIM, fw_rows, FW_ROWS * FW_DIM, pair_work, info.pair_work_len, scores,
                                FW_ROWS, order, FW_ROWS);
        uint32_t used = stack_used(sp);
        if (used > stack_rank) stack_rank = used;
        if (st != RK_STATUS_OK) return fail("rank_candidates", "bilinear", st);
        for (uint32_t r = 0; r < FW_ROWS; r++) {
            union { float f; uint32_t u; } a = {scores[r]};
            sh_puts("pscore bilinear ");
            sh_put_u32(u);
            sh_puts(" ");
            sh_put_u32(r);
            sh_puts(" ");
            sh_put_hex32(a.u);
            sh_puts("\n");
            float back;
            st = rk_score_pair(m, &fw_rows[r * FW_DIM], FW_DIM, xu, FW_DIM, pair_work, info.pair_work_len, &back);
            if (st != RK_STATUS_OK) return fail("score_pair", "bilinear", st);
            if (back != scores[r]) return fail("not exactly symmetric", "bilinear", r);
        }
        sh_puts("porder bilinear ");
        sh_put_u32(u);
        for (uint32_t r = 0; r < FW_ROWS; r++) {
            sh_puts(" ");
            sh_put_u32(order[r]);
        }
        sh_puts("\n");
    }
    float s;
    if ((st = rk_score_dense(m, fw_rows, FW_DIM, &s)) != RK_STATUS_WRONG_MODEL_KIND)
        return fail("single-row scoring of a pair model not refused", "bilinear", st);
    sh_puts("stack bilinear");
    put_kv("rank", stack_rank);
    sh_puts("\n");
    return 0;
}

static void put_bits(float f) {
    union { float f; uint32_t u; } a = {f};
    sh_put_hex32(a.u);
}

/* The preference GP on the device: load the host's prior, absorb the
 * observations one ADF site at a time, print the posterior, P(i > j), the
 * next pair and the ranking; hostile calls; save to the A/B store, reload,
 * and a torn newer save must not load. */
static int run_pref(void) {
    const rk_model *m = 0;
    rk_pref *p = 0, *back = 0;
    rk_status st;
    size_t n = 0;
    uint64_t count = 0;
    uint32_t stack_obs = 0, stack_prob = 0, stack_next = 0, stack_save = 0, stack_load = 0, sp, used;
    if ((st = rk_model_parse(fw_model_pref, fw_model_pref_len, storage, sizeof storage, &m)) != RK_STATUS_OK)
        return fail("parse", "pref", st);
    rk_model_info info;
    if ((st = rk_model_get_info(m, &info)) != RK_STATUS_OK || info.kind != RK_MODEL_KIND_PREF_GP ||
        info.dim != FW_PREF_N)
        return fail("info", "pref", st);
    if (rk_pref_storage_size(FW_PREF_N) > sizeof pref_storage)
        return fail("storage", "pref", (uint32_t)rk_pref_storage_size(FW_PREF_N));
    if (rk_pref_store_size(FW_PREF_N) > sizeof pref_region)
        return fail("region", "pref", (uint32_t)rk_pref_store_size(FW_PREF_N));
    if ((st = rk_pref_init(m, pref_storage, sizeof pref_storage, &p)) != RK_STATUS_OK) return fail("init", "pref", st);
    for (uint32_t k = 0; k < FW_PREF_OBS; k++) {
        sp = current_sp();
        paint(sp - PAINT_GAP);
        st = rk_pref_observe(p, fw_pref_obs[k][0], fw_pref_obs[k][1]);
        used = stack_used(sp);
        if (used > stack_obs) stack_obs = used;
        if (st != RK_STATUS_OK) return fail("observe", "pref", k);
    }
    /* Hostile observations are refused and change nothing (the host
     * comparison below would catch a change). */
    if ((st = rk_pref_observe(p, 3, 3)) != RK_STATUS_BAD_ARGUMENT) return fail("w == l not refused", "pref", st);
    if ((st = rk_pref_observe(p, FW_PREF_N, 0)) != RK_STATUS_BAD_ARGUMENT)
        return fail("index N not refused", "pref", st);
    if ((st = rk_pref_init(m, pref_storage, 16, &back)) != RK_STATUS_STORAGE_TOO_SMALL)
        return fail("short storage not refused", "pref", st);
    if ((st = rk_pref_items(p, &n, &count)) != RK_STATUS_OK || n != FW_PREF_N) return fail("items", "pref", st);
    if ((st = rk_pref_posterior(p, pref_mean, FW_PREF_N, pref_cov, sizeof pref_cov / sizeof pref_cov[0])) !=
        RK_STATUS_OK)
        return fail("posterior", "pref", st);
    for (uint32_t i = 0; i < FW_PREF_N; i++) {
        sh_puts("pref mean ");
        sh_put_u32(i);
        sh_puts(" ");
        put_bits(pref_mean[i]);
        sh_puts("\n");
    }
    for (uint32_t k = 0; k < sizeof pref_cov / sizeof pref_cov[0]; k++) {
        sh_puts("pref cov ");
        sh_put_u32(k);
        sh_puts(" ");
        put_bits(pref_cov[k]);
        sh_puts("\n");
    }
    sh_puts("pref count ");
    sh_put_u32((uint32_t)count);
    sh_puts("\n");
    uint32_t ni = 0, nj = 0;
    float ratio = 0.0f, prob = 0.0f, var = 0.0f;
    sp = current_sp();
    paint(sp - PAINT_GAP);
    st = rk_pref_next_pair(p, &ni, &nj, &ratio);
    stack_next = stack_used(sp);
    if (st != RK_STATUS_OK) return fail("next_pair", "pref", st);
    sh_puts("pref next ");
    sh_put_u32(ni);
    sh_puts(" ");
    sh_put_u32(nj);
    sh_puts(" ratio ");
    put_bits(ratio);
    sh_puts("\n");
    for (uint32_t k = 0; k < 4; k++) {
        uint32_t i = (k * 5) % FW_PREF_N, j = (k * 11 + 3) % FW_PREF_N;
        sp = current_sp();
        paint(sp - PAINT_GAP);
        st = rk_pref_prob(p, i, j, &prob, &var);
        used = stack_used(sp);
        if (used > stack_prob) stack_prob = used;
        if (st != RK_STATUS_OK) return fail("prob", "pref", st);
        sh_puts("pref prob ");
        sh_put_u32(i);
        sh_puts(" ");
        sh_put_u32(j);
        sh_puts(" ");
        put_bits(prob);
        sh_puts(" var ");
        put_bits(var);
        sh_puts("\n");
    }
    if ((st = rk_pref_rank(p, pref_order, FW_PREF_N)) != RK_STATUS_OK) return fail("rank", "pref", st);
    sh_puts("pref order");
    for (uint32_t i = 0; i < FW_PREF_N; i++) {
        sh_puts(" ");
        sh_put_u32(pref_order[i]);
    }
    sh_puts("\n");

    /* Save, reload, then a torn newer save: the first save still loads. */
    uint32_t seq = 0, seq2 = 0;
    sp = current_sp();
    paint(sp - PAINT_GAP);
    st = rk_pref_save(p, pref_region, sizeof pref_region, &seq);
    stack_save = stack_used(sp);
    if (st != RK_STATUS_OK) return fail("save", "pref", st);
    sp = current_sp();
    paint(sp - PAINT_GAP);
    st = rk_pref_load(pref_region, sizeof pref_region, pref_reloaded, sizeof pref_reloaded, &back, &seq2);
    stack_load = stack_used(sp);
    if (st != RK_STATUS_OK || seq2 != seq) return fail("load", "pref", st);
    float m2[FW_PREF_N];
    if ((st = rk_pref_posterior(back, m2, FW_PREF_N, 0, 0)) != RK_STATUS_OK) return fail("reloaded", "pref", st);
    for (uint32_t i = 0; i < FW_PREF_N; i++)
        if (m2[i] != pref_mean[i]) return fail("reloaded mean differs", "pref", i);
    sh_puts("pref saved seq ");
    sh_put_u32(seq);
    sh_puts("\n");
    if ((st = rk_pref_observe(p, 0, 1)) != RK_STATUS_OK) return fail("observe after save", "pref", st);
    if ((st = rk_pref_save(p, pref_region, sizeof pref_region, &seq2)) != RK_STATUS_OK)
        return fail("second save", "pref", st);
    pref_region[sizeof pref_region / 2 + 100] ^= 0x01;
    if (seq2 == seq) return fail("second save reused the sequence", "pref", seq2);
    if ((st = rk_pref_load(pref_region, sizeof pref_region, pref_reloaded, sizeof pref_reloaded, &back, &seq2)) !=
        RK_STATUS_OK)
        return fail("load after damage", "pref", st);
    if ((st = rk_pref_posterior(back, m2, FW_PREF_N, 0, 0)) != RK_STATUS_OK) return fail("reloaded 2", "pref", st);
    for (uint32_t i = 0; i < FW_PREF_N; i++)
        if (m2[i] != pref_mean[i]) return fail("damaged save was loaded", "pref", i);
    sh_puts("pref torn: previous state loads (seq ");
    sh_put_u32(seq2);
    sh_puts(")\n");
    sh_puts("stack pref");
    put_kv("observe", stack_obs);
    put_kv("prob", stack_prob);
    put_kv("next", stack_next);
    put_kv("save", stack_save);
    put_kv("load", stack_load);
    sh_puts("\n");
    return 0;
}

int main(void) {
    sh_puts("ranklet firmware test, library ");
    sh_puts(rk_version());
    sh_puts("\n");
    for (size_t i = 0; i < sizeof fw_models / sizeof fw_models[0]; i++)
        if (run_model(&fw_models[i])) return 1;
    if (run_online()) return 1;
    if (run_pairs()) return 1;
    if (run_pref()) return 1;
    sh_puts("FIRMWARE OK\n");
    return 0;
}
