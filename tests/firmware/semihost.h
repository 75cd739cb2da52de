/* Semihosting output and exit for the firmware tests (see startup.c). */
#ifndef FW_SEMIHOST_H
#define FW_SEMIHOST_H
#include <stdint.h>
void sh_puts(const char *s);
void sh_put_hex32(uint32_t v);
void sh_put_u32(uint32_t v);
__attribute__((noreturn)) void sh_exit(int code);
#endif
