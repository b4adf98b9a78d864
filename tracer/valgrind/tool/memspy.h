/*
 * memspy.h: markers for programs traced by `memspy run`.
 *
 * Each macro is a Valgrind client request: a few no-op instructions when the
 * program runs natively or under another tool, an event in memspy's stream
 * under `memspy run`. Include it, call the macros, and compile as usual
 * (the Valgrind headers, Debian package `valgrind`, must be installed).
 *
 *   MEMSPY_START_TRACING()            trace from here (after --started=no or a stop)
 *   MEMSPY_STOP_TRACING()             stop tracing; the program runs at Valgrind's base speed
 *   MEMSPY_NAME_RANGE(addr, len, name) name the memory [addr, addr+len) (a manual data bin)
 *   MEMSPY_REGION_BEGIN(name)         a named code region begins ...
 *   MEMSPY_REGION_END(name)           ... and ends
 *   MEMSPY_SAMPLE_BEGIN()             a sample (timestep) begins ...
 *   MEMSPY_SAMPLE_END()               ... and ends
 *   MEMSPY_RESET_STATS()              statistics restart from zero (cache contents stay)
 *   MEMSPY_DUMP_STATS(name)           save the statistics so far under name
 *
 * Names are C strings of at most 4095 bytes. The request numbers are part of
 * memspy's stream format (docs/valgrind-stream.md): only append.
 */
#ifndef MEMSPY_H
#define MEMSPY_H

#include <valgrind/valgrind.h>

#define MEMSPY_USERREQ_BASE VG_USERREQ_TOOL_BASE('M', 'S')

/* Marker kinds: request number = MEMSPY_USERREQ_BASE + kind. */
#define MEMSPY_MARK_START        0
#define MEMSPY_MARK_STOP         1
#define MEMSPY_MARK_RANGE        2
#define MEMSPY_MARK_REGION_BEGIN 3
#define MEMSPY_MARK_REGION_END   4
#define MEMSPY_MARK_SAMPLE_BEGIN 5
#define MEMSPY_MARK_SAMPLE_END   6
#define MEMSPY_MARK_RESET        7
#define MEMSPY_MARK_DUMP         8

#define MEMSPY_REQUEST_(kind, a1, a2, a3) \
   VALGRIND_DO_CLIENT_REQUEST_STMT(MEMSPY_USERREQ_BASE + (kind), (a1), (a2), (a3), 0, 0)

#define MEMSPY_START_TRACING()             MEMSPY_REQUEST_(MEMSPY_MARK_START, 0, 0, 0)
#define MEMSPY_STOP_TRACING()              MEMSPY_REQUEST_(MEMSPY_MARK_STOP, 0, 0, 0)
#define MEMSPY_NAME_RANGE(addr, len, name) MEMSPY_REQUEST_(MEMSPY_MARK_RANGE, (addr), (len), (name))
#define MEMSPY_REGION_BEGIN(name)          MEMSPY_REQUEST_(MEMSPY_MARK_REGION_BEGIN, (name), 0, 0)
#define MEMSPY_REGION_END(name)            MEMSPY_REQUEST_(MEMSPY_MARK_REGION_END, (name), 0, 0)
#define MEMSPY_SAMPLE_BEGIN()              MEMSPY_REQUEST_(MEMSPY_MARK_SAMPLE_BEGIN, 0, 0, 0)
#define MEMSPY_SAMPLE_END()                MEMSPY_REQUEST_(MEMSPY_MARK_SAMPLE_END, 0, 0, 0)
#define MEMSPY_RESET_STATS()               MEMSPY_REQUEST_(MEMSPY_MARK_RESET, 0, 0, 0)
#define MEMSPY_DUMP_STATS(name)            MEMSPY_REQUEST_(MEMSPY_MARK_DUMP, (name), 0, 0)

#endif
