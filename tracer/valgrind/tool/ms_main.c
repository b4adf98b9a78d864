/*
 * memspy: a Valgrind tool that streams a program's memory references,
 * allocations, calls and returns to memspy, which simulates a memory
 * hierarchy on them as they arrive.
 *
 * The stream format is specified in docs/valgrind-stream.md. Speed comes
 * first: the instrumented code makes no helper call per access. Each
 * superblock reserves room in a large buffer once (a guarded call flushes
 * the buffer only when it is nearly full), stores the address of every data
 * access into its record with plain IR stores, and writes its header word
 * (superblock id and exit taken) and the new buffer position before every
 * side exit and at its end. Everything static about the accesses (kind,
 * size, PC, instruction fetches, a final call or return) is described once
 * per translation.
 *
 * Tracing has five modes (ms_mode). RECORD: instrumented code records.
 * PAUSED: instrumented code runs but does not advance the buffer position,
 * so nothing is recorded (--trace-fn outside its function). GAP (sampling:
 * between time samples, in timesteps not taken): translations carry no
 * per-access code, only the mode check, calls and returns (an EXEC record
 * of a superblock described with its final call or return alone), the
 * helpers of watched functions, and a count of the references they make
 * (ms_refs: each superblock adds its static count, with the count before a
 * side exit when it leaves there, in plain IR); the count goes out in SKIP
 * records before any other event record, so that memspy knows where every
 * event falls. GAP_PAUSED: GAP while PAUSED (nothing counted). OFF: new
 * translations are not instrumented. Every translation checks at its entry
 * that the mode is one of its kind (RECORD/PAUSED, or GAP/GAP_PAUSED) and
 * otherwise leaves at once through an instruction-cache invalidation exit
 * that makes Valgrind discard every translation: after a limit, a client
 * STOP or before --start-fn, the program runs at Valgrind's base speed, and
 * a gap at about --tool=none's. Leaving OFF discards the uninstrumented
 * translations again.
 *
 * Time sampling (--sample-period ...) places samples as memspy's
 * sample.Schedule does; the translations' entry check also compares
 * ms_refs with ms_until, the position where the mode must change: the
 * start of the next sample's warm-up (less MIN_GAP, and less what the
 * superblock may reference) in a gap, the end of the sample while
 * recording (where the RECORD translations count references too). So
 * every reference of [Warm, End) of every sample is recorded.
 *
 * Synchronization: the preload's wrappers of the POSIX threads functions
 * (ms_intercepts.c) report each operation through a client request
 * (ms_sync.h), written as a SYNC record; atomic instructions (CAS
 * statements) are described as atomic entries. A thread made by the
 * pthread_create wrapper is PAUSED from its creation to its start event
 * and after its exit event.
 */

#include "pub_tool_basics.h"
#include "pub_tool_clientstate.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_xarray.h"
#include "pub_tool_aspacemgr.h"
#include "pub_tool_debuginfo.h"
#include "pub_tool_hashtable.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_libcsignal.h"
#include "pub_tool_machine.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_stacktrace.h"
#include "pub_tool_threadstate.h"
#include "pub_tool_transtab.h"
#include "pub_tool_vkiscnums.h"
#include "libvex_guest_amd64.h"
#include "valgrind.h"
#include "memspy.h"
#include "ms_sync.h"
#include "ms_l1.h"

/* Functions and options of Valgrind's core that are not among the tool
   headers. */
extern Int     VG_(safe_fd)(Int oldfd);
extern Bool    VG_(clo_trace_children);
extern XArray* VG_(args_for_valgrind);
extern Int     VG_(fcntl)(Int fd, Int cmd, Addr arg);
/* Valgrind's log sink (OutputSink, pub_core_libcprint.h): its descriptor
   comes first. */
typedef struct { Int fd; } MsOutputSink;
extern MsOutputSink VG_(log_output_sink);
extern Int     VG_(sigtimedwait_zero)(const vki_sigset_t* set, vki_siginfo_t* info);
extern Int     VG_(sigemptyset)(vki_sigset_t* set);
extern Int     VG_(sigaddset)(vki_sigset_t* set, Int signum);

#define MS_STREAM_VERSION 13
#define MS_STR(x)  MS_STR1(x)
#define MS_STR1(x) #x

/* memspy looks for this in the tool's file before running it, to say
   clearly when the tool and memspy disagree. */
static const HChar version_tag[] __attribute__((used)) =
   "memspy stream version " MS_STR(MS_STREAM_VERSION);

/* Record types (top 4 bits of a record's first word). */
#define REC_EXEC     1ULL
#define REC_DESCRIBE 2ULL
#define REC_THREAD   3ULL
#define REC_ALLOC    4ULL
#define REC_FREE     5ULL
#define REC_MARK     6ULL
#define REC_STRING   7ULL
#define REC_MAP      8ULL
#define REC_SYNC     9ULL
#define REC_SKIP     10ULL
#define REC_PROC     11ULL
#define REC_BELOW    12ULL   /* requests the first-level caches sent below them */
#define REC_L1STATS  13ULL   /* the first-level caches' counters */
#define REC_EXECL1   14ULL   /* an execution with the first-level accesses memspy simulates (--l1-notes) */
#define REC_END      15ULL
#define REC_TENTATIVE (1ULL << 59)   /* BELOW, L1STATS: they count only if the stream ends next */

/* Entry kinds of a DESCRIBE record. */
#define K_READ   0
#define K_WRITE  1
#define K_IFETCH 2
#define K_MODIFY 3
#define K_EXIT   4
#define K_CALL   5
#define K_RETURN 6
#define K_ATOMIC 7   /* an atomic read-modify-write (a CAS in VEX): a sync event then a modify */

/* Kinds of PROC records: what happened to the process. */
#define PROC_EXEC        1   /* it execs the program named (what follows is not this program's) */
#define PROC_EXEC_FAILED 2   /* that exec failed (word 1: the errno): tracing goes on */
#define PROC_START       3   /* the stream's process starts: its command line; word 1 its parent's pid */

/* An entry word with this bit has no address word in EXEC records: its
   address is that of the data entry numbered by bits 63..40 plus an offset
   given after the entries of its DESCRIBE record. */
#define ENT_DERIVED (1ULL << 32)
#define ENT_BASE_SHIFT 40

/* Tracing modes: bit 0 is "paused" (MODE_GAP | MODE_PAUSED is GAP_PAUSED);
   RECORD and PAUSED share translations, GAP and GAP_PAUSED others. */
#define MODE_RECORD     0ULL
#define MODE_PAUSED     1ULL
#define MODE_GAP        2ULL
#define MODE_OFF        4ULL
#define MODE_RESTART    8ULL   /* a forked child's new stream: every translation goes, then the mode is set again */
#define IS_GAP(m)       (((m) & ~1ULL) == MODE_GAP)

/* Time sampling: a gap shorter than this many references is recorded
   rather than paying for two discards of every translation. */
#define MIN_GAP 65536

/* A buffer older than this (milliseconds) goes to memspy at the next
   system call. */
#define FLUSH_MS 100

/* The buffer: 1 MiB of words (a ring chunk), handed to memspy when nearly
   full. */
#define BUF_WORDS (1 << 17)
/* With the first-level caches in the tool, buf is flushed once it holds
   this many words: the caches' simulation then reads what the program just
   wrote while it is still in the processor's caches. */
#define L1_BUF_WORDS (1 << 13)

#define MAX_STACK_DEPTH 64
#define MAX_NAME        4096
#define MAX_FNS         18   /* --alloc-fn's 16 and the two built in for Go */
#define MAX_PENDING     32   /* per thread: unreturned --alloc-fn/--trace-fn entries */

static Int   clo_out_fd = -1;
static Int   clo_ring_fd = -1;    /* the ring's memory (a memfd), or -1: data through the pipe */
static Int   clo_free_fd = -1;    /* memspy reports the chunks it is done with here */
/* Process trees: a forked child makes the FIFO DIR/PID (--fifo-dir),
   announces its pid on --control-fd and writes its own stream there. */
static const HChar* clo_fifo_dir = NULL;
static Int   clo_control_fd = -1;
static Bool  clo_ifetch = False;
static ULong clo_max_events = 0;  /* 0: no limit */
static ULong clo_max_ms = 0;      /* 0: no limit */
static Int   clo_stack_depth = 8;  /* 0: no call stacks in ALLOC and FREE records */
static Bool  clo_no_stack = False;
static Bool  clo_calls = True;
static Bool  clo_derive = True;   /* derived entries (no: an address word for every data entry) */
static const HChar* clo_start_fn = NULL;
static const HChar* clo_trace_fn = NULL;
static Bool  clo_started = True;  /* --started=no: begin with tracing stopped */
/* Sampling: the time schedule (period 0: none) and the timesteps taken, in
   parts per billion (0: none), as memspy's package sample. */
static ULong clo_sample_period, clo_sample_length, clo_sample_warmup, clo_sample_seed;
static ULong clo_sample_first = 1;   /* samples in the first period */
static double clo_sample_jitter;
static ULong clo_sample_steps;
static const HChar* clo_timestep_fn = NULL;

/* --alloc-fn=NAME[:REG]: the size is in REG at entry, the block's address in
   RAX at return. runtime.mallocgc (Go's allocator, register ABI) is built in:
   its type argument is in RBX at entry, and its call stack comes from Go's
   frame pointers (go_call_stack). So is runtime.stackalloc (a goroutine's
   stack: its size a uint32 in EAX, the stack's low end in RAX at return),
   reported as a mapping (see ms_return). */
typedef struct {
   const HChar* name;
   Int          size_off;   /* guest state offset of the size register */
   Bool         go;         /* a Go runtime function: call stack from frame pointers */
   Bool         typed;      /* its type argument is in RBX (runtime.mallocgc) */
   Bool         size32;     /* its size is 32 bits wide (runtime.stackalloc) */
} AllocFn;
static AllocFn alloc_fns[MAX_FNS];
static Int     n_alloc_fns;

/* buf is the buffer being filled: own_buf, or with --ring-fd a chunk of
   the ring shared with memspy (not with the first-level caches in the
   tool: see out). Instrumented code reads buf and buf_pos. */
static ULong  own_buf[BUF_WORDS];
static ULong  buf_limit = BUF_WORDS;   /* flush before buf_pos would pass it */
static ULong* buf = own_buf;
static ULong  buf_pos;          /* words in use */
static ULong* ring;             /* the ring's chunks, NULL without --ring-fd */
static ULong  ring_chunks;
static ULong  ring_cur;         /* the chunk buf is */
static ULong  ring_free;        /* chunks memspy handed back, besides buf */
static ULong next_sb_id = 1;
static Int   last_tid = -1;
static Bool  silenced = False;  /* output gone, or a forked child */

static ULong ms_mode = MODE_RECORD;  /* read by instrumented code */
static ULong ms_refs;     /* references counted (gaps; with time sampling, recorded ones too) */
static ULong ms_until;    /* time sampling: instrumented code leaves when it passes this */
static ULong skip_base;   /* ms_refs when the last SKIP record was written or the gap began */
static Bool  limit_reached;   /* --max-events or --max-ms */
static Bool  dropping;        /* the buffer that reached the limit has been written */
static Bool  client_stopped;  /* MEMSPY_STOP_TRACING, or --started=no */
static Bool  start_pending;   /* --start-fn not entered yet */
static ThreadId cur_tid = 1;
static UInt  t0_ms;

/* ------------------------------------------------------------------ */
/* Output                                                              */
/* ------------------------------------------------------------------ */

/* write(2) that never raises SIGPIPE in the program: a write to a pipe
   memspy no longer reads (it stopped waiting for a process, or it is
   gone) fails with EPIPE, and the SIGPIPE the kernel sends the thread is
   taken back before Valgrind could deliver it. */
static Int write_quietly(Int fd, const void* p, Int n)
{
   vki_sigset_t pipe, old;
   VG_(sigemptyset)(&pipe);
   VG_(sigaddset)(&pipe, VKI_SIGPIPE);
   VG_(sigprocmask)(VKI_SIG_BLOCK, &pipe, &old);
   Int r = VG_(write)(fd, p, n);
   if (r == -VKI_EPIPE) {
      vki_siginfo_t info;
      VG_(sigtimedwait_zero)(&pipe, &info);
   }
   VG_(sigprocmask)(VKI_SIG_SETMASK, &old, NULL);
   return r;
}

static void write_out(const void* p, SizeT n)
{
   const UChar* c = p;
   while (n > 0 && !silenced) {
      Int r = write_quietly(clo_out_fd, c, n);
      if (r <= 0) {
         /* memspy stopped reading: let the program run on untraced. */
         silenced = True;
         break;
      }
      c += r;
      n -= r;
   }
}

static UInt last_hand_ms;   /* when memspy was last handed words */

/* Hands the first n words of the chunk *c to memspy: written to the
   output, or with a ring announced on the output (one word: their length in
   bytes), after which *c moves on to the next chunk of the ring, waiting
   for memspy to hand one back if need be. */
static void hand_over(ULong** c, ULong n)
{
   last_hand_ms = VG_(read_millisecond_timer)();
   if (ring == NULL) {
      write_out(*c, n * sizeof(ULong));
      return;
   }
   ULong note = n * sizeof(ULong);
   write_out(&note, sizeof note);
   if (silenced)
      return;
   if (ring_free == 0) {
      UChar tokens[64];   /* one byte per chunk handed back */
      Int r = VG_(read)(clo_free_fd, tokens, sizeof tokens);
      if (r <= 0) {
         silenced = True;   /* memspy is gone */
         return;
      }
      ring_free += r;
   }
   ring_free--;
   ring_cur = (ring_cur + 1) % ring_chunks;
   *c = ring + ring_cur * BUF_WORDS;
}

/* With the first-level caches simulated in the tool (--l1d, see "First-level
   caches" below), the instrumented code fills own_buf and the output goes
   through chunks of its own: out (the ring's current chunk, or out_own). */
static Bool   l1_on;
static Bool   l1_notes;   /* --l1-notes: EXEC records stay, with the accesses memspy simulates */
static ULong  out_own[BUF_WORDS];
static ULong* out = out_own;
static ULong  out_pos;
static ULong  below_at = ~0ULL;   /* out index of the open BELOW record */
static void l1_filter(ULong n);
static void l1_reset(Bool empty);

/* Hands the first n words of buf to memspy: as they are, or with the
   first-level caches simulated, what they send below them. */
static void send_buf(ULong n)
{
   if (l1_on)
      l1_filter(n);
   else
      hand_over(&buf, n);
}

/* --max-events: the events written so far are counted from the buffer
   (parse_pos: the first word not yet counted) with, per superblock id, the
   number of events and of words that precede each exit. Once the limit is
   reached, tracing goes OFF and the output stops after the buffer that
   reached it (memspy cuts the stream at the exact event). */
static ULong  events_seen;
static ULong  parse_pos;
static UInt*  exit_counts;      /* pairs (events, words) per exit, all superblocks */
static ULong  n_exit_counts, cap_exit_counts;
static ULong* sb_first;         /* id -> index of its first pair in exit_counts */
static ULong  cap_sb_first;

static void update_mode(void);

/* The number of words of the record at p (an EXEC's from exit_counts, which
   only --max-events keeps). */
static ULong record_len(const ULong* p)
{
   ULong w = p[0];
   switch (w >> 60) {
   case REC_EXEC: {
      ULong id = (w >> 16) & ((1ULL << 44) - 1), e = w & 0xffff;
      return 1 + exit_counts[2 * (sb_first[id] + e) + 1];
   }
   case REC_DESCRIBE: return 2 + 2 * (p[1] & 0xffffffffULL) + (p[1] >> 32);
   case REC_ALLOC:    return 4 + (w & 0xffff);
   case REC_FREE:     return 3 + (w & 0xffff);
   case REC_MARK:
   case REC_MAP:      return 3;
   case REC_SYNC:     return 4;
   case REC_PROC:     return 2;
   case REC_STRING:   return 1 + ((w & 0xffffffffULL) + 7) / 8;
   default:           return 1;   /* THREAD, SKIP, END */
   }
}

static void count_events(void)
{
   ULong i = parse_pos;
   while (i < buf_pos) {
      ULong w = buf[i];
      if (w >> 60 == REC_EXEC) {
         /* SYNC and SKIP records are not events for --max-events. */
         ULong id = (w >> 16) & ((1ULL << 44) - 1), e = w & 0xffff;
         events_seen += exit_counts[2 * (sb_first[id] + e)];
      }
      i += record_len(&buf[i]);
   }
   parse_pos = buf_pos;
   if (clo_max_events > 0 && events_seen >= clo_max_events && !limit_reached) {
      limit_reached = True;
      update_mode();
   }
}

static void check_clock(void)
{
   if (clo_max_ms > 0 && !limit_reached && VG_(read_millisecond_timer)() - t0_ms >= clo_max_ms) {
      limit_reached = True;
      update_mode();
   }
}

/* Called from instrumented code when the buffer may not have room for the
   next superblock's record, and from the tool's own code. */
static void ms_flush(void)
{
   if (clo_max_events > 0 && !limit_reached)
      count_events();
   check_clock();
   if (!dropping && buf_pos > 0)
      send_buf(buf_pos);
   dropping = limit_reached;
   buf_pos = 0;
   parse_pos = 0;
}

static void ensure_room(ULong words)
{
   if (buf_pos + words > buf_limit)
      ms_flush();
}

