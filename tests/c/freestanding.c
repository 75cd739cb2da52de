/* Freestanding link of the scoring path: no libc, no crt, no allocator.
 * Built with -ffreestanding -nostdlib -static against the no_std
 * libranklet_ffi.a (--no-default-features, panic = "abort"); the memory
 * primitives and the entry point come from tests/support/ (mem.c,
 * start_x86_64.c). ffi/tests/c_consumers.rs builds, inspects (no malloc) and runs it. */
#include <stddef.h>
#include <stdint.h>

#include "ranklet.h"
#include "fixtures.h"


static float fabsf_(float x) { return x < 0 ? -x : x; }

static unsigned char storage[512];
static unsigned char online_storage[1024];
static unsigned char online_region[2048];
static float online_work[256];
static unsigned char pref_storage[512];
static unsigned char pref_region[1024];

int freestanding_main(void);
int freestanding_main(void) {
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
    /* Learning on the device: init, observe, next pair, save, load. */
    const rk_model *prior = 0;
    rk_online *o = 0, *back = 0;
    uint32_t seq = 0, i = 0, j = 0;
    float ratio, w[FIX_DIM];
    if (rk_model_parse(fix_models[0].bytes, fix_models[0].len, storage, sizeof storage, &prior) != RK_STATUS_OK) return 9;
    if (rk_online_init(prior, FIX_ONLINE_LAMBDA, online_storage, sizeof online_storage, &o) != RK_STATUS_OK) return 10;
    for (size_t k = 0; k < FIX_FEEDBACK; k++) {
        const fix_pair *p = &fix_feedback[k];
        if (rk_online_observe(o, &fix_rows[p->winner * FIX_DIM], &fix_rows[p->loser * FIX_DIM], FIX_DIM, p->magnitude) !=
            RK_STATUS_OK)
            return 11;
    }
    if (rk_online_next_pair(o, fix_rows, FIX_ROWS * FIX_DIM, FIX_ROWS, online_work, sizeof online_work, &i, &j, &ratio) !=
        RK_STATUS_OK)
        return 12;
    if (i != FIX_ONLINE_NEXT_I || j != FIX_ONLINE_NEXT_J) return 13;
    if (rk_online_save(o, online_region, sizeof online_region, &seq) != RK_STATUS_OK) return 14;
    if (rk_online_load(online_region, sizeof online_region, online_storage + 0, sizeof online_storage, &back, &seq) !=
        RK_STATUS_OK)
        return 15;
    if (rk_online_weights(back, w, FIX_DIM, 0) != RK_STATUS_OK) return 16;
    for (size_t k = 0; k < FIX_DIM; k++)
        if (w[k] != fix_online_w[k]) return 17;
    /* Pair models: rank the candidate rows for one node. */
    for (size_t k = 0; k < FIX_PAIR_MODELS; k++) {
        const fixture_pair_model *fx = &fix_pair_models[k];
        const rk_model *m = 0;
        float scores[FIX_ROWS], s;
        uint32_t top[3];
        if (rk_model_parse(fx->bytes, fx->len, storage, sizeof storage, &m) != RK_STATUS_OK) return 18;
        if (fx->work_len > sizeof online_work / sizeof online_work[0]) return 19;
        if (rk_rank_candidates(m, fx->xu, fx->du, fix_rows, FIX_ROWS * fx->dv, online_work, fx->work_len, scores,
                               FIX_ROWS, top, 3) != RK_STATUS_OK)
            return 20;
        for (size_t r = 0; r < FIX_ROWS; r++)
            if (scores[r] != fx->scores[r]) return 21;
        for (size_t r = 0; r < 3; r++)
            if (top[r] != fx->order[r]) return 22;
        if (rk_score_pair(m, fx->xu, fx->du, &fix_rows[FIX_DIM], fx->dv, online_work, fx->work_len, &s) != RK_STATUS_OK ||
            s != fx->scores[1])
            return 23;
    }
    /* The preference GP: init, observe, posterior (bit for bit), next pair, save, load. */
    const rk_model *pm = 0;
    rk_pref *p = 0, *pback = 0;
    float mean[FIX_PREF_N], cov[FIX_PREF_TRI];
    uint32_t order[FIX_PREF_N];
    if (rk_model_parse(fix_pref, sizeof fix_pref, storage, sizeof storage, &pm) != RK_STATUS_OK) return 24;
    if (rk_pref_init(pm, pref_storage, sizeof pref_storage, &p) != RK_STATUS_OK) return 25;
    for (size_t k = 0; k < FIX_PREF_OBS; k++)
        if (rk_pref_observe(p, fix_pref_obs[k][0], fix_pref_obs[k][1]) != RK_STATUS_OK) return 26;
    if (rk_pref_save(p, pref_region, sizeof pref_region, &seq) != RK_STATUS_OK) return 27;
    if (rk_pref_load(pref_region, sizeof pref_region, pref_storage, sizeof pref_storage, &pback, &seq) != RK_STATUS_OK)
        return 28;
    if (rk_pref_posterior(pback, mean, FIX_PREF_N, cov, FIX_PREF_TRI) != RK_STATUS_OK) return 29;
    for (size_t k = 0; k < FIX_PREF_N; k++)
        if (mean[k] != fix_pref_mean[k]) return 30;
    for (size_t k = 0; k < FIX_PREF_TRI; k++)
        if (cov[k] != fix_pref_cov[k]) return 31;
    if (rk_pref_next_pair(pback, &i, &j, &ratio) != RK_STATUS_OK || i != FIX_PREF_NEXT_I || j != FIX_PREF_NEXT_J)
        return 32;
    if (rk_pref_rank(pback, order, FIX_PREF_N) != RK_STATUS_OK) return 33;
    for (size_t k = 0; k < FIX_PREF_N; k++)
        if (order[k] != fix_pref_order[k]) return 34;
    return 0;
}
