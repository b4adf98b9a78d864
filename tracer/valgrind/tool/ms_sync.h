/*
 * ms_sync.h: the client requests between memspy's preload wrappers
 * (ms_intercepts.c, run on the simulated CPU) and the tool (ms_main.c).
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
