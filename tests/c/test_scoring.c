/* The C ABI from C11: parse models into caller storage, score dense and
 * sparse rows, batches, rank and top-k, model info, and hostile inputs.
 * Expected values come from fixtures.h, which ffi/tests/c_consumers.rs
 * generates with ranklet-core (the scorer behind `ranklet score`).
 * Exit status 0 = every check passed; otherwise the failing line. */
#include <math.h>
#include <stdalign.h>
#include <stdio.h>
#include <string.h>

#include "ranklet.h"
#include "fixtures.h"

static int failures = 0;
#define CHECK(cond)                                                        \
    do {                                                                   \
        if (!(cond)) {                                                     \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                    \
        }                                                                  \
    } while (0)
#define CHECK_STATUS(call, want)                                           \
    do {                                                                   \
        rk_status st_ = (call);                                            \
        if (st_ != (want)) {                                               \
            fprintf(stderr, "%s:%d: %s gave %u (%s), want %u\n", __FILE__, __LINE__, #call, \
                    (unsigned)st_, rk_status_str(st_), (unsigned)(want));   \
            failures++;                                                    \
        }                                                                  \
    } while (0)

static int close_rel(float got, float want) {
    double tol = 1e-6 * fabs((double)want);
    if (tol < 1e-30) tol = 1e-30;
    return fabs((double)got - (double)want) <= tol;
}

/* Storage for up to two models: static, no heap, deliberately misaligned by
 * one byte to show any alignment works. */
static unsigned char storage[2][512 + 1];

static void check_model(const fixture_model *fx) {
    const rk_model *m = NULL;
    CHECK(rk_model_storage_size() <= 512);
    CHECK_STATUS(rk_model_parse(fx->bytes, fx->len, storage[0] + 1, 512, &m), RK_STATUS_OK);
    if (m == NULL) return;

    rk_model_info info;
    CHECK_STATUS(rk_model_get_info(m, &info), RK_STATUS_OK);
    CHECK(info.kind == fx->kind);
    CHECK(info.element_type == fx->element_type);
    CHECK(info.dim == FIX_DIM);
    CHECK(info.bytes == fx->len);
    CHECK(info.format_major == 1);

    float batch[FIX_ROWS];
    for (size_t r = 0; r < FIX_ROWS; r++) {
        float s = -1.0f;
        CHECK_STATUS(rk_score_dense(m, &fix_rows[r * FIX_DIM], FIX_DIM, &s), RK_STATUS_OK);
        CHECK(close_rel(s, fx->dense_scores[r]));
        /* the same row, sparse (its non-zeros) */
        uint32_t idx[FIX_DIM];
        float val[FIX_DIM];
        size_t nnz = 0;
        for (uint32_t j = 0; j < FIX_DIM; j++) {
            if (fix_rows[r * FIX_DIM + j] != 0.0f) {
                idx[nnz] = j;
                val[nnz] = fix_rows[r * FIX_DIM + j];
                nnz++;
            }
        }
        CHECK_STATUS(rk_score_sparse(m, idx, val, nnz, &s), RK_STATUS_OK);
        CHECK(close_rel(s, fx->sparse_scores[r]));
        /* the same row with a feature past the model's dimension: the score
         * of the model trained with that feature (all training rows 0 there) */
        uint32_t idx_tail[FIX_DIM + 1];
        float val_tail[FIX_DIM + 1];
        memcpy(idx_tail, idx, nnz * sizeof idx[0]);
        memcpy(val_tail, val, nnz * sizeof val[0]);
        idx_tail[nnz] = FIX_TAIL_INDEX;
        val_tail[nnz] = FIX_TAIL_VALUE;
        CHECK_STATUS(rk_score_sparse(m, idx_tail, val_tail, nnz + 1, &s), RK_STATUS_OK);
        CHECK(close_rel(s, fx->tail_scores[r]));
    }
    CHECK_STATUS(rk_score_dense_batch(m, fix_rows, FIX_ROWS * FIX_DIM, batch, FIX_ROWS), RK_STATUS_OK);
    for (size_t r = 0; r < FIX_ROWS; r++) CHECK(close_rel(batch[r], fx->dense_scores[r]));
    CHECK_STATUS(rk_score_sparse_batch(m, fix_row_ptr, fix_indices, fix_values, FIX_NNZ, batch, FIX_ROWS),
                 RK_STATUS_OK);
    for (size_t r = 0; r < FIX_ROWS; r++) CHECK(close_rel(batch[r], fx->sparse_scores[r]));

    uint32_t order[FIX_ROWS], top[3];
    CHECK_STATUS(rk_rank_dense(m, fix_rows, FIX_ROWS * FIX_DIM, batch, FIX_ROWS, order, FIX_ROWS), RK_STATUS_OK);
    for (size_t r = 0; r < FIX_ROWS; r++) CHECK(order[r] == fx->order[r]);
    CHECK_STATUS(rk_rank_sparse(m, fix_row_ptr, fix_indices, fix_values, FIX_NNZ, batch, FIX_ROWS, top, 3),
                 RK_STATUS_OK);
    CHECK_STATUS(rk_rank(fx->dense_scores, FIX_ROWS, top, 3), RK_STATUS_OK);
    for (size_t r = 0; r < 3; r++) CHECK(top[r] == fx->order[r]);
}

