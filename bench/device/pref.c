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
 *                 (SysTick under `qemu -icount shift=0`: one virtual ns per
 *                 instruction, 40 per tick at 25 MHz): per observe (each
 *                 of FW_PREF_OBS calls timed on its own), per prob, per
 *                 next pair, per rank, per save, per load
 *
 * Output over semihosting: `ticks observes <n> observe_total <t> observe_min
 * <t> observe_max <t> prob <t> next <t> rank <t> save <t> load <t>`, `stack
 * observe <b> prob <b> next <b> rank <b> save <b> load <b>`, `ram storage
 * <b> region <b>`, `mean0 <hex>` (a check value). No libc, no heap. */
#include <stddef.h>
#include <stdint.h>

#include "pref_obs.h"
#include "ranklet.h"
#include "semihost.h"

extern const uint8_t fw_model_pref[];
extern const size_t fw_model_pref_len;

#define TRI (FW_PREF_N * (FW_PREF_N + 1) / 2)
#define STORAGE_MAX (4 * (2 * FW_PREF_N + TRI) + 64)
#define REGION_MAX (2 * (4 * (FW_PREF_N + TRI) + 128))

#if PB_VARIANT == 0
int main(void) {
    uint32_t sum = 0;
    for (size_t i = 0; i < fw_model_pref_len; i++) sum += fw_model_pref[i];
    for (size_t k = 0; k < FW_PREF_OBS; k++) sum += fw_pref_obs[k][0] * 3 + fw_pref_obs[k][1];
    sh_puts("baseline ");
    sh_put_hex32(sum);
    sh_puts("\n");
    return sum == 0;
}
#else
static uint32_t bits(float f) {
    union { float f; uint32_t u; } v = {f};
    return v.u;
}

static unsigned char model_storage[512];
static unsigned char storage[STORAGE_MAX];
static float mean[FW_PREF_N];
#if PB_VARIANT >= 2
static uint32_t order[FW_PREF_N];
#endif
#if PB_VARIANT >= 3
static unsigned char region[REGION_MAX];
static unsigned char storage2[STORAGE_MAX];
#endif

#if PB_VARIANT == 4
#include "stackpaint.h"
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
static uint32_t since(uint32_t t0) { return (t0 - SYST_CVR) & 0xFFFFFFu; }
#define MEASURE(stack_var, ticks_var, call)   \
    do {                                      \
        uint32_t sp_ = current_sp();          \
        paint(sp_ - PAINT_GAP);               \
        uint32_t t0_ = SYST_CVR;              \
        st = (call);                          \
        ticks_var = since(t0_);               \
        uint32_t u_ = stack_used(sp_);        \
        if (u_ > stack_var) stack_var = u_;   \
    } while (0)
#endif

static int fail(const char *what, uint32_t st) {
    sh_puts("FAIL ");
    sh_puts(what);
    sh_puts(" ");
    sh_put_u32(st);
    sh_puts("\n");
    return 1;
}

