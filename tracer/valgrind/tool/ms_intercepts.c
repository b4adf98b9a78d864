/*
 * ms_intercepts.c: memspy's wrappers of the allocation functions and of
 * the POSIX threads functions. They run on the simulated CPU, in the
 * tool's preload (vgpreload_memspy-amd64-linux.so), call the program's
 * own functions and report each allocation, free and synchronization
 * operation to the tool through a client request (ms_sync.h); the tool
 * writes ALLOC, FREE and SYNC records (docs/valgrind-stream.md).
 *
 * Valgrind redirects every call of a wrapped function to its wrapper,
 * which calls the original through VALGRIND_GET_ORIG_FN / CALL_FN_*, as
 * Helgrind's hg_intercepts.c does. The program keeps its own allocator
 * (glibc's malloc, libstdc++'s operator new), so its memory traffic is
 * simulated and its blocks are where the program really gets them.
 * The tool records nothing of the code of this preload (no instruction
 * fetch, no data reference): a wrapper adds no reference of its own to
 * the counts, only its calls and returns for the call stacks. The few
 * calls it makes besides the wrapped function (none on the allocation
 * paths) are written as inline system calls for that reason.
 *
 * Since glibc 2.34 the threads functions live in libc.so.6; older glibcs
 * have them in libpthread.so.0: every such wrapper is made for both
 * sonames. Functions with several versions of their own
 * (pthread_cond_*@GLIBC_2.2.5 and @@GLIBC_2.3.2) are matched with "@*".
 *
 * The PC reported is the wrapper's return address: the instruction after
 * the program's call of the function. Operations that make a thread wait
 * are reported once the wait is over, the others before the operation
 * (trace.SyncKind).
 *
 * Only dynamically linked programs load the preload: a static program's
 * allocations and synchronization are not reported (its atomics are: the
 * tool sees those in the instructions).
 */

#include <errno.h>
#include <pthread.h>
#include <time.h>

#include "valgrind.h"
#include "ms_sync.h"

/* Z-encoded sonames: libc.so*, libpthread.so.0, libstdc++* and libc++*. */
#define MS_LIBC      libcZdsoZa
#define MS_LIBPTHREAD libpthreadZdsoZd0
#define MS_LIBSTDCXX libstdcZpZpZa
#define MS_LIBCXX    libcZpZpZa

#define MS_STR1(x) #x
#define MS_STR(x)  MS_STR1(x)

/* Defines the wrapper of the function whose Z-encoded name is fz, in
   libpthread.so.0, and the same code under the libc.so* name. */
#define WRAP(ret_ty, fz, args...)                                          \
   ret_ty I_WRAP_SONAME_FNNAME_ZZ(MS_LIBPTHREAD, fz)(args);                 \
   extern __typeof__(I_WRAP_SONAME_FNNAME_ZZ(MS_LIBPTHREAD, fz))            \
      I_WRAP_SONAME_FNNAME_ZZ(MS_LIBC, fz)                                 \
      __attribute__((weak, alias(MS_STR(I_WRAP_SONAME_FNNAME_ZZ(MS_LIBPTHREAD, fz))))); \
   ret_ty I_WRAP_SONAME_FNNAME_ZZ(MS_LIBPTHREAD, fz)(args)

/* The call site: the address the wrapped function returns to. */
#define RA ((unsigned long)__builtin_return_address(0))

/* The running thread's pthread_self() and sched_yield(), without calling
   into the C library (whose instructions would be traced): glibc keeps
   the thread's descriptor at %fs:0x10 on x86-64. */
static inline pthread_t self(void)
{
   pthread_t t;
   __asm__("movq %%fs:0x10, %0" : "=r"(t));
   return t;
}

static inline void yield(void)
{
   long r;
   __asm__ volatile("syscall" : "=a"(r) : "0"(24L /* SYS_sched_yield */) : "rcx", "r11", "memory");
}