/* In a gap, writes a SKIP record of the references counted since the
   last one, if any: called before every record of an event, so that the
   references left out precede it in the stream. */
static void flush_skip(void)
{
   if (!IS_GAP(ms_mode) || ms_refs == skip_base)
      return;
   ULong n = ms_refs - skip_base;
   skip_base = ms_refs;   /* first: ensure_room may come back here */
   if (silenced || dropping)
      return;
   ensure_room(1);
   buf[buf_pos++] = (REC_SKIP << 60) | n;
}

/* By Valgrind thread id: its OS thread id once note_thread asked, 0
   before. */
static Int* os_tids;

/* Writes a THREAD record if the running OS thread is not the last one
   named. */
static void note_thread(void)
{
   /* (gettid is a system call, and this runs at every start of client
      code: each thread's is asked once.) */
   ThreadId t = VG_(get_running_tid)();
   Int os_tid;
   if (t == VG_INVALID_THREADID)   /* (memspy's start, before any thread runs) */
      os_tid = VG_(gettid)();
   else {
      if (os_tids[t] == 0)
         os_tids[t] = VG_(gettid)();
      os_tid = os_tids[t];
   }
   if (os_tid == last_tid)
      return;
   flush_skip();   /* the references left out were the last thread's */
   last_tid = os_tid;
   ensure_room(1);
   buf[buf_pos++] = (REC_THREAD << 60) | (ULong)(UInt)os_tid;
}

/* Strings (routine and marker names) are written once each and then
   referred to by id. */
typedef struct {
   VgHashNode node;   /* key: hash of the string */
   HChar*     s;
   ULong      id;
} Str;
static VgHashTable* strings;
static ULong next_str_id = 1;

static UWord hash_str(const HChar* s, SizeT n)
{
   UWord h = 14695981039346656037ULL;
   for (SizeT i = 0; i < n; i++)
      h = (h ^ (UChar)s[i]) * 1099511628211ULL;
   return h;
}

static void free_string(void* node)
{
   VG_(free)(((Str*)node)->s);
   VG_(free)(node);
}

static ULong string_id(const HChar* s)
{
   if (s == NULL || s[0] == 0)
      return 0;
   SizeT n = VG_(strlen)(s);
   UWord h = hash_str(s, n);
   /* Keys collide rarely: probe successive keys for the same string. */
   for (UWord k = h;; k++) {
      Str* e = VG_(HT_lookup)(strings, k);
      if (e == NULL) {
         e = VG_(malloc)("memspy.string", sizeof(Str));
         e->node.key = k;
         e->s = VG_(strdup)("memspy.string", s);
         e->id = next_str_id++;
         VG_(HT_add_node)(strings, e);
         ULong words = (n + 7) / 8;
         ensure_room(1 + words);
         buf[buf_pos++] = (REC_STRING << 60) | (e->id << 32) | n;
         buf[buf_pos + words - 1] = 0;
         VG_(memcpy)(&buf[buf_pos], s, n);
         buf_pos += words;
         return e->id;
      }
      if (VG_(strcmp)(e->s, s) == 0)
         return e->id;
   }
}

/* ------------------------------------------------------------------ */
/* Object files                                                        */
/* ------------------------------------------------------------------ */

/* Every object file Valgrind has debug info for (a DebugInfo with text) is
   reported in a MAP record, its path, the runtime address and size of its
   .text, before the first translation of code in it: at every translation,
   when the list of DebugInfos may have changed since the last look.
   DebugInfos are made and discarded only when the client maps, unmaps or
   changes the protection of memory, which sets maps_dirty; so most
   translations pay one test. An object already reported is remembered by
   its DebugInfo (the key) with its text; a change of the memory under a
   reported text forgets that text, so an object discarded and loaded again
   (dlclose, dlopen) is reported again, even at the same address and with
   its DebugInfo at the same place. */
typedef struct {
   VgHashNode node;   /* key: the DebugInfo's address */
   Addr       avma;   /* its text as reported; size 0: forgotten */
   SizeT      size;
} Mapped;
static VgHashTable* mapped;
static Bool maps_dirty = True;

/* The text of memspy's preload (ms_intercepts.c): its translations record
   no reference, so that its wrappers add none to the program's. */
static Addr quiet_lo, quiet_hi;
#define PRELOAD_NAME "/vgpreload_memspy-amd64-linux.so"

static void report_maps(void)
{
   if (!maps_dirty)
      return;
   maps_dirty = False;
   if (silenced || dropping)
      return;   /* nothing more reaches the output */
   for (const DebugInfo* di = VG_(next_DebugInfo)(NULL); di != NULL; di = VG_(next_DebugInfo)(di)) {
      Addr  a = VG_(DebugInfo_get_text_avma)(di);
      SizeT n = VG_(DebugInfo_get_text_size)(di);
      const HChar* path = VG_(DebugInfo_get_filename)(di);
      if (n == 0 || path == NULL || path[0] == 0 || VG_(strlen)(path) >= MAX_NAME)
         continue;   /* no text (yet), or no path a STRING record holds */
      if (!VG_(am_is_valid_for_client)(a, 1, VKI_PROT_NONE))
         continue;   /* Valgrind's own (this tool's executable) */
      SizeT pl = VG_(strlen)(path), ql = VG_(strlen)(PRELOAD_NAME);
      if (pl >= ql && VG_(strcmp)(path + pl - ql, PRELOAD_NAME) == 0) {
         quiet_lo = a;
         quiet_hi = a + n;
      }
      Mapped* m = VG_(HT_lookup)(mapped, (UWord)di);
      if (m != NULL && m->avma == a && m->size == n)
         continue;
      if (m == NULL) {
         m = VG_(malloc)("memspy.mapped", sizeof(Mapped));
         m->node.key = (UWord)di;
         VG_(HT_add_node)(mapped, m);
      }
      m->avma = a;
      m->size = n;
      note_thread();
      flush_skip();
      ULong name = string_id(path);
      ensure_room(3);
      buf[buf_pos++] = (REC_MAP << 60) | (name << 16);
      buf[buf_pos++] = a;
      buf[buf_pos++] = n;
   }
}

/* The client changed the memory [a, a+len): DebugInfos may have come or
   gone; reported texts that overlap the range are forgotten. */
static void maps_changed(Addr a, SizeT len)
{
   maps_dirty = True;
   if (len == 0 || mapped == NULL)
      return;
   VG_(HT_ResetIter)(mapped);
   Mapped* m;
   while ((m = VG_(HT_Next)(mapped)) != NULL)
      if (m->size > 0 && a < m->avma + m->size && m->avma < a + len)
         m->avma = m->size = 0;
}

static void ms_new_mem_mmap(Addr a, SizeT len, Bool rr, Bool ww, Bool xx, ULong di_handle)
{ maps_changed(a, len); }
static void ms_change_mem_mprotect(Addr a, SizeT len, Bool rr, Bool ww, Bool xx)
{ maps_changed(a, len); }
static void ms_die_mem_munmap(Addr a, SizeT len)
{ maps_changed(a, len); }
static void ms_copy_mem_remap(Addr from, Addr to, SizeT len)
{ maps_changed(from, len); maps_changed(to, len); }

/* ------------------------------------------------------------------ */
/* Tracing modes                                                       */
/* ------------------------------------------------------------------ */

/* Per Valgrind thread: the stack pointers at the entries of --trace-fn,
   --timestep-fn and --alloc-fn functions that have not returned yet. */
#define FN_TRACE    (-1)
#define FN_TIMESTEP (-2)
typedef struct {
   Addr  sp;        /* stack pointer at entry: it points at the return address */
   ULong size;      /* alloc-fn: the requested size */
   Addr  type;      /* alloc-fn: the type argument (Go's), 0 if none */
   Int   fn;        /* alloc-fn index, or FN_TRACE, FN_TIMESTEP */
   Int   depth;
   Addr  stack[MAX_STACK_DEPTH];
} Pending;
typedef struct {
   Pending p[MAX_PENDING];
   Int     n;
   Int     in_trace_fn;      /* trace-fn entries among p */
   Int     in_timestep_fn;   /* timestep-fn entries among p */
} ThreadCalls;
static ThreadCalls* calls;     /* indexed by Valgrind thread id */
static ULong n_pending;        /* over all threads: read by instrumented code */

/* Per Valgrind thread, its place in the life of a thread made by the
   preload's pthread_create wrapper. The tool reports its start when it
   first runs, before the thread library's start-up code, so that all its
   events follow it; the wrapper reports its exit when the thread's
   routine returns or calls pthread_exit, and the thread library's exit
   path is traced after it, as it runs natively (memspy drops the
   synchronization events that follow a thread's exit). Threads made
   otherwise (a static program, a raw clone, the Go runtime) are always
   LIVE and report no start. */
#define THR_LIVE    0
#define THR_UNBORN  1   /* made by the wrapper, start not reported yet */
typedef struct {
   UChar state;
   Bool  creating;   /* its pthread_create wrapper reported a create: the next thread it makes is UNBORN */
   Addr  token;      /* creating: the create's token; a thread made by the wrapper: its creator's */
} ThreadLife;
static ThreadLife* lives;      /* indexed by Valgrind thread id */

/* Time sampling: the current sample's window, as sample.Schedule.Window
   computes it (the same arithmetic, in the same order), and whether the
   tool records for it (from MIN_GAP references before its warm-up to its
   end). */
typedef struct { ULong warm, start, end; } Window;
static ULong  win_k;
static Window win;
static Bool   time_rec;

/* SplitMix64's output for the state seed + (2k+stream+1)·γ (sample.Mix). */
static ULong mix(ULong seed, ULong k, ULong stream)
{
   ULong z = seed + (2 * k + stream + 1) * 0x9e3779b97f4a7c15ULL;
   z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
   z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
   return z ^ (z >> 31);
}

/* A number in [0, 1) drawn from seed, k and stream (sample.Unit). */
static double unit(ULong seed, ULong k, ULong stream)
{
   return (double)(mix(seed, k, stream) >> 11) / 9007199254740992.0;   /* 2^53 */
}

/* Where sample k lies (sample.Schedule.Window). */
static Window window(ULong k)
{
   ULong period = clo_sample_period, length = clo_sample_length, base, f = clo_sample_first;
   if (k < f) {
      period /= f;
      length /= f;
      base = k * period;
   } else
      base = (k - f + 1) * period;
   ULong n = length;
   double jitter = clo_sample_jitter;
   if (jitter > 0) {
      ULong d = (ULong)(jitter / 2 * unit(clo_sample_seed, k / 2, 0) * (double)length);
      if (k % 2 == 0)
         n = n + d < period ? n + d : period;
      else
         n -= d;
   }
   double slack = (double)(period - n);
   ULong off = (ULong)(((1 - jitter) / 2 + jitter * unit(clo_sample_seed, k, 1)) * slack);
   if (off > period - n)
      off = period - n;
   Window w;
   w.start = base + off;
   w.end = base + off + n;
   w.warm = base;
   if (off > clo_sample_warmup)
      w.warm = w.start - clo_sample_warmup;
   return w;
}

/* Timestep sampling: timesteps begun, markers open, and whether the
   outermost timestep open is taken (sample.Gate.Step, sample.TakesStep). */
static ULong ts_steps, ts_depth;
static Bool  ts_taken;

/* Whether sampling leaves out the references now. */
static Bool sample_gap(void)
{
   if (clo_sample_period > 0)
      return !time_rec;
   if (clo_sample_steps > 0)
      return !ts_taken;
   return False;
}

static ULong wanted_mode(void)
{
   if (limit_reached || client_stopped || start_pending)
      return MODE_OFF;
   ULong m = sample_gap() ? MODE_GAP : MODE_RECORD;
   if (lives[cur_tid].state != THR_LIVE)
      return m | MODE_PAUSED;
   if (clo_trace_fn != NULL && calls[cur_tid].in_trace_fn == 0)
      return m | MODE_PAUSED;
   return m;
}

/* Sets ms_mode from the state. Changing translations needs no action here:
   the next instrumented superblock to run finds the mode is not of its kind
   and discards the translations. A gap that ends writes its SKIP record; a
   gap that begins counts from here. */
static void update_mode(void)
{
   ULong m = wanted_mode();
   if (IS_GAP(ms_mode) && !IS_GAP(m))
      flush_skip();
   if (!IS_GAP(ms_mode) && IS_GAP(m))
      skip_base = ms_refs;
   ms_mode = m;
   if (clo_sample_period > 0) {
      if (IS_GAP(m))
         ms_until = win.warm > MIN_GAP ? win.warm - MIN_GAP : 0;
      else
         ms_until = win.end - 1;
   }
}

/* Time sampling: moves to the sample whose end lies past the references
   counted, and records once a superblock that may reach `reach` references
   comes within MIN_GAP of its warm-up. */
static void sched_update(ULong reach)
{
   if (win.end <= ms_refs) {
      while (win.end <= ms_refs)
         win = window(++win_k);
      time_rec = False;
   }
   if (!time_rec && reach + MIN_GAP > win.warm)
      time_rec = True;
   update_mode();
}

/* Timestep sampling: a timestep begins (a sample-begin marker, an entry of
   --timestep-fn) or ends. Only the outermost counts; timestep i is taken
   when floor((i+1)p/1e9) > floor(i p/1e9), p the fraction in parts per
   billion. */
static void ts_step(Bool begin)
{
   if (clo_sample_steps == 0)
      return;
   if (begin) {
      if (ts_depth++ > 0)
         return;
      ULong i = ts_steps++, p = clo_sample_steps;
      ts_taken = (i + 1) * p / 1000000000ULL > i * p / 1000000000ULL;
   } else {
      if (ts_depth == 0)
         return;   /* an end without a begin */
      if (--ts_depth > 0)
         return;
      ts_taken = False;
   }
   update_mode();
}

/* Leaving OFF from a client request: the uninstrumented translations go. */
static void leave_off_now(void)
{
   ULong old = ms_mode;
   update_mode();
   if (old == MODE_OFF && ms_mode != MODE_OFF)
      VG_(discard_translations_safely)((Addr)0x1000, ~(SizeT)0xfff, "memspy");
}

/* Makes the superblock that calls it discard every translation as it
   leaves through an invalidation exit. */
static void ms_discard_all(void)
{
   ThreadId tid = VG_(get_running_tid)();
   ULong start = 0x1000, len = ~0xfffULL;
   VG_(set_shadow_regs_area)(tid, 0, offsetof(VexGuestAMD64State, guest_CMSTART), 8, (UChar*)&start);
   VG_(set_shadow_regs_area)(tid, 0, offsetof(VexGuestAMD64State, guest_CMLEN), 8, (UChar*)&len);
}

/* Called from an instrumented superblock whose kind the mode is not, or
   which passed ms_until (reach: the references counted and those it may
   make, in a gap), just before it leaves through an invalidation exit:
   every translation goes. */
static void ms_leave(ULong reach)
{
   if (ms_mode == MODE_RESTART)
      update_mode();
   if (clo_sample_period > 0)
      sched_update(reach);
   ms_discard_all();
}

/* ------------------------------------------------------------------ */
/* Allocations, markers                                                */
/* ------------------------------------------------------------------ */

/* The live heap blocks with their requested sizes. */
typedef struct {
   VgHashNode node;   /* key: the block's address */
   SizeT      size;
} Block;
static VgHashTable* blocks;

/* Writes an ALLOC or FREE record (type); typ, the allocated type, goes
   in ALLOC records only. */
static void emit_block_record(ULong type, ULong name, Addr a, ULong size, Addr typ, const Addr* ips, Int n)
{
   if (silenced || dropping)
      return;
   flush_skip();
   ensure_room(4 + n);
   buf[buf_pos++] = (type << 60) | (name << 16) | (ULong)n;
   buf[buf_pos++] = a;
   buf[buf_pos++] = size;
   if (type == REC_ALLOC)
      buf[buf_pos++] = typ;
   for (Int k = 0; k < n; k++)
      buf[buf_pos++] = ips[k];
}

/* Whether ip is in a Valgrind preload (memspy's wrappers, the core's). */
static Bool in_preload(Addr ip)
{
   const HChar* obj;
   return VG_(get_objname)(VG_(current_DiEpoch)(), ip, &obj) && VG_(strstr)(obj, "/vgpreload_") != NULL;
}

/* The call stack of tid without the allocation routine's own frames: the
   first `skip` frames, then any in the preload (its wrappers). */
static Int call_stack(ThreadId tid, Addr* ips, Int skip)
{
   if (clo_stack_depth == 0)
      return 0;
   Addr all[2 * MAX_STACK_DEPTH + 2];
   Int n = VG_(get_StackTrace)(tid, all, clo_stack_depth + skip + 2, NULL, NULL, 0);
   Int i = skip;
   while (i < n && in_preload(all[i]))
      i++;
   Int k = 0;
   /* The unwinder may go on past main into junk: stop at the first
      address that is not client code. */
   for (; i < n && k < clo_stack_depth && VG_(am_is_valid_for_client)(all[i], 1, VKI_PROT_EXEC); i++)
      ips[k++] = all[i];
   return k;
}

/* Whether the code at a is the Go runtime's (package runtime or
   internal/runtime/...): a Go allocation's frames there are the
   allocator's. Answers are kept by address in a small direct-mapped
   cache (Go programs load no code after their start). */
