/* Device figures of the preference GP (bench/device_pref.sh): one source,
 * several firmwares on QEMU mps2-an386 (Cortex-M4F), for FW_PREF_N items
 * (pref_obs.h and the model C array, both from core/examples/pref_fixture.rs):
 *
 *   PB_VARIANT 0  baseline: the model bytes and observations summed, no ranklet
 *   PB_VARIANT 1  rk_model_parse + rk_pref_init + rk_pref_observe +
 *                 rk_pref_posterior (minus 0 = the code the update adds)
 *   PB_VARIANT 2  1 + rk_pref_prob + rk_pref_next_pair + rk_pref_rank
 *   PB_VARIANT 3  2 + save/load through the A/B store
 *   PB_VARIANT 4  everything, with stack painting and instruction counts
 *                 (learner.h): per observe (each of FW_PREF_OBS calls
 *                 timed on its own), per prob, per next pair, per rank,
 *                 per save, per load
 *
 * Output over semihosting: `ticks observes <n> observe_total <t> observe_min
 * <t> observe_max <t> prob <t> next <t> rank <t> save <t> load <t>`, `stack
 * observe <b> prob <b> next <b> rank <b> save <b> load <b>`, `ram storage
 * <b> region <b>`, `mean0 <hex>` (a check value). */
#include <stddef.h>
#include <stdint.h>

#include "pref_obs.h"

extern const uint8_t fw_model_pref[];
extern const size_t fw_model_pref_len;

#define TRI (FW_PREF_N * (FW_PREF_N + 1) / 2)
#define STORAGE_MAX (4 * (2 * FW_PREF_N + TRI) + 64)
#define REGION_MAX (2 * (4 * (FW_PREF_N + TRI) + 128))

#define BENCH_MEASURE (PB_VARIANT == 4)
#define BENCH_LEARNER (PB_VARIANT != 0)
#define BENCH_STORE (PB_VARIANT >= 3)
#include "learner.h"

#if PB_VARIANT == 0
int main(void) {
    uint32_t sum = 0;
    for (size_t i = 0; i < fw_model_pref_len; i++) sum += fw_model_pref[i];
    for (size_t k = 0; k < FW_PREF_OBS; k++) sum += fw_pref_obs[k][0] * 3 + fw_pref_obs[k][1];
    put_hex_line("baseline", sum);
    return sum == 0;
}
#else
static float mean[FW_PREF_N];
#if PB_VARIANT >= 2
static uint32_t order[FW_PREF_N];
#endif

int main(void) {
    const rk_model *m;
    rk_pref *p;
    rk_status st;
#if BENCH_MEASURE
    systick_start();
    uint32_t s_obs = 0, s_prob = 0, s_next = 0, s_rank = 0, s_save = 0, s_load = 0;
    uint32_t t = 0, t_obs = 0, t_min = 0xFFFFFFFFu, t_max = 0, t_prob = 0, t_next = 0, t_rank = 0, t_save = 0,
             t_load = 0;
#endif
    CHECK("parse", rk_model_parse(fw_model_pref, fw_model_pref_len, model_storage, sizeof model_storage, &m));
    if (rk_pref_storage_size(FW_PREF_N) > sizeof storage) return fail("storage", 0);
    CHECK("init", rk_pref_init(m, storage, sizeof storage, &p));
    for (uint32_t k = 0; k < FW_PREF_OBS; k++) {
        TRY("observe", s_obs, t, rk_pref_observe(p, fw_pref_obs[k][0], fw_pref_obs[k][1]));
#if BENCH_MEASURE
        t_obs += t;
        if (t < t_min) t_min = t;
        if (t > t_max) t_max = t;
#endif
    }
    CHECK("posterior", rk_pref_posterior(p, mean, FW_PREF_N, 0, 0));
#if PB_VARIANT >= 2
    float prob, var, ratio;
    uint32_t ni, nj;
    TRY("prob", s_prob, t_prob, rk_pref_prob(p, 1, FW_PREF_N - 2, &prob, &var));
    TRY("next", s_next, t_next, rk_pref_next_pair(p, &ni, &nj, &ratio));
    TRY("rank", s_rank, t_rank, rk_pref_rank(p, order, FW_PREF_N));
#endif
#if PB_VARIANT >= 3
    SAVE_LOAD(pref, p, FW_PREF_N);
#endif
#if BENCH_MEASURE
    static const char *const ticks[] = {"observes", "observe_total", "observe_min", "observe_max", "prob",
                                        "next",     "rank",          "save",        "load"};
    static const char *const stack[] = {"observe", "prob", "next", "rank", "save", "load"};
    static const char *const ram[] = {"storage", "region"};
    put_figures("ticks", ticks,
                (uint32_t[]){FW_PREF_OBS, t_obs, t_min, t_max, t_prob, t_next, t_rank, t_save, t_load}, 9);
    put_figures("stack", stack, (uint32_t[]){s_obs, s_prob, s_next, s_rank, s_save, s_load}, 6);
    put_figures("ram", ram,
                (uint32_t[]){(uint32_t)rk_pref_storage_size(FW_PREF_N), (uint32_t)rk_pref_store_size(FW_PREF_N)}, 2);
#endif
    put_hex_line("mean0", bits(mean[0]));
    return 0;
}
#endif