#define SYNC(kind, addr, arg, pc)                                          \
   VALGRIND_DO_CLIENT_REQUEST_STMT(MS_REQ_SYNC + (kind), (unsigned long)(addr), \
                                   (unsigned long)(arg), (pc), 0, 0)

/* ------------------------------------------------------------------ */
/* Allocations                                                         */
/* ------------------------------------------------------------------ */

/* The wrapper's frame address: lower in a wrapper called from another. */
#define FRAME ((unsigned long)__builtin_frame_address(0))

#define REQ(req, a1, a2, a3, a4) \
   VALGRIND_DO_CLIENT_REQUEST_STMT((req), (unsigned long)(a1), (unsigned long)(a2), \
                                   (unsigned long)(a3), (unsigned long)(a4), 0)

/* An allocation function of soname so, Z-encoded name fz, parameters
   params, calling the original with CALL (given r and fn), reporting
   routine r the block returned and its size. */
#define ALLOC(so, fz, routine, size, params, call)                         \
   void* I_WRAP_SONAME_FNNAME_ZZ(so, fz) params;                          \
   void* I_WRAP_SONAME_FNNAME_ZZ(so, fz) params                           \
   {                                                                       \
      void* r;                                                             \
      OrigFn fn;                                                           \
      VALGRIND_GET_ORIG_FN(fn);                                            \
      REQ(MS_REQ_ALLOC_ENTER, FRAME, 0, 0, 0);                             \
      call;                                                                \
      REQ(MS_REQ_ALLOC, routine, r, size, FRAME);                          \
      return r;                                                            \
   }

/* A free function: reported before the original runs. */
#define FREE(so, fz, routine, params, call)                                \
   void I_WRAP_SONAME_FNNAME_ZZ(so, fz) params;                           \
   void I_WRAP_SONAME_FNNAME_ZZ(so, fz) params                            \
   {                                                                       \
      OrigFn fn;                                                           \
      VALGRIND_GET_ORIG_FN(fn);                                            \
      REQ(MS_REQ_FREE, routine, p, FRAME, 0);                              \
      call;                                                                \
      REQ(MS_REQ_FREE_LEAVE, FRAME, 0, 0, 0);                              \
   }

typedef unsigned long W;   /* a word argument */

ALLOC(MS_LIBC, malloc, MS_R_MALLOC, n, (W n), CALL_FN_W_W(r, fn, n))
/* calloc reports m*n: when that overflows calloc fails (r is NULL). */
ALLOC(MS_LIBC, calloc, MS_R_CALLOC, m * n, (W m, W n), CALL_FN_W_WW(r, fn, m, n))
ALLOC(MS_LIBC, memalign, MS_R_MEMALIGN, n, (W a, W n), CALL_FN_W_WW(r, fn, a, n))
/* glibc's aligned_alloc is memalign (one function, two names): both are
   "memalign", whichever wrapper Valgrind picks for it. */
ALLOC(MS_LIBC, alignedZualloc, MS_R_MEMALIGN, n, (W a, W n), CALL_FN_W_WW(r, fn, a, n))
ALLOC(MS_LIBC, valloc, MS_R_VALLOC, n, (W n), CALL_FN_W_W(r, fn, n))
ALLOC(MS_LIBC, pvalloc, MS_R_PVALLOC, n, (W n), CALL_FN_W_W(r, fn, n))
FREE(MS_LIBC, free, MS_R_FREE, (void* p), CALL_FN_v_W(fn, p))

/* mmap and munmap in the C library: a mapping the program makes (an
   anonymous region such as an interpreter's object arena, or a file) is
   a block named by its call path, as an allocation; thread stacks
   (MAP_STACK: the C library's pthread_create) are the stacks' frames, and
   a failed mapping is none. The C library's own calls from within a
   wrapped allocator (malloc's large chunks) are the allocator's. A munmap
   of part of a mapping leaves it known whole. */