static void hostile(void) {
    const fixture_model *fx = &fix_models[0];
    const rk_model *m = NULL, *untouched = (const rk_model *)&storage;
    float s = 42.0f;
    uint32_t order[FIX_ROWS];

    /* NULL pointers and zero lengths */
    CHECK_STATUS(rk_model_parse(NULL, fx->len, storage[0], 512, &m), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_model_parse(fx->bytes, fx->len, NULL, 512, &m), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_model_parse(fx->bytes, fx->len, storage[0], 512, NULL), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_model_parse(fx->bytes, 0, storage[0], 512, &m), RK_STATUS_FORMAT_TOO_SHORT);
    CHECK(m == NULL);
    /* too-small storage, for every size below the need */
    for (size_t n = 0; n < rk_model_storage_size() - (alignof(max_align_t) - 1); n++) {
        m = untouched;
        CHECK_STATUS(rk_model_parse(fx->bytes, fx->len, storage[0], n, &m), RK_STATUS_STORAGE_TOO_SMALL);
        CHECK(m == untouched);
    }
    /* corrupted bytes: every single-bit flip is an error, never a crash */
    static unsigned char bad[4096];
    CHECK(fx->len <= sizeof bad);
    for (size_t i = 0; i < fx->len; i++) {
        for (int bit = 0; bit < 8; bit += 3) {
            memcpy(bad, fx->bytes, fx->len);
            bad[i] ^= (unsigned char)(1u << bit);
            m = untouched;
            rk_status st = rk_model_parse(bad, fx->len, storage[1], 512, &m);
            CHECK(st != RK_STATUS_OK && st != RK_STATUS_PANIC);
            CHECK(m == untouched);
        }
    }
    /* truncation at every length */
    for (size_t n = 0; n < fx->len; n++) {
        rk_status st = rk_model_parse(fx->bytes, n, storage[1], 512, &m);
        CHECK(st == RK_STATUS_FORMAT_TOO_SHORT || st == RK_STATUS_FORMAT_TRUNCATED);
    }
    CHECK_STATUS(rk_model_parse(fx->bytes, fx->len, storage[0], 512, &m), RK_STATUS_OK);

    /* scoring: NULL model, NULL input, NULL output, wrong lengths, NaN */
    CHECK_STATUS(rk_score_dense(NULL, fix_rows, FIX_DIM, &s), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_score_dense(m, NULL, FIX_DIM, &s), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_score_dense(m, fix_rows, FIX_DIM, NULL), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_score_dense(m, NULL, 0, &s), RK_STATUS_DIMENSION_MISMATCH);
    CHECK_STATUS(rk_score_dense(m, fix_rows, FIX_DIM - 1, &s), RK_STATUS_DIMENSION_MISMATCH);
    float nan_row[FIX_DIM] = {0};
    nan_row[1] = NAN;
    CHECK_STATUS(rk_score_dense(m, nan_row, FIX_DIM, &s), RK_STATUS_NON_FINITE_INPUT);
    CHECK(s == 42.0f); /* outputs written only on success */
    uint32_t bad_idx[2] = {3, 1};
    float two[2] = {1.0f, 2.0f};
    CHECK_STATUS(rk_score_sparse(m, bad_idx, two, 2, &s), RK_STATUS_BAD_INPUT_INDEX);
    CHECK_STATUS(rk_score_sparse(m, NULL, two, 2, &s), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_score_sparse(m, NULL, NULL, 0, &s), RK_STATUS_OK); /* the all-zero row */
    CHECK(s == fx->zero_score);
    float batch[FIX_ROWS];
    CHECK_STATUS(rk_score_dense_batch(m, fix_rows, FIX_ROWS * FIX_DIM - 1, batch, FIX_ROWS),
                 RK_STATUS_DIMENSION_MISMATCH);
    CHECK_STATUS(rk_score_dense_batch(m, fix_rows, FIX_ROWS * FIX_DIM, NULL, FIX_ROWS), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_rank(fx->dense_scores, FIX_ROWS, order, FIX_ROWS + 1), RK_STATUS_LENGTH_MISMATCH);
    CHECK_STATUS(rk_rank(NULL, FIX_ROWS, order, 1), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_rank(fx->dense_scores, FIX_ROWS, NULL, 1), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_rank(NULL, 0, NULL, 0), RK_STATUS_OK);
    float nan_scores[2] = {1.0f, NAN};
    CHECK_STATUS(rk_rank(nan_scores, 2, order, 2), RK_STATUS_NAN_SCORE);
    /* misaligned float array */
    static float fbuf[FIX_DIM + 1];
    CHECK_STATUS(rk_score_dense(m, (const float *)((const char *)fbuf + 1), FIX_DIM, &s), RK_STATUS_MISALIGNED);
    /* a handle that is not one: zeroed storage */
    static alignas(16) unsigned char zeros[512];
    CHECK_STATUS(rk_score_dense((const rk_model *)zeros, fix_rows, FIX_DIM, &s), RK_STATUS_BAD_HANDLE);
    rk_model_info info;
    CHECK_STATUS(rk_model_get_info(m, NULL), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_model_get_info(NULL, &info), RK_STATUS_NULL_ARGUMENT);

    /* status strings: generated from the same list as the codes */
    CHECK(strcmp(rk_status_str(RK_STATUS_OK), "ok") == 0);
    CHECK(strcmp(rk_status_str(0), "unknown status") == 0);
    CHECK(strcmp(rk_status_str(0xFFFFFFFFu), "unknown status") == 0);
    CHECK(strlen(rk_status_str(RK_STATUS_FORMAT_BAD_CHECKSUM)) > 0);
    CHECK(strcmp(rk_version(), RANKLET_VERSION) == 0);

#if defined(RANKLET_STD)
    rk_model *owned = NULL;
    CHECK_STATUS(rk_model_new(fx->bytes, fx->len, &owned), RK_STATUS_OK);
    CHECK_STATUS(rk_score_dense(owned, fix_rows, FIX_DIM, &s), RK_STATUS_OK);
    CHECK(close_rel(s, fx->dense_scores[0]));
    CHECK_STATUS(rk_model_free((rk_model *)m), RK_STATUS_BAD_HANDLE); /* parsed, not owned */
    CHECK_STATUS(rk_model_free(owned), RK_STATUS_OK);
    CHECK_STATUS(rk_model_free(NULL), RK_STATUS_OK);
    CHECK_STATUS(rk_model_new(NULL, 10, &owned), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_model_new(fx->bytes, fx->len - 1, &owned), RK_STATUS_FORMAT_TRUNCATED);
#endif
}