#define GO_RT_CACHE 1024
static struct { Addr a; Bool rt; } go_rt_cache[GO_RT_CACHE];
static Bool in_go_runtime(Addr a)
{
   UWord h = (a ^ (a >> 10)) % GO_RT_CACHE;
   if (go_rt_cache[h].a != a) {
      const HChar* fn;
      go_rt_cache[h].a = a;
      go_rt_cache[h].rt = VG_(get_fnname)(VG_(current_DiEpoch)(), a, &fn) &&
                          (VG_(strncmp)(fn, "runtime.", 8) == 0 || VG_(strncmp)(fn, "internal/runtime/", 17) == 0);
   }
   return go_rt_cache[h].rt;
}

/* Follows Go's frame pointers (amd64 keeps them) from the return address
   ra and the frame fp of the function it returns into: that frame's [fp]
   is its caller's frame and [fp+8] the return address into the caller.
   Entries are return addresses minus one, as call_stack's, appended to
   ips from n on. The chain crosses Go's switches to the system stack
   (systemstack keeps the goroutine's frame pointer). With alloc (a Go
   allocation) it keeps the first entry, then up to --stack-depth frames
   from the first outside the Go runtime on: the runtime's frames between
   are left out (a map's groups allocated as it grows or splits are one
   site); when no frame is outside the runtime (the runtime's own
   allocations), all of them (at most MAX_STACK_DEPTH). Without alloc, up
   to --stack-depth entries in all. Returns the number of entries. */
static Int go_frames(Addr ra, Addr fp, Addr* ips, Int n, Bool alloc)
{
   Int first = n, user = -1;   /* the first frame outside the runtime */
   while (n < (alloc ? MAX_STACK_DEPTH : clo_stack_depth) && (user < 0 || n - user < clo_stack_depth)
          && VG_(am_is_valid_for_client)(ra, 1, VKI_PROT_EXEC)) {
      ips[n++] = ra - 1;
      if (alloc && user < 0 && !in_go_runtime(ra - 1))
         user = n - 1;
      if (fp == 0 || fp % sizeof(Addr) != 0 || !VG_(am_is_valid_for_client)(fp, 2 * sizeof(Addr), VKI_PROT_READ))
         break;
      ra = ((Addr*)fp)[1];
      fp = ((Addr*)fp)[0];
   }
   if (user > first + 1) {
      VG_(memmove)(&ips[first + 1], &ips[user], (n - user) * sizeof(Addr));
      n -= user - first - 1;
   }
   return n;
}

/* The call stack of Go code at the entry of a function, or in a function
   without a frame (sp, fp: RSP and RBP there): the return address is at
   [sp], RBP is the caller's frame. Valgrind's unwinder gives up on
   goroutine stacks: Go allocates them in its heap, outside the thread's
   stack. At the entry of runtime.mallocgc (alloc), the first entry is the
   runtime function that called it (newobject, makeslice, growslice,
   newarray, ...); see go_frames. */
static Int go_call_stack(Addr sp, Addr fp, Addr* ips, Bool alloc)
{
   if (clo_stack_depth == 0 || !VG_(am_is_valid_for_client)(sp, sizeof(Addr), VKI_PROT_READ))
      return 0;
   return go_frames(*(Addr*)sp, fp, ips, 0, alloc);
}

/* Remembers the live block [a, a+n) (an allocator may hand out a block it
   handed out before without a free we saw). */
static void remember_block(Addr a, SizeT n)
{
   VG_(free)(VG_(HT_remove)(blocks, a));
   Block* b = VG_(malloc)("memspy.block", sizeof(Block));
   b->node.key = a;
   b->size = n;
   VG_(HT_add_node)(blocks, b);
}

static void record_alloc(ThreadId tid, const HChar* routine, void* p, SizeT n)
{
   remember_block((Addr)p, n);
   Addr ips[MAX_STACK_DEPTH + 2];
   Int depth = call_stack(tid, ips, 0);
   emit_block_record(REC_ALLOC, string_id(routine), (Addr)p, n, 0, ips, depth);
}

/* Forgets block p and reports its free; returns its size. */
static SizeT record_free(ThreadId tid, const HChar* routine, void* p)
{
   Block* b = VG_(HT_remove)(blocks, (UWord)p);
   SizeT n = 0;
   if (b != NULL) {
      n = b->size;
      VG_(free)(b);
   }
   Addr ips[MAX_STACK_DEPTH + 2];
   Int depth = call_stack(tid, ips, 0);
   emit_block_record(REC_FREE, string_id(routine), (Addr)p, n, 0, ips, depth);
   return n;
}

/* Per Valgrind thread: the frame address of the outermost allocation
   wrapper running (0: none). A wrapper called from another (operator new
   calling malloc) has a lower frame and is not reported: the outer one
   is. */
static Addr* alloc_frames;

static const HChar* const routines[MS_R_COUNT] = { MS_ALLOC_ROUTINES };

/* Marker kinds the tool writes itself (trace.MarkKind): the thread runs
   the program's allocator, from the outermost wrapper's call of the
   original to its return. */
#define MARK_ALLOCATOR_BEGIN 9
#define MARK_ALLOCATOR_END   10

static void emit_mark(ULong mark, const HChar* name, Addr a, ULong size);
static ULong wanted_mode(void);

/* Writes an allocator marker while the thread records or counts (a thread
   paused, not started or gone writes none, as for SYNC records). */
static void allocator_mark(ULong mark)
{
   ULong m = wanted_mode();
   if (m == MODE_RECORD || m == MODE_GAP)
      emit_mark(mark, NULL, 0, 0);
}

/* Whether the wrapper of frame address frame is the outermost one on
   thread tid; ENTER makes it so when no wrapper is running or the one
   remembered has gone (its frame lies below: an exception or a longjmp
   left it), and then marks the allocator's start. */
static Bool outermost_alloc(ThreadId tid, Addr frame, Bool enter)
{
   Addr* f = &alloc_frames[tid];
   if (enter && (*f == 0 || frame >= *f)) {
      if (*f == 0)
         allocator_mark(MARK_ALLOCATOR_BEGIN);
      *f = frame;
   }
   return *f == frame;
}

/* The outermost wrapper of thread tid returns from the allocator. */
static void leave_alloc(ThreadId tid)
{
   alloc_frames[tid] = 0;
   allocator_mark(MARK_ALLOCATOR_END);
}

/* The preload's allocation requests (ms_sync.h); True if req is one. */
static Bool alloc_request(ThreadId tid, UWord* args)
{
   switch (args[0]) {
   case MS_REQ_ALLOC_ENTER:
      outermost_alloc(tid, args[1], True);
      return True;
   case MS_REQ_ALLOC:
      if (outermost_alloc(tid, args[4], False)) {
         leave_alloc(tid);
         if (args[2] != 0 && args[1] < MS_R_COUNT)
            record_alloc(tid, routines[args[1]], (void*)args[2], args[3]);
      }
      return True;
   case MS_REQ_REALLOC:
      if (outermost_alloc(tid, args[4], False)) {
         leave_alloc(tid);
         /* NULL with a size above 0 failed: the old block stays. */
         if (args[1] != 0 && (args[2] != 0 || args[3] == 0))
            record_free(tid, "realloc", (void*)args[1]);
         if (args[2] != 0)
            record_alloc(tid, "realloc", (void*)args[2], args[3]);
      }
      return True;
   case MS_REQ_FREE:
      if (outermost_alloc(tid, args[3], True) && args[2] != 0 && args[1] < MS_R_COUNT)
         record_free(tid, routines[args[1]], (void*)args[2]);
      return True;
   case MS_REQ_FREE_LEAVE:
      if (outermost_alloc(tid, args[1], False))
         leave_alloc(tid);
      return True;
   }
   return False;
}

static void emit_mark(ULong mark, const HChar* name, Addr a, ULong size)
{
   if (silenced || dropping)
      return;
   flush_skip();
   ULong id = string_id(name);
   ensure_room(3);
   buf[buf_pos++] = (REC_MARK << 60) | (id << 16) | mark;
   buf[buf_pos++] = a;
   buf[buf_pos++] = size;
}

/* Copies a client's C string, at most MAX_NAME-1 bytes; NULL if it is not
   readable. */
static const HChar* client_string(Addr s, HChar* out)
{
   if (s == 0)
      return NULL;
   Int n = 0;
   for (; n < MAX_NAME - 1; n++) {
      if ((n == 0 || ((s + n) & 0xfff) == 0) && !VG_(am_is_valid_for_client)(s + n, 1, VKI_PROT_READ))
         return NULL;
      out[n] = ((const HChar*)s)[n];
      if (out[n] == 0)
         return out;
   }
   out[n] = 0;
   return out;
}

/* ------------------------------------------------------------------ */
/* Synchronization                                                     */
/* ------------------------------------------------------------------ */

/* The counts of the barriers pthread_barrier_init made, by address. */
typedef struct {
   VgHashNode node;   /* key: the barrier's address */
   ULong      count;
} Barrier;
static VgHashTable* barriers;

/* Writes a SYNC record, while recording or in a gap only (a paused thread,
   one not started yet or gone, makes none). */
static void emit_sync(ULong kind, Addr a, ULong arg, Addr pc)
{
   ULong m = wanted_mode();
   if (silenced || dropping || (m != MODE_RECORD && m != MODE_GAP))
      return;
   note_thread();
   flush_skip();
   ensure_room(4);
   buf[buf_pos++] = (REC_SYNC << 60) | kind;
   buf[buf_pos++] = a;
   buf[buf_pos++] = arg;
   buf[buf_pos++] = pc;
}

/* The preload's requests (ms_sync.h); True if req is one. */
static Bool sync_request(ThreadId tid, UWord* args)
{
   UWord req = args[0];
   if (req == MS_REQ_BARRIER_INIT) {
      Barrier* b = VG_(HT_lookup)(barriers, args[1]);
      if (b == NULL) {
         b = VG_(malloc)("memspy.barrier", sizeof(Barrier));
         b->node.key = args[1];
         VG_(HT_add_node)(barriers, b);
      }
      b->count = args[2];
      return True;
   }
   if (req == MS_REQ_CREATE_FAILED) {
      lives[tid].creating = False;
      return True;
   }
   if (req < MS_REQ_SYNC || req >= MS_REQ_SYNC + MS_SYNC_KINDS || req == MS_REQ_SYNC + MS_SYNC_ATOMIC)
      return False;
   ULong kind = req - MS_REQ_SYNC;
   ULong arg = args[2];
   switch (kind) {
   case MS_SYNC_CREATE:
      lives[tid].creating = True;
      lives[tid].token = args[1];
      break;
   case MS_SYNC_BARRIER_ARRIVE: {
      Barrier* b = VG_(HT_lookup)(barriers, args[1]);
      arg = b != NULL ? b->count : 0;
      break;
   }
   default:
      break;
   }
   emit_sync(kind, args[1], arg, args[3]);
   return True;
}

static Bool ms_handle_client_request(ThreadId tid, UWord* args, UWord* ret)
{
   if (!VG_IS_TOOL_USERREQ('M', 'S', args[0]))
      return False;
   if (sync_request(tid, args) || alloc_request(tid, args)) {
      *ret = 0;
      return True;
   }
   static HChar name[MAX_NAME];
   UWord mark = args[0] - MEMSPY_USERREQ_BASE;
   const HChar* nm = NULL;
   Addr a = 0;
   ULong size = 0;
   switch (mark) {
   case MEMSPY_MARK_START:
      if (client_stopped) {
         client_stopped = False;
         leave_off_now();
      }
      break;
   case MEMSPY_MARK_STOP:
      client_stopped = True;
      update_mode();
      break;
   case MEMSPY_MARK_RANGE:
      a = args[1];
      size = args[2];
      nm = client_string(args[3], name);
      break;
   case MEMSPY_MARK_REGION_BEGIN:
   case MEMSPY_MARK_REGION_END:
   case MEMSPY_MARK_DUMP:
      nm = client_string(args[1], name);
      break;
   case MEMSPY_MARK_SAMPLE_BEGIN:
   case MEMSPY_MARK_SAMPLE_END:
   case MEMSPY_MARK_RESET:
      break;
   default:
      VG_(umsg)("memspy: unknown client request %lu ignored\n", (unsigned long)mark);
      *ret = 0;
      return True;
   }
   note_thread();
   emit_mark(mark, nm, a, size);
   if (mark == MEMSPY_MARK_SAMPLE_BEGIN || mark == MEMSPY_MARK_SAMPLE_END)
      ts_step(mark == MEMSPY_MARK_SAMPLE_BEGIN);
   *ret = 1;   /* running under memspy */
   return True;
}

/* ------------------------------------------------------------------ */
/* Functions watched by name: --start-fn, --trace-fn, --alloc-fn       */
/* ------------------------------------------------------------------ */

/* Remembers the entry of watched function fn with stack pointer sp and
   returns it; NULL when it is the entry already remembered last: a
   superblock that ran again after leaving at its start (a change of
   mode). */
static Pending* push_pending(Addr sp, Int fn, ULong size)
{
   ThreadCalls* tc = &calls[cur_tid];
   if (tc->n > 0 && tc->p[tc->n - 1].sp == sp && tc->p[tc->n - 1].fn == fn)
      return NULL;
   if (tc->n == MAX_PENDING) {
      /* Entries that never returned (longjmp, a stack switch): drop the oldest. */
      if (tc->p[0].fn == FN_TRACE)
         tc->in_trace_fn--;
      if (tc->p[0].fn == FN_TIMESTEP)
         tc->in_timestep_fn--;
      VG_(memmove)(&tc->p[0], &tc->p[1], (MAX_PENDING - 1) * sizeof(Pending));
      tc->n--;
      n_pending--;
   }
   Pending* e = &tc->p[tc->n++];
   n_pending++;
   e->sp = sp;
   e->fn = fn;
   e->size = size;
   e->type = 0;
   e->depth = 0;
   if (fn == FN_TRACE)
      tc->in_trace_fn++;
   else if (fn == FN_TIMESTEP)
      tc->in_timestep_fn++;
   return e;
}

/* At the entry of the --trace-fn function. */
static void ms_trace_fn_enter(ULong sp)
{
   push_pending(sp, FN_TRACE, 0);
   update_mode();
}

/* At the entry of the --timestep-fn function: an outermost entry begins a
   timestep, as MEMSPY_SAMPLE_BEGIN() does. */
static void ms_timestep_fn_enter(ULong sp)
{
   if (!push_pending(sp, FN_TIMESTEP, 0) || calls[cur_tid].in_timestep_fn > 1)
      return;
   emit_mark(MEMSPY_MARK_SAMPLE_BEGIN, NULL, 0, 0);
   ts_step(True);
}

/* At the entry of --alloc-fn number fn (sp, fp: RSP and RBP; type: Go's
   type argument, else 0): remember the size, type and call stack until it
   returns. */
static void ms_alloc_fn_enter(ULong fn, ULong size, ULong sp, ULong fp, ULong type)
{
   Pending* e = push_pending(sp, (Int)fn, size);
   if (e == NULL)
      return;
   e->type = type;
   e->depth = alloc_fns[fn].go ? go_call_stack(sp, fp, e->stack, True) : call_stack(cur_tid, e->stack, 1);
}

/* After a return (sp: the stack pointer after it, rax: the result):
   completes the pending entries that it left. */
static void ms_return(ULong sp, ULong rax)
{
   ThreadCalls* tc = &calls[cur_tid];
   Bool changed = False;
   while (tc->n > 0 && tc->p[tc->n - 1].sp < sp) {
      Pending* e = &tc->p[--tc->n];
      n_pending--;
      if (e->fn == FN_TRACE) {
         tc->in_trace_fn--;
         changed = True;
      } else if (e->fn == FN_TIMESTEP) {
         if (--tc->in_timestep_fn == 0) {
            emit_mark(MEMSPY_MARK_SAMPLE_END, NULL, 0, 0);
            ts_step(False);
         }
      } else if (e->sp + 8 == sp && rax != 0) {
         /* Go frees nothing explicitly: its blocks need no size for a FREE. */
         if (!alloc_fns[e->fn].go)
            remember_block(rax, e->size);
         emit_block_record(REC_ALLOC, string_id(alloc_fns[e->fn].name), rax, e->size, e->type, e->stack, e->depth);
      }
   }
   if (changed)
      update_mode();
}

/* At the entry of --start-fn while OFF: returns 1 when tracing starts (the
   superblock then leaves to discard the uninstrumented translations). */
static ULong ms_start_fn_enter(void)
{
   if (!start_pending)
      return 0;
   start_pending = False;
   update_mode();
   if (ms_mode == MODE_OFF)
      return 0;
   ms_discard_all();
   return 1;
}

/* Whether the guest address a is the entry of the function called name. */
static Bool is_entry_of(Addr a, const HChar* name)
{
   const HChar* fn;
   return name != NULL && VG_(get_fnname_if_entry)(VG_(current_DiEpoch)(), a, &fn) &&
          VG_(strcmp)(fn, name) == 0;
}

static Int alloc_fn_at(Addr a)
{
   const HChar* fn;
   if (n_alloc_fns == 0 || !VG_(get_fnname_if_entry)(VG_(current_DiEpoch)(), a, &fn))
      return -1;
   for (Int k = 0; k < n_alloc_fns; k++)
      if (VG_(strcmp)(fn, alloc_fns[k].name) == 0)
         return k;
   return -1;
}

/* ------------------------------------------------------------------ */
/* Threads and processes                                               */
/* ------------------------------------------------------------------ */

