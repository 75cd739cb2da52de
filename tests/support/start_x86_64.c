/* Process entry for the freestanding x86-64 links (no crt, no libc): calls
 * `int FREESTANDING_MAIN(void)` (default `freestanding_main`; override with
 * -DFREESTANDING_MAIN=name) and exits with its value through the Linux
 * x86-64 exit syscall. */
#ifndef FREESTANDING_MAIN
#define FREESTANDING_MAIN freestanding_main
#endif

int FREESTANDING_MAIN(void);

__attribute__((noreturn)) void freestanding_entry(void) {
    long code = FREESTANDING_MAIN();
    __asm__ volatile("syscall" ::"a"(60L), "D"(code) : "rcx", "r11", "memory");
    for (;;) {
    }
}

/* The kernel enters _start with rsp 16-byte aligned; a C function expects
 * rsp = 8 mod 16 on entry, so _start is a two-instruction trampoline. */
__asm__(".globl _start\n_start:\n  andq $-16, %rsp\n  call freestanding_entry\n");
