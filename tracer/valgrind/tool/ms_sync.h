/*
 * ms_sync.h: the client requests between memspy's preload wrappers
 * (ms_intercepts.c, run on the simulated CPU) and the tool (ms_main.c):
 * synchronization and allocations.
 * Internal: programs do not make these requests themselves (memspy.h is
 * their interface), and the numbers may change with the stream version.
 */
#ifndef MS_SYNC_H
#define MS_SYNC_H

/* A synchronization operation of kind k (below, memspy's trace.SyncKind):
   request MS_REQ_SYNC + k with args[1] the object's address, args[2] the
   second argument (the stream's Ext.Size), args[3] the PC to report. */
#define MS_REQ_SYNC  (VG_USERREQ_TOOL_BASE('M', 'S') + 64)

/* pthread_barrier_init succeeded: args[1] the barrier, args[2] its count.
   The tool gives barrier-arrive events the count. */
#define MS_REQ_BARRIER_INIT  (VG_USERREQ_TOOL_BASE('M', 'S') + 96)

/* The real pthread_create failed after its create event: no thread
   will start for that create (args[1] the token). */
#define MS_REQ_CREATE_FAILED (VG_USERREQ_TOOL_BASE('M', 'S') + 97)

/* The allocation wrappers call the program's own allocator and report
   around the call. frame is the wrapper's frame address: a wrapper
   called while another is on the same thread's stack (operator new
   calling malloc) has a lower one, and is not reported.
   ALLOC_ENTER (args[1] frame) before an allocation;
   ALLOC (args[1] routine, args[2] block, args[3] size, args[4] frame)
   after it; REALLOC (args[1] old block, args[2] new block, args[3] size,
   args[4] frame) after a realloc; FREE (args[1] routine, args[2] block,
   args[3] frame) before a free and FREE_LEAVE (args[1] frame) after it. */
#define MS_REQ_ALLOC_ENTER   (VG_USERREQ_TOOL_BASE('M', 'S') + 98)
#define MS_REQ_ALLOC         (VG_USERREQ_TOOL_BASE('M', 'S') + 99)
#define MS_REQ_REALLOC       (VG_USERREQ_TOOL_BASE('M', 'S') + 100)
#define MS_REQ_FREE          (VG_USERREQ_TOOL_BASE('M', 'S') + 101)
#define MS_REQ_FREE_LEAVE    (VG_USERREQ_TOOL_BASE('M', 'S') + 102)

/* Allocation routines, the names of ALLOC and FREE records. */
#define MS_ALLOC_ROUTINES \
   "malloc", "calloc", "realloc", "memalign", "posix_memalign", \
   "valloc", "pvalloc", "new", "new[]", "free", "delete", "delete[]", \
   "mmap", "munmap"
#define MS_R_MALLOC          0
#define MS_R_CALLOC          1
#define MS_R_REALLOC         2
#define MS_R_MEMALIGN        3
#define MS_R_POSIX_MEMALIGN  4
#define MS_R_VALLOC          5
#define MS_R_PVALLOC         6
#define MS_R_NEW             7
#define MS_R_VEC_NEW         8
#define MS_R_FREE            9
#define MS_R_DELETE          10
#define MS_R_VEC_DELETE      11
#define MS_R_MMAP            12
#define MS_R_MUNMAP          13
#define MS_R_COUNT           14

/* Synchronization kinds: memspy's trace.SyncKind (trace/event.go). The
   values are part of the stream format: only append. */
#define MS_SYNC_ACQUIRE        0   /* a lock was acquired; arg 1 if shared */
#define MS_SYNC_RELEASE        1   /* a lock is released */
#define MS_SYNC_BARRIER_ARRIVE 2   /* arg: the barrier's count (the tool fills it) */
#define MS_SYNC_BARRIER_LEAVE  3
#define MS_SYNC_COND_WAIT      4   /* arg: the mutex */
#define MS_SYNC_COND_WAKE      5   /* arg: the mutex */
#define MS_SYNC_COND_SIGNAL    6
#define MS_SYNC_CREATE         7   /* addr: a token */
#define MS_SYNC_START          8   /* addr: the creator's token; arg: pthread_self() */
#define MS_SYNC_EXIT           9   /* addr: pthread_self() */
#define MS_SYNC_JOIN           10  /* addr: the joined thread */
#define MS_SYNC_ATOMIC         11  /* from instrumentation, not a request */
#define MS_SYNC_KINDS          12

#endif