/* Reports the start of thread tid, made by the wrapper, as it first runs:
   its token is its creator's, its routine is read from the creator's
   CreateArgs (ms_intercepts.c; the creator waits until the thread's
   trampoline has copied them) and its pthread_self() is its thread
   pointer (x86-64: the FS base). */
static void report_start(ThreadId tid)
{
   ThreadLife* l = &lives[tid];
   Addr fn = 0, self = 0;
   if (VG_(am_is_valid_for_client)(l->token, sizeof(Addr), VKI_PROT_READ))
      fn = *(Addr*)l->token;
   VG_(get_shadow_regs_area)(tid, (UChar*)&self, 0, offsetof(VexGuestAMD64State, guest_FS_CONST), sizeof(Addr));
   l->state = THR_LIVE;
   update_mode();
   emit_sync(MS_SYNC_START, l->token, self, fn);
}

static void ms_start_client_code(ThreadId tid, ULong blocks_dispatched)
{
   if (clo_max_events > 0 && !limit_reached)
      count_events();   /* notice the limit before the buffer fills */
   check_clock();
   if (tid != cur_tid) {
      cur_tid = tid;
      if (ms_mode != MODE_OFF)
         update_mode();   /* --trace-fn: this thread may be inside or not */
   }
   note_thread();
   if (lives[tid].state == THR_UNBORN)
      report_start(tid);
}

static void ms_thread_exit(ThreadId tid)
{
   n_pending -= calls[tid].n;
   calls[tid].n = 0;
   calls[tid].in_trace_fn = 0;
   calls[tid].in_timestep_fn = 0;
   lives[tid].state = THR_LIVE;   /* the id may be reused */
   lives[tid].creating = False;
   os_tids[tid] = 0;
   alloc_frames[tid] = 0;
}

/* In the parent, during the clone of a new thread: a thread made by the
   pthread_create wrapper waits for its start event. */
static void ms_thread_create(ThreadId parent, ThreadId child)
{
   lives[child].state = THR_LIVE;
   lives[child].creating = False;
   os_tids[child] = 0;
   if (parent != VG_INVALID_THREADID && lives[parent].creating) {
      lives[parent].creating = False;
      lives[child].state = THR_UNBORN;
      lives[child].token = lives[parent].token;
   }
}

/* Writes a PROC record of kind k, naming name (NULL: none), with arg,
   and hands the buffer to memspy: an exec may end the process now. It is
   written even past --max-events, as END is, so that memspy knows how
   the stream ends. */
static void emit_proc(ULong k, const HChar* name, ULong arg)
{
   if (silenced)
      return;
   flush_skip();
   if (dropping)
      buf_pos = 0;   /* past the limit: nothing else goes out */
   note_thread();
   ULong id = string_id(name);
   ensure_room(2);
   buf[buf_pos++] = (REC_PROC << 60) | (id << 16) | k;
   buf[buf_pos++] = arg;
   if (dropping) {
      send_buf(buf_pos);
      buf_pos = parse_pos = 0;
   } else
      ms_flush();
}

/* Whether the file at path is a program this tool can trace after an
   exec: a 64-bit x86 ELF file, or not an ELF file at all (a script, whose
   interpreter Valgrind runs; or no file: the exec fails). */
static Bool traceable(const HChar* path)
{
   SysRes r = VG_(open)(path, VKI_O_RDONLY, 0);
   if (sr_isError(r))
      return True;
   UChar h[20];
   Int n = VG_(read)(sr_Res(r), h, sizeof h);
   VG_(close)(sr_Res(r));
   if (n < (Int)sizeof h || h[0] != 0x7f || h[1] != 'E' || h[2] != 'L' || h[3] != 'F')
      return True;
   return h[4] == 2 && (h[18] | h[19] << 8) == 62;   /* ELFCLASS64, EM_X86_64 */
}

/* Waits until memspy has handed back every chunk of the ring but the one
   being filled (empty after a flush): a new tool instance, after an exec,
   starts with every chunk free, and memspy starts it again at chunk 0. */
static void wait_ring(void)
{
   while (ring != NULL && !silenced && ring_free < ring_chunks - 1) {
      UChar tokens[64];
      Int r = VG_(read)(clo_free_fd, tokens, sizeof tokens);
      if (r <= 0) {
         silenced = True;
         return;
      }
      ring_free += r;
   }
}

/* Sets the option opt (like "--out-fd=") of Valgrind's own arguments,
   which it gives the tool instance of an exec'd program, to fd. */
static void set_fd_arg(const HChar* opt, Int fd)
{
   SizeT n = VG_(strlen)(opt);
   for (Word i = 0; i < VG_(sizeXA)(VG_(args_for_valgrind)); i++) {
      HChar** a = VG_(indexXA)(VG_(args_for_valgrind), i);
      if (VG_(strncmp)(*a, opt, n) == 0) {
         HChar* v = VG_(malloc)("memspy.arg", n + 16);
         VG_(snprintf)(v, n + 16, "%s%d", opt, fd);
         *a = v;
      }
   }
}

/* The N of Valgrind's --log-fd=N option, or -1. */
static Int log_fd_arg(void)
{
   for (Word i = 0; i < VG_(sizeXA)(VG_(args_for_valgrind)); i++) {
      HChar* a = *(HChar**)VG_(indexXA)(VG_(args_for_valgrind), i);
      if (VG_(strncmp)(a, "--log-fd=", 9) == 0)
         return (Int)VG_(strtoll10)(a + 9, NULL);
   }
   return -1;
}

/* The descriptors the stream and Valgrind's messages go through, closed
   on exec (keep: False) or kept open for the tool instance of the exec'd
   program. */
static void keep_fds(Bool keep)
{
   Int fds[5] = { clo_out_fd, ring != NULL ? clo_ring_fd : -1, ring != NULL ? clo_free_fd : -1, clo_control_fd,
                  log_fd_arg() >= 0 ? VG_(log_output_sink).fd : -1 };
   for (Int k = 0; k < 5; k++)
      if (fds[k] >= 0)
         VG_(fcntl)(fds[k], VKI_F_SETFD, keep ? 0 : VKI_FD_CLOEXEC);
}

/* The status the program gave exit_group, if it called it (a program
   that did not was killed by a signal). Valgrind passes tools no exit
   code. */
static Bool  exited;
static ULong exit_status;

/* An exec under way: whether Valgrind follows it, and what to restore if
   it fails. */
static Bool exec_followed, exec_saved_trace;

/* Before a system call: an exec (which Valgrind checks before making it:
   a check that fails comes back to ms_post_syscall) ends the stream of
   this program once it succeeds. When Valgrind follows it (memspy's
   --children), the next program's tool instance goes on in the same
   stream (the ring's chunks all handed back first) with the descriptors
   as they are; a program the tool cannot trace (32-bit) runs untraced. */
static void ms_pre_syscall(ThreadId tid, UInt sysno, UWord* args, UInt nargs)
{
   /* A system call may wait (a shell waiting for its children, a server
      for a request): what the buffer holds reaches memspy now if it has
      waited long enough, so that memspy has it whenever it stops reading. */
   if ((buf_pos > 0 || out_pos > 0) && !dropping && VG_(read_millisecond_timer)() - last_hand_ms >= FLUSH_MS)
      ms_flush();
   if (sysno == __NR_exit_group) {
      exited = True;
      exit_status = args[0];
   }
   if (sysno != __NR_execve && sysno != __NR_execveat)
      return;
   static HChar path[MAX_NAME];
   const HChar* p = client_string(sysno == __NR_execve ? args[0] : args[1], path);
   exec_saved_trace = VG_(clo_trace_children);
   Bool ok = p == NULL || sysno == __NR_execveat || traceable(p);
   if (!ok || silenced)
      VG_(clo_trace_children) = False;   /* the program runs natively */
   exec_followed = VG_(clo_trace_children);
   emit_proc(PROC_EXEC, p, ok ? 0 : 1);
   if (exec_followed) {
      wait_ring();
      set_fd_arg("--out-fd=", clo_out_fd);
      set_fd_arg("--ring-fd=", ring != NULL ? clo_ring_fd : -1);
      set_fd_arg("--free-fd=", ring != NULL ? clo_free_fd : -1);
      set_fd_arg("--control-fd=", clo_control_fd);
      if (log_fd_arg() >= 0)
         set_fd_arg("--log-fd=", VG_(log_output_sink).fd);
      keep_fds(True);
   }
}

#define MS_MAP_STACK 0x20000   /* Linux's MAP_STACK */

/* The call stack of the system call thread tid just made, as an
   allocation's: its first entry is the call of the function that made it
   (the C library's mmap or syscall, the Go runtime's sysMmap), then the
   callers. In the Go runtime (which makes its own system calls, without
   the C library) from Go's frame pointers, as for its allocations: its
   system calls are made by assembly functions without a frame (NOSPLIT,
   $0), so that the return address is at [RSP] and RBP is the caller's
   frame; elsewhere from Valgrind's unwinder. */
static Int syscall_stack(ThreadId tid, Addr* ips)
{
   if (!in_go_runtime(VG_(get_IP)(tid) - 1))
      return call_stack(tid, ips, 1);
   Addr fp;
   VG_(get_shadow_regs_area)(tid, (UChar*)&fp, 0, offsetof(VexGuestAMD64State, guest_RBP), sizeof fp);
   return go_call_stack(VG_(get_SP)(tid), fp, ips, False);
}

/* A mapping or an unmapping the program made with a system call of its
   own, outside the preload's wrappers (whose mmap and munmap report
   theirs, and whose allocators' mappings are theirs): the Go runtime's
   heap arenas and metadata, a static program's, the dynamic loader's. An
   anonymous mapping (not a thread stack) is an ALLOC record of routine
   sys_mmap; any munmap a FREE record of sys_munmap with the length
   unmapped. */
static void raw_mapping(ThreadId tid, UInt sysno, UWord* args, SysRes res)
{
   if (sr_isError(res) || alloc_frames[tid] != 0)
      return;
   Addr ips[MAX_STACK_DEPTH];
   if (sysno == __NR_mmap && (args[3] & VKI_MAP_ANONYMOUS) && !(args[3] & MS_MAP_STACK) && args[1] > 0) {
      note_thread();
      Int depth = syscall_stack(tid, ips);
      emit_block_record(REC_ALLOC, string_id("sys_mmap"), sr_Res(res), args[1], 0, ips, depth);
   } else if (sysno == __NR_munmap && args[1] > 0) {
      note_thread();
      Int depth = syscall_stack(tid, ips);
      emit_block_record(REC_FREE, string_id("sys_munmap"), args[0], args[1], 0, ips, depth);
   }
}

/* After a system call: a mapping of the program's own, or a failed exec
   (a successful one does not come back). */
static void ms_post_syscall(ThreadId tid, UInt sysno, UWord* args, UInt nargs, SysRes res)
{
   if (sysno == __NR_mmap || sysno == __NR_munmap)
      raw_mapping(tid, sysno, args, res);
   if ((sysno != __NR_execve && sysno != __NR_execveat) || !sr_isError(res))
      return;
   VG_(clo_trace_children) = exec_saved_trace;
   if (exec_followed)
      keep_fds(False);
   emit_proc(PROC_EXEC_FAILED, NULL, sr_Err(res));
}

/* The stream's first records: the header, then a START record with the
   program's command line and the parent's pid. */
static void start_stream(void)
{
   ULong header[4];
   VG_(memcpy)(&header[0], "memspyVG", 8);
   header[1] = MS_STREAM_VERSION;
   header[2] = (clo_ifetch ? 1 : 0) | (clo_calls ? 2 : 0) | (ring != NULL ? 4 : 0) | (l1_on ? 8 : 0) |
               (l1_notes ? 16 : 0);
   header[3] = (ULong)VG_(getpid)();
   write_out(header, sizeof header);
   static HChar cmd[MAX_NAME];
   Int n = VG_(snprintf)(cmd, sizeof cmd, "%s", VG_(args_the_exename) ? VG_(args_the_exename) : "?");
   for (Word i = 0; i < VG_(sizeXA)(VG_(args_for_client)) && n < MAX_NAME - 1; i++)
      n += VG_(snprintf)(cmd + n, sizeof cmd - n, " %s", *(HChar**)VG_(indexXA)(VG_(args_for_client), i));
   note_thread();
   ULong id = string_id(cmd);
   ensure_room(2);
   buf[buf_pos++] = (REC_PROC << 60) | (id << 16) | PROC_START;
   buf[buf_pos++] = (ULong)VG_(getppid)();
}

/* A forked child: the parent's stream is not its own. With --fifo-dir it
   makes the FIFO DIR/PID, announces itself on the control descriptor,
   opens the FIFO once memspy reads it, and starts a stream of its own
   there: everything the parent's stream described (strings, objects,
   superblocks) is described again. Otherwise it runs untraced. */
static void ms_atfork_child(ThreadId tid)
{
   for (UInt t = 0; t < VG_N_THREADS; t++)
      os_tids[t] = 0;   /* the child's thread has an id of its own */
   silenced = True;
   buf = own_buf;   /* not the ring the parent fills */
   ring = NULL;
   buf_pos = parse_pos = 0;
   if (l1_on) {
      out = out_own;
      out_pos = 0;
      below_at = ~0ULL;
      l1_reset(True);   /* its memspy simulates it from empty caches */
   }
   Int* fds[3] = { &clo_out_fd, &clo_ring_fd, &clo_free_fd };
   for (Int k = 0; k < 3; k++)
      if (*fds[k] >= 0) {
         VG_(close)(*fds[k]);   /* the parent's: its reader sees the end when the parent ends */
         *fds[k] = -1;
      }
   /* Untraced from here: the programs it execs run natively too. */
   VG_(clo_trace_children) = False;
   if (clo_fifo_dir == NULL || clo_control_fd < 0)
      return;
   HChar path[MAX_NAME];
   VG_(snprintf)(path, sizeof path, "%s/%d", clo_fifo_dir, VG_(getpid)());
   ULong pid = (ULong)VG_(getpid)();
   if (sr_isError(VG_(mknod)(path, VKI_S_IFIFO | 0600, 0)))
      return;
   if (write_quietly(clo_control_fd, &pid, 8) != 8) {
      VG_(unlink)(path);   /* memspy follows no more children */
      return;
   }
   SysRes r = VG_(open)(path, VKI_O_WRONLY, 0);   /* waits for memspy to open it */
   if (sr_isError(r))
      return;
   VG_(clo_trace_children) = True;
   clo_out_fd = VG_(safe_fd)(sr_Res(r));
   silenced = False;
   VG_(HT_destruct)(strings, free_string);
   strings = VG_(HT_construct)("memspy.strings");
   next_str_id = 1;
   VG_(HT_destruct)(mapped, VG_(free));
   mapped = VG_(HT_construct)("memspy.mapped");
   maps_dirty = True;
   last_tid = -1;
   n_exit_counts = 0;
   events_seen = 0;
   limit_reached = dropping = False;
   start_stream();
   /* The translations describe superblocks in the parent's stream: the
      first to run leaves and discards them all (Valgrind does not allow
      it here). */
   if (ms_mode != MODE_OFF)
      ms_mode = MODE_RESTART;
}

/* ------------------------------------------------------------------ */
/* Instrumentation                                                     */
/* ------------------------------------------------------------------ */

typedef struct {
   ULong word;   /* kind | size << 8, and ENT_DERIVED | base << ENT_BASE_SHIFT */
   Addr  pc;
   ULong off;    /* a derived entry's offset from its base's address */
} Entry;

static Entry* ents;
static Int    n_ents, cap_ents;

static void add_entry(UInt kind, UInt size, Addr pc)
{
   if (n_ents == cap_ents) {
      cap_ents = cap_ents ? 2 * cap_ents : 256;
      ents = VG_(realloc)("memspy.entries", ents, cap_ents * sizeof(Entry));
   }
   ents[n_ents].word = (ULong)kind | ((ULong)size << 8);
   ents[n_ents].pc = pc;
   ents[n_ents].off = 0;
   n_ents++;
}

/* Records, for --max-events, how many events and words follow the header
   of an execution of superblock id, of entries e[0..n), that leaves through
   each exit (the last pair: its end). */
static void remember_exits(ULong id, const Entry* e, Int n)
{
   if (id >= cap_sb_first) {
      cap_sb_first = cap_sb_first ? 2 * cap_sb_first : 4096;
      while (cap_sb_first <= id)
         cap_sb_first *= 2;
      sb_first = VG_(realloc)("memspy.sbfirst", sb_first, cap_sb_first * sizeof(ULong));
   }
   sb_first[id] = n_exit_counts;
   UInt events = 0, words = 0;
   for (Int k = 0; k <= n; k++) {
      UInt kind = k < n ? (UInt)(e[k].word & 0xff) : K_EXIT;
      if (kind == K_EXIT) {
         if (n_exit_counts == cap_exit_counts) {
            cap_exit_counts = cap_exit_counts ? 2 * cap_exit_counts : 4096;
            exit_counts = VG_(realloc)("memspy.exits", exit_counts, 2 * cap_exit_counts * sizeof(UInt));
         }
         exit_counts[2 * n_exit_counts] = events;
         exit_counts[2 * n_exit_counts + 1] = words;
         n_exit_counts++;
      } else if (kind == K_CALL || kind == K_RETURN) {
         words += 2;
      } else {
         events++;
         if (kind != K_IFETCH && !(e[k].word & ENT_DERIVED))
            words++;
      }
   }
}

