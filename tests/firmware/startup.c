/* Startup for the firmware tests on QEMU mps2-an386 (Cortex-M4F) and
 * mps2-an385 (Cortex-M3, run_quant.sh): vector
 * table, reset handler (copy .data, zero .bss, enable the FPU, call main),
 * ARM semihosting (SYS_WRITE0, SYS_EXIT) and the memory primitives that
 * compiled C and Rust code may call. No libc, no heap. */
#include <stddef.h>
#include <stdint.h>

#include "semihost.h"

extern uint32_t __stack_top[], __data_start[], __data_end[], __data_load[], __bss_start[], __bss_end[];
int main(void);

/* ---- semihosting: `bkpt 0xab` with r0 = operation, r1 = argument ---- */
static uint32_t semihost(uint32_t op, const void *arg) {
    register uint32_t r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xab" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void sh_puts(const char *s) { semihost(0x04 /* SYS_WRITE0 */, s); }

__attribute__((noreturn)) void sh_exit(int code) {
    /* SYS_EXIT (0x18) with ADP_Stopped_ApplicationExit makes QEMU exit 0;
     * ADP_Stopped_RunTimeErrorUnknown makes it exit 1. */
    semihost(0x18, (const void *)(uintptr_t)(code == 0 ? 0x20026u : 0x20023u));
    for (;;) {
    }
}

/* ---- formatting without printf ---- */
void sh_put_hex32(uint32_t v) {
    char b[9];
    for (int i = 0; i < 8; i++) b[i] = "0123456789abcdef"[(v >> (28 - 4 * i)) & 0xf];
    b[8] = 0;
    sh_puts(b);
}

void sh_put_u32(uint32_t v) {
    char b[11];
    int i = 10;
    b[i] = 0;
    do {
        b[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    sh_puts(&b[i]);
}

/* memory primitives: tests/support/mem.c */

/* ---- reset and faults ---- */
__attribute__((noreturn)) void Reset_Handler(void) {
    for (uint32_t *s = __data_load, *d = __data_start; d < __data_end;) *d++ = *s++;
    for (uint32_t *d = __bss_start; d < __bss_end;) *d++ = 0;
#ifdef __ARM_FP
    /* CPACR: full access to CP10/CP11 (the FPU), before any float code.
     * Cores without an FPU (Cortex-M0/M3, tests/firmware/run_quant.sh)
     * skip it: ARMv6-M has no CPACR. */
    *(volatile uint32_t *)0xE000ED88u |= 0xFu << 20;
    __asm__ volatile("dsb\n isb" ::: "memory");
#endif
    sh_exit(main());
}

__attribute__((noreturn)) static void Fault_Handler(void) {
    sh_puts("FIRMWARE FAULT: HardFault/MemManage/BusFault/UsageFault\n");
    sh_exit(1);
}

typedef void (*vector)(void);
__attribute__((section(".vectors"), used)) const vector vector_table[16] = {
    (vector)(uintptr_t)__stack_top, /* initial MSP */
    Reset_Handler,
    Fault_Handler, /* NMI */
    Fault_Handler, /* HardFault */
    Fault_Handler, /* MemManage */
    Fault_Handler, /* BusFault */
    Fault_Handler, /* UsageFault */
    0, 0, 0, 0,
    Fault_Handler, /* SVCall */
    Fault_Handler, /* DebugMonitor */
    0,
    Fault_Handler, /* PendSV */
    Fault_Handler, /* SysTick */
};
