/* Start-up code for QEMU's mps2-an500 board (Cortex-M7), bare metal.
 *
 * The board boots from the vector table at address 0: word 0 is the initial
 * stack pointer, word 1 the reset handler. The reset handler enables the
 * FPU, copies .data from flash to SRAM, zeroes .bss, opens the semihosting
 * handles (printf reaches QEMU's stdout) and calls main, then exit with its
 * result: semihosting's SYS_EXIT_EXTENDED makes that QEMU's exit code.
 *
 * The stack is painted before main runs; at exit the program prints how much
 * of it was ever written ("stack: N of M bytes used at most"), the stack's
 * share of the RAM a model needs beside its pools.
 *
 * Every other exception ends the program with exit code 128 + the exception
 * number (3 = HardFault, 6 = UsageFault, ...), so that a fault fails a test
 * instead of hanging until the runner's timeout. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* Symbols of mps2_an500.ld. */
extern uint32_t __data_load_start__[], __data_start__[], __data_end__[];
extern uint32_t __bss_start__[], __bss_end__[];
extern uint32_t __stack_top__[], __stack_limit__[];
extern void (*__preinit_array_start[])(void), (*__preinit_array_end[])(void);
extern void (*__init_array_start[])(void), (*__init_array_end[])(void);

extern int main(void);
/* newlib's librdimon: opens stdin, stdout and stderr through semihosting. */
extern void initialise_monitor_handles(void);
/* newlib's librdimon: _sbrk's upper bound (rdimon's crt0, not linked here,
 * would ask the host for it). */
extern uint32_t __heap_limit;

void Reset_Handler(void);
void Fault_Handler(void);

/* What the unused stack holds: a word that differs from it was written. */
#define STACK_PAINT 0xC0FFEE11u

/* At exit: the deepest the stack went, from the paint left untouched. */
static void ReportStack(void) {
  const uint32_t *p = __stack_limit__;
  while (p < __stack_top__ && *p == STACK_PAINT) ++p;
  printf("stack: %lu of %lu bytes used at most\n",
         (unsigned long)((uintptr_t)__stack_top__ - (uintptr_t)p),
         (unsigned long)((uintptr_t)__stack_top__ - (uintptr_t)__stack_limit__));
}

/* Coprocessor Access Control Register (ARMv7-M ARM, B3.2.20). */
#define SCB_CPACR (*(volatile uint32_t *)0xE000ED88u)
#define CPACR_CP10_CP11_FULL (0xFu << 20)

/* The 16 system exceptions of ARMv7-M; the board's interrupts are never
 * enabled here, so no IRQ entries follow. */
typedef void (*Vector)(void);
__attribute__((section(".vectors"), used)) static const Vector vector_table[16] = {
    (Vector)(uintptr_t)__stack_top__, /* 0: initial SP */
    Reset_Handler,                    /* 1: Reset */
    Fault_Handler,                    /* 2: NMI */
    Fault_Handler,                    /* 3: HardFault */
    Fault_Handler,                    /* 4: MemManage */
    Fault_Handler,                    /* 5: BusFault */
    Fault_Handler,                    /* 6: UsageFault */
    0,
    0,
    0,
    0,
    Fault_Handler, /* 11: SVCall */
    Fault_Handler, /* 12: DebugMonitor */
    0,
    Fault_Handler, /* 14: PendSV */
    Fault_Handler, /* 15: SysTick */
};

/* Kept out of line and free of floating point: nothing may touch the FPU
 * before CPACR grants access, or the core takes a UsageFault (NOCP). */
__attribute__((noreturn, noinline)) void Reset_Handler(void) {
  SCB_CPACR |= CPACR_CP10_CP11_FULL;
  __asm__ volatile("dsb\n\tisb" ::: "memory");

  uint32_t *src = __data_load_start__;
  for (uint32_t *dst = __data_start__; dst < __data_end__;) *dst++ = *src++;
  for (uint32_t *dst = __bss_start__; dst < __bss_end__;) *dst++ = 0;

  /* Paint the stack below this frame (with a margin for the loop's own). */
  uint32_t sp;
  __asm__ volatile("mov %0, sp" : "=r"(sp));
  for (uint32_t *p = __stack_limit__; (uintptr_t)(p + 16) < sp; ++p) *p = STACK_PAINT;

  __heap_limit = (uint32_t)(uintptr_t)__stack_limit__;
  initialise_monitor_handles();
  /* __attribute__((constructor)) functions; crti.o's _init is not linked. */
  for (void (**f)(void) = __preinit_array_start; f < __preinit_array_end; ++f) (*f)();
  for (void (**f)(void) = __init_array_start; f < __init_array_end; ++f) (*f)();
  atexit(ReportStack);
  exit(main());
}

/* Semihosting SYS_WRITE0 (0x04): writes a NUL-terminated string to the
 * host's stdout without going through newlib, which a fault may have left
 * in any state. */
static void SemihostWrite0(const char *s) {
  register uint32_t op __asm__("r0") = 0x04u;
  register const char *arg __asm__("r1") = s;
  __asm__ volatile("bkpt 0xab" : "+r"(op) : "r"(arg) : "memory");
}

__attribute__((noreturn)) void Fault_Handler(void) {
  uint32_t ipsr;
  __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
  const uint32_t exception = ipsr & 0x1FFu;
  char message[] = "startup: exception  0, exiting\n";
  message[19] = (char)('0' + exception / 10 % 10);
  message[20] = (char)('0' + exception % 10);
  SemihostWrite0(message);
  _Exit(128 + (int)exception);
}