static IRTemp new_temp(IRSB* sb, IRType ty)
{
   return newIRTemp(sb->tyenv, ty);
}

static IRExpr* u64(ULong v)
{
   return IRExpr_Const(IRConst_U64(v));
}

static IRExpr* rd(IRTemp t)
{
   return IRExpr_RdTmp(t);
}

/* Emits t = e and returns t. */
static IRTemp assign(IRSB* sb, IRType ty, IRExpr* e)
{
   IRTemp t = new_temp(sb, ty);
   addStmtToIRSB(sb, IRStmt_WrTmp(t, e));
   return t;
}

/* Emits a store of the 64-bit value val at word index `slot` of the current
   record (base: a temp holding the record's address). */
static void store_slot(IRSB* sb, IRTemp base, ULong slot, IRExpr* val)
{
   IRTemp a = assign(sb, Ity_I64, IRExpr_Binop(Iop_Add64, rd(base), u64(8 * slot)));
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, rd(a), val));
}

/* Emits the header of an execution that leaves through exit e with n words
   after the header, and advances the buffer position past it when
   recording (rec). */
static ULong l1_exit_word(UInt e);

static void close_record(IRSB* sb, IRTemp base, IRTemp pos, IRTemp rec, ULong id, UInt e, ULong n)
{
   ULong head = l1_on ? l1_exit_word(e) : (REC_EXEC << 60) | (id << 16) | e;
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, rd(base), u64(head)));
   IRTemp adv = assign(sb, Ity_I64, IRExpr_Binop(Iop_Add64, rd(pos), u64(1 + n)));
   IRTemp np = assign(sb, Ity_I64, IRExpr_ITE(rd(rec), rd(adv), rd(pos)));
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, u64((ULong)(Addr)&buf_pos), rd(np)));
}

/* Declares that helper d reads (or writes) the guest register at offset off,
   so that the optimiser keeps the guest state exact around the call. */
static void fx_state(IRDirty* d, IREffect fx, Int off)
{
   Int k = d->nFxState++;
   d->fxState[k].fx = fx;
   d->fxState[k].offset = off;
   d->fxState[k].size = 8;
   d->fxState[k].nRepeats = 0;
   d->fxState[k].repeatLen = 0;
}

/* Emits a call of a helper without result, guarded by guard (NULL: always). */
static IRDirty* call_helper(IRSB* sb, const HChar* name, void* fn, IRExpr** args, IRExpr* guard)
{
   IRDirty* d = unsafeIRDirty_0_N(0, name, VG_(fnptr_to_fnentry)(fn), args);
   if (guard != NULL)
      d->guard = guard;
   addStmtToIRSB(sb, IRStmt_Dirty(d));
   return d;
}

/* Declares the guest registers that ms_discard_all writes. */
static void fx_discard(IRDirty* d)
{
   fx_state(d, Ifx_Write, offsetof(VexGuestAMD64State, guest_CMSTART));
   fx_state(d, Ifx_Write, offsetof(VexGuestAMD64State, guest_CMLEN));
}

/* The size in bytes of a guarded load's memory access. */
static UInt loadg_size(IRLoadGOp cvt)
{
   switch (cvt) {
   case ILGop_IdentV128: return 16;
   case ILGop_Ident64:   return 8;
   case ILGop_Ident32:   return 4;
   case ILGop_16Uto32:
   case ILGop_16Sto32:   return 2;
   case ILGop_8Uto32:
   case ILGop_8Sto32:    return 1;
   default:              return 8;
   }
}

/* Upper bound of the data address words a superblock writes. */
static ULong count_data(IRSB* sb)
{
   ULong n = 0;
   for (Int i = 0; i < sb->stmts_used; i++) {
      IRStmt* st = sb->stmts[i];
      switch (st->tag) {
      case Ist_WrTmp:
         if (st->Ist.WrTmp.data->tag == Iex_Load) n++;
         break;
      case Ist_Store: case Ist_LoadG: case Ist_StoreG: case Ist_CAS: case Ist_LLSC:
         n++;
         break;
      case Ist_Dirty:
         if (st->Ist.Dirty.details->mFx != Ifx_None) n++;
         break;
      default:
         break;
      }
   }
   return n;
}

/* --no-stack: whether temp t holds an address computed from the stack
   pointer (GET(RSP) plus or minus constants) in this superblock. */
static Bool* stackish;
static Int   cap_stackish;

static void note_stackish(IRSB* sbIn, IRStmt* st)
{
   if (st->tag != Ist_WrTmp || typeOfIRTemp(sbIn->tyenv, st->Ist.WrTmp.tmp) != Ity_I64)
      return;
   IRExpr* e = st->Ist.WrTmp.data;
   Bool s = False;
   if (e->tag == Iex_Get)
      s = e->Iex.Get.offset == offsetof(VexGuestAMD64State, guest_RSP);
   else if (e->tag == Iex_Binop && (e->Iex.Binop.op == Iop_Add64 || e->Iex.Binop.op == Iop_Sub64)) {
      IRExpr* a = e->Iex.Binop.arg1;
      IRExpr* b = e->Iex.Binop.arg2;
      s = (a->tag == Iex_RdTmp && stackish[a->Iex.RdTmp.tmp] && b->tag == Iex_Const) ||
          (b->tag == Iex_RdTmp && stackish[b->Iex.RdTmp.tmp] && a->tag == Iex_Const);
   }
   stackish[st->Ist.WrTmp.tmp] = s;
}

static Bool is_stack_addr(IRExpr* addr)
{
   return addr->tag == Iex_RdTmp && stackish[addr->Iex.RdTmp.tmp];
}

/* Addresses known from others. Every 64-bit temp of the superblock being
   instrumented gets a linear form: the sum of coefficients times roots,
   plus a constant, in 64-bit wrap-around arithmetic, over at most LF_TERMS
   roots (temps the analysis does not look into: guest registers, loads,
   helper results). A data address whose form has the same roots and
   coefficients as an earlier one's is that address plus a constant known
   now: its entry is derived (ENT_DERIVED) and has no address word. IR temps
   are assigned once, so the forms hold wherever the temps are read. */
#define LF_TERMS 4
typedef struct {
   Int    n;                /* roots; -1: none computed (the temp is its own root) */
   IRTemp root[LF_TERMS];   /* increasing */
   ULong  coef[LF_TERMS];   /* never 0 */
   ULong  c;
} LinForm;

static LinForm* forms;      /* by temp */
static Int      cap_forms;

/* The data entries of the superblock that have address words, with the
   forms of their addresses. */
typedef struct {
   ULong   data;   /* the entry's number among the data entries */
   LinForm f;
} Direct;
static Direct* directs;
static Int     n_directs, cap_directs;

/* Prepares the forms for a superblock of n temps: each its own root. */
static void reset_forms(Int n)
{
   if (n > cap_forms) {
      cap_forms = 2 * n;
      forms = VG_(realloc)("memspy.forms", forms, cap_forms * sizeof(LinForm));
   }
   for (Int t = 0; t < n; t++)
      forms[t].n = -1;
   n_directs = 0;
}

/* The form of atom e (a temp or a constant) in *f; False for a constant
   that is not 64-bit. */
static Bool atom_form(IRExpr* e, LinForm* f)
{
   if (e->tag == Iex_Const) {
      if (e->Iex.Const.con->tag != Ico_U64)
         return False;
      f->n = 0;
      f->c = e->Iex.Const.con->Ico.U64;
      return True;
   }
   if (e->tag != Iex_RdTmp)
      return False;
   IRTemp t = e->Iex.RdTmp.tmp;
   if (forms[t].n >= 0) {
      *f = forms[t];
      return True;
   }
   f->n = 1;
   f->root[0] = t;
   f->coef[0] = 1;
   f->c = 0;
   return True;
}

/* *out = a + k*b; False when that needs more than LF_TERMS roots. */
static Bool lf_add(const LinForm* a, const LinForm* b, ULong k, LinForm* out)
{
   LinForm r;
   r.n = 0;
   r.c = a->c + k * b->c;
   Int i = 0, j = 0;
   while (i < a->n || j < b->n) {
      IRTemp t;
      ULong c;
      if (j == b->n || (i < a->n && a->root[i] < b->root[j])) {
         t = a->root[i];
         c = a->coef[i++];
      } else if (i == a->n || b->root[j] < a->root[i]) {
         t = b->root[j];
         c = k * b->coef[j++];
      } else {
         t = a->root[i];
         c = a->coef[i++] + k * b->coef[j++];
      }
      if (c == 0)
         continue;
      if (r.n == LF_TERMS)
         return False;
      r.root[r.n] = t;
      r.coef[r.n] = c;
      r.n++;
   }
   *out = r;
   return True;
}

/* Gives the temp that st assigns its form, when st computes a sum,
   difference, shift or multiple by a constant of forms. */
static void note_form(IRSB* sbIn, IRStmt* st)
{
   if (st->tag != Ist_WrTmp || typeOfIRTemp(sbIn->tyenv, st->Ist.WrTmp.tmp) != Ity_I64)
      return;
   IRExpr* e = st->Ist.WrTmp.data;
   LinForm a, b, r;
   LinForm zero = { 0 };
   Bool ok = False;
   if (e->tag == Iex_RdTmp || e->tag == Iex_Const)
      ok = atom_form(e, &r);
   else if (e->tag == Iex_Binop) {
      IRExpr* x = e->Iex.Binop.arg1;
      IRExpr* y = e->Iex.Binop.arg2;
      switch (e->Iex.Binop.op) {
      case Iop_Add64:
         ok = atom_form(x, &a) && atom_form(y, &b) && lf_add(&a, &b, 1, &r);
         break;
      case Iop_Sub64:
         ok = atom_form(x, &a) && atom_form(y, &b) && lf_add(&a, &b, -1ULL, &r);
         break;
      case Iop_Shl64:
         ok = y->tag == Iex_Const && y->Iex.Const.con->tag == Ico_U8 && y->Iex.Const.con->Ico.U8 < 64 &&
              atom_form(x, &a) && lf_add(&zero, &a, 1ULL << y->Iex.Const.con->Ico.U8, &r);
         break;
      case Iop_Mul64:
         if (x->tag == Iex_Const) {
            IRExpr* z = x;
            x = y;
            y = z;
         }
         ok = atom_form(y, &b) && b.n == 0 && atom_form(x, &a) && lf_add(&zero, &a, b.c, &r);
         break;
      default:
         break;
      }
   }
   if (ok)
      forms[st->Ist.WrTmp.tmp] = r;
}

/* Whether data entry number `data`, of address addr, is derived: then
   *base gets the number of the earlier data entry with an address word its
   address follows from and *off the difference. Otherwise the entry is
   noted as one with an address word. */
static Bool derive(ULong data, IRExpr* addr, ULong* base, ULong* off)
{
   LinForm f;
   if (!atom_form(addr, &f))
      return False;
   for (Int k = 0; k < n_directs; k++) {
      const LinForm* g = &directs[k].f;
      if (g->n != f.n || directs[k].data >= 1ULL << (64 - ENT_BASE_SHIFT))
         continue;
      Int i = 0;
      while (i < f.n && g->root[i] == f.root[i] && g->coef[i] == f.coef[i])
         i++;
      if (i == f.n) {
         *base = directs[k].data;
         *off = f.c - g->c;
         return True;
      }
   }
   if (n_directs == cap_directs) {
      cap_directs = cap_directs ? 2 * cap_directs : 64;
      directs = VG_(realloc)("memspy.directs", directs, cap_directs * sizeof(Direct));
   }
   directs[n_directs].data = data;
   directs[n_directs].f = f;
   n_directs++;
   return False;
}

/* The translation of the --start-fn function's entry while tracing is OFF:
   a call that may start tracing, then an exit that discards every
   translation and re-enters the function, now instrumented. */
static IRSB* start_fn_trigger(IRSB* sbIn, const VexGuestLayout* layout, Addr entry)
{
   IRSB* sb = deepCopyIRSBExceptStmts(sbIn);
   IRTemp go = new_temp(sb, Ity_I64);
   IRDirty* d = unsafeIRDirty_1_N(go, 0, "ms_start_fn_enter",
                                  VG_(fnptr_to_fnentry)(&ms_start_fn_enter), mkIRExprVec_0());
   fx_discard(d);
   addStmtToIRSB(sb, IRStmt_Dirty(d));
   IRTemp started = assign(sb, Ity_I1, IRExpr_Binop(Iop_CmpNE64, rd(go), u64(0)));
   addStmtToIRSB(sb, IRStmt_Exit(rd(started), Ijk_InvalICache, IRConst_U64(entry), layout->offset_IP));
   for (Int i = 0; i < sbIn->stmts_used; i++)
      addStmtToIRSB(sb, sbIn->stmts[i]);
   return sb;
}

/* Upper bound of the references a superblock makes (a gap counts them). */
static ULong count_refs(IRSB* sb)
{
   ULong n = count_data(sb);
   if (clo_ifetch)
      for (Int i = 0; i < sb->stmts_used; i++)
         n += sb->stmts[i]->tag == Ist_IMark;
   return n;
}

/* Emits the count of a superblock's references into ms_refs: counted
   (c0 plus n, masked by mask: all ones when counting, else 0), if guard
   (NULL: always) holds, else c0 again (a later store counts them). Returns
   the temp holding the count. */
static IRTemp count_refs_ir(IRSB* sb, IRTemp c0, IRTemp mask, ULong n, IRExpr* guard)
{
   IRTemp add = assign(sb, Ity_I64, IRExpr_Binop(Iop_And64, u64(n), rd(mask)));
   IRTemp c = assign(sb, Ity_I64, IRExpr_Binop(Iop_Add64, rd(c0), rd(add)));
   IRTemp v = c;
   if (guard != NULL)
      v = assign(sb, Ity_I64, IRExpr_ITE(guard, rd(c), rd(c0)));
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, u64((ULong)(Addr)&ms_refs), rd(v)));
   return c;
}

/* Emits a flush of the buffer when fewer than `words` words are free, and
   returns a temp holding the buffer position after it. */
static IRTemp reserve(IRSB* sb, ULong words)
{
   IRTemp p0 = assign(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(Addr)&buf_pos)));
   /* A record longer than buf_limit flushes whatever precedes it. */
   ULong room = words < buf_limit ? buf_limit - words : 0;
   IRTemp full = assign(sb, Ity_I1, IRExpr_Binop(Iop_CmpLT64U, u64(room), rd(p0)));
   IRDirty* d = unsafeIRDirty_0_N(0, "ms_flush", VG_(fnptr_to_fnentry)(&ms_flush), mkIRExprVec_0());
   d->guard = rd(full);
   d->mFx = Ifx_Modify;
   d->mAddr = u64((ULong)(Addr)&buf_pos);
   d->mSize = 8;
   addStmtToIRSB(sb, IRStmt_Dirty(d));
   return assign(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(Addr)&buf_pos)));
}

/* ------------------------------------------------------------------ */
/* First-level caches (--l1i, --l1d)                                   */
/* ------------------------------------------------------------------ */

/* With --l1d (and --l1i when instruction fetches are traced), the tool
   simulates the machine's first caches itself (ms_l1.c) over each buffer
   it hands memspy: the EXEC and DESCRIBE records give way to BELOW records
   (what those caches send below them, in order) and L1STATS records
   (their counters), written into the output chunks (the ring, or out_own);
   the other records pass as they are. memspy asks for it only when the
   result is the same (sim.Hierarchy.TracerFirstLevels). */
typedef struct {
   Int    index;     /* the cache's index in memspy's machine */
   L1Cache c;
} L1Spec;

static L1Spec l1i, l1d;
static L1Spec* l1_icache;   /* the cache instruction fetches go to (NULL: none) */
static ULong l1_kinds[4];   /* events by kind: read, write, ifetch, modify */

/* Per superblock, its events (entries but exits, calls and returns) in
   order as ops: kind | size << 8 in word, with a derived data entry's
   base (its number among the superblock's data entries) and offset, an
   instruction fetch's PC in off. With a first instruction cache that holds
   no data, a fetch that lies in the line the superblock's previous fetch
   ended in is a hit that changes nothing (nothing else reaches that cache
   in between): it has no op, its exits count it (L1Exit.fetch_hits).
   An EXEC record's first word is, with the
   caches in the tool, the address of the L1Exit of the superblock's exit it
   took (its top 4 bits, the record type, are 0: no record of the stream):
   l1_exec finds everything there without looking the superblock up. A
   superblock's L1Exits and its ops are one block (l1_begin), so that an
   execution reads a line or two of them. */
typedef struct {
   UInt  word;
   UShort base;     /* DIRECT: the address comes from the record */
   UShort entry;    /* its index among the superblock's entries (--l1-notes) */
   ULong off;
} L1Op;
#define DIRECT 0xffffU

typedef struct {
   const L1Op* ops;    /* the superblock's */
   ULong head;         /* the first word of the stream's EXEC records that take it (--l1-notes) */
   UShort nops;        /* the ops that run before the exit */
   UShort words;       /* the length of an EXEC record that takes it */
   UShort events[4];   /* the events before the exit, by kind: read, write, ifetch, modify */
   UShort fetch_hits;  /* the fetches among them that have no op */
   UShort final;       /* 2: the record ends with a call's or return's two words, else 0 */
} L1Exit;

