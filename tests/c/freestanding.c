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
    return 0;
}
