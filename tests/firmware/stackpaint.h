/* Stack painting for the firmwares (tests/firmware, bench/device): fill
 * the stack region below the caller's stack pointer with a pattern, make a
 * call, and find the lowest overwritten word. The figure is the distance
 * from the caller's stack pointer to that word (the callee's frames plus
 * the return path); PAINT_GAP bytes below the caller's stack pointer stay
 * unpainted for paint()'s own frame, so figures under PAINT_GAP read as
 * PAINT_GAP. */
#ifndef RANKLET_STACKPAINT_H
#define RANKLET_STACKPAINT_H
#include <stdint.h>

extern uint32_t __stack_bottom[];
#define PAINT 0xC5AC5AC5u
#define PAINT_GAP 64u

static inline uint32_t current_sp(void) {
    uint32_t sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    return sp;
}
__attribute__((noinline)) static void paint(uint32_t below) {
    for (volatile uint32_t *p = __stack_bottom; (uint32_t)p < below; p++) *p = PAINT;
}
/* Bytes between `sp` and the lowest painted word that was overwritten. */
static inline uint32_t stack_used(uint32_t sp) {
    uint32_t *p = __stack_bottom;
    while ((uint32_t)p < sp - PAINT_GAP && *p == PAINT) p++;
    return sp - (uint32_t)p;
}
#endif