/* The counts of l1_exec's executions since l1_filter last added them to
   l1_kinds and the instruction cache's accesses. */
typedef struct {
   ULong events[4], fetch_hits;
} L1Counts;

/* Blocks are never freed (superblock ids are never reused): they come
   from pools of L1_POOL bytes. */
#define L1_POOL (1 << 20)
static UChar*  l1_pool;
static SizeT   l1_pool_left;
static L1Exit* cur_exits;    /* the superblock being instrumented's */
static UInt    max_exits;
static L1Op*   cur_ops;
static UInt    max_ops;
static ULong* l1_addr;       /* scratch: the data addresses of one EXEC */
static ULong  cap_l1_addr;
static ULong  below_flags;   /* of the BELOW records written: REC_TENTATIVE, or 0 */
/* --l1-notes: the notes of the EXEC being simulated (l1_note) and the
   entry its current access is for. */
static ULong* l1_notes_buf;
static ULong  l1_notes_words, l1_notes_count, cap_l1_notes;
static UInt   l1_entry;

/* Parses --l1i / --l1d's INDEX,SETS,ASSOC,LINE,lru|fifo,wb|wt,wa|nwa. */
static void l1_option(const HChar* opt, const HChar* v, L1Spec* sp)
{
   ULong n[4];
   const HChar* p = v;
   for (Int k = 0; k < 4; k++) {
      HChar* e;
      n[k] = VG_(strtoull10)(p, &e);
      if (e == p || *e != ',')
         VG_(fmsg_bad_option)(opt, "want INDEX,SETS,ASSOC,LINE,lru|fifo,wb|wt,wa|nwa\n");
      p = e + 1;
   }
   HChar pol[8], wr[8], al[8];
   HChar* parts[3] = { pol, wr, al };
   for (Int j = 0; j < 3; j++) {
      Int k = 0;
      while (*p && *p != ',' && k < 7)
         parts[j][k++] = *p++;
      parts[j][k] = 0;
      if (*p == ',')
         p++;
   }
   Bool fifo = VG_(strcmp)(pol, "fifo") == 0, wb = VG_(strcmp)(wr, "wb") == 0, wa = VG_(strcmp)(al, "wa") == 0;
   if ((!fifo && VG_(strcmp)(pol, "lru") != 0) || (!wb && VG_(strcmp)(wr, "wt") != 0) ||
       (!wa && VG_(strcmp)(al, "nwa") != 0) || *p != 0)
      VG_(fmsg_bad_option)(opt, "want INDEX,SETS,ASSOC,LINE,lru|fifo,wb|wt,wa|nwa\n");
   ULong sets = n[1], assoc = n[2], line = n[3];
   if (sets == 0 || assoc == 0 || line < 4 || (line & (line - 1)) != 0 || sets * assoc > (1ULL << 24))
      VG_(fmsg_bad_option)(opt, "sets and ways of at most 2^24 lines, a power-of-two line of at least 4 bytes\n");
   sp->index = (Int)n[0];
   L1Word* ways = VG_(malloc)("memspy.l1", sets * assoc * sizeof(L1Word));
   l1_init(&sp->c, sets, assoc, line, fifo, wb, wa, ways);
}

static ULong count_data(IRSB* sb);

/* Makes the block of the superblock sbIn about to be instrumented, with
   room for as many exits and ops as it may have. */
static void l1_begin(IRSB* sbIn)
{
   max_exits = 1;
   max_ops = (UInt)count_data(sbIn);
   for (Int i = 0; i < sbIn->stmts_used; i++) {
      max_exits += sbIn->stmts[i]->tag == Ist_Exit;
      max_ops += sbIn->stmts[i]->tag == Ist_IMark;
   }
   SizeT size = max_exits * sizeof(L1Exit) + max_ops * sizeof(L1Op);
   size = (size + 15) & ~(SizeT)15;
   if (size > l1_pool_left) {
      SizeT n = size > L1_POOL ? size : L1_POOL;
      l1_pool = VG_(malloc)("memspy.l1pool", n);
      l1_pool_left = n;
   }
   cur_exits = (L1Exit*)l1_pool;
   cur_ops = (L1Op*)(cur_exits + max_exits);
   l1_pool += size;
   l1_pool_left -= size;
   tl_assert((ULong)(Addr)cur_exits >> 60 == 0);
}

/* Returns the first word of the EXEC records of exit e of the superblock
   being instrumented: the address of its L1Exit, which l1_remember fills
   in. */
static ULong l1_exit_word(UInt e)
{
   tl_assert(e < max_exits);
   return (ULong)(Addr)&cur_exits[e];
}

/* Records the ops of the superblock being instrumented, of entries
   e[0..n), in its block. */
static void l1_remember(ULong id, const Entry* e, Int n)
{
   Bool fold = l1_icache != NULL && l1_icache != &l1d;
   ULong shift = fold ? l1_icache->c.shift : 0;
   ULong last_line = 0, words = 1;
   UInt nops = 0, events[4] = { 0, 0, 0, 0 }, hits = 0;
   Bool fetched = False;   /* last_line: the line the previous fetch ended in */
   ULong data = 0;
   UInt exit = 0;
   for (Int k = 0; k <= n; k++) {
      UInt kind = k < n ? (UInt)(e[k].word & 0xff) : K_EXIT;
      if (kind == K_EXIT) {
         tl_assert(nops < 65536 && words < 65536 && events[2] < 65536 && events[0] + events[1] + events[3] < 65536);
         L1Exit* x = &cur_exits[exit];
         x->head = (REC_EXEC << 60) | (id << 16) | exit;
         x->final = 0;
         exit++;
         x->nops = (UShort)nops;
         x->words = (UShort)words;
         x->ops = cur_ops;
         for (Int j = 0; j < 4; j++)
            x->events[j] = (UShort)events[j];
         x->fetch_hits = (UShort)hits;
         continue;
      }
      if (kind == K_CALL || kind == K_RETURN) {
         words += 2;   /* the target and the stack pointer */
         continue;
      }
      tl_assert(k < 65536);
      events[kind == K_ATOMIC ? K_MODIFY : kind]++;
      if (kind != K_IFETCH && !(e[k].word & ENT_DERIVED))
         words++;
      UInt size = (UInt)(e[k].word >> 8) & 0xffffff;
      if (kind == K_IFETCH && fold) {
         Addr lo = e[k].pc, hi = e[k].pc + (size ? size - 1 : 0);
         Bool hit = fetched && lo >> shift == last_line && hi >> shift == last_line;
         last_line = hi >> shift;
         fetched = True;
         if (hit) {
            hits++;
            continue;
         }
      }
      tl_assert(nops < max_ops);
      L1Op* op = &cur_ops[nops++];
      op->word = (UInt)(e[k].word & 0xffffffffULL);
      op->base = DIRECT;
      op->entry = (UShort)k;
      op->off = e[k].pc;
      if (kind != K_IFETCH) {
         if (e[k].word & ENT_DERIVED) {
            tl_assert((e[k].word >> ENT_BASE_SHIFT) < DIRECT);
            op->base = (UShort)(e[k].word >> ENT_BASE_SHIFT);
            op->off = e[k].off;
         }
         data++;
      }
   }
   tl_assert(exit <= max_exits);
   if (n > 0 && ((e[n - 1].word & 0xff) == K_CALL || (e[n - 1].word & 0xff) == K_RETURN))
      cur_exits[exit - 1].final = 2;   /* the end: its record carries the target and stack pointer */
   if (data > cap_l1_addr) {
      cap_l1_addr = 2 * data;
      l1_addr = VG_(realloc)("memspy.l1addr", l1_addr, cap_l1_addr * sizeof(ULong));
   }
}

/* Hands the output chunk over, closing its BELOW record. */
static void out_send(void)
{
   below_at = ~0ULL;
   if (out_pos > 0)
      hand_over(&out, out_pos);
   out_pos = 0;
}

static void out_room(ULong words)
{
   if (out_pos + words > BUF_WORDS)
      out_send();
}

/* l1_emit (ms_l1.h): a request below the first-level caches, into the
   open BELOW record (a new one when there is none, or it would cross the
   chunk). A whole line of the cache that sends it is one word, its address
   | kind; another write (a write-through) two: 3 | size << 2, then the
   address. */
void l1_emit(const L1Cache* c, unsigned kind, L1Word a, L1Word size)
{
   ULong words = (a & (c->line - 1)) == 0 && size == c->line ? 1 : 2;
   if (below_at == ~0ULL || out_pos + words > BUF_WORDS) {
      out_room(1 + words);
      below_at = out_pos;
      out[out_pos++] = (REC_BELOW << 60) | below_flags;
   }
   if (words == 1) {
      out[out_pos++] = a | kind;
   } else {
      out[out_pos++] = 3 | size << 2;
      out[out_pos++] = a;
   }
   out[below_at] += words;
}

/* Writes an L1STATS record of the counters; with flush, of the counters
   the end-of-trace flush (whose write-backs it sends first) leaves. */
static void l1_stats(Bool flush)
{
   L1Spec* cs[2] = { l1_icache, &l1d };
   Int n = l1_icache == NULL || l1_icache == &l1d ? 1 : 2;
   if (n == 1)
      cs[0] = &l1d;
   else if (l1i.index > l1d.index) {
      cs[0] = &l1d;   /* machine order, as memspy's flush goes */
      cs[1] = &l1i;
   }
   ULong wb[2], tb[2];
   for (Int k = 0; k < n; k++) {
      wb[k] = cs[k]->c.writebacks;
      tb[k] = cs[k]->c.to_below;
      if (flush)
         l1_flush(&cs[k]->c, &wb[k], &tb[k]);
   }
   ULong words = 4 + 11 * (ULong)n;
   out_room(1 + words);
   below_at = ~0ULL;
   out[out_pos++] = (REC_L1STATS << 60) | below_flags | words;
   for (Int k = 0; k < 4; k++)
      out[out_pos++] = l1_kinds[k];
   for (Int k = 0; k < n; k++) {
      L1Cache* c = &cs[k]->c;
      out[out_pos++] = cs[k]->index;
      for (Int j = 0; j < 3; j++)
         out[out_pos++] = c->acc[j];
      for (Int j = 0; j < 3; j++)
         out[out_pos++] = c->miss[j];
      out[out_pos++] = c->evictions;
      out[out_pos++] = wb[k];
      out[out_pos++] = c->from_below;
      out[out_pos++] = tb[k];
   }
}

/* l1_note (ms_l1.h), with --l1-notes: an access memspy simulates, of the
   current entry (l1_entry), noted for the EXEC record being simulated:
   flags | kind << 4 | size << 8 | entry << 32, then the address, then the
   victim's address if there is one. */
void l1_note(const L1Cache* c, unsigned kind, L1Word pa, L1Word ps, unsigned flags, L1Word victim)
{
   if (l1_notes_words + 3 > cap_l1_notes) {
      cap_l1_notes = 2 * cap_l1_notes + 64;
      l1_notes_buf = VG_(realloc)("memspy.l1notes", l1_notes_buf, cap_l1_notes * sizeof(ULong));
   }
   l1_notes_buf[l1_notes_words++] = flags | kind << 4 | ps << 8 | (ULong)l1_entry << 32;
   l1_notes_buf[l1_notes_words++] = pa;
   if (flags & L1N_VICTIM)
      l1_notes_buf[l1_notes_words++] = victim;
   l1_notes_count++;
}

/* Writes the stream's record of the EXEC at p, which took exit x and was
   just simulated with --l1-notes: an EXEC record without addresses, or
   an EXECL1 record with the notes taken. */
static void l1_record(const L1Exit* x, const ULong* p)
{
   ULong fin = x->final, nw = l1_notes_words;
   below_at = ~0ULL;
   if (l1_notes_count == 0) {
      out_room(1 + fin);
      out[out_pos++] = x->head;
   } else {
      tl_assert(2 + fin + nw <= BUF_WORDS);
      out_room(2 + fin + nw);
      out[out_pos++] = (x->head & ~(0xfULL << 60)) | (REC_EXECL1 << 60);
      out[out_pos++] = l1_notes_count | nw << 32;
   }
   if (fin) {
      out[out_pos++] = p[x->words - 2];
      out[out_pos++] = p[x->words - 1];
   }
   for (ULong k = 0; k < nw; k++)
      out[out_pos++] = l1_notes_buf[k];
   l1_notes_words = l1_notes_count = 0;
}

/* Simulates the EXEC record at p, which took exit x, through the
   first-level caches, counts it in n and returns its length in words. */
static inline ULong l1_exec(const L1Exit* x, const ULong* p, L1Counts* n, const Bool notes)
{
   UInt nops = x->nops;
   const L1Op* op = x->ops;
   const ULong* words = p + 1;
   ULong d = 0;
   n->events[0] += x->events[0];
   n->events[1] += x->events[1];
   n->events[2] += x->events[2];
   n->events[3] += x->events[3];
   n->fetch_hits += x->fetch_hits;
   for (UInt k = 0; k < nops; k++, op++) {
      UInt kind = op->word & 0xff, size = op->word >> 8;
      if (notes)
         l1_entry = op->entry;
      if (kind == K_IFETCH) {
         if (l1_icache != NULL)
            l1_access(&l1_icache->c, L1_IFETCH, op->off, size);
         continue;
      }
      ULong a = op->base == DIRECT ? *words++ : l1_addr[op->base] + op->off;
      l1_addr[d++] = a;
      switch (kind) {
      case K_READ:
         l1_access(&l1d.c, L1_READ, a, size);
         break;
      case K_WRITE:
         l1_access(&l1d.c, L1_WRITE, a, size);
         break;
      default:   /* a modify or an atomic: a read, then a write */
         l1_access(&l1d.c, L1_READ, a, size);
         l1_access(&l1d.c, L1_WRITE, a, size);
         break;
      }
   }
   if (notes)
      l1_record(x, p);
   return x->words;
}

/* Zeroes the counters (a reset marker; a forked child's new stream also
   empties the caches). */
static void l1_reset(Bool empty)
{
   for (Int k = 0; k < 4; k++)
      l1_kinds[k] = 0;
   L1Spec* cs[2] = { &l1i, &l1d };
   for (Int k = 0; k < 2; k++) {
      if (cs[k]->c.ways == NULL)
         continue;
      if (empty)
         l1_clear(&cs[k]->c);
      else
         l1_zero(&cs[k]->c);
   }
}

/* Adds the counts of executions in c to l1_kinds and the instruction
   cache's accesses, and zeroes c. */
static void l1_count(L1Counts* c)
{
   for (Int k = 0; k < 4; k++)
      l1_kinds[k] += c->events[k];
   if (l1_icache != NULL)
      l1_icache->c.acc[L1_IFETCH] += c->fetch_hits;
   *c = (L1Counts){ { 0, 0, 0, 0 }, 0 };
}

/* send_buf with the first-level caches: simulates the first n words of
   buf and writes the rest of its records and what the caches send below
   them into the output chunk, which memspy gets when it is full, FLUSH_MS
   after the last words it got, and at once at a PROC or END record.
   Before a reset or dump marker come the counters; before an exec,
   tentatively, the end-of-trace flush and the counters after it (the exec
   may fail); before END, the flush and the counters, then END in a chunk
   of its own. */
static void l1_filter(ULong n)
{
   ULong i = 0;
   Bool now = False;     /* hand the output over now */
   Bool ended = False;   /* END was copied: it stays alone in its chunk */
   L1Counts c = { { 0, 0, 0, 0 }, 0 };
   while (i < n) {
      ULong w = buf[i], type = w >> 60;
      if (type == 0) {
         if (l1_notes)
            i += l1_exec((const L1Exit*)(Addr)w, &buf[i], &c, True);
         else
            i += l1_exec((const L1Exit*)(Addr)w, &buf[i], &c, False);
         continue;
      }
      l1_count(&c);
      ULong len = record_len(&buf[i]);
      switch (type) {
      case REC_MARK:
         if ((w & 0xffff) == MEMSPY_MARK_RESET || (w & 0xffff) == MEMSPY_MARK_DUMP)
            l1_stats(False);
         break;
      case REC_PROC:
         now = True;
         if ((w & 0xffff) == PROC_EXEC) {
            below_flags = REC_TENTATIVE;
            below_at = ~0ULL;
            l1_stats(True);
            below_flags = 0;
            below_at = ~0ULL;
         }
         break;
      case REC_END:
         below_at = ~0ULL;
         l1_stats(True);
         out_send();
         now = ended = True;
         break;
      }
      below_at = ~0ULL;
      out_room(len);
      for (ULong k = 0; k < len; k++)
         out[out_pos++] = buf[i + k];
      if (type == REC_MARK && (w & 0xffff) == MEMSPY_MARK_RESET)
         l1_reset(False);
      i += len;
   }
   l1_count(&c);
   if (now || VG_(read_millisecond_timer)() - last_hand_ms >= FLUSH_MS) {
      /* The counters so far go with every chunk handed over on time: a
         stream cut short (the program killed) has them up to there. */
      if (out_pos > 0 && !ended)
         l1_stats(False);
      out_send();
   }
}

