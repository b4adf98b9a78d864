/*
 * A host program that runs the tool's first-level cache model (ms_l1.c) on
 * references read from standard input, for the differential test of
 * package valgrind (l1model_test.go) against memspy's engine.
 *
 * Usage: ms_l1_harness ISPEC DSPEC [notes], each as the tool's --l1i and
 * --l1d take them (INDEX,SETS,ASSOC,LINE,lru|fifo,wb|wt,wa|nwa), ISPEC "-"
 * for no instruction cache. Input: little-endian 64-bit triples (kind,
 * address, size), kind 0 read, 1 write, 2 instruction fetch, 3 modify.
 * Output: a triple (kind, address, size) per request sent below, then
 * those of the end-of-trace flush, then (~0, ~0, n) and n words laid out
 * as an L1STATS record's (docs/valgrind-stream.md). With notes (the
 * tool's --l1-notes), the caches note accesses instead of sending
 * requests but for the flush's: five words per note, 16 | kind << 8 |
 * flags << 16, the number of the input reference (from 0), the address,
 * the size and the victim's address.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ms_l1.h"

typedef struct {
   int index;
   L1Cache c;
} Spec;

static void out3(L1Word a, L1Word b, L1Word c)
{
   L1Word w[3] = { a, b, c };
   fwrite(w, sizeof w, 1, stdout);
}

void l1_emit(const L1Cache* c, unsigned kind, L1Word a, L1Word size) { out3(kind, a, size); }

static L1Word ref_index;   /* of the input reference being simulated */

void l1_note(const L1Cache* c, unsigned kind, L1Word pa, L1Word ps, unsigned flags, L1Word victim)
{
   L1Word w[5] = { 16 | kind << 8 | flags << 16, ref_index, pa, ps, victim };
   fwrite(w, sizeof w, 1, stdout);
}

static int parse(const char* s, Spec* sp)
{
   unsigned long long sets, assoc, line;
   char pol[8], wr[8], al[8];
   if (sscanf(s, "%d,%llu,%llu,%llu,%7[a-z],%7[a-z],%7[a-z]", &sp->index, &sets, &assoc, &line, pol, wr, al) != 7)
      return 0;
   L1Word* ways = calloc(sets * assoc, sizeof(L1Word));
   l1_init(&sp->c, sets, assoc, line, strcmp(pol, "fifo") == 0, strcmp(wr, "wb") == 0, strcmp(al, "wa") == 0, ways);
   return 1;
}

int main(int argc, char** argv)
{
   Spec is, ds;
   if (argc < 3 || argc > 4 || (argc == 4 && strcmp(argv[3], "notes") != 0) || !parse(argv[2], &ds) ||
       (strcmp(argv[1], "-") != 0 && !parse(argv[1], &is))) {
      fprintf(stderr, "usage: ms_l1_harness ISPEC|- DSPEC [notes]\n");
      return 2;
   }
   ds.c.notes = is.c.notes = argc == 4;
   Spec* ic = strcmp(argv[1], "-") == 0 ? NULL : is.index == ds.index ? &ds : &is;
   L1Word kinds[4] = { 0 }, r[3];
   while (fread(r, sizeof r, 1, stdin) == 1) {
      if (r[0] > 3 || (r[0] == 2 && ic == NULL))
         return 2;
      kinds[r[0]]++;
      switch (r[0]) {
      case 2: l1_access(&ic->c, L1_IFETCH, r[1], r[2]); break;
      case 3:
         l1_access(&ds.c, L1_READ, r[1], r[2]);
         l1_access(&ds.c, L1_WRITE, r[1], r[2]);
         break;
      default: l1_access(&ds.c, (unsigned)r[0], r[1], r[2]); break;
      }
      ref_index++;
   }
   Spec* cs[2] = { &ds, ic };
   int n = ic == NULL || ic == &ds ? 1 : 2;
   if (n == 2 && is.index < ds.index) {
      cs[0] = &is;
      cs[1] = &ds;
   }
   L1Word wb[2], tb[2];
   for (int k = 0; k < n; k++) {
      wb[k] = cs[k]->c.writebacks;
      tb[k] = cs[k]->c.to_below;
      l1_flush(&cs[k]->c, &wb[k], &tb[k]);
   }
   out3(~0ULL, ~0ULL, 4 + 11 * n);
   fwrite(kinds, sizeof kinds, 1, stdout);
   for (int k = 0; k < n; k++) {
      L1Cache* c = &cs[k]->c;
      L1Word w[11] = { cs[k]->index, c->acc[0], c->acc[1], c->acc[2], c->miss[0], c->miss[1], c->miss[2],
                       c->evictions, wb[k], c->from_below, tb[k] };
      fwrite(w, sizeof w, 1, stdout);
   }
   return 0;
}
