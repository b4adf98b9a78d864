/*
 * The first-level cache model of the memspy tool (see ms_l1.h). Each set
 * keeps its lines in age order, so that LRU and FIFO need no other state:
 * a hit moves the line to the front under LRU and leaves it under FIFO, a
 * fill enters at the front, and the victim is the last way (an invalid way
 * while the set is not full, which memspy's lowest-numbered invalid way
 * cannot be told apart from: nothing here invalidates a line).
 */
#include "ms_l1.h"

void l1_init(L1Cache* c, L1Word sets, L1Word assoc, L1Word line,
             int fifo, int write_back, int write_alloc, L1Word* ways)
{
   c->sets = sets;
   c->assoc = assoc;
   c->line = line;
   c->shift = 0;
   while ((1ULL << c->shift) < line)
      c->shift++;
   c->set_mask = (sets & (sets - 1)) == 0 ? sets - 1 : 0;
   c->fifo = fifo;
   c->write_back = write_back;
   c->write_alloc = write_alloc;
   c->notes = 0;
   c->piece = 0;
   c->ways = ways;
   l1_clear(c);
}

void l1_zero(L1Cache* c)
{
   for (int k = 0; k < 3; k++)
      c->acc[k] = c->miss[k] = 0;
   c->evictions = c->writebacks = c->from_below = c->to_below = 0;
}

void l1_clear(L1Cache* c)
{
   for (L1Word i = 0; i < c->sets * c->assoc; i++)
      c->ways[i] = 0;
   c->memo = ~0ULL;   /* no line: line numbers are below 2^62 */
   c->memo_way = c->ways;
   l1_zero(c);
}

void l1_line(L1Cache* c, unsigned kind, L1Word line, L1Word pa, L1Word ps, L1Word* w, L1Word from)
{
   L1Word tag = line << 2 | L1_VALID;
   c->acc[kind]++;
   for (L1Word p = from; p < c->assoc; p++) {
      if ((w[p] & ~L1_DIRTY) != tag)
         continue;
      if (!c->fifo) {
         L1Word e = w[p];
         for (; p > 0; p--)
            w[p] = w[p - 1];
         w[0] = e;
      }
      c->memo = line;
      c->memo_way = &w[p];
      if (kind == L1_WRITE) {
         if (c->write_back) {
            w[p] |= L1_DIRTY;
         } else {
            c->to_below += ps;
            if (!c->notes)
               l1_emit(c, L1_WRITE, pa, ps);
         }
      }
      if (c->notes && (c->piece == 2 || (kind == L1_WRITE && !c->write_back)))
         l1_note(c, kind, pa, ps, L1N_HIT | (c->piece == 2 ? L1N_NEXT : 0), 0);
      return;
   }
   c->miss[kind]++;
   L1Word next = c->piece == 2 ? L1N_NEXT : 0;
   if (kind == L1_WRITE && !c->write_alloc) {
      c->to_below += ps;
      if (c->notes)
         l1_note(c, kind, pa, ps, next, 0);
      else
         l1_emit(c, L1_WRITE, pa, ps);
      return;
   }
   /* The fetch, unless the piece writes the whole line. */
   if (!(kind == L1_WRITE && (pa & (c->line - 1)) == 0 && ps == c->line)) {
      c->from_below += c->line;
      if (!c->notes)
         l1_emit(c, kind == L1_IFETCH ? L1_IFETCH : L1_READ, line << c->shift, c->line);
   }
   L1Word victim = w[c->assoc - 1];
   if (victim & L1_VALID)
      c->evictions++;
   if (c->notes) {
      L1Word f = next | (victim & L1_VALID ? L1N_VICTIM : 0) | (victim & L1_VALID && victim & L1_DIRTY ? L1N_DIRTY : 0);
      l1_note(c, kind, pa, ps, (unsigned)f, (victim >> 2) << c->shift);
   }
   for (L1Word p = c->assoc - 1; p > 0; p--)
      w[p] = w[p - 1];
   w[0] = tag | (kind == L1_WRITE && c->write_back ? L1_DIRTY : 0);
   c->memo = line;
   c->memo_way = w;
   /* The write-through, then the victim's write-back. */
   if (kind == L1_WRITE && !c->write_back) {
      c->to_below += ps;
      if (!c->notes)
         l1_emit(c, L1_WRITE, pa, ps);
   }
   if ((victim & (L1_VALID | L1_DIRTY)) == (L1_VALID | L1_DIRTY)) {
      c->writebacks++;
      c->to_below += c->line;
      if (!c->notes)
         l1_emit(c, L1_WRITE, (victim >> 2) << c->shift, c->line);
   }
}

void l1_ref(L1Cache* c, unsigned kind, L1Word a, L1Word size)
{
   if (size == 0)
      size = 1;
   L1Word end = a + size - 1;
   if (end < a)
      end = ~0ULL;   /* the bytes stop at 2^64-1 */
   L1Word mask = c->line - 1;
   c->piece = a >> c->shift == end >> c->shift ? 0 : 1;
   for (L1Word line = a >> c->shift;; line++) {
      L1Word lo = line << c->shift, hi = lo | mask;
      L1Word pa = a > lo ? a : lo, pe = end < hi ? end : hi;
      L1Word set = c->set_mask ? line & c->set_mask : line % c->sets;
      l1_line(c, kind, line, pa, pe - pa + 1, &c->ways[set * c->assoc], 0);
      if (line == end >> c->shift)
         break;
      c->piece = 2;
   }
   c->piece = 0;
}

void l1_flush(const L1Cache* c, L1Word* writebacks, L1Word* to_below)
{
   for (L1Word set = c->sets; set-- > 0;) {
      const L1Word* w = &c->ways[set * c->assoc];
      for (L1Word p = c->assoc; p-- > 0;) {
         if ((w[p] & (L1_VALID | L1_DIRTY)) != (L1_VALID | L1_DIRTY))
            continue;
         (*writebacks)++;
         *to_below += c->line;
         l1_emit(c, L1_WRITE, (w[p] >> 2) << c->shift, c->line);
      }
   }
}