/* Writes the DESCRIBE record of superblock id, of entries e[0..n). */
static void describe(ULong id, const Entry* e, Int n)
{
   if (clo_max_events > 0)
      remember_exits(id, e, n);
   if (l1_on) {
      l1_remember(id, e, n);
      if (!l1_notes)
         return;   /* no DESCRIBE record: no EXEC record leaves the tool */
   }
   ULong derived = 0;
   for (Int k = 0; k < n; k++)
      derived += (e[k].word & ENT_DERIVED) != 0;
   ensure_room(2 + 2 * (ULong)n + derived);
   buf[buf_pos++] = (REC_DESCRIBE << 60) | (id << 16);
   buf[buf_pos++] = (ULong)n | derived << 32;
   for (Int k = 0; k < n; k++) {
      buf[buf_pos++] = e[k].word;
      buf[buf_pos++] = e[k].pc;
   }
   for (Int k = 0; k < n; k++)
      if (e[k].word & ENT_DERIVED)
         buf[buf_pos++] = e[k].off;
}

/* In a gap translation: emits the records of an atomic (one address word:
   addr) or of the final call or return (target and stack pointer: addr,
   sp), described as a superblock of that entry alone, after a SKIP record
   of the references counted since the last one (cur: the count so far,
   which the atomic's reference joins). They are written when counting
   (rec), so that every event of a gap comes at its exact place. */
static void gap_record(IRSB* sb, IRTemp rec, IRExpr* cur, UInt kind, UInt size, Addr pc,
                       IRExpr* addr, IRExpr* sp)
{
   ULong id = next_sb_id++;
   Entry e = { (ULong)kind | ((ULong)size << 8), pc, 0 };
   describe(id, &e, 1);
   ULong words = kind == K_ATOMIC ? 3 : 4;
   IRTemp pos = reserve(sb, words);
   IRTemp off3 = assign(sb, Ity_I64, IRExpr_Binop(Iop_Shl64, rd(pos), IRExpr_Const(IRConst_U8(3))));
   IRTemp start = assign(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(Addr)&buf)));
   IRTemp base = assign(sb, Ity_I64, IRExpr_Binop(Iop_Add64, rd(start), rd(off3)));
   IRTemp c = assign(sb, Ity_I64, cur);
   IRTemp sb0 = assign(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(Addr)&skip_base)));
   IRTemp n = assign(sb, Ity_I64, IRExpr_Binop(Iop_Sub64, rd(c), rd(sb0)));
   IRTemp skip = assign(sb, Ity_I64, IRExpr_Binop(Iop_Or64, u64(REC_SKIP << 60), rd(n)));
   store_slot(sb, base, 0, rd(skip));
   store_slot(sb, base, 1, u64((REC_EXEC << 60) | (id << 16)));
   store_slot(sb, base, 2, addr);
   IRTemp after = c;
   if (kind == K_ATOMIC)
      after = assign(sb, Ity_I64, IRExpr_Binop(Iop_Add64, rd(c), u64(1)));
   else
      store_slot(sb, base, 3, sp);
   IRTemp nb = assign(sb, Ity_I64, IRExpr_ITE(rd(rec), rd(after), rd(sb0)));
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, u64((ULong)(Addr)&skip_base), rd(nb)));
   IRTemp adv = assign(sb, Ity_I64, IRExpr_Binop(Iop_Add64, rd(pos), u64(words)));
   IRTemp np = assign(sb, Ity_I64, IRExpr_ITE(rd(rec), rd(adv), rd(pos)));
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, u64((ULong)(Addr)&buf_pos), rd(np)));
}

/* The guest addresses that Valgrind redirects (functions the preload wraps
   or replaces), from the translations made for them. A translation of such
   an address from the address itself is a no-redirect one: a wrapper
   calling the original function (CALL_FN_*). */
static VgHashTable* redirected;

/* Whether the translation asked for by closure is a no-redirect one. Such
   a translation cannot leave to be made again: Valgrind would run its
   address redirected, into the wrapper, which would then run twice (and
   report its synchronization twice). */
static Bool is_noredir(const VgCallbackClosure* closure)
{
   if (closure->readdr != closure->nraddr) {
      if (VG_(HT_lookup)(redirected, closure->nraddr) == NULL) {
         VgHashNode* n = VG_(malloc)("memspy.redirected", sizeof(VgHashNode));
         n->key = closure->nraddr;
         VG_(HT_add_node)(redirected, n);
      }
      return False;
   }
   return VG_(HT_lookup)(redirected, closure->nraddr) != NULL;
}

static IRSB* ms_instrument(VgCallbackClosure* closure, IRSB* sbIn,
                           const VexGuestLayout* layout,
                           const VexGuestExtents* vge,
                           const VexArchInfo* archinfo_host,
                           IRType gWordTy, IRType hWordTy)
{
   if (gWordTy != Ity_I64 || hWordTy != Ity_I64)
      VG_(tool_panic)("memspy: only 64-bit guests are supported");
   Addr entry = vge->base[0];
   Bool noredir = is_noredir(closure);   /* in every mode: it learns the redirections */
   /* Objects are reported before any code in them runs, in every mode. */
   report_maps();
   if (ms_mode == MODE_OFF) {
      if (start_pending && !limit_reached && !client_stopped && is_entry_of(entry, clo_start_fn))
         return start_fn_trigger(sbIn, layout, entry);
      return sbIn;
   }
   /* The preload's code records no reference (only its calls and
      returns). */
   Bool quiet = entry >= quiet_lo && entry < quiet_hi;
   /* A gap translation counts references instead of recording them; with
      time sampling, recording ones count them too. */
   Bool gap = IS_GAP(ms_mode);
   Bool counts = gap || clo_sample_period > 0;

   IRSB* sb = deepCopyIRSBExceptStmts(sbIn);
   Int i = 0;
   /* The preamble before the first instruction mark stays first. */
   for (; i < sbIn->stmts_used && sbIn->stmts[i]->tag != Ist_IMark; i++)
      addStmtToIRSB(sb, sbIn->stmts[i]);

   IRExpr* rsp = IRExpr_Get(offsetof(VexGuestAMD64State, guest_RSP), Ity_I64);
   /* Functions watched by name are noticed at their entry (again if the
      superblock leaves below and runs again: the helpers know). */
   if (is_entry_of(entry, clo_trace_fn)) {
      IRTemp sp = assign(sb, Ity_I64, rsp);
      call_helper(sb, "ms_trace_fn_enter", &ms_trace_fn_enter, mkIRExprVec_1(rd(sp)), NULL);
   }
   if (is_entry_of(entry, clo_timestep_fn)) {
      IRTemp sp = assign(sb, Ity_I64, rsp);
      call_helper(sb, "ms_timestep_fn_enter", &ms_timestep_fn_enter, mkIRExprVec_1(rd(sp)), NULL);
   }
   Int afn = alloc_fn_at(entry);
   if (afn >= 0) {
      /* The unwinder reads the guest IP: make it exact. */
      addStmtToIRSB(sb, IRStmt_Put(layout->offset_IP, u64(entry)));
      IRTemp sp = assign(sb, Ity_I64, rsp);
      IRTemp fp = assign(sb, Ity_I64, IRExpr_Get(offsetof(VexGuestAMD64State, guest_RBP), Ity_I64));
      IRTemp size = alloc_fns[afn].size32
         ? assign(sb, Ity_I64, IRExpr_Unop(Iop_32Uto64, rd(assign(sb, Ity_I32, IRExpr_Get(alloc_fns[afn].size_off, Ity_I32)))))
         : assign(sb, Ity_I64, IRExpr_Get(alloc_fns[afn].size_off, Ity_I64));
      IRExpr* type = u64(0);
      if (alloc_fns[afn].typed)
         type = rd(assign(sb, Ity_I64, IRExpr_Get(offsetof(VexGuestAMD64State, guest_RBX), Ity_I64)));
      IRDirty* d = call_helper(sb, "ms_alloc_fn_enter", &ms_alloc_fn_enter,
                               mkIRExprVec_5(u64(afn), rd(size), rd(sp), rd(fp), type), NULL);
      fx_state(d, Ifx_Read, layout->offset_IP);
      fx_state(d, Ifx_Read, layout->offset_SP);
      fx_state(d, Ifx_Read, layout->offset_FP);
   }

   /* When the mode is not of this translation's kind (OFF, or a gap
      beginning or ending), or time sampling passed ms_until, leave at
      once, discarding every translation. */
   IRTemp mode = assign(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(Addr)&ms_mode)));
   IRTemp other;
   if (gap) {
      IRTemp kind = assign(sb, Ity_I64, IRExpr_Binop(Iop_And64, rd(mode), u64(~1ULL)));
      other = assign(sb, Ity_I1, IRExpr_Binop(Iop_CmpNE64, rd(kind), u64(MODE_GAP)));
   } else {
      other = assign(sb, Ity_I1, IRExpr_Binop(Iop_CmpLT64U, u64(MODE_PAUSED), rd(mode)));
   }
   IRTemp leave = other;
   IRTemp c0 = IRTemp_INVALID;
   IRExpr* reach = u64(0);
   if (counts) {
      c0 = assign(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(Addr)&ms_refs)));
      if (clo_sample_period > 0) {
         IRTemp r = c0;
         if (gap)
            r = assign(sb, Ity_I64, IRExpr_Binop(Iop_Add64, rd(c0), u64(count_refs(sbIn))));
         IRTemp until = assign(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(Addr)&ms_until)));
         IRTemp over = assign(sb, Ity_I1, IRExpr_Binop(Iop_CmpLT64U, rd(until), rd(r)));
         leave = assign(sb, Ity_I1, IRExpr_Binop(Iop_Or1, rd(other), rd(over)));
         reach = rd(r);
      }
   }
   if (!noredir) {
      fx_discard(call_helper(sb, "ms_leave", &ms_leave, mkIRExprVec_1(reach), rd(leave)));
      addStmtToIRSB(sb, IRStmt_Exit(rd(leave), Ijk_InvalICache, IRConst_U64(entry), layout->offset_IP));
   }
   /* A no-redirect translation runs on when the mode is not its kind: it
      records (or counts) nothing then, and the superblocks after it
      leave. */
   /* Recording (or counting, in a gap): not paused. */
   IRTemp rec = assign(sb, Ity_I1, IRExpr_Binop(Iop_CmpEQ64, rd(mode), u64(gap ? MODE_GAP : MODE_RECORD)));
   IRTemp mask = IRTemp_INVALID;
   if (counts) {
      IRTemp one = assign(sb, Ity_I64, IRExpr_Unop(Iop_1Uto64, rd(rec)));
      mask = assign(sb, Ity_I64, IRExpr_Binop(Iop_Sub64, u64(0), rd(one)));
   }

   ULong id = gap ? 0 : next_sb_id++;   /* a gap describes its records one by one */
   n_ents = 0;
   if (l1_on)
      l1_begin(sbIn);   /* never in a gap: no sampling with the caches in the tool */

   /* Reserve room for the record: flush first if the buffer is nearly
      full. */
   IRTemp pos = IRTemp_INVALID, base = IRTemp_INVALID;
   if (!gap) {
      pos = reserve(sb, 3 + count_data(sbIn));
      IRTemp off3 = assign(sb, Ity_I64, IRExpr_Binop(Iop_Shl64, rd(pos), IRExpr_Const(IRConst_U8(3))));
      IRTemp start = assign(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(Addr)&buf)));
      base = assign(sb, Ity_I64, IRExpr_Binop(Iop_Add64, rd(start), rd(off3)));
   }

   reset_forms(sbIn->tyenv->types_used);
   if (clo_no_stack && sbIn->tyenv->types_used > cap_stackish) {
      cap_stackish = 2 * sbIn->tyenv->types_used;
      stackish = VG_(realloc)("memspy.stackish", stackish, cap_stackish * sizeof(Bool));
   }

   ULong n_data = 0;          /* data entries so far */
   ULong n_words = 0;         /* address words so far */
   ULong n_refs = 0;          /* references (events for the gate) so far */
   UInt  n_exit = 0;
   Addr  pc = 0;
   Int   last_read = -1;      /* entry of the last read of this instruction */
   IRExpr* last_read_addr = NULL;

   for (; i < sbIn->stmts_used; i++) {
      IRStmt* st = sbIn->stmts[i];
      IRExpr* addr = NULL;
      UInt size = 0, kind = K_READ;
      if (clo_no_stack)
         note_stackish(sbIn, st);
      note_form(sbIn, st);
      switch (st->tag) {
      case Ist_IMark:
         pc = st->Ist.IMark.addr;
         if (clo_ifetch && !quiet) {
            add_entry(K_IFETCH, st->Ist.IMark.len, pc);
            n_refs++;
         }
         last_read = -1;
         break;
      case Ist_WrTmp:
         if (st->Ist.WrTmp.data->tag == Iex_Load) {
            addr = st->Ist.WrTmp.data->Iex.Load.addr;
            size = sizeofIRType(st->Ist.WrTmp.data->Iex.Load.ty);
            kind = K_READ;
         }
         break;
      case Ist_Store:
         addr = st->Ist.Store.addr;
         size = sizeofIRType(typeOfIRExpr(sbIn->tyenv, st->Ist.Store.data));
         kind = K_WRITE;
         break;
      case Ist_LoadG:
         addr = st->Ist.LoadG.details->addr;
         size = loadg_size(st->Ist.LoadG.details->cvt);
         kind = K_READ;
         break;
      case Ist_StoreG:
         addr = st->Ist.StoreG.details->addr;
         size = sizeofIRType(typeOfIRExpr(sbIn->tyenv, st->Ist.StoreG.details->data));
         kind = K_WRITE;
         break;
      case Ist_CAS: {
         IRCAS* cas = st->Ist.CAS.details;
         addr = cas->addr;
         size = sizeofIRType(typeOfIRExpr(sbIn->tyenv, cas->dataLo));
         if (cas->dataHi != NULL)
            size *= 2;
         kind = K_ATOMIC;
         break;
      }
      case Ist_LLSC:
         addr = st->Ist.LLSC.addr;
         if (st->Ist.LLSC.storedata == NULL) {
            size = sizeofIRType(typeOfIRTemp(sbIn->tyenv, st->Ist.LLSC.result));
            kind = K_READ;
         } else {
            size = sizeofIRType(typeOfIRExpr(sbIn->tyenv, st->Ist.LLSC.storedata));
            kind = K_WRITE;
         }
         break;
      case Ist_Dirty: {
         IRDirty* dd = st->Ist.Dirty.details;
         if (dd->mFx != Ifx_None) {
            addr = dd->mAddr;
            size = dd->mSize;
            kind = dd->mFx == Ifx_Read ? K_READ : dd->mFx == Ifx_Write ? K_WRITE : K_MODIFY;
         }
         break;
      }
      case Ist_Exit:
         if (!gap)
            close_record(sb, base, pos, rec, id, n_exit, n_words);
         if (counts)
            count_refs_ir(sb, c0, mask, n_refs, st->Ist.Exit.guard);
         add_entry(K_EXIT, 0, pc);
         n_exit++;
         last_read = -1;
         break;
      default:
         break;
      }
      if (addr != NULL && (quiet || (clo_no_stack && is_stack_addr(addr))))
         addr = NULL;
      if (addr != NULL) {
         if (kind == K_WRITE && last_read >= 0 && ((ents[last_read].word >> 8) & 0xffffff) == size &&
             eqIRAtom(last_read_addr, addr)) {
            /* A write of what this instruction just read: a modify. */
            ents[last_read].word = (ents[last_read].word & ~0xffULL) | K_MODIFY;
            last_read = -1;
         } else {
            if (gap && kind == K_ATOMIC) {
               /* Its sync event and modify are delivered, at their place. */
               IRTemp a = assign(sb, Ity_I64, IRExpr_Binop(Iop_And64, u64(n_refs), rd(mask)));
               gap_record(sb, rec, IRExpr_Binop(Iop_Add64, rd(c0), rd(a)), K_ATOMIC, size, pc, addr, NULL);
            }
            ULong b = 0, off = 0;
            Bool derived = !gap && clo_derive && derive(n_data, addr, &b, &off);
            n_data++;
            n_refs++;
            if (!gap && !derived)
               store_slot(sb, base, ++n_words, addr);
            add_entry(kind, size, pc);
            if (derived) {
               ents[n_ents - 1].word |= ENT_DERIVED | b << ENT_BASE_SHIFT;
               ents[n_ents - 1].off = off;
            }
            last_read = kind == K_READ ? n_ents - 1 : -1;
            last_read_addr = addr;
         }
      }
      addStmtToIRSB(sb, st);
   }

   IRTemp count = IRTemp_INVALID;
   if (counts)
      count = count_refs_ir(sb, c0, mask, n_refs, NULL);

   /* A superblock that ends in a call or a return records where control
      goes and the stack pointer. */
   Bool is_call = sbIn->jumpkind == Ijk_Call, is_ret = sbIn->jumpkind == Ijk_Ret;
   IRTemp sp_end = IRTemp_INVALID;
   if (is_call || is_ret) {
      sp_end = assign(sb, Ity_I64, rsp);
      if (clo_calls && !gap) {
         add_entry(is_call ? K_CALL : K_RETURN, 0, pc);
         store_slot(sb, base, n_words + 1, sbIn->next);
         store_slot(sb, base, n_words + 2, rd(sp_end));
         n_words += 2;
      }
      if (clo_calls && gap)
         gap_record(sb, rec, rd(count), is_call ? K_CALL : K_RETURN, 0, pc, sbIn->next, rd(sp_end));
   }
   if (!gap)
      close_record(sb, base, pos, rec, id, n_exit, n_words);
   if (is_ret) {
      /* Watched functions that have not returned yet: see whether this
         return leaves them. */
      IRTemp np = assign(sb, Ity_I64, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(Addr)&n_pending)));
      IRTemp any = assign(sb, Ity_I1, IRExpr_Binop(Iop_CmpNE64, rd(np), u64(0)));
      IRTemp rax = assign(sb, Ity_I64, IRExpr_Get(offsetof(VexGuestAMD64State, guest_RAX), Ity_I64));
      call_helper(sb, "ms_return", &ms_return, mkIRExprVec_2(rd(sp_end), rd(rax)), rd(any));
   }

   /* Describe the superblock before any execution of it. */
   if (!gap)
      describe(id, ents, n_ents);
   return sb;
}

