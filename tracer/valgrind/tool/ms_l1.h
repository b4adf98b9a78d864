/*
 * The first-level caches that the memspy tool simulates itself when memspy
 * asks it to (--l1i, --l1d): memspy then receives only what these caches
 * send below them, and their counters (docs/valgrind-stream.md, "First-level
 * caches"). The rules are memspy's (docs/semantics.md, Dinero IV's), for
 * the LRU and FIFO policies without 3C classification, on a hierarchy in
 * which nothing below removes lines from these caches.
 *
 * The model uses nothing of Valgrind's, so that a test harness built for
 * the host (ms_l1_harness.c) can check it against memspy's engine.
 */
#ifndef MS_L1_H
#define MS_L1_H

typedef unsigned long long L1Word;

/* Reference and request kinds: those of the stream's entries. */
#define L1_READ   0
#define L1_WRITE  1
#define L1_IFETCH 2

/* A line's entry in its set: line number << 2 | L1_VALID | L1_DIRTY; 0 is
   an invalid way. Each set's entries are in age order: the most recently
   used first (LRU) or the newest fill first (FIFO); invalid ways last. */
#define L1_DIRTY 1ULL
#define L1_VALID 2ULL

typedef struct {
   L1Word sets, assoc, line, shift;
   L1Word set_mask;          /* sets-1 when sets is a power of two, else 0 */
   int fifo, write_back, write_alloc;
   L1Word* ways;             /* sets × assoc entries */
   /* memo is the line of the last access, present in memo_way, when a
      repeated access changes nothing but counters and its dirty bit (it is
      the most recently used of its set, or the policy is FIFO); ~0: none. */
   L1Word memo;
   L1Word* memo_way;
   /* notes: instead of sending requests below (but for l1_flush's), the
      cache tells of the accesses memspy must simulate itself when it
      attributes misses (l1_note). piece: while l1_ref runs, 1 for the
      first line of a reference spanning lines, 2 for the others, else
      0. */
   int notes;
   unsigned piece;
   /* The counters memspy's CacheStats has for a first-level cache. */
   L1Word acc[3], miss[3];   /* by kind */
   L1Word evictions, writebacks, from_below, to_below;
} L1Cache;

/* l1_emit is where cache c sends a request below it: kind (L1_READ,
   L1_WRITE or L1_IFETCH), the first byte and the number of bytes. The
   model's user defines it. */
void l1_emit(const L1Cache* c, unsigned kind, L1Word addr, L1Word size);

/* Flags of l1_note (trace.L1Access's). */
#define L1N_HIT    1ULL   /* the line was there */
#define L1N_NEXT   2ULL   /* a line after the first of its reference */
#define L1N_VICTIM 4ULL   /* a valid line was evicted: victim */
#define L1N_DIRTY  8ULL   /* and it was dirty */

/* l1_note is, when c->notes is set, how cache c tells of an access of
   kind to bytes [pa, pa+ps) of one line that memspy must simulate: a
   miss (with the line evicted, if any: its address and flags), a hit on
   a line after the first of a reference spanning lines, or a write hit of
   a write-through cache. The model's user defines it. */
void l1_note(const L1Cache* c, unsigned kind, L1Word pa, L1Word ps, unsigned flags, L1Word victim);

/* l1_init makes c an empty cache of the geometry and policy given, with
   ways, an array of sets × assoc words, as its storage. line is a power of
   two of at least 4 bytes. */
void l1_init(L1Cache* c, L1Word sets, L1Word assoc, L1Word line,
             int fifo, int write_back, int write_alloc, L1Word* ways);

/* l1_clear empties c and zeroes its counters. */
void l1_clear(L1Cache* c);

/* l1_zero zeroes the counters of c (a reset marker); its lines stay. */
void l1_zero(L1Cache* c);

/* l1_ref performs a reference of kind to bytes [a, a+size) (size 0 counts
   as 1; the bytes stop at 2^64-1): one access per line it touches, in
   address order, each sending below what the rules say, in their order
   (the fetch, then the write-through, then the victim's write-back). */
void l1_ref(L1Cache* c, unsigned kind, L1Word a, L1Word size);

/* l1_line performs the piece [pa, pa+ps) of a reference of kind that falls
   in line, whose set's ways are w, knowing that none of its first from ways
   holds the line. */
void l1_line(L1Cache* c, unsigned kind, L1Word line, L1Word pa, L1Word ps, L1Word* w, L1Word from);

/* l1_access is l1_ref with its most frequent cases inline: a hit, within
   one line, on the line of the cache's last access or on one of the first
   two lines of its set. */
static inline void l1_access(L1Cache* c, unsigned kind, L1Word a, L1Word size)
{
   L1Word off = a & (c->line - 1);
   if (size != 0 && off + size <= c->line && (kind != L1_WRITE || c->write_back)) {
      L1Word line = a >> c->shift;
      L1Word* w = c->memo_way;
      if (line != c->memo) {
         L1Word set = c->set_mask ? line & c->set_mask : line % c->sets;
         L1Word tag = line << 2 | L1_VALID | L1_DIRTY;
         w = &c->ways[set * c->assoc];
         if ((w[0] | L1_DIRTY) != tag) {
            /* The second line of the set: under LRU it becomes the
               first. */
            if (c->assoc < 2 || (w[1] | L1_DIRTY) != tag) {
               l1_line(c, kind, line, a, size, w, c->assoc < 2 ? 1 : 2);
               return;
            }
            if (c->fifo) {
               w++;
            } else {
               L1Word e = w[1];
               w[1] = w[0];
               w[0] = e;
            }
         }
         c->memo = line;
         c->memo_way = w;
      }
      c->acc[kind]++;
      if (kind == L1_WRITE)
         *w |= L1_DIRTY;
      return;
   }
   l1_ref(c, kind, a, size);
}

/* l1_flush sends the write-back of every dirty line of c in the order of
   the end-of-trace flush (rule E: from the highest-numbered set down,
   within a set from the least recently used line or oldest fill), and adds
   them to *writebacks and *to_below. It changes nothing in c: a flush
   before an exec that fails must leave the cache as it was. */
void l1_flush(const L1Cache* c, L1Word* writebacks, L1Word* to_below);

#endif