/* The online learner: start from the centred linear model, apply the
 * recorded feedback, compare with ranklet-core bit for bit (the same
 * library computes both), save/load through the A/B store, and hostile
 * calls. Storage deliberately misaligned by one byte. */
static unsigned char online_storage[2][1024 + 1];
static unsigned char online_region[2048];
static float online_work[256];

static void online(void) {
    const rk_model *prior = NULL;
    rk_online *o = NULL, *back = NULL;
    float w[FIX_DIM], scores[FIX_ROWS];
    uint64_t count = 0;
    uint32_t seq = 0, seq2 = 0, ni = 0, nj = 0;
    float ratio = 0.0f;
    size_t need = rk_online_storage_size(FIX_DIM);

    CHECK(need > 0 && need <= 1024);
    CHECK(rk_online_storage_size(0) == 0);
    CHECK_STATUS(rk_model_parse(fix_models[0].bytes, fix_models[0].len, storage[0], 512, &prior), RK_STATUS_OK);
    CHECK_STATUS(rk_online_init(prior, FIX_ONLINE_LAMBDA, online_storage[0] + 1, need - 1, &o),
                 RK_STATUS_STORAGE_TOO_SMALL);
    CHECK(o == NULL);
    CHECK_STATUS(rk_online_init(prior, 0.0f, online_storage[0] + 1, need, &o), RK_STATUS_BAD_ARGUMENT);
    CHECK_STATUS(rk_online_init(prior, NAN, online_storage[0] + 1, need, &o), RK_STATUS_BAD_ARGUMENT);
    CHECK_STATUS(rk_online_init(NULL, 1.0f, online_storage[0] + 1, need, &o), RK_STATUS_NULL_ARGUMENT);
    CHECK(o == NULL);
    CHECK_STATUS(rk_online_init(prior, FIX_ONLINE_LAMBDA, online_storage[0] + 1, need, &o), RK_STATUS_OK);
    if (o == NULL) return;
    for (size_t k = 0; k < FIX_FEEDBACK; k++) {
        const fix_pair *p = &fix_feedback[k];
        CHECK_STATUS(rk_online_observe(o, &fix_rows[p->winner * FIX_DIM], &fix_rows[p->loser * FIX_DIM], FIX_DIM,
                                       p->magnitude),
                     RK_STATUS_OK);
    }
    CHECK_STATUS(rk_online_weights(o, w, FIX_DIM, &count), RK_STATUS_OK);
    CHECK(count == FIX_FEEDBACK);
    CHECK(memcmp(w, fix_online_w, sizeof w) == 0);
    CHECK_STATUS(rk_online_score_rows(o, fix_rows, FIX_ROWS * FIX_DIM, FIX_ROWS, scores), RK_STATUS_OK);
    for (size_t r = 0; r < FIX_ROWS; r++) CHECK(close_rel(scores[r], fix_online_scores[r]));

    /* Bad observations change nothing. */
    float nan_row[FIX_DIM];
    memcpy(nan_row, fix_rows, sizeof nan_row);
    nan_row[2] = NAN;
    CHECK_STATUS(rk_online_observe(o, nan_row, fix_rows, FIX_DIM, 1.0f), RK_STATUS_NON_FINITE_INPUT);
    CHECK_STATUS(rk_online_observe(o, fix_rows, fix_rows + FIX_DIM, FIX_DIM - 1, 1.0f), RK_STATUS_DIMENSION_MISMATCH);
    CHECK_STATUS(rk_online_observe(o, fix_rows, fix_rows + FIX_DIM, FIX_DIM, 0.0f), RK_STATUS_BAD_ARGUMENT);
    CHECK_STATUS(rk_online_observe(o, NULL, fix_rows, FIX_DIM, 1.0f), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_online_observe((rk_online *)online_storage[1], fix_rows, fix_rows, FIX_DIM, 1.0f),
                 RK_STATUS_BAD_HANDLE);
    CHECK_STATUS(rk_online_weights(o, w, FIX_DIM, NULL), RK_STATUS_OK);
    CHECK(memcmp(w, fix_online_w, sizeof w) == 0);

    /* The next pair, and its workspace. */
    size_t wn = rk_online_next_pair_work_size(FIX_ROWS, FIX_DIM);
    CHECK(wn > 0 && wn <= sizeof online_work);
    CHECK_STATUS(rk_online_next_pair(o, fix_rows, FIX_ROWS * FIX_DIM, FIX_ROWS, online_work, wn - 4, &ni, &nj, &ratio),
                 RK_STATUS_STORAGE_TOO_SMALL);
    CHECK_STATUS(rk_online_next_pair(o, fix_rows, FIX_ROWS * FIX_DIM, 1, online_work, wn, &ni, &nj, &ratio),
                 RK_STATUS_LENGTH_MISMATCH);
    CHECK_STATUS(rk_online_next_pair(o, fix_rows, FIX_ROWS * FIX_DIM, FIX_ROWS, online_work, wn, &ni, &nj, &ratio),
                 RK_STATUS_OK);
    CHECK(ni == FIX_ONLINE_NEXT_I && nj == FIX_ONLINE_NEXT_J);

    /* Save into the A/B store, load into other storage: the same state. */
    size_t region = rk_online_store_size(FIX_DIM);
    CHECK(region > 0 && region <= sizeof online_region);
    CHECK_STATUS(rk_online_load(online_region, region, online_storage[1], 1024, &back, &seq),
                 RK_STATUS_NO_SAVED_STATE);
    CHECK_STATUS(rk_online_save(o, online_region, region - 1, &seq), RK_STATUS_STORAGE_TOO_SMALL);
    CHECK_STATUS(rk_online_save(o, online_region, region, &seq), RK_STATUS_OK);
    CHECK(seq == 1);
    CHECK_STATUS(rk_online_load(online_region, region, online_storage[1], 1024, &back, &seq2), RK_STATUS_OK);
    CHECK(seq2 == 1);
    if (back != NULL) {
        float w2[FIX_DIM];
        uint64_t c2 = 0;
        CHECK_STATUS(rk_online_weights(back, w2, FIX_DIM, &c2), RK_STATUS_OK);
        CHECK(memcmp(w2, fix_online_w, sizeof w2) == 0 && c2 == count);
    }
    /* A newer save, then damage to it: the previous save loads. */
    CHECK_STATUS(rk_online_observe(o, fix_rows, fix_rows + FIX_DIM, FIX_DIM, 1.0f), RK_STATUS_OK);
    CHECK_STATUS(rk_online_save(o, online_region, region, &seq), RK_STATUS_OK);
    CHECK(seq == 2);
    online_region[region / 2 + 20] ^= 0x04;
    CHECK_STATUS(rk_online_load(online_region, region, online_storage[1], 1024, &back, &seq2), RK_STATUS_OK);
    CHECK(seq2 == 1);

    /* The state as a .rkl file parses as a model of kind online-rankrls. */
    size_t len = 0, written = 0;
    static unsigned char file[1024];
    CHECK_STATUS(rk_online_model_size(o, &len), RK_STATUS_OK);
    CHECK(len > 0 && len <= sizeof file);
    CHECK_STATUS(rk_online_write_model(o, file, len - 1, &written), RK_STATUS_STORAGE_TOO_SMALL);
    CHECK_STATUS(rk_online_write_model(o, file, len, &written), RK_STATUS_OK);
    CHECK(written == len);
    const rk_model *saved = NULL;
    CHECK_STATUS(rk_model_parse(file, written, storage[1], 512, &saved), RK_STATUS_OK);
    rk_model_info info;
    CHECK_STATUS(rk_model_get_info(saved, &info), RK_STATUS_OK);
    CHECK(info.kind == RK_MODEL_KIND_ONLINE_RANK_RLS && info.dim == FIX_DIM);
    CHECK(info.format_major == 1 && info.format_minor == 1);
    /* A state is not a prior. */
    CHECK_STATUS(rk_online_init(saved, 1.0f, online_storage[1], 1024, &back), RK_STATUS_WRONG_MODEL_KIND);
}

