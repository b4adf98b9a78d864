/*
 * memspy: a Valgrind tool that streams a program's memory references to
 * memspy, which simulates a memory hierarchy on them as they arrive.
 *
 * The stream format is specified in docs/valgrind-stream.md. Speed comes
 * first: the instrumented code makes no helper call per access. Each
 * superblock reserves room in a large buffer once (a guarded call flushes
 * the buffer only when it is nearly full), stores the address of every data
 * access into its record with plain IR stores, and writes its header word
 * (superblock id and exit taken) and the new buffer position before every
 * side exit and at its end. Everything static about the accesses (kind,
 * size, PC, instruction fetches) is described once per translation.
 */

#include "pub_tool_basics.h"
#include "pub_tool_tooliface.h"
#include "pub_tool_libcassert.h"
#include "pub_tool_libcbase.h"
#include "pub_tool_libcfile.h"
#include "pub_tool_libcprint.h"
#include "pub_tool_libcproc.h"
#include "pub_tool_mallocfree.h"
#include "pub_tool_options.h"
#include "pub_tool_machine.h"

#define MS_STREAM_VERSION 1

/* Record types (top 4 bits of a record's first word). */
#define REC_EXEC     1ULL
#define REC_DESCRIBE 2ULL
#define REC_THREAD   3ULL
#define REC_END      15ULL

/* Entry kinds of a DESCRIBE record. */
#define K_READ   0
#define K_WRITE  1
#define K_IFETCH 2
#define K_MODIFY 3
#define K_EXIT   4

/* The buffer: 8 MiB of words, written to the output when nearly full. */
#define BUF_WORDS (1 << 20)

static Int   clo_out_fd = -1;
static Bool  clo_ifetch = False;
static ULong clo_max_events = 0;  /* 0: no limit */

static ULong buf[BUF_WORDS];
static ULong buf_pos;           /* words in use */
static ULong next_sb_id = 1;
static Int   last_tid = -1;
static Bool  silenced = False;  /* output gone, or a forked child */

/* --max-events: the events written so far are counted from the buffer
   (parse_pos: the first word not yet counted) with, per superblock id, the
   number of events and of address words that precede each exit. Once the
   limit is reached, new translations are left uninstrumented and the
   output stops after the buffer that reached it (memspy cuts the stream at
   the exact event). Translations made before keep recording into the
   buffer, which is dropped: Valgrind does not let a tool discard
   translations from its dispatch hooks. */
static ULong  events_seen;
static ULong  parse_pos;
static Bool   tracing_off;  /* the limit is reached */
static Bool   dropping;     /* the buffer that reached it has been written */
static UInt*  exit_counts;      /* pairs (events, words) per exit, all superblocks */
static ULong  n_exit_counts, cap_exit_counts;
static ULong* sb_first;         /* id -> index of its first pair in exit_counts */
static ULong  cap_sb_first;

static void count_events(void)
{
   ULong i = parse_pos;
   while (i < buf_pos) {
      ULong w = buf[i], type = w >> 60;
      if (type == REC_EXEC) {
         ULong id = (w >> 16) & ((1ULL << 44) - 1), e = w & 0xffff;
         UInt* c = &exit_counts[2 * (sb_first[id] + e)];
         events_seen += c[0];
         i += 1 + c[1];
      } else if (type == REC_DESCRIBE) {
         i += 2 + 2 * buf[i + 1];
      } else {
         i++;
      }
   }
   parse_pos = buf_pos;
   if (clo_max_events > 0 && events_seen >= clo_max_events)
      tracing_off = True;
}

/* ------------------------------------------------------------------ */
/* Output                                                              */
/* ------------------------------------------------------------------ */

static void write_out(const void* p, SizeT n)
{
   const UChar* c = p;
   while (n > 0 && !silenced) {
      Int r = VG_(write)(clo_out_fd, c, n);
      if (r <= 0) {
         /* memspy stopped reading: let the program run on untraced. */
         silenced = True;
         break;
      }
      c += r;
      n -= r;
   }
}

/* Called from instrumented code when the buffer may not have room for the
   next superblock's record, and from the tool's own code. */
static void ms_flush(void)
{
   if (clo_max_events > 0 && !tracing_off)
      count_events();
   if (!dropping)
      write_out(buf, buf_pos * sizeof(ULong));
   dropping = tracing_off;
   buf_pos = 0;
   parse_pos = 0;
}

static void ensure_room(ULong words)
{
   if (buf_pos + words > BUF_WORDS)
      ms_flush();
}

/* ------------------------------------------------------------------ */
/* Threads and processes                                               */
/* ------------------------------------------------------------------ */

static void ms_start_client_code(ThreadId tid, ULong blocks_dispatched)
{
   if (clo_max_events > 0 && !tracing_off)
      count_events();   /* notice the limit before the buffer fills */
   Int os_tid = VG_(gettid)();
   if (os_tid == last_tid)
      return;
   last_tid = os_tid;
   ensure_room(1);
   buf[buf_pos++] = (REC_THREAD << 60) | (ULong)(UInt)os_tid;
}

