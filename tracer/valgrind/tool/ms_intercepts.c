/*
 * ms_intercepts.c: memspy's wrappers of the POSIX threads functions. They
 * run on the simulated CPU, in the tool's preload
 * (vgpreload_memspy-amd64-linux.so, beside the malloc replacement), and
 * report each synchronization operation to the tool through a client
 * request (ms_sync.h); the tool writes it as a SYNC record
 * (docs/valgrind-stream.md).
 *
 * Valgrind redirects every call of a wrapped function to its wrapper,
 * which calls the original through VALGRIND_GET_ORIG_FN / CALL_FN_*, as
 * Helgrind's hg_intercepts.c does. Since glibc 2.34 the functions live in
 * libc.so.6; older glibcs have them in libpthread.so.0: every wrapper is
 * made for both sonames. Functions with several versions of their own
 * (pthread_cond_*@GLIBC_2.2.5 and @@GLIBC_2.3.2) are matched with "@*".
 *
 * The PC reported is the wrapper's return address: the instruction after
 * the program's call of the function. Operations that make a thread wait
 * are reported once the wait is over, the others before the operation
 * (trace.SyncKind). The wrappers' own memory traffic is a few stack
 * words per call (the request's argument block) and, for pthread_create,
 * the handshake with the new thread.
 *
 * Only dynamically linked programs load the preload: a static program's
 * synchronization is not reported (its atomics are: the tool sees those
 * in the instructions).
 */

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "valgrind.h"
#include "ms_sync.h"

/* Z-encoded sonames: libc.so* and libpthread.so.0. */
#define MS_LIBC      libcZdsoZa
#define MS_LIBPTHREAD libpthreadZdsoZd0

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

#define SYNC(kind, addr, arg, pc)                                          \
   VALGRIND_DO_CLIENT_REQUEST_STMT(MS_REQ_SYNC + (kind), (unsigned long)(addr), \
                                   (unsigned long)(arg), (pc), 0, 0)

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

/* The new thread's start routine: reports the start (which the tool needs
   before any other event of the thread), lets the creator go on, yields
   once so that the creator runs ahead (a loop creating threads creates
   them all before they run), runs the program's routine and reports the
   exit when it returns. Start and exit have the routine's address as PC:
   the trampoline is not the program's code. */
static void* ms_thread_start(void* p)
{
   CreateArgs* a = p;
   void* (*fn)(void*) = a->fn;
   void* arg = a->arg;
   pthread_t me = pthread_self();
   SYNC(MS_SYNC_START, a, me, (unsigned long)fn);
   a->busy = 0;   /* a belongs to the creator again */
   sched_yield();
   void* r = fn(arg);
   SYNC(MS_SYNC_EXIT, me, 0, (unsigned long)fn);
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
         sched_yield();
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
   SYNC(MS_SYNC_EXIT, pthread_self(), 0, RA);
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