/* Pair models (kinds 3 and 6): every candidate row for one node u, scored
 * and ranked as ranklet-core does (bit for bit: the same code computes
 * both), exact symmetry, and the kind checks in both directions. */
static float pair_work[64];

static void pairs(void) {
    for (size_t i = 0; i < FIX_PAIR_MODELS; i++) {
        const fixture_pair_model *fx = &fix_pair_models[i];
        const rk_model *m = NULL;
        CHECK_STATUS(rk_model_parse(fx->bytes, fx->len, storage[0], 512, &m), RK_STATUS_OK);
        rk_model_info info;
        CHECK_STATUS(rk_model_get_info(m, &info), RK_STATUS_OK);
        CHECK(info.kind == fx->kind && (uint32_t)info.pair == fx->pair);
        CHECK(info.dim == fx->du && info.dim_v == fx->dv && info.pair_work_len == fx->work_len);
        CHECK(info.format_major == 1 && info.format_minor == 2);
        CHECK(fx->work_len <= sizeof pair_work / sizeof pair_work[0]);
        float s, scores[FIX_ROWS];
        uint32_t order[FIX_ROWS], top[3];
        for (size_t r = 0; r < FIX_ROWS; r++) {
            const float *xv = &fix_rows[r * FIX_DIM];
            CHECK_STATUS(rk_score_pair(m, fx->xu, fx->du, xv, fx->dv, pair_work, fx->work_len, &s), RK_STATUS_OK);
            CHECK(s == fx->scores[r]);
            if (fx->pair == RK_PAIR_KERNEL_SYMMETRIC) {
                float back;
                CHECK_STATUS(rk_score_pair(m, xv, fx->dv, fx->xu, fx->du, pair_work, fx->work_len, &back),
                             RK_STATUS_OK);
                CHECK(back == s);
            }
        }
        CHECK_STATUS(rk_rank_candidates(m, fx->xu, fx->du, fix_rows, FIX_ROWS * fx->dv, pair_work, fx->work_len,
                                        scores, FIX_ROWS, order, FIX_ROWS),
                     RK_STATUS_OK);
        for (size_t r = 0; r < FIX_ROWS; r++) CHECK(scores[r] == fx->scores[r] && order[r] == fx->order[r]);
        CHECK_STATUS(rk_rank_candidates(m, fx->xu, fx->du, fix_rows, FIX_ROWS * fx->dv, pair_work, fx->work_len,
                                        scores, FIX_ROWS, top, 3),
                     RK_STATUS_OK);
        for (size_t r = 0; r < 3; r++) CHECK(top[r] == fx->order[r]);
        /* errors */
        CHECK_STATUS(rk_rank_candidates(m, fx->xu, fx->du, fix_rows, FIX_ROWS * fx->dv, pair_work, fx->work_len,
                                        scores, FIX_ROWS, top, FIX_ROWS + 1),
                     RK_STATUS_LENGTH_MISMATCH);
        CHECK_STATUS(rk_rank_candidates(m, fx->xu, fx->du, fix_rows, FIX_ROWS * fx->dv - 1, pair_work,
                                        fx->work_len, scores, FIX_ROWS, top, 3),
                     RK_STATUS_DIMENSION_MISMATCH);
        CHECK_STATUS(rk_score_pair(m, fx->xu, fx->du, fix_rows, fx->dv, pair_work, fx->work_len - 1, &s),
                     RK_STATUS_DIMENSION_MISMATCH);
        CHECK_STATUS(rk_score_pair(m, fx->xu, fx->du - 1, fix_rows, fx->dv, pair_work, fx->work_len, &s),
                     RK_STATUS_DIMENSION_MISMATCH);
        CHECK_STATUS(rk_score_pair(m, fx->xu, fx->du, fix_rows, fx->dv, NULL, fx->work_len, &s),
                     RK_STATUS_NULL_ARGUMENT);
        CHECK_STATUS(rk_score_pair(m, fx->xu, fx->du, fix_rows, fx->dv, pair_work, fx->work_len, NULL),
                     RK_STATUS_NULL_ARGUMENT);
        float nan_row[FIX_DIM] = {0};
        nan_row[1] = NAN;
        CHECK_STATUS(rk_score_pair(m, fx->xu, fx->du, nan_row, fx->dv, pair_work, fx->work_len, &s),
                     RK_STATUS_NON_FINITE_INPUT);
        /* a pair model is not scored row by row */
        CHECK_STATUS(rk_score_dense(m, fix_rows, fx->du, &s), RK_STATUS_WRONG_MODEL_KIND);
        CHECK_STATUS(rk_rank_dense(m, fix_rows, FIX_ROWS * fx->du, scores, FIX_ROWS, top, 3),
                     RK_STATUS_WRONG_MODEL_KIND);
        /* a newer-format file for an older reader: truncated is still caught */
        CHECK_STATUS(rk_model_parse(fx->bytes, fx->len - 1, storage[1], 512, &m), RK_STATUS_FORMAT_TRUNCATED);
    }
    /* ... nor a single-row model by pairs */
    const rk_model *lin = NULL;
    float s;
    CHECK_STATUS(rk_model_parse(fix_models[0].bytes, fix_models[0].len, storage[0], 512, &lin), RK_STATUS_OK);
    rk_model_info info;
    CHECK_STATUS(rk_model_get_info(lin, &info), RK_STATUS_OK);
    CHECK(info.pair == RK_PAIR_KERNEL_NONE && info.dim_v == 0 && info.pair_work_len == 0);
    CHECK_STATUS(rk_score_pair(lin, fix_rows, FIX_DIM, fix_rows, FIX_DIM, NULL, 0, &s), RK_STATUS_WRONG_MODEL_KIND);
}