/* A forked child shares the parent's output: it must not write to it. */
static void ms_atfork_child(ThreadId tid)
{
   silenced = True;
   buf_pos = 0;
   VG_(close)(clo_out_fd);   /* so the reader sees the end when the parent ends */
   VG_(umsg)("memspy: child process %d is not traced\n", VG_(getpid)());
}

/* ------------------------------------------------------------------ */
/* Instrumentation                                                     */
/* ------------------------------------------------------------------ */

typedef struct {
   ULong word;   /* kind | size << 8 */
   Addr  pc;
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
   n_ents++;
}

/* Records, for --max-events, how many events and address words precede
   each exit of superblock id (the last pair: its end). */
static void remember_exits(ULong id)
{
   if (id >= cap_sb_first) {
      cap_sb_first = cap_sb_first ? 2 * cap_sb_first : 4096;
      while (cap_sb_first <= id)
         cap_sb_first *= 2;
      sb_first = VG_(realloc)("memspy.sbfirst", sb_first, cap_sb_first * sizeof(ULong));
   }
   sb_first[id] = n_exit_counts;
   UInt events = 0, words = 0;
   for (Int k = 0; k <= n_ents; k++) {
      if (k == n_ents || (ents[k].word & 0xff) == K_EXIT) {
         if (n_exit_counts == cap_exit_counts) {
            cap_exit_counts = cap_exit_counts ? 2 * cap_exit_counts : 4096;
            exit_counts = VG_(realloc)("memspy.exits", exit_counts, 2 * cap_exit_counts * sizeof(UInt));
         }
         exit_counts[2 * n_exit_counts] = events;
         exit_counts[2 * n_exit_counts + 1] = words;
         n_exit_counts++;
         continue;
      }
      events++;
      if ((ents[k].word & 0xff) != K_IFETCH)
         words++;
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

/* Emits a store of the 64-bit value val at word index `slot` of the current
   record (base: a temp holding the record's address). */
static void store_slot(IRSB* sb, IRTemp base, ULong slot, IRExpr* val)
{
   IRTemp a = new_temp(sb, Ity_I64);
   addStmtToIRSB(sb, IRStmt_WrTmp(a, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(base), u64(8 * slot))));
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, IRExpr_RdTmp(a), val));
}

/* Emits the header of an execution that leaves through exit e after
   n_data data accesses, and advances the buffer position past it. */
static void close_record(IRSB* sb, IRTemp base, IRTemp pos, ULong id, UInt e, ULong n_data)
{
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, IRExpr_RdTmp(base),
                                  u64((REC_EXEC << 60) | (id << 16) | e)));
   IRTemp np = new_temp(sb, Ity_I64);
   addStmtToIRSB(sb, IRStmt_WrTmp(np, IRExpr_Binop(Iop_Add64, IRExpr_RdTmp(pos), u64(1 + n_data))));
   addStmtToIRSB(sb, IRStmt_Store(Iend_LE, u64((ULong)(Addr)&buf_pos), IRExpr_RdTmp(np)));
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