/* ------------------------------------------------------------------ */
/* Options, start and end                                              */
/* ------------------------------------------------------------------ */

/* The guest state offset of an integer argument register, by name. */
static Int register_offset(const HChar* r)
{
   static const struct { const HChar* name; Int off; } regs[] = {
      { "rdi", offsetof(VexGuestAMD64State, guest_RDI) },
      { "rsi", offsetof(VexGuestAMD64State, guest_RSI) },
      { "rdx", offsetof(VexGuestAMD64State, guest_RDX) },
      { "rcx", offsetof(VexGuestAMD64State, guest_RCX) },
      { "r8",  offsetof(VexGuestAMD64State, guest_R8) },
      { "r9",  offsetof(VexGuestAMD64State, guest_R9) },
      { "rax", offsetof(VexGuestAMD64State, guest_RAX) },
      { "rbx", offsetof(VexGuestAMD64State, guest_RBX) },
   };
   for (Int k = 0; k < sizeof regs / sizeof regs[0]; k++)
      if (VG_(strcmp)(r, regs[k].name) == 0)
         return regs[k].off;
   return -1;
}

static void add_alloc_fn(const HChar* spec)
{
   if (n_alloc_fns == MAX_FNS) {
      VG_(fmsg_bad_option)("--alloc-fn", "at most %d allocation functions\n", MAX_FNS - 2);
   }
   if (VG_(strlen)(spec) >= MAX_NAME)
      VG_(fmsg_bad_option)("--alloc-fn", "a name of at most %d bytes\n", MAX_NAME - 1);
   HChar* name = VG_(strdup)("memspy.allocfn", spec);
   HChar* colon = VG_(strrchr)(name, ':');
   Int off = offsetof(VexGuestAMD64State, guest_RDI);
   if (colon != NULL && colon != name && colon[-1] != ':') {
      off = register_offset(colon + 1);
      if (off < 0)
         VG_(fmsg_bad_option)(spec, "the size register must be one of rdi rsi rdx rcx r8 r9 rax rbx\n");
      *colon = 0;
   }
   alloc_fns[n_alloc_fns].name = name;
   alloc_fns[n_alloc_fns].size_off = off;
   n_alloc_fns++;
}

static Bool ms_process_cmd_line_option(const HChar* arg)
{
   const HChar* s;
   if VG_INT_CLO(arg, "--out-fd", clo_out_fd) {}
   else if VG_INT_CLO(arg, "--control-fd", clo_control_fd) {}
   else if VG_STR_CLO(arg, "--fifo-dir", clo_fifo_dir) {}
   else if VG_INT_CLO(arg, "--ring-fd", clo_ring_fd) {}
   else if VG_INT_CLO(arg, "--free-fd", clo_free_fd) {}
   else if VG_BOOL_CLO(arg, "--ifetch", clo_ifetch) {}
   else if VG_BINT_CLO(arg, "--max-events", clo_max_events, 0, (1LL << 62)) {}
   else if VG_BINT_CLO(arg, "--max-ms", clo_max_ms, 0, (1LL << 40)) {}
   else if VG_BINT_CLO(arg, "--stack-depth", clo_stack_depth, 0, MAX_STACK_DEPTH) {}
   else if VG_BOOL_CLO(arg, "--no-stack", clo_no_stack) {}
   else if VG_BOOL_CLO(arg, "--calls", clo_calls) {}
   else if VG_BOOL_CLO(arg, "--derive", clo_derive) {}
   else if VG_STR_CLO(arg, "--l1i", s) { l1_option("--l1i", s, &l1i); }
   else if VG_STR_CLO(arg, "--l1d", s) { l1_option("--l1d", s, &l1d); l1_on = True; }
   else if VG_BOOL_CLO(arg, "--l1-notes", l1_notes) {}
   else if VG_BOOL_CLO(arg, "--started", clo_started) {}
   else if VG_STR_CLO(arg, "--start-fn", clo_start_fn) {}
   else if VG_STR_CLO(arg, "--trace-fn", clo_trace_fn) {}
   else if VG_STR_CLO(arg, "--alloc-fn", s) { add_alloc_fn(s); }
   else if VG_BINT_CLO(arg, "--sample-period", clo_sample_period, 1, (1LL << 62)) {}
   else if VG_BINT_CLO(arg, "--sample-length", clo_sample_length, 1, (1LL << 62)) {}
   else if VG_BINT_CLO(arg, "--sample-warmup", clo_sample_warmup, 0, (1LL << 62)) {}
   else if VG_BINT_CLO(arg, "--sample-first", clo_sample_first, 1, (1LL << 62)) {}
   else if VG_STR_CLO(arg, "--sample-seed", s) { clo_sample_seed = VG_(strtoull16)(s, NULL); }
   else if VG_STR_CLO(arg, "--sample-jitter", s) {
      ULong bits = VG_(strtoull16)(s, NULL);
      VG_(memcpy)(&clo_sample_jitter, &bits, sizeof bits);
      if (!(clo_sample_jitter >= 0 && clo_sample_jitter <= 1))
         VG_(fmsg_bad_option)(arg, "the jitter (a double's bits in hex) must lie in [0, 1]\n");
   }
   else if VG_BINT_CLO(arg, "--sample-steps", clo_sample_steps, 1, 1000000000) {}
   else if VG_STR_CLO(arg, "--timestep-fn", clo_timestep_fn) {}
   else
      return False;
   return True;
}

static void ms_print_usage(void)
{
   VG_(printf)(
"    --out-fd=N          write the event stream to file descriptor N [required]\n"
"    --ring-fd=N --free-fd=M  pass the stream's data through the shared memory\n"
"                        N (chunks of 1 MiB) with the chunks handed back on M\n"
"    --fifo-dir=DIR --control-fd=N  follow forked children: each makes the FIFO\n"
"                        DIR/PID, announces PID on N and writes its stream there\n"
"    --ifetch=no|yes     describe instruction fetches [no]\n"
"    --max-events=N      stop tracing soon after N events (0: never) [0]\n"
"    --max-ms=N          stop tracing N milliseconds after the start (0: never) [0]\n"
"    --stack-depth=N     call stack depth of allocations, 1..64 [8]\n"
"    --no-stack=no|yes   drop references through the stack pointer [no]\n"
"    --calls=no|yes      report calls and returns [yes]\n"
"    --derive=no|yes     leave out the address words of data entries whose\n"
"                        addresses follow from earlier ones' [yes]\n"
"    --l1d=INDEX,SETS,ASSOC,LINE,lru|fifo,wb|wt,wa|nwa  simulate the first data\n"
"                        cache (memspy's cache INDEX) in the tool and send only\n"
"                        what it sends below it, and its counters\n"
"    --l1i=...           the same for the first instruction cache (its INDEX\n"
"                        equal to --l1d's: one unified cache)\n"
"    --l1-notes=no|yes   with --l1d: keep the EXEC records, without addresses, and\n"
"                        note the accesses memspy simulates to attribute misses\n"
"    --started=no|yes    trace from the start (no: wait for MEMSPY_START_TRACING) [yes]\n"
"    --start-fn=NAME     start tracing at the first entry of function NAME\n"
"    --trace-fn=NAME     trace only while function NAME is on the stack\n"
"    --alloc-fn=NAME[:REG]  NAME is an allocator: size in REG (default rdi) at\n"
"                        entry, the block's address in rax at return (repeatable)\n"
"    --sample-period=N --sample-length=N [--sample-warmup=N --sample-first=N\n"
"      --sample-jitter=HEX --sample-seed=HEX]  time sampling: record sample k\n"
"                        (references counted from the start, as memspy's\n"
"                        sample.Schedule places it; the first period in N\n"
"                        samples) only; the jitter is a double's bits, the\n"
"                        seed in hex\n"
"    --sample-steps=P    timestep sampling: record the timesteps taken (P parts per\n"
"                        billion of them), nothing outside timesteps\n"
"    --timestep-fn=NAME  a call of NAME is a timestep: write sample markers at its\n"
"                        outermost entry and return\n"
   );
}

static void ms_print_debug_usage(void)
{
   VG_(printf)("    (none)\n");
}

/* SysRes VG_(am_shared_mmap_file_float_valgrind)(...) is in the core but
   not among the tool headers. */
extern SysRes VG_(am_shared_mmap_file_float_valgrind)(SizeT length, UInt prot, Int fd, Off64T offset);

/* --ring-fd: maps the ring, whose size is a multiple of the chunk size. */
static void map_ring(void)
{
   struct vg_stat st;
   SizeT chunk = BUF_WORDS * sizeof(ULong);
   if (clo_free_fd < 0 || VG_(fstat)(clo_ring_fd, &st) != 0 || st.size < 2 * (Long)chunk || st.size % chunk != 0) {
      /* Not memspy's ring (a descriptor gone or reused after an exec):
         the program runs untraced rather than not at all. */
      VG_(umsg)("memspy: --ring-fd needs --free-fd and a file of 2 or more chunks of %lu bytes: not tracing\n", chunk);
      silenced = True;
      return;
   }
   SysRes r = VG_(am_shared_mmap_file_float_valgrind)(st.size, VKI_PROT_READ | VKI_PROT_WRITE, clo_ring_fd, 0);
   if (sr_isError(r)) {
      VG_(umsg)("memspy: cannot map the ring (--ring-fd=%d): not tracing\n", clo_ring_fd);
      silenced = True;
      return;
   }
   ring = (ULong*)sr_Res(r);
   ring_chunks = st.size / chunk;
   ring_cur = 0;
   ring_free = ring_chunks - 1;
   if (l1_on)
      out = ring;   /* the instrumented code fills own_buf */
   else
      buf = ring;
}

static void ms_post_clo_init(void)
{
   if (clo_out_fd < 0) {
      VG_(fmsg)("memspy: --out-fd=N is required; run programs with `memspy run -- PROG`\n");
      VG_(exit)(1);
   }
   /* Calls and returns must end superblocks, and watched functions'
      entries must start them: no chasing (VEX's speculation of "A && B"
      conditions across blocks comes with chasing, and would make the
      instruction marks of a superblock stand for instructions that may
      not run). */
   VG_(clo_vex_control).guest_chase = False;
   add_alloc_fn("runtime.mallocgc:rax");   /* Go (register ABI) */
   alloc_fns[n_alloc_fns - 1].go = True;
   alloc_fns[n_alloc_fns - 1].typed = True;
   add_alloc_fn("runtime.stackalloc:rax"); /* Go's goroutine stacks */
   alloc_fns[n_alloc_fns - 1].go = True;
   alloc_fns[n_alloc_fns - 1].size32 = True;
   calls = VG_(calloc)("memspy.calls", VG_N_THREADS, sizeof(ThreadCalls));
   lives = VG_(calloc)("memspy.lives", VG_N_THREADS, sizeof(ThreadLife));
   os_tids = VG_(calloc)("memspy.os_tids", VG_N_THREADS, sizeof(Int));
   alloc_frames = VG_(calloc)("memspy.allocframes", VG_N_THREADS, sizeof(Addr));
   barriers = VG_(HT_construct)("memspy.barriers");
   strings = VG_(HT_construct)("memspy.strings");
   blocks = VG_(HT_construct)("memspy.blocks");
   mapped = VG_(HT_construct)("memspy.mapped");
   redirected = VG_(HT_construct)("memspy.redirected");
   client_stopped = !clo_started;
   start_pending = clo_start_fn != NULL;
   if (clo_sample_period > 0) {
      if (clo_sample_length == 0 || clo_sample_length > clo_sample_period || clo_sample_steps > 0
          || clo_sample_first > clo_sample_length) {
         VG_(fmsg)("memspy: --sample-period needs --sample-length of at most the period, --sample-first of at most the length, and no --sample-steps\n");
         VG_(exit)(1);
      }
      win = window(0);
      time_rec = MIN_GAP > win.warm;
   }
   t0_ms = VG_(read_millisecond_timer)();

   if (l1_on) {
      buf_limit = L1_BUF_WORDS;
      if (l1i.c.ways != NULL)
         l1_icache = l1i.index == l1d.index ? &l1d : &l1i;
      if (clo_ifetch && l1_icache == NULL) {
         VG_(fmsg)("memspy: --ifetch=yes with --l1d needs --l1i\n");
         VG_(exit)(1);
      }
      if (clo_sample_period > 0 || clo_sample_steps > 0 || clo_max_events > 0) {
         VG_(fmsg)("memspy: --l1d does not go with sampling or --max-events\n");
         VG_(exit)(1);
      }
      l1d.c.notes = l1i.c.notes = l1_notes;
   } else if (l1_notes) {
      VG_(fmsg)("memspy: --l1-notes=yes needs --l1d\n");
      VG_(exit)(1);
   }
   if (clo_ring_fd >= 0)
      map_ring();
   /* The stream's descriptors go to Valgrind's own range: the program
      numbers its descriptors as natively, and cannot close these. */
   Int* fds[4] = { &clo_out_fd, &clo_ring_fd, &clo_free_fd, &clo_control_fd };
   for (Int k = 0; k < 4; k++) {
      struct vg_stat st;
      if (*fds[k] >= 0 && VG_(fstat)(*fds[k], &st) != 0)
         *fds[k] = -1;   /* gone: nothing goes through it */
      if (*fds[k] >= 0)
         *fds[k] = VG_(safe_fd)(*fds[k]);
   }
   if (clo_out_fd < 0)
      silenced = True;
   /* Valgrind moved its log (--log-fd=N, memspy's pipe of Valgrind's
      messages) to its own range too, but keeps N open: the program's. */
   Int lfd = log_fd_arg();
   if (lfd > 2 && lfd != VG_(log_output_sink).fd)
      VG_(close)(lfd);

   start_stream();
   update_mode();
   VG_(atfork)(NULL, NULL, ms_atfork_child);
}

static void ms_fini(Int exitcode)
{
   flush_skip();   /* the references left out at the end */
   ms_flush();
   buf[0] = (REC_END << 60) | (exited ? 1ULL << 8 : 0) | (exit_status & 0xff);
   send_buf(1);
}

/* Valgrind (3.19, m_sigframe/sigframe-common.c) does not grow the main
   thread's stack for a signal frame when the handler was installed with
   SA_ONSTACK and no alternate stack is in use: a signal arriving while the
   stack is deeper than ever before (the frame reaching a page not yet
   mapped) kills the program with SIGSEGV ("Can't extend stack ... during
   signal delivery"), where the kernel grows the stack. CPython installs
   every handler so, which made Ctrl-C kill a python3 run under memspy now
   and then instead of raising KeyboardInterrupt. The stack is grown here,
   before the frame is built, as the kernel would: by the most a frame
   takes (Valgrind's frame keeps the guest state three times) below the red
   zone. These two are Valgrind's core functions, outside the tool
   interface. */
extern Bool VG_(extend_stack)(ThreadId tid, Addr addr);
extern Bool VG_(am_addr_is_in_extensible_client_stack)(Addr addr);

#define SIGFRAME_ROOM (3 * sizeof(VexGuestAMD64State) + 4096)

static void ms_pre_deliver_signal(ThreadId tid, Int sigNo, Bool alt_stack)
{
   if (alt_stack)
      return;
   Addr sp = VG_(get_SP)(tid);
   Addr low = sp - VG_STACK_REDZONE_SZB - SIGFRAME_ROOM;
   if (low < sp && VG_(am_addr_is_in_extensible_client_stack)(low))
      VG_(extend_stack)(tid, low);
}

static void ms_pre_clo_init(void)
{
   VG_(details_name)            ("memspy");
   VG_(details_version)         ("3");
   VG_(details_description)     ("memory reference tracer for memspy");
   VG_(details_copyright_author)("memspy developers");
   VG_(details_bug_reports_to)  ("memspy developers");
   VG_(details_avg_translation_sizeB)(640);

   VG_(basic_tool_funcs)(ms_post_clo_init, ms_instrument, ms_fini);
   VG_(needs_command_line_options)(ms_process_cmd_line_option, ms_print_usage, ms_print_debug_usage);
   VG_(needs_client_requests)(ms_handle_client_request);
   VG_(needs_syscall_wrapper)(ms_pre_syscall, ms_post_syscall);
   VG_(track_start_client_code)(ms_start_client_code);
   VG_(track_pre_thread_ll_create)(ms_thread_create);
   VG_(track_pre_thread_ll_exit)(ms_thread_exit);
   VG_(track_new_mem_mmap)(ms_new_mem_mmap);
   VG_(track_change_mem_mprotect)(ms_change_mem_mprotect);
   VG_(track_die_mem_munmap)(ms_die_mem_munmap);
   VG_(track_copy_mem_remap)(ms_copy_mem_remap);
   VG_(track_pre_deliver_signal)(ms_pre_deliver_signal);
}

VG_DETERMINE_INTERFACE_VERSION(ms_pre_clo_init)