/* The quantised model (kind 7): integer scores equal ranklet-core's, the
 * float path gives c·S, and every bad argument is refused with nothing
 * written. */
static void quant(void) {
    const rk_model *m = NULL, *lin = NULL;
    rk_model_info info;
    rk_quant_info qi;
    int64_t scores[FIX_ROWS], one;
    int16_t row[FIX_DIM + 1];
    float f;
    CHECK_STATUS(rk_model_parse(fix_quant, sizeof fix_quant, storage[0], 512, &m), RK_STATUS_OK);
    CHECK_STATUS(rk_model_get_info(m, &info), RK_STATUS_OK);
    CHECK(info.kind == RK_MODEL_KIND_QUANT_LINEAR && info.dim == FIX_DIM && info.element_type == RK_ELEMENT_TYPE_F32);
    CHECK(info.format_major == 1 && info.format_minor == 3);
    CHECK_STATUS(rk_quant_get_info(m, &qi), RK_STATUS_OK);
    CHECK(qi.weight_bits == 16 && qi.bias == FIX_QUANT_BIAS && qi.scale == FIX_QUANT_SCALE);
    CHECK(qi.error_bound == FIX_QUANT_ERROR_BOUND);
    CHECK_STATUS(rk_score_dense_i16_batch(m, fix_quant_rows, FIX_ROWS * FIX_DIM, scores, FIX_ROWS), RK_STATUS_OK);
    for (size_t r = 0; r < FIX_ROWS; r++) {
        CHECK(scores[r] == fix_quant_scores[r]);
        CHECK_STATUS(rk_score_dense_i16(m, &fix_quant_rows[r * FIX_DIM], FIX_DIM, &one), RK_STATUS_OK);
        CHECK(one == fix_quant_scores[r]);
        CHECK_STATUS(rk_quantize_dense(m, &fix_rows[r * FIX_DIM], FIX_DIM, row, FIX_DIM), RK_STATUS_OK);
        for (size_t k = 0; k < FIX_DIM; k++) CHECK(row[k] == fix_quant_rows[r * FIX_DIM + k]);
        CHECK_STATUS(rk_score_dense_quant(m, &fix_rows[r * FIX_DIM], FIX_DIM, &one), RK_STATUS_OK);
        CHECK(one == fix_quant_scores[r]);
        CHECK_STATUS(rk_score_dense(m, &fix_rows[r * FIX_DIM], FIX_DIM, &f), RK_STATUS_OK);
        CHECK(close_rel(f, (float)(FIX_QUANT_SCALE * (double)fix_quant_scores[r])));
    }
    /* Hostile calls: nothing behind an out pointer changes. */
    one = 12345;
    CHECK_STATUS(rk_score_dense_i16(NULL, fix_quant_rows, FIX_DIM, &one), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_score_dense_i16(m, NULL, FIX_DIM, &one), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_score_dense_i16(m, fix_quant_rows, FIX_DIM, NULL), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_score_dense_i16(m, fix_quant_rows, FIX_DIM - 1, &one), RK_STATUS_DIMENSION_MISMATCH);
    CHECK_STATUS(rk_score_dense_i16(m, (const int16_t *)((const char *)fix_quant_rows + 1), FIX_DIM, &one),
                 RK_STATUS_MISALIGNED);
    CHECK_STATUS(rk_score_dense_i16_batch(m, fix_quant_rows, FIX_ROWS * FIX_DIM - 1, scores, FIX_ROWS),
                 RK_STATUS_DIMENSION_MISMATCH);
    CHECK_STATUS(rk_quantize_dense(m, fix_rows, FIX_DIM, row, FIX_DIM + 1), RK_STATUS_DIMENSION_MISMATCH);
    {
        float bad[FIX_DIM] = {0};
        bad[2] = INFINITY;
        CHECK_STATUS(rk_score_dense_quant(m, bad, FIX_DIM, &one), RK_STATUS_NON_FINITE_INPUT);
        CHECK_STATUS(rk_quantize_dense(m, bad, FIX_DIM, row, FIX_DIM), RK_STATUS_NON_FINITE_INPUT);
    }
    CHECK(one == 12345);
    CHECK_STATUS(rk_quant_get_info(m, NULL), RK_STATUS_NULL_ARGUMENT);
    /* A linear model is not a quantised one. */
    CHECK_STATUS(rk_model_parse(fix_models[0].bytes, fix_models[0].len, storage[1], 512, &lin), RK_STATUS_OK);
    CHECK_STATUS(rk_score_dense_i16(lin, fix_quant_rows, FIX_DIM, &one), RK_STATUS_WRONG_MODEL_KIND);
    CHECK_STATUS(rk_score_dense_quant(lin, fix_rows, FIX_DIM, &one), RK_STATUS_WRONG_MODEL_KIND);
    CHECK_STATUS(rk_quant_get_info(lin, &qi), RK_STATUS_WRONG_MODEL_KIND);
    CHECK(one == 12345);
}