#define MS_MAP_STACK 0x20000   /* Linux's MAP_STACK */
void* I_WRAP_SONAME_FNNAME_ZZ(MS_LIBC, mmap)(void* a, W n, W prot, W flags, W fd, W off);
void* I_WRAP_SONAME_FNNAME_ZZ(MS_LIBC, mmap)(void* a, W n, W prot, W flags, W fd, W off)
{
   void* r;
   OrigFn fn;
   VALGRIND_GET_ORIG_FN(fn);
   REQ(MS_REQ_ALLOC_ENTER, FRAME, 0, 0, 0);
   CALL_FN_W_6W(r, fn, a, n, prot, flags, fd, off);
   REQ(MS_REQ_ALLOC, MS_R_MMAP, r == (void*)-1 || (flags & MS_MAP_STACK) ? 0 : r, n, FRAME);
   return r;
}
int I_WRAP_SONAME_FNNAME_ZZ(MS_LIBC, munmap)(void* p, W n);
int I_WRAP_SONAME_FNNAME_ZZ(MS_LIBC, munmap)(void* p, W n)
{
   int ret;
   OrigFn fn;
   VALGRIND_GET_ORIG_FN(fn);
   REQ(MS_REQ_FREE, MS_R_MUNMAP, p, FRAME, 0);
   CALL_FN_W_WW(ret, fn, p, n);
   REQ(MS_REQ_FREE_LEAVE, FRAME, 0, 0, 0);
   return ret;
}

/* posix_memalign returns 0 and stores the block, or an error. */
int I_WRAP_SONAME_FNNAME_ZZ(MS_LIBC, posixZumemalign)(void** pp, W a, W n);
int I_WRAP_SONAME_FNNAME_ZZ(MS_LIBC, posixZumemalign)(void** pp, W a, W n)
{
   int ret;
   OrigFn fn;
   VALGRIND_GET_ORIG_FN(fn);
   REQ(MS_REQ_ALLOC_ENTER, FRAME, 0, 0, 0);
   CALL_FN_W_WWW(ret, fn, pp, a, n);
   REQ(MS_REQ_ALLOC, MS_R_POSIX_MEMALIGN, ret == 0 ? *pp : 0, n, FRAME);
   return ret;
}

/* realloc (and reallocarray): the tool reports the free of the old block
   and the allocation of the new one when it moved, grew or shrank; a
   failure (NULL for a size above 0) changes nothing, and a size of 0
   frees the block. */
void* I_WRAP_SONAME_FNNAME_ZZ(MS_LIBC, realloc)(void* p, W n);
void* I_WRAP_SONAME_FNNAME_ZZ(MS_LIBC, realloc)(void* p, W n)
{
   void* r;
   OrigFn fn;
   VALGRIND_GET_ORIG_FN(fn);
   REQ(MS_REQ_ALLOC_ENTER, FRAME, 0, 0, 0);
   CALL_FN_W_WW(r, fn, p, n);
   REQ(MS_REQ_REALLOC, p, r, n, FRAME);
   return r;
}

void* I_WRAP_SONAME_FNNAME_ZZ(MS_LIBC, reallocarray)(void* p, W m, W n);
void* I_WRAP_SONAME_FNNAME_ZZ(MS_LIBC, reallocarray)(void* p, W m, W n)
{
   void* r;
   OrigFn fn;
   VALGRIND_GET_ORIG_FN(fn);
   REQ(MS_REQ_ALLOC_ENTER, FRAME, 0, 0, 0);
   CALL_FN_W_WWW(r, fn, p, m, n);
   REQ(MS_REQ_REALLOC, p, r, m * n, FRAME);
   return r;
}

/* The C++ operators, in libstdc++ (GCC) and libc++ (LLVM): new and new[]
   plain, nothrow, aligned and aligned nothrow; delete and delete[] plain,
   sized, aligned, sized aligned, nothrow and aligned nothrow (their
   Z-encoded mangled names: "ZZ" is a Z). */
