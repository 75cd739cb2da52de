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
 *                 (SysTick under `qemu -icount shift=0`: one virtual ns per
 *                 instruction, 40 per tick at 25 MHz) per observe, per
 *                 next-pair over OB_ROWS candidates, per save and per load
 *
 * Output over semihosting: `ticks observe <t> next <t> save <t> load <t>`,
 * `stack observe <b> next <b> save <b> load <b>`, `ram storage <b> region
 * <b> work <b>`, `w0 <hex>` (a check value). No libc, no heap. */
#include <stddef.h>
#include <stdint.h>

#include "online_model.h"
#include "ranklet.h"
#include "semihost.h"

#define STORAGE_MAX (sizeof(float) * (OB_DIM * (OB_DIM + 1) + 4 * OB_DIM) + 64)
#define REGION_MAX (2 * (sizeof(float) * (OB_DIM * (OB_DIM + 1) / 2 + 4 * OB_DIM) + 256))
#define WORK_MAX (sizeof(float) * (OB_ROWS * OB_DIM + 2 * OB_ROWS + 16))

static uint32_t bits(float f) {
    union { float f; uint32_t u; } v = {f};
    return v.u;
}

#if OB_VARIANT == 0
int main(void) {
    uint32_t sum = 0;
    for (size_t i = 0; i < OB_MODEL_LEN; i++) sum += ob_model[i];
    for (size_t i = 0; i < OB_ROWS * OB_DIM; i++) sum += bits(ob_rows[i]);
    sh_puts("baseline ");
    sh_put_hex32(sum);
    sh_puts("\n");
    return sum == 0;
}
#else
static unsigned char model_storage[512];
static unsigned char storage[STORAGE_MAX];
static float w[OB_DIM];
#if OB_VARIANT == 2 || OB_VARIANT == 4
static unsigned char region[REGION_MAX];
static unsigned char storage2[STORAGE_MAX];
#endif
#if OB_VARIANT == 3 || OB_VARIANT == 4
static float work[WORK_MAX / sizeof(float)];
#endif

#if OB_VARIANT == 4
#include "stackpaint.h"
#define SYST_CSR (*(volatile uint32_t *)0xE000E010u)
#define SYST_RVR (*(volatile uint32_t *)0xE000E014u)
#define SYST_CVR (*(volatile uint32_t *)0xE000E018u)
static uint32_t since(uint32_t t0) { return (t0 - SYST_CVR) & 0xFFFFFFu; }
#define OBSERVES 20
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
    const rk_model *prior;
    rk_online *o;
    rk_status st;
    uint64_t count;
#if OB_VARIANT == 4
    SYST_RVR = 0xFFFFFFu;
    SYST_CVR = 0;
    SYST_CSR = 5;
    uint32_t s_obs = 0, s_next = 0, s_save = 0, s_load = 0, t = 0, t_obs = 0, t_next = 0, t_save = 0, t_load = 0;
#endif
    if ((st = rk_model_parse(ob_model, OB_MODEL_LEN, model_storage, sizeof model_storage, &prior)) != RK_STATUS_OK)
        return fail("parse", st);
    if (rk_online_storage_size(OB_DIM) > sizeof storage) return fail("storage", 0);
    if ((st = rk_online_init(prior, 1.0f, storage, sizeof storage, &o)) != RK_STATUS_OK) return fail("init", st);
    for (uint32_t k = 0; k < 20; k++) {
        const float *a = &ob_rows[(k % OB_ROWS) * OB_DIM], *b = &ob_rows[((k * 7 + 3) % OB_ROWS) * OB_DIM];
        if (a == b) continue;
#if OB_VARIANT == 4
        MEASURE(s_obs, t, rk_online_observe(o, a, b, OB_DIM, 1.0f));
        t_obs += t;
#else
        st = rk_online_observe(o, a, b, OB_DIM, 1.0f);
#endif
        if (st != RK_STATUS_OK) return fail("observe", st);
    }
    if ((st = rk_online_weights(o, w, OB_DIM, &count)) != RK_STATUS_OK) return fail("weights", st);
#if OB_VARIANT == 3 || OB_VARIANT == 4
    uint32_t ni, nj;
    float ratio;
    if (rk_online_next_pair_work_size(OB_ROWS, OB_DIM) > sizeof work) return fail("work", 0);
#if OB_VARIANT == 4
    MEASURE(s_next, t_next, rk_online_next_pair(o, ob_rows, OB_ROWS * OB_DIM, OB_ROWS, work, sizeof work, &ni, &nj, &ratio));
#else
    st = rk_online_next_pair(o, ob_rows, OB_ROWS * OB_DIM, OB_ROWS, work, sizeof work, &ni, &nj, &ratio);
#endif
    if (st != RK_STATUS_OK) return fail("next", st);
#endif
#if OB_VARIANT == 2 || OB_VARIANT == 4
    uint32_t seq;
    rk_online *back;
    if (rk_online_store_size(OB_DIM) > sizeof region) return fail("region", 0);
#if OB_VARIANT == 4
    MEASURE(s_save, t_save, rk_online_save(o, region, sizeof region, &seq));
    if (st != RK_STATUS_OK) return fail("save", st);
    MEASURE(s_load, t_load, rk_online_load(region, sizeof region, storage2, sizeof storage2, &back, &seq));
#else
    if ((st = rk_online_save(o, region, sizeof region, &seq)) != RK_STATUS_OK) return fail("save", st);
    st = rk_online_load(region, sizeof region, storage2, sizeof storage2, &back, &seq);
#endif
    if (st != RK_STATUS_OK) return fail("load", st);
#endif
#if OB_VARIANT == 4
    sh_puts("ticks observes ");
    sh_put_u32((uint32_t)count);
    sh_puts(" observe_total ");
    sh_put_u32(t_obs);
    sh_puts(" next ");
    sh_put_u32(t_next);
    sh_puts(" save ");
    sh_put_u32(t_save);
    sh_puts(" load ");
    sh_put_u32(t_load);
    sh_puts("\nstack observe ");
    sh_put_u32(s_obs);
    sh_puts(" next ");
    sh_put_u32(s_next);
    sh_puts(" save ");
    sh_put_u32(s_save);
    sh_puts(" load ");
    sh_put_u32(s_load);
    sh_puts("\nram storage ");
    sh_put_u32((uint32_t)rk_online_storage_size(OB_DIM));
    sh_puts(" region ");
    sh_put_u32((uint32_t)rk_online_store_size(OB_DIM));
    sh_puts(" work ");
    sh_put_u32((uint32_t)rk_online_next_pair_work_size(OB_ROWS, OB_DIM));
    sh_puts("\n");
#endif
    sh_puts("w0 ");
    sh_put_hex32(bits(w[0]));
    sh_puts("\n");
    return 0;
}
#endif