int main(void) {
    const rk_model *m;
    rk_pref *p;
    rk_status st;
#if PB_VARIANT == 4
    SYST_RVR = 0xFFFFFFu;
    SYST_CVR = 0;
    SYST_CSR = 5;
    uint32_t s_obs = 0, s_prob = 0, s_next = 0, s_rank = 0, s_save = 0, s_load = 0;
    uint32_t t = 0, t_obs = 0, t_min = 0xFFFFFFFFu, t_max = 0, t_prob = 0, t_next = 0, t_rank = 0, t_save = 0,
             t_load = 0;
#endif
    if ((st = rk_model_parse(fw_model_pref, fw_model_pref_len, model_storage, sizeof model_storage, &m)) !=
        RK_STATUS_OK)
        return fail("parse", st);
    if (rk_pref_storage_size(FW_PREF_N) > sizeof storage) return fail("storage", 0);
    if ((st = rk_pref_init(m, storage, sizeof storage, &p)) != RK_STATUS_OK) return fail("init", st);
    for (uint32_t k = 0; k < FW_PREF_OBS; k++) {
#if PB_VARIANT == 4
        MEASURE(s_obs, t, rk_pref_observe(p, fw_pref_obs[k][0], fw_pref_obs[k][1]));
        t_obs += t;
        if (t < t_min) t_min = t;
        if (t > t_max) t_max = t;
#else
        st = rk_pref_observe(p, fw_pref_obs[k][0], fw_pref_obs[k][1]);
#endif
        if (st != RK_STATUS_OK) return fail("observe", st);
    }
    if ((st = rk_pref_posterior(p, mean, FW_PREF_N, 0, 0)) != RK_STATUS_OK) return fail("posterior", st);
#if PB_VARIANT >= 2
    float prob, var, ratio;
    uint32_t ni, nj;
#if PB_VARIANT == 4
    MEASURE(s_prob, t_prob, rk_pref_prob(p, 1, FW_PREF_N - 2, &prob, &var));
    if (st != RK_STATUS_OK) return fail("prob", st);
    MEASURE(s_next, t_next, rk_pref_next_pair(p, &ni, &nj, &ratio));
    if (st != RK_STATUS_OK) return fail("next", st);
    MEASURE(s_rank, t_rank, rk_pref_rank(p, order, FW_PREF_N));
#else
    if ((st = rk_pref_prob(p, 1, FW_PREF_N - 2, &prob, &var)) != RK_STATUS_OK) return fail("prob", st);
    if ((st = rk_pref_next_pair(p, &ni, &nj, &ratio)) != RK_STATUS_OK) return fail("next", st);
    st = rk_pref_rank(p, order, FW_PREF_N);
#endif
    if (st != RK_STATUS_OK) return fail("rank", st);
#endif
#if PB_VARIANT >= 3
    uint32_t seq;
    rk_pref *back;
    if (rk_pref_store_size(FW_PREF_N) > sizeof region) return fail("region", 0);
#if PB_VARIANT == 4
    MEASURE(s_save, t_save, rk_pref_save(p, region, sizeof region, &seq));
    if (st != RK_STATUS_OK) return fail("save", st);
    MEASURE(s_load, t_load, rk_pref_load(region, sizeof region, storage2, sizeof storage2, &back, &seq));
#else
    if ((st = rk_pref_save(p, region, sizeof region, &seq)) != RK_STATUS_OK) return fail("save", st);
    st = rk_pref_load(region, sizeof region, storage2, sizeof storage2, &back, &seq);
#endif
    if (st != RK_STATUS_OK) return fail("load", st);
#endif
#if PB_VARIANT == 4
    sh_puts("ticks observes ");
    sh_put_u32(FW_PREF_OBS);
    sh_puts(" observe_total ");
    sh_put_u32(t_obs);
    sh_puts(" observe_min ");
    sh_put_u32(t_min);
    sh_puts(" observe_max ");
    sh_put_u32(t_max);
    sh_puts(" prob ");
    sh_put_u32(t_prob);
    sh_puts(" next ");
    sh_put_u32(t_next);
    sh_puts(" rank ");
    sh_put_u32(t_rank);
    sh_puts(" save ");
    sh_put_u32(t_save);
    sh_puts(" load ");
    sh_put_u32(t_load);
    sh_puts("\nstack observe ");
    sh_put_u32(s_obs);
    sh_puts(" prob ");
    sh_put_u32(s_prob);
    sh_puts(" next ");
    sh_put_u32(s_next);
    sh_puts(" rank ");
    sh_put_u32(s_rank);
    sh_puts(" save ");
    sh_put_u32(s_save);
    sh_puts(" load ");
    sh_put_u32(s_load);
    sh_puts("\nram storage ");
    sh_put_u32((uint32_t)rk_pref_storage_size(FW_PREF_N));
    sh_puts(" region ");
    sh_put_u32((uint32_t)rk_pref_store_size(FW_PREF_N));
    sh_puts("\n");
#endif
    sh_puts("mean0 ");
    sh_put_hex32(bits(mean[0]));
    sh_puts("\n");
    return 0;
}
#endif