#define CXX_NEW(so, fz, routine)                                                       \
   ALLOC(so, fz, routine, n, (W n), CALL_FN_W_W(r, fn, n))                             \
   ALLOC(so, fz##RKSt9nothrowZut, routine, n, (W n, W t), CALL_FN_W_WW(r, fn, n, t))   \
   ALLOC(so, fz##St11alignZuvalZut, routine, n, (W n, W a), CALL_FN_W_WW(r, fn, n, a)) \
   ALLOC(so, fz##St11alignZuvalZutRKSt9nothrowZut, routine, n, (W n, W a, W t),        \
         CALL_FN_W_WWW(r, fn, n, a, t))
#define CXX_DELETE(so, fz, routine)                                                   \
   FREE(so, fz, routine, (void* p), CALL_FN_v_W(fn, p))                               \
   FREE(so, fz##m, routine, (void* p, W n), CALL_FN_v_WW(fn, p, n))                   \
   FREE(so, fz##St11alignZuvalZut, routine, (void* p, W a), CALL_FN_v_WW(fn, p, a))   \
   FREE(so, fz##mSt11alignZuvalZut, routine, (void* p, W n, W a),                     \
        CALL_FN_v_WWW(fn, p, n, a))                                                    \
   FREE(so, fz##RKSt9nothrowZut, routine, (void* p, W t), CALL_FN_v_WW(fn, p, t))     \
   FREE(so, fz##St11alignZuvalZutRKSt9nothrowZut, routine, (void* p, W a, W t),       \
        CALL_FN_v_WWW(fn, p, a, t))
#define CXX(so)                               \
   CXX_NEW(so, _ZZnwm, MS_R_NEW)              \
   CXX_NEW(so, _ZZnam, MS_R_VEC_NEW)          \
   CXX_DELETE(so, _ZZdlPv, MS_R_DELETE)       \
   CXX_DELETE(so, _ZZdaPv, MS_R_VEC_DELETE)

CXX(MS_LIBSTDCXX)
CXX(MS_LIBCXX)

/* ------------------------------------------------------------------ */
/* Threads                                                             */
/* ------------------------------------------------------------------ */

/* What the creator passes the new thread, on its stack; its address is
   the token of the create and start events. */
typedef struct {
   void* (*fn)(void*);
   void*  arg;
   volatile long busy;   /* 1 until the new thread has copied fn and arg */
} CreateArgs;

/* The new thread's start routine: copies its routine and argument, lets
   the creator go on, yields once so that the creator runs ahead (a loop
   creating threads creates them all before they run), runs the program's
   routine and reports the exit when it returns. The tool reports the
   thread's start when it first runs. Start and exit have the routine's
   address as PC: the trampoline is not the program's code. */
static void* ms_thread_start(void* p)
{
   CreateArgs* a = p;
   void* (*fn)(void*) = a->fn;
   void* arg = a->arg;
   a->busy = 0;   /* a belongs to the creator again */
   yield();
   void* r = fn(arg);
   SYNC(MS_SYNC_EXIT, self(), 0, (unsigned long)fn);
   return r;
}

WRAP(int, pthreadZucreateZAZa, pthread_t* thread, const pthread_attr_t* attr,
     void* (*start)(void*), void* arg)
{
   int ret;
   OrigFn fn;
   CreateArgs a;
   VALGRIND_GET_ORIG_FN(fn);
   a.fn = start;
   a.arg = arg;
   a.busy = 1;
   SYNC(MS_SYNC_CREATE, &a, 0, RA);
   CALL_FN_W_WWWW(ret, fn, thread, attr, ms_thread_start, &a);
   if (ret == 0) {
      while (a.busy)
         yield();
   } else {
      VALGRIND_DO_CLIENT_REQUEST_STMT(MS_REQ_CREATE_FAILED, &a, 0, 0, 0, 0);
   }
   return ret;
}

WRAP(int, pthreadZujoin, pthread_t thread, void** result)
{
   int ret;
   OrigFn fn;
   VALGRIND_GET_ORIG_FN(fn);
   CALL_FN_W_WW(ret, fn, thread, result);
   if (ret == 0)
      SYNC(MS_SYNC_JOIN, thread, 0, RA);
   return ret;
}

WRAP(void, pthreadZuexit, void* result)
{
   OrigFn fn;
   VALGRIND_GET_ORIG_FN(fn);
   SYNC(MS_SYNC_EXIT, self(), 0, RA);
   CALL_FN_v_W(fn, result);
   __builtin_unreachable();
}

/* ------------------------------------------------------------------ */
/* Locks                                                               */
/* ------------------------------------------------------------------ */

/* A lock function of one argument: an acquisition (shared: 1 for a read
   lock) when it returns 0. */
#define LOCK1(fz, ty, shared)                                              \
   WRAP(int, fz, ty* l)                                                    \
   {                                                                       \
      int ret;                                                             \
      OrigFn fn;                                                           \
      VALGRIND_GET_ORIG_FN(fn);                                            \
      CALL_FN_W_W(ret, fn, l);                                             \
      if (ret == 0)                                                        \
         SYNC(MS_SYNC_ACQUIRE, l, shared, RA);                             \
      return ret;                                                          \
   }

/* The same with a timeout. */
#define LOCK2(fz, ty, shared)                                              \
   WRAP(int, fz, ty* l, const struct timespec* t)                          \
   {                                                                       \
      int ret;                                                             \
      OrigFn fn;                                                           \
      VALGRIND_GET_ORIG_FN(fn);                                            \
      CALL_FN_W_WW(ret, fn, l, t);                                         \
      if (ret == 0)                                                        \
         SYNC(MS_SYNC_ACQUIRE, l, shared, RA);                             \
      return ret;                                                          \
   }

/* The same with a clock and a timeout (glibc 2.30). */
#define LOCK3(fz, ty, shared)                                              \
   WRAP(int, fz, ty* l, clockid_t c, const struct timespec* t)             \
   {                                                                       \
      int ret;                                                             \
      OrigFn fn;                                                           \
      VALGRIND_GET_ORIG_FN(fn);                                            \
      CALL_FN_W_WWW(ret, fn, l, c, t);                                     \
      if (ret == 0)                                                        \
         SYNC(MS_SYNC_ACQUIRE, l, shared, RA);                             \
      return ret;                                                          \
   }

/* An unlock: a release, before it. */
#define UNLOCK(fz, ty)                                                     \
   WRAP(int, fz, ty* l)                                                    \
   {                                                                       \
      int ret;                                                             \
      OrigFn fn;                                                           \
      VALGRIND_GET_ORIG_FN(fn);                                            \
      SYNC(MS_SYNC_RELEASE, l, 0, RA);                                     \
      CALL_FN_W_W(ret, fn, l);                                             \
      return ret;                                                          \
   }

LOCK1(pthreadZumutexZulock, pthread_mutex_t, 0)
LOCK1(pthreadZumutexZutrylock, pthread_mutex_t, 0)
LOCK2(pthreadZumutexZutimedlock, pthread_mutex_t, 0)
LOCK3(pthreadZumutexZuclocklock, pthread_mutex_t, 0)
UNLOCK(pthreadZumutexZuunlock, pthread_mutex_t)

/* glibc's pthread_spin_unlock is also its pthread_spin_init (one
   function: both store "unlocked"), so an init is reported as a release:
   the lock is made available. */
LOCK1(pthreadZuspinZulock, pthread_spinlock_t, 0)
LOCK1(pthreadZuspinZutrylock, pthread_spinlock_t, 0)
UNLOCK(pthreadZuspinZuunlock, pthread_spinlock_t)

LOCK1(pthreadZurwlockZurdlock, pthread_rwlock_t, 1)
LOCK1(pthreadZurwlockZutryrdlock, pthread_rwlock_t, 1)
LOCK2(pthreadZurwlockZutimedrdlock, pthread_rwlock_t, 1)
LOCK3(pthreadZurwlockZuclockrdlock, pthread_rwlock_t, 1)
LOCK1(pthreadZurwlockZuwrlock, pthread_rwlock_t, 0)
LOCK1(pthreadZurwlockZutrywrlock, pthread_rwlock_t, 0)
LOCK2(pthreadZurwlockZutimedwrlock, pthread_rwlock_t, 0)
LOCK3(pthreadZurwlockZuclockwrlock, pthread_rwlock_t, 0)
UNLOCK(pthreadZurwlockZuunlock, pthread_rwlock_t)

/* ------------------------------------------------------------------ */
/* Barriers                                                            */
/* ------------------------------------------------------------------ */

WRAP(int, pthreadZubarrierZuinit, pthread_barrier_t* b, const pthread_barrierattr_t* attr,
     unsigned count)
{
   int ret;
   OrigFn fn;
   VALGRIND_GET_ORIG_FN(fn);
   CALL_FN_W_WWW(ret, fn, b, attr, count);
   if (ret == 0)
      VALGRIND_DO_CLIENT_REQUEST_STMT(MS_REQ_BARRIER_INIT, b, count, 0, 0, 0);
   return ret;
}

/* Arrive before (the tool adds the count), leave after. */
WRAP(int, pthreadZubarrierZuwait, pthread_barrier_t* b)
{
   int ret;
   OrigFn fn;
   VALGRIND_GET_ORIG_FN(fn);
   SYNC(MS_SYNC_BARRIER_ARRIVE, b, 0, RA);
   CALL_FN_W_W(ret, fn, b);
   SYNC(MS_SYNC_BARRIER_LEAVE, b, 0, RA);
   return ret;
}

/* ------------------------------------------------------------------ */
/* Condition variables                                                 */
/* ------------------------------------------------------------------ */

/* A wait (which releases the mutex) before, a wake (the mutex held
   again) after, whatever the result: a timeout holds the mutex again
   too. */
WRAP(int, pthreadZucondZuwaitZAZa, pthread_cond_t* c, pthread_mutex_t* m)
{
   int ret;
   OrigFn fn;
   VALGRIND_GET_ORIG_FN(fn);
   SYNC(MS_SYNC_COND_WAIT, c, m, RA);
   CALL_FN_W_WW(ret, fn, c, m);
   SYNC(MS_SYNC_COND_WAKE, c, m, RA);
   return ret;
}

WRAP(int, pthreadZucondZutimedwaitZAZa, pthread_cond_t* c, pthread_mutex_t* m,
     const struct timespec* t)
{
   int ret;
   OrigFn fn;
   VALGRIND_GET_ORIG_FN(fn);
   SYNC(MS_SYNC_COND_WAIT, c, m, RA);
   CALL_FN_W_WWW(ret, fn, c, m, t);
   SYNC(MS_SYNC_COND_WAKE, c, m, RA);
   return ret;
}

WRAP(int, pthreadZucondZuclockwaitZAZa, pthread_cond_t* c, pthread_mutex_t* m,
     clockid_t clock, const struct timespec* t)
{
   int ret;
   OrigFn fn;
   VALGRIND_GET_ORIG_FN(fn);
   SYNC(MS_SYNC_COND_WAIT, c, m, RA);
   CALL_FN_W_WWWW(ret, fn, c, m, clock, t);
   SYNC(MS_SYNC_COND_WAKE, c, m, RA);
   return ret;
}

#define SIGNAL(fz)                                                         \
   WRAP(int, fz, pthread_cond_t* c)                                        \
   {                                                                       \
      int ret;                                                             \
      OrigFn fn;                                                           \
      VALGRIND_GET_ORIG_FN(fn);                                            \
      SYNC(MS_SYNC_COND_SIGNAL, c, 0, RA);                                 \
      CALL_FN_W_W(ret, fn, c);                                             \
      return ret;                                                          \
   }

SIGNAL(pthreadZucondZusignalZAZa)
SIGNAL(pthreadZucondZubroadcastZAZa)