/* The preference GP on the device: load the kind-8 fixture, apply the
 * observed preferences, compare with ranklet-core bit for bit (the same
 * library computes both) and with an independent ADF in double written
 * here (tolerance 1e-4: the library keeps the posterior in float), then
 * P(i > j), ranking, next pair, save/load, the posterior as a .rkl file,
 * and hostile calls. Storage deliberately misaligned by one byte. */
static unsigned char pref_storage[2][512 + 1];
static unsigned char pref_region[1024];

/* One ADF site on d = e_w - e_l in double (paper 001 eq. 6; R&W 3.58). */
static void adf_double(double *mu, double *S, size_t n, size_t w, size_t l, double sigma) {
    double s[FIX_PREF_N];
    for (size_t i = 0; i < n; i++) s[i] = S[i * n + w] - S[i * n + l];
    double m = mu[w] - mu[l], v = s[w] - s[l];
    double s2 = 2.0 * sigma * sigma + v, sq = sqrt(s2), z = m / sq;
    double r = exp(-0.5 * z * z) / sqrt(2.0 * 3.14159265358979323846) / (0.5 * erfc(-z / sqrt(2.0)));
    double beta = r * (z + r) / s2;
    for (size_t i = 0; i < n; i++) mu[i] += s[i] * r / sq;
    for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j < n; j++) S[i * n + j] -= beta * s[i] * s[j];
}