static IRSB* ms_instrument(VgCallbackClosure* closure, IRSB* sbIn,
                           const VexGuestLayout* layout,
                           const VexGuestExtents* vge,
                           const VexArchInfo* archinfo_host,
                           IRType gWordTy, IRType hWordTy)
{
   if (gWordTy != Ity_I64 || hWordTy != Ity_I64)
      VG_(tool_panic)("memspy: only 64-bit guests are supported");
   if (tracing_off)
      return sbIn;

   IRSB* sb = deepCopyIRSBExceptStmts(sbIn);
   Int i = 0;
   /* The preamble before the first instruction mark stays first. */
   for (; i < sbIn->stmts_used && sbIn->stmts[i]->tag != Ist_IMark; i++)
      addStmtToIRSB(sb, sbIn->stmts[i]);

   ULong id = next_sb_id++;
   ULong max_words = 1 + count_data(sbIn);
   n_ents = 0;

   /* Reserve room: flush first if the buffer is nearly full. */
   IRTemp p0 = new_temp(sb, Ity_I64);
   addStmtToIRSB(sb, IRStmt_WrTmp(p0, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(Addr)&buf_pos))));
   IRTemp full = new_temp(sb, Ity_I1);
   addStmtToIRSB(sb, IRStmt_WrTmp(full, IRExpr_Binop(Iop_CmpLT64U, u64(BUF_WORDS - max_words), IRExpr_RdTmp(p0))));
   IRDirty* d = unsafeIRDirty_0_N(0, "ms_flush", VG_(fnptr_to_fnentry)(&ms_flush), mkIRExprVec_0());
   d->guard = IRExpr_RdTmp(full);
   d->mFx = Ifx_Modify;
   d->mAddr = u64((ULong)(Addr)&buf_pos);
   d->mSize = 8;
   addStmtToIRSB(sb, IRStmt_Dirty(d));
   IRTemp pos = new_temp(sb, Ity_I64);
   addStmtToIRSB(sb, IRStmt_WrTmp(pos, IRExpr_Load(Iend_LE, Ity_I64, u64((ULong)(Addr)&buf_pos))));
   IRTemp off = new_temp(sb, Ity_I64);   /* IR must stay flat: one operation per temp */
   addStmtToIRSB(sb, IRStmt_WrTmp(off, IRExpr_Binop(Iop_Shl64, IRExpr_RdTmp(pos), IRExpr_Const(IRConst_U8(3)))));
   IRTemp base = new_temp(sb, Ity_I64);
   addStmtToIRSB(sb, IRStmt_WrTmp(base, IRExpr_Binop(Iop_Add64, u64((ULong)(Addr)buf), IRExpr_RdTmp(off))));

   ULong n_data = 0;
   UInt  n_exit = 0;
   Addr  pc = 0;
   Int   last_read = -1;      /* entry of the last read of this instruction */
   IRExpr* last_read_addr = NULL;

   for (; i < sbIn->stmts_used; i++) {
      IRStmt* st = sbIn->stmts[i];
      IRExpr* addr = NULL;
      UInt size = 0, kind = K_READ;
      switch (st->tag) {
      case Ist_IMark:
         pc = st->Ist.IMark.addr;
         if (clo_ifetch)
            add_entry(K_IFETCH, st->Ist.IMark.len, pc);
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
         kind = K_MODIFY;
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
         close_record(sb, base, pos, id, n_exit, n_data);
         add_entry(K_EXIT, 0, pc);
         n_exit++;
         last_read = -1;
         break;
      default:
         break;
      }
      if (addr != NULL) {
         if (kind == K_WRITE && last_read >= 0 && (ents[last_read].word >> 8) == size &&
             eqIRAtom(last_read_addr, addr)) {
            /* A write of what this instruction just read: a modify. */
            ents[last_read].word = K_MODIFY | ((ULong)size << 8);
            last_read = -1;
         } else {
            n_data++;
            store_slot(sb, base, n_data, addr);
            add_entry(kind, size, pc);
            last_read = kind == K_READ ? n_ents - 1 : -1;
            last_read_addr = addr;
         }
      }
      addStmtToIRSB(sb, st);
   }
   close_record(sb, base, pos, id, n_exit, n_data);

   if (clo_max_events > 0)
      remember_exits(id);

   /* Describe the superblock before any execution of it. */
   ensure_room(2 + 2 * (ULong)n_ents);
   buf[buf_pos++] = (REC_DESCRIBE << 60) | (id << 16);
   buf[buf_pos++] = n_ents;
   for (Int k = 0; k < n_ents; k++) {
      buf[buf_pos++] = ents[k].word;
      buf[buf_pos++] = ents[k].pc;
   }
   return sb;
}

/* ------------------------------------------------------------------ */
/* Options, start and end                                              */
/* ------------------------------------------------------------------ */

static Bool ms_process_cmd_line_option(const HChar* arg)
{
   if VG_INT_CLO(arg, "--out-fd", clo_out_fd) {}
   else if VG_BOOL_CLO(arg, "--ifetch", clo_ifetch) {}
   else if VG_BINT_CLO(arg, "--max-events", clo_max_events, 0, (1LL << 62)) {}
   else
      return False;
   return True;
}

static void ms_print_usage(void)
{
   VG_(printf)(
"    --out-fd=N        write the event stream to file descriptor N [required]\n"
"    --ifetch=no|yes   describe instruction fetches [no]\n"
"    --max-events=N    stop instrumenting soon after N events (0: never) [0]\n"
   );
}

static void ms_print_debug_usage(void)
{
   VG_(printf)("    (none)\n");
}

static void ms_post_clo_init(void)
{
   if (clo_out_fd < 0) {
      VG_(fmsg)("memspy: --out-fd=N is required; run programs with `memspy run -- PROG`\n");
      VG_(exit)(1);
   }
   ULong header[4];
   VG_(memcpy)(&header[0], "memspyVG", 8);
   header[1] = MS_STREAM_VERSION;
   header[2] = clo_ifetch ? 1 : 0;
   header[3] = (ULong)VG_(getpid)();
   VG_(memcpy)(&buf[0], header, sizeof header);
   buf_pos = 4;
   VG_(atfork)(NULL, NULL, ms_atfork_child);
}

static void ms_fini(Int exitcode)
{
   ms_flush();
   ULong end = REC_END << 60;        /* Valgrind passes no exit code here */
   write_out(&end, sizeof end);
}

static void ms_pre_clo_init(void)
{
   VG_(details_name)            ("memspy");
   VG_(details_version)         ("1");
   VG_(details_description)     ("memory reference tracer for memspy");
   VG_(details_copyright_author)("memspy developers");
   VG_(details_bug_reports_to)  ("memspy developers");
   VG_(details_avg_translation_sizeB)(640);

   VG_(basic_tool_funcs)(ms_post_clo_init, ms_instrument, ms_fini);
   VG_(needs_command_line_options)(ms_process_cmd_line_option, ms_print_usage, ms_print_debug_usage);
   VG_(track_start_client_code)(ms_start_client_code);
}

VG_DETERMINE_INTERFACE_VERSION(ms_pre_clo_init)
