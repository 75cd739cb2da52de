/* Ranks five items with a model compiled into the program: no file system,
 * no heap. `make run` trains the model, exports it as a C array
 * (model.c/model.h) with `ranklet export`, links libranklet_ffi.a and runs. */
#include <stdio.h>

#include "model.h"
#include "ranklet.h"

#define DIM 4
#define N_ITEMS 5

static const char *const names[N_ITEMS] = {"apple", "brick", "cloud", "drum", "ember"};
static const float items[N_ITEMS * DIM] = {
    0.3f, 0.5f, 0.6f, 0.4f, /* apple */
    0.9f, 0.1f, 0.1f, 0.2f, /* brick */
    0.1f, 0.8f, 0.9f, 0.5f, /* cloud */
    0.6f, 0.3f, 0.3f, 0.7f, /* drum  */
    0.5f, 0.5f, 0.5f, 0.5f, /* ember */
};

static unsigned char storage[RK_MODEL_STORAGE_MAX]; /* >= rk_model_storage_size() */

int main(void) {
    const rk_model *model;
    rk_model_info info;
    float scores[N_ITEMS];
    uint32_t order[N_ITEMS];
    rk_status st = rk_model_parse(ranklet_model, ranklet_model_len, storage, sizeof storage, &model);
    if (st != RK_STATUS_OK) {
        fprintf(stderr, "parse: %s\n", rk_status_str(st));
        return 1;
    }
    st = rk_model_get_info(model, &info);
    if (st != RK_STATUS_OK || info.dim != DIM) {
        fprintf(stderr, "model has %zu features, this program has %d\n", info.dim, DIM);
        return 1;
    }
    st = rk_rank_dense(model, items, N_ITEMS * DIM, scores, N_ITEMS, order, N_ITEMS);
    if (st != RK_STATUS_OK) {
        fprintf(stderr, "rank: %s\n", rk_status_str(st));
        return 1;
    }
    for (int r = 0; r < N_ITEMS; r++) printf("%d. %-6s %8.4f\n", r + 1, names[order[r]], (double)scores[order[r]]);
    return 0;
}
