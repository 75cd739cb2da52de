/* Device figures of the online learner (bench/device_online.sh): one
 * source, several firmwares on QEMU mps2-an386 (Cortex-M4F), for one
 * dimension OB_DIM (online_model.h):
 *
 *   OB_VARIANT 0  baseline: the model bytes and rows summed, no ranklet
 *   OB_VARIANT 1  learn: rk_model_parse + rk_online_init + rk_online_observe
 *                 + rk_online_weights (minus 0 = the code learning adds)
 *   OB_VARIANT 2  learn + save/load through the A/B store
 *   OB_VARIANT 3  learn + rk_online_next_pair
 *   OB_VARIANT 4  everything, with stack painting and instruction counts
 *                 (learner.h) per observe, per next-pair over OB_ROWS
 *                 candidates, per save and per load
 *
 * Output over semihosting: `ticks observes <n> observe_total <t> next <t>
 * save <t> load <t>`, `stack observe <b> next <b> save <b> load <b>`, `ram
 * storage <b> region <b> work <b>`, `w0 <hex>` (a check value). */
#include <stddef.h>
#include <stdint.h>

#include "online_model.h"

#define STORAGE_MAX (sizeof(float) * (OB_DIM * (OB_DIM + 1) + 4 * OB_DIM) + 64)
#define REGION_MAX (2 * (sizeof(float) * (OB_DIM * (OB_DIM + 1) / 2 + 4 * OB_DIM) + 256))
#define WORK_MAX (sizeof(float) * (OB_ROWS * OB_DIM + 2 * OB_ROWS + 16))

#define BENCH_MEASURE (OB_VARIANT == 4)
#define BENCH_LEARNER (OB_VARIANT != 0)
#define BENCH_STORE (OB_VARIANT == 2 || OB_VARIANT == 4)
#include "learner.h"

#if OB_VARIANT == 0
int main(void) {
    uint32_t sum = 0;
    for (size_t i = 0; i < OB_MODEL_LEN; i++) sum += ob_model[i];
    for (size_t i = 0; i < OB_ROWS * OB_DIM; i++) sum += bits(ob_rows[i]);
    put_hex_line("baseline", sum);
    return sum == 0;
}
#else
static float w[OB_DIM];
#if OB_VARIANT == 3 || OB_VARIANT == 4
static float work[WORK_MAX / sizeof(float)];
#endif

int main(void) {
    const rk_model *prior;
    rk_online *o;
    rk_status st;
    uint64_t count;
#if BENCH_MEASURE
    systick_start();
    uint32_t s_obs = 0, s_next = 0, s_save = 0, s_load = 0, t = 0, t_obs = 0, t_next = 0, t_save = 0, t_load = 0;
#endif
    CHECK("parse", rk_model_parse(ob_model, OB_MODEL_LEN, model_storage, sizeof model_storage, &prior));
    if (rk_online_storage_size(OB_DIM) > sizeof storage) return fail("storage", 0);
    CHECK("init", rk_online_init(prior, 1.0f, storage, sizeof storage, &o));
    for (uint32_t k = 0; k < 20; k++) {
        const float *a = &ob_rows[(k % OB_ROWS) * OB_DIM], *b = &ob_rows[((k * 7 + 3) % OB_ROWS) * OB_DIM];
        if (a == b) continue;
        TRY("observe", s_obs, t, rk_online_observe(o, a, b, OB_DIM, 1.0f));
#if BENCH_MEASURE
        t_obs += t;
#endif
    }
    CHECK("weights", rk_online_weights(o, w, OB_DIM, &count));
#if OB_VARIANT == 3 || OB_VARIANT == 4
    uint32_t ni, nj;
    float ratio;
    if (rk_online_next_pair_work_size(OB_ROWS, OB_DIM) > sizeof work) return fail("work", 0);
    TRY("next", s_next, t_next,
        rk_online_next_pair(o, ob_rows, OB_ROWS * OB_DIM, OB_ROWS, work, sizeof work, &ni, &nj, &ratio));
#endif
#if OB_VARIANT == 2 || OB_VARIANT == 4
    SAVE_LOAD(online, o, OB_DIM);
#endif
#if BENCH_MEASURE
    static const char *const ticks[] = {"observes", "observe_total", "next", "save", "load"};
    static const char *const stack[] = {"observe", "next", "save", "load"};
    static const char *const ram[] = {"storage", "region", "work"};
    put_figures("ticks", ticks, (uint32_t[]){(uint32_t)count, t_obs, t_next, t_save, t_load}, 5);
    put_figures("stack", stack, (uint32_t[]){s_obs, s_next, s_save, s_load}, 4);
    put_figures("ram", ram,
                (uint32_t[]){(uint32_t)rk_online_storage_size(OB_DIM), (uint32_t)rk_online_store_size(OB_DIM),
                             (uint32_t)rk_online_next_pair_work_size(OB_ROWS, OB_DIM)},
                3);
#endif
    put_hex_line("w0", bits(w[0]));
    return 0;
}
#endif