static void pref(void) {
    const rk_model *m = NULL, *lin = NULL;
    rk_pref *p = NULL, *back = NULL;
    size_t need = rk_pref_storage_size(FIX_PREF_N), n = 0;
    uint64_t count = 99;
    CHECK(need > 0 && need <= 512);
    CHECK(rk_pref_storage_size(0) == 0);
    CHECK_STATUS(rk_model_parse(fix_pref, sizeof fix_pref, storage[0], 512, &m), RK_STATUS_OK);
    rk_model_info info;
    CHECK_STATUS(rk_model_get_info(m, &info), RK_STATUS_OK);
    CHECK(info.kind == RK_MODEL_KIND_PREF_GP && info.dim == FIX_PREF_N);
    CHECK(info.format_major == 1 && info.format_minor == 4);
    float s = 0.0f;
    CHECK_STATUS(rk_score_dense(m, fix_rows, FIX_PREF_N, &s), RK_STATUS_WRONG_MODEL_KIND);

    /* Hostile initialisation. */
    CHECK_STATUS(rk_model_parse(fix_models[0].bytes, fix_models[0].len, storage[1], 512, &lin), RK_STATUS_OK);
    CHECK_STATUS(rk_pref_init(lin, pref_storage[0] + 1, need, &p), RK_STATUS_WRONG_MODEL_KIND);
    CHECK_STATUS(rk_pref_init(m, pref_storage[0] + 1, need - 1, &p), RK_STATUS_STORAGE_TOO_SMALL);
    CHECK_STATUS(rk_pref_init(NULL, pref_storage[0] + 1, need, &p), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_pref_init(m, NULL, need, &p), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_pref_init(m, pref_storage[0] + 1, need, NULL), RK_STATUS_NULL_ARGUMENT);
    CHECK(p == NULL);
    CHECK_STATUS(rk_pref_init(m, pref_storage[0] + 1, need, &p), RK_STATUS_OK);
    if (p == NULL) return;
    CHECK_STATUS(rk_pref_items(p, &n, &count), RK_STATUS_OK);
    CHECK(n == FIX_PREF_N && count == 0);

    /* The independent reference starts from the same (float) prior. */
    double mu[FIX_PREF_N], S[FIX_PREF_N * FIX_PREF_N];
    float mean[FIX_PREF_N], cov[FIX_PREF_TRI];
    CHECK_STATUS(rk_pref_posterior(p, mean, FIX_PREF_N, cov, FIX_PREF_TRI), RK_STATUS_OK);
    for (size_t i = 0, k = 0; i < FIX_PREF_N; i++) {
        mu[i] = mean[i];
        for (size_t j = 0; j <= i; j++, k++) S[i * FIX_PREF_N + j] = S[j * FIX_PREF_N + i] = cov[k];
    }
    for (size_t k = 0; k < FIX_PREF_OBS; k++) {
        CHECK_STATUS(rk_pref_observe(p, fix_pref_obs[k][0], fix_pref_obs[k][1]), RK_STATUS_OK);
        adf_double(mu, S, FIX_PREF_N, fix_pref_obs[k][0], fix_pref_obs[k][1], FIX_PREF_SIGMA);
    }
    CHECK_STATUS(rk_pref_posterior(p, mean, FIX_PREF_N, cov, FIX_PREF_TRI), RK_STATUS_OK);
    CHECK(memcmp(mean, fix_pref_mean, sizeof mean) == 0);
    CHECK(memcmp(cov, fix_pref_cov, sizeof cov) == 0);
    for (size_t i = 0, k = 0; i < FIX_PREF_N; i++) {
        CHECK(fabs(mean[i] - mu[i]) <= 1e-4 * (1.0 + fabs(mu[i])));
        for (size_t j = 0; j <= i; j++, k++) CHECK(fabs(cov[k] - S[i * FIX_PREF_N + j]) <= 1e-4);
    }
    CHECK_STATUS(rk_pref_items(p, &n, NULL), RK_STATUS_OK);
    CHECK_STATUS(rk_pref_items(p, &n, &count), RK_STATUS_OK);
    CHECK(count == FIX_PREF_OBS);

    /* P(0 > 2) and v_02, against core and against the double reference. */
    float pr = -1.0f, var = -1.0f;
    CHECK_STATUS(rk_pref_prob(p, 0, 2, &pr, &var), RK_STATUS_OK);
    CHECK(pr == fix_pref_p02 && var == fix_pref_v02);
    double v02 = S[0] + S[2 * FIX_PREF_N + 2] - 2 * S[2];
    double p02 = 0.5 * erfc(-((mu[0] - mu[2]) / sqrt(2 * FIX_PREF_SIGMA * FIX_PREF_SIGMA + v02)) / sqrt(2.0));
    CHECK(fabs(pr - p02) <= 1e-5 && fabs(var - v02) <= 1e-4);
    float q = -1.0f;
    CHECK_STATUS(rk_pref_prob(p, 2, 0, &q, NULL), RK_STATUS_OK);
    CHECK(fabs(pr + q - 1.0) <= 1e-6);
    CHECK_STATUS(rk_pref_prob(p, 3, 3, &q, &var), RK_STATUS_OK);
    CHECK(q == 0.5f && var == 0.0f);

    /* Ranking and next pair. */
    uint32_t order[FIX_PREF_N], ni = 99, nj = 99;
    float ratio = 0.0f;
    CHECK_STATUS(rk_pref_rank(p, order, FIX_PREF_N), RK_STATUS_OK);
    CHECK(memcmp(order, fix_pref_order, sizeof order) == 0);
    for (size_t k = 1; k < FIX_PREF_N; k++) CHECK(mean[order[k - 1]] >= mean[order[k]]);
    CHECK_STATUS(rk_pref_next_pair(p, &ni, &nj, &ratio), RK_STATUS_OK);
    CHECK(ni == FIX_PREF_NEXT_I && nj == FIX_PREF_NEXT_J && ratio > 0.0f);

    /* Hostile calls change nothing. */
    CHECK_STATUS(rk_pref_observe(p, 1, 1), RK_STATUS_BAD_ARGUMENT);
    CHECK_STATUS(rk_pref_observe(p, FIX_PREF_N, 0), RK_STATUS_BAD_ARGUMENT);
    CHECK_STATUS(rk_pref_observe(p, 0, 0xFFFFFFFFu), RK_STATUS_BAD_ARGUMENT);
    CHECK_STATUS(rk_pref_observe(NULL, 0, 1), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_pref_observe((rk_pref *)pref_storage[1], 0, 1), RK_STATUS_BAD_HANDLE);
    CHECK_STATUS(rk_pref_observe((rk_pref *)(pref_storage[1] + 1), 0, 1), RK_STATUS_BAD_HANDLE);
    CHECK_STATUS(rk_pref_prob(p, 0, FIX_PREF_N, &pr, &var), RK_STATUS_BAD_ARGUMENT);
    CHECK_STATUS(rk_pref_prob(p, 0, 1, NULL, &var), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_pref_prob(NULL, 0, 1, &pr, &var), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_pref_rank(p, order, FIX_PREF_N - 1), RK_STATUS_LENGTH_MISMATCH);
    CHECK_STATUS(rk_pref_rank(p, NULL, FIX_PREF_N), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_pref_next_pair(p, NULL, &nj, &ratio), RK_STATUS_NULL_ARGUMENT);
    CHECK_STATUS(rk_pref_posterior(p, mean, FIX_PREF_N - 1, NULL, 0), RK_STATUS_LENGTH_MISMATCH);
    CHECK_STATUS(rk_pref_posterior(p, mean, FIX_PREF_N, cov, FIX_PREF_TRI - 1), RK_STATUS_LENGTH_MISMATCH);
    CHECK_STATUS(rk_pref_posterior(p, mean, FIX_PREF_N, NULL, 0), RK_STATUS_OK);
    CHECK_STATUS(rk_pref_posterior(p, mean, FIX_PREF_N, cov, FIX_PREF_TRI), RK_STATUS_OK);
    CHECK(memcmp(mean, fix_pref_mean, sizeof mean) == 0 && memcmp(cov, fix_pref_cov, sizeof cov) == 0);
    CHECK_STATUS(rk_pref_items(p, &n, &count), RK_STATUS_OK);
    CHECK(count == FIX_PREF_OBS);

    /* Save into the A/B store, load into other storage: the same posterior. */
    size_t region = rk_pref_store_size(FIX_PREF_N);
    uint32_t seq = 0, seq2 = 0;
    CHECK(region > 0 && region <= sizeof pref_region);
    CHECK_STATUS(rk_pref_load(pref_region, region, pref_storage[1], 512, &back, &seq), RK_STATUS_NO_SAVED_STATE);
    CHECK_STATUS(rk_pref_save(p, pref_region, region - 1, &seq), RK_STATUS_STORAGE_TOO_SMALL);
    CHECK_STATUS(rk_pref_save(p, pref_region, region, &seq), RK_STATUS_OK);
    CHECK(seq == 1);
    CHECK_STATUS(rk_pref_load(pref_region, region, pref_storage[1], need - 1, &back, &seq2),
                 RK_STATUS_STORAGE_TOO_SMALL);
    CHECK_STATUS(rk_pref_load(pref_region, region, pref_storage[1], 512, &back, &seq2), RK_STATUS_OK);
    CHECK(seq2 == 1);
    if (back != NULL) {
        float mean2[FIX_PREF_N], cov2[FIX_PREF_TRI];
        CHECK_STATUS(rk_pref_posterior(back, mean2, FIX_PREF_N, cov2, FIX_PREF_TRI), RK_STATUS_OK);
        CHECK(memcmp(mean2, fix_pref_mean, sizeof mean2) == 0 && memcmp(cov2, fix_pref_cov, sizeof cov2) == 0);
    }
    /* A newer save, then damage to it: the previous save loads. */
    CHECK_STATUS(rk_pref_observe(p, 5, 0), RK_STATUS_OK);
    CHECK_STATUS(rk_pref_save(p, pref_region, region, &seq), RK_STATUS_OK);
    CHECK(seq == 2);
    pref_region[region / 2 + 40] ^= 0x10;
    CHECK_STATUS(rk_pref_load(pref_region, region, pref_storage[1], 512, &back, &seq2), RK_STATUS_OK);
    CHECK(seq2 == 1);

    /* The posterior as a .rkl file: kind 8, format 1.4, loads again. */
    static unsigned char file[512];
    size_t len = 0, written = 0;
    CHECK_STATUS(rk_pref_model_size(p, &len), RK_STATUS_OK);
    CHECK(len > 0 && len <= sizeof file);
    CHECK_STATUS(rk_pref_write_model(p, file, len - 1, &written), RK_STATUS_STORAGE_TOO_SMALL);
    CHECK_STATUS(rk_pref_write_model(p, file, len, &written), RK_STATUS_OK);
    CHECK(written == len);
    const rk_model *saved = NULL;
    CHECK_STATUS(rk_model_parse(file, written, storage[1], 512, &saved), RK_STATUS_OK);
    CHECK_STATUS(rk_model_get_info(saved, &info), RK_STATUS_OK);
    CHECK(info.kind == RK_MODEL_KIND_PREF_GP && info.dim == FIX_PREF_N && info.format_minor == 4);
    CHECK_STATUS(rk_pref_init(saved, pref_storage[1], 512, &back), RK_STATUS_OK);
    CHECK_STATUS(rk_pref_items(back, &n, &count), RK_STATUS_OK);
    CHECK(count == FIX_PREF_OBS + 1);
    /* A corrupted covariance diagonal in the file is refused at parse time. */
    file[written - 8] ^= 0x80; /* a bit of the last diagonal entry: the CRC catches it */
    CHECK_STATUS(rk_model_parse(file, written, storage[1], 512, &saved), RK_STATUS_FORMAT_BAD_CHECKSUM);
}

int main(void) {
    for (size_t i = 0; i < FIX_MODELS; i++) check_model(&fix_models[i]);
    hostile();
    online();
    pairs();
    quant();
    pref();
    if (failures) {
        fprintf(stderr, "%d checks failed\n", failures);
        return 1;
    }
    printf("test_scoring.c: all checks passed (%zu models, %zu pair models)\n", (size_t)FIX_MODELS,
           (size_t)FIX_PAIR_MODELS);
    return 0;
}
