// memspy's web UI (package web): MemSpy's hierarchy of detail over the
// profile data embedded in the page (#memspy-data), drawn with Apache
// ECharts. Pages: the overview (#/P), a procedure (#/P/fn/I), a data
// structure (#/P/obj/I), a procedure × data structure pair (#/P/pair/I), a
// reference (#/P/ref/I) and, for two profiles, their comparison (#/diff).
// Every number shown is one of the profile's, or a sum or ratio of them.
(function () {
  'use strict';
  var DATA = JSON.parse(document.getElementById('memspy-data').textContent);
  // Counters that are 0 are left out of the data: put them back.
  var COUNTERS = ['accesses', 'hits', 'misses', 'read_misses', 'write_misses', 'ifetch_misses', 'stall_cycles',
    'temporal_hits', 'spatial_hits', 'used_bytes', 'fetched_bytes'];
  DATA.profiles.forEach(function (p) {
    [p.functions, p.objects, p.pairs, p.references].forEach(function (list) {
      list.forEach(function (e) {
        for (var c in e.levels) {
          var l = e.levels[c];
          COUNTERS.forEach(function (k) { l[k] = l[k] || 0; });
          l.causes = Object.assign({ cold: 0, replacement: 0, invalidation: 0, true_sharing: 0, false_sharing: 0 }, l.causes);
        }
      });
    });
  });
  var main = document.getElementById('main');
  var charts = [];
  var PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7', '#9c755f', '#bab0ac'];
  var state = { p: 0, cache: DATA.profiles[0].focus, pid: -1, cpu: -1, thr: 0 };

  // ---- formatting -------------------------------------------------------
  function num(n) { return n === null || n === undefined ? '-' : Number(n).toLocaleString('en-US'); }
  function share(a, b) { return b ? (100 * a / b).toFixed(1) + '%' : '-'; }
  function rate(a, b) { return b ? (100 * a / b).toFixed(4) + '%' : '-'; }
  function bytes(n) {
    if (n === null || n === undefined) return '-';
    if (n < 1024) return n + ' B';
    var u = ['KiB', 'MiB', 'GiB', 'TiB', 'PiB'], i = -1;
    do { n /= 1024; i++; } while (n >= 1024 && i < u.length - 1);
    return n.toFixed(1).replace(/\.0$/, '') + ' ' + u[i];
  }
  function base(f) { return f ? f.replace(/^.*\//, '') : ''; }
  function loc(file, line, col) {
    if (!file) return '?';
    return base(file) + (line ? ':' + line : '') + (col ? ':' + col : '');
  }

  // ---- DOM --------------------------------------------------------------
  function h(tag, attrs) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) {
      if (attrs[k] === null || attrs[k] === undefined) continue;
      if (k === 'text') e.textContent = attrs[k];
      else if (k === 'on') for (var ev in attrs.on) e.addEventListener(ev, attrs.on[ev]);
      else e.setAttribute(k, attrs[k]);
    }
    for (var i = 2; i < arguments.length; i++) add(e, arguments[i]);
    return e;
  }
  function add(e, c) {
    if (c === null || c === undefined || c === false) return;
    if (Array.isArray(c)) { c.forEach(function (x) { add(e, x); }); return; }
    e.appendChild(typeof c === 'object' ? c : document.createTextNode(String(c)));
  }
  function card(title, sub) {
    var s = h('section', { class: 'card' }, h('h2', { text: title }));
    for (var i = 1; i < arguments.length; i++) add(s, arguments[i]);
    return s;
  }
  function note(t) { return h('p', { class: 'note', text: t }); }
  // table: cols are [name, key?] (a key's cells are left-aligned text);
  // rows are {cells: [...], go: '#/…', attrs: {...}}.
  function table(cols, rows, id) {
    var head = h('tr', null, cols.map(function (c) { return h('th', { class: c.k ? 'k' : null, text: c.name }); }));
    var body = rows.map(function (r) {
      var tr = h('tr', Object.assign({ class: (r.go ? 'go' : '') + (r.sel ? ' sel' : '') }, r.attrs || {}),
        r.cells.map(function (c, i) {
          var col = cols[i];
          return h('td', { class: col.k ? 'k' : null, 'data-k': col.id || null }, c);
        }));
      if (r.go) tr.addEventListener('click', function () { location.hash = r.go; });
      return tr;
    });
    return h('div', { class: 'scroll' }, h('table', { id: id || null }, h('thead', null, head), h('tbody', null, body)));
  }
  function col(name, id, k) { return { name: name, id: id, k: k }; }
  function chart(el, option, onClick) {
    var c = echarts.init(el, null, { renderer: 'canvas' });
    option.animation = false;
    c.setOption(option);
    if (onClick) c.on('click', onClick);
    charts.push(c);
    return c;
  }
  function chartBox(cls) { return h('div', { class: 'chart' + (cls ? ' ' + cls : '') }); }

  // ---- the profile in focus ----------------------------------------------
  function P() { return DATA.profiles[state.p]; }
  function lvl(e, cache) { return (e.levels || {})[cache || state.cache] || null; }
  function known() { return !P().miss_only; } // accesses, hits and line use were counted
  function sharing() { // the profile has true or false sharing misses at some cache
    return P().caches.some(function (c) { return (c.true_sharing_misses || 0) + (c.false_sharing_misses || 0) > 0; });
  }
  function allCycles() { var t = P().totals; return t.compute_cycles + t.stall_cycles + t.sync_cycles; }
  function fnCycles(f) { return f.compute_cycles + f.stall_cycles + f.sync_cycles; }
  // above: whether an entry's cycles reach the threshold (a share of the run's).
  function above(n, total) { return !state.thr || total && 100 * n / total >= state.thr; }
  function hiddenNote(n) { return n ? note(n + ' below the threshold (' + state.thr + '% of the run\'s cycles) hidden') : null; }
  function fnIndex(name) { return P().functions.findIndex(function (f) { return f.name === name; }); }
  function objIndex(name) { return P().objects.findIndex(function (o) { return o.name === name; }); }
  function link(text, go) { return go ? h('a', { href: go, text: text }) : text; }
  function at(kind, i) { return '#/' + state.p + '/' + kind + '/' + i; }

  // ---- controls and crumbs -------------------------------------------------
  function controls() {
    var f = document.getElementById('controls');
    f.textContent = '';
    var p = P();
    function sel(label, id, opts, value, set) {
      var s = h('select', { id: id }, opts.map(function (o) {
        var op = h('option', { value: o[0], text: o[1] });
        if (String(o[0]) === String(value)) op.selected = true;
        return op;
      }));
      s.addEventListener('change', function () { set(s.value); render(); });
      f.appendChild(h('label', null, label, s));
    }
    if (DATA.profiles.length > 1) {
      var views = DATA.profiles.map(function (m, i) { return ['#/' + i, (i ? 'B: ' : 'A: ') + base(m.name)]; });
      if (DATA.diff) views.push(['#/diff', 'A vs B']);
      var cur = route().kind === 'diff' ? '#/diff' : '#/' + state.p;
      sel('profile', 'c-profile', views, cur, function (v) { location.hash = v; });
      if (cur === '#/diff') return; // (the comparison is memspy diff's, at A's focus cache)
    }
    sel('cache', 'c-cache', p.caches.map(function (c) { return [c.name, c.name + ' (level ' + c.level + ')']; }), state.cache,
      function (v) { state.cache = v; });
    if (p.processes && p.processes.length) {
      sel('process', 'c-pid', [[-1, 'whole tree']].concat(p.processes.map(function (pr, i) {
        return [i, pr.pid + ': ' + pr.command.slice(0, 40)];
      })), state.pid, function (v) { state.pid = Number(v); });
    }
    if (p.processors && p.processors.length) {
      sel('processor', 'c-cpu', [[-1, 'every processor']].concat(p.processors.map(function (pr) {
        return [pr.processor, 'processor ' + pr.processor];
      })), state.cpu, function (v) { state.cpu = Number(v); });
    }
    var thr = h('input', { id: 'c-thr', type: 'number', min: 0, max: 100, step: 0.1, value: state.thr });
    thr.addEventListener('change', function () { state.thr = Math.max(0, Number(thr.value) || 0); render(); });
    f.appendChild(h('label', { title: 'hide entries with a smaller share of the run\'s cycles' }, 'threshold %', thr));
  }
  function crumbs(parts) {
    var c = document.getElementById('crumbs');
    c.textContent = '';
    var all = [[DATA.profiles.length > 1 ? (state.p ? 'B' : 'A') + ': ' + base(P().name) : 'overview', '#/' + state.p]].concat(parts);
    all.forEach(function (x, i) {
      if (i) c.appendChild(h('span', { class: 'sep', text: '›' }));
      c.appendChild(i === all.length - 1 ? h('span', { text: x[0] }) : h('a', { href: x[1], text: x[0] }));
    });
  }

  // ---- shared pieces -------------------------------------------------------
  // levelTable: an entry's counters at every cache, one row per cache.
  function levelTable(e, id) {
    var sh = sharing(), k = known();
    var cols = [col('cache', null, true), col('accesses', 'accesses'), col('hits', 'hits'), col('misses', 'misses'),
      col('miss rate', 'miss_rate'), col('stall cycles', 'stall_cycles'), col('cold', 'cold'),
      col('replacement', 'replacement'), col('invalidation', 'invalidation')];
    if (sh) cols.push(col('true sharing', 'true_sharing'), col('false sharing', 'false_sharing'));
    cols.push(col('temporal hits', 'temporal_hits'), col('spatial hits', 'spatial_hits'), col('spatial use', 'spatial_use'));
    var rows = P().caches.map(function (c) {
      var l = lvl(e, c.name);
      if (!l) return { cells: [c.name].concat(cols.slice(1).map(function () { return '-'; })), attrs: { 'data-level': c.name } };
      var cells = [c.name, k ? num(l.accesses) : '-', k ? num(l.hits) : '-', num(l.misses), k ? rate(l.misses, l.accesses) : '-',
        num(l.stall_cycles), num(l.causes.cold), num(l.causes.replacement), num(l.causes.invalidation)];
      if (sh) cells.push(num(l.causes.true_sharing || 0), num(l.causes.false_sharing || 0));
      cells.push(k ? num(l.temporal_hits) : '-', k ? num(l.spatial_hits) : '-',
        k && l.fetched_bytes ? share(l.used_bytes, l.fetched_bytes) : '-');
      return { cells: cells, attrs: { 'data-level': c.name }, sel: c.name === state.cache };
    });
    return table(cols, rows, id);
  }
  // causesChart: misses by cause at every cache, stacked.
  function causesChart(el, e) {
    var caches = P().caches.map(function (c) { return c.name; });
    var names = ['cold', 'replacement', 'invalidation'];
    chart(el, {
      title: { text: 'misses by cause, by cache', left: 'center', textStyle: { fontSize: 13 } },
      tooltip: { trigger: 'axis' }, legend: { bottom: 0 }, grid: { left: 70, right: 20, top: 40, bottom: 50 },
      xAxis: { type: 'category', data: caches }, yAxis: { type: 'value', name: 'misses' },
      series: names.map(function (n) {
        return { name: n, type: 'bar', stack: 'c', data: caches.map(function (c) { var l = lvl(e, c); return l ? l.causes[n] : 0; }) };
      })
    });
  }
  // lineUseChart: of the lines the entry's misses fetched, the bytes used and not.
  function lineUseChart(el, e) {
    var caches = P().caches.map(function (c) { return c.name; });
    chart(el, {
      title: { text: 'line use: bytes of the fetched lines touched while resident', left: 'center', textStyle: { fontSize: 13 } },
      tooltip: { trigger: 'axis' }, legend: { bottom: 0 }, grid: { left: 80, right: 20, top: 40, bottom: 50 },
      xAxis: { type: 'category', data: caches }, yAxis: { type: 'value', name: 'bytes' },
      series: [
        { name: 'used bytes', type: 'bar', stack: 'u', data: caches.map(function (c) { var l = lvl(e, c); return l ? l.used_bytes : 0; }) },
        { name: 'unused bytes', type: 'bar', stack: 'u', data: caches.map(function (c) { var l = lvl(e, c); return l ? l.fetched_bytes - l.used_bytes : 0; }) }
      ]
    });
  }
  // evictedBy: who evicted the entry's lines at the focus cache.
  function evictedByTable(e, self) {
    var l = lvl(e);
    if (!l || !l.evicted_by) return note('no lines evicted at ' + state.cache);
    var total = l.evicted_by.reduce(function (s, c) { return s + c.lines; }, 0) + (l.others ? l.others.lines : 0);
    var rows = l.evicted_by.map(function (c) {
      var i = objIndex(c.name);
      return { cells: [h('span', { class: c.name === self ? 'self' : null }, c.name + (c.name === self ? ' (self)' : '')),
        num(c.lines), share(c.lines, total)], go: i >= 0 ? at('obj', i) : null, attrs: { 'data-evictor': c.name } };
    });
    if (l.others) rows.push({ cells: [l.others.objects + (l.others.more ? '+' : '') + ' other objects', num(l.others.lines), share(l.others.lines, total)] });
    return table([col('evicted by fills of', null, true), col('lines', 'lines'), col('share', 'share')], rows);
  }
  // sharingTables: the invalidations an entry suffered and caused (several processors).
  function sharingTables(e) {
    var l = lvl(e);
    if (!l || !(l.invalidated_by || l.invalidated)) return null;
    function rowsOf(list) {
      return (list || []).filter(function (s) { return state.cpu < 0 || s.processor === state.cpu || s.processor < 0; })
        .map(function (s) { return { cells: [s.object, s.processor < 0 ? 'others' : String(s.processor), num(s.lines), num(s.false_sharing)] }; });
    }
    var cols = [col('object', null, true), col('processor'), col('lines'), col('false sharing')];
    return card('invalidations at ' + state.cache + (state.cpu >= 0 ? ' (processor ' + state.cpu + ')' : ''),
      h('div', { class: 'grid' },
        h('div', null, note('its lines invalidated by writes of'), table(cols, rowsOf(l.invalidated_by))),
        h('div', null, note('lines of other processors its writes invalidated'), table(cols, rowsOf(l.invalidated)))));
  }
  // evictorGraph: who evicts whom at the focus cache; edges from the
  // evicting object to the evicted one, a loop for self-interference
  // (drawn beside its node: ECharts draws no self loops). victims are
  // {name, entry}, most stall cycles first: the graph has the first 12
  // with lines evicted, and the 5 largest evictors of each.
  function evictorGraph(el, victims) {
    var nodes = {}, order = [], links = [], self = {};
    function node(n) { if (!nodes[n]) { nodes[n] = { name: n, value: 0 }; order.push(n); } return nodes[n]; }
    victims.filter(function (v) { var l = lvl(v.entry); return l && l.evicted_by; }).slice(0, 12).forEach(function (v) {
      lvl(v.entry).evicted_by.slice(0, 5).forEach(function (c) {
        node(v.name).value += c.lines;
        node(c.name);
        if (c.name === v.name) self[v.name] = c.lines;
        else links.push({ source: c.name, target: v.name, value: c.lines });
      });
    });
    if (!order.length) { add(el, note('no lines evicted at ' + state.cache)); el.style.height = 'auto'; return; }
    var max = Math.max.apply(null, links.map(function (x) { return x.value; }).concat(Object.keys(self).map(function (n) { return self[n]; }), [1]));
    var vmax = Math.max.apply(null, order.map(function (n) { return nodes[n].value; }).concat([1]));
    function size(n) { return 10 + 30 * Math.sqrt(nodes[n].value / vmax); }
    var c = chart(el, {
      tooltip: { formatter: function (x) {
        if (x.dataType === 'edge') return x.data.source + ' → ' + x.data.target + ': ' + num(x.data.value) + ' lines evicted';
        var n = x.data.name;
        return n + ': ' + num(x.data.value) + ' of its lines evicted by the objects drawn' + (self[n] ? ', ' + num(self[n]) + ' by itself' : '');
      } },
      series: [Object.assign({ type: 'graph', layout: 'none', roam: false,
        label: { show: true, position: 'right', fontSize: 11, width: 150, overflow: 'truncate' },
        edgeSymbol: ['none', 'arrow'], edgeSymbolSize: 9, autoCurveness: true,
        data: order.map(function (n, i) {
          var a = 2 * Math.PI * i / order.length - Math.PI / 2;
          return { name: n, value: nodes[n].value, x: 100 * Math.cos(a), y: 100 * Math.sin(a), symbolSize: size(n),
            itemStyle: self[n] ? { borderColor: '#b8452f', borderWidth: 2 } : undefined };
        }),
        links: links.map(function (x) {
          return Object.assign(x, { lineStyle: { width: 1 + 7 * x.value / max, color: '#6d8299', opacity: 0.85 } });
        })
      }, square())]
    }, function (x) { if (x.dataType === 'node') { var i = objIndex(x.data.name); if (i >= 0) location.hash = at('obj', i); } });
    // square: a square box for the circle of nodes, centred, with room
    // for the labels (the graph's view scales x and y apart).
    function square() {
      var side = Math.max(60, Math.min(el.clientWidth - 300, el.clientHeight - 100));
      return { left: (el.clientWidth - side) / 2, top: (el.clientHeight - side) / 2, width: side, height: side };
    }
    // The loops: a ring outside each self-evicting node, away from the
    // circle's centre, as wide as an edge of as many lines.
    c.afterResize = function () {
      c.setOption({ series: [square()] });
      var o = c.convertToPixel({ seriesIndex: 0 }, [0, 0]);
      c.setOption({ graphic: order.map(function (n, i) {
        var a = 2 * Math.PI * i / order.length - Math.PI / 2, p = c.convertToPixel({ seriesIndex: 0 }, [100 * Math.cos(a), 100 * Math.sin(a)]);
        var d = Math.hypot(p[0] - o[0], p[1] - o[1]) || 1, r = 9 + 5 * self[n] / max;
        var k = (size(n) / 2 + r - 3) / d;
        return { id: 'loop' + i, type: 'circle', silent: true, invisible: !self[n],
          shape: { cx: p[0] + (p[0] - o[0]) * k, cy: p[1] + (p[1] - o[1]) * k, r: r },
          style: { fill: 'none', stroke: '#b8452f', lineWidth: 1 + 7 * (self[n] || 0) / max } };
      }) });
    };
    c.afterResize();
  }
  function stridesText(s) {
    if (!s || !s.top) return '-';
    return s.top.map(function (t) { return (t.stride > 0 ? '+' : '') + t.stride + ' B ×' + num(t.count); }).join(', ') +
      ' (of ' + num(s.samples) + ')';
  }
  function facts(pairs) {
    return h('dl', { class: 'facts' }, pairs.filter(function (x) { return x; }).map(function (x) {
      return [h('dt', { text: x[0] }), h('dd', { id: x[2] || null }, x[1])];
    }));
  }

  // ---- overview ------------------------------------------------------------
  function overview() {
    var p = P();
    crumbs([]);
    add(main, h('h1', { text: p.source || p.name }));
    add(main, h('p', { class: 'sub' }, p.name + ' · machine ' + (p.machine || '?') + ' · ' + num(p.events) + ' events · format ' + p.format,
      p.download ? [' · ', h('a', { href: p.download, text: 'download the profile' })] : null));
    if (!p.complete) add(main, h('p', { class: 'warn', text: 'incomplete run: the counts cover only the events read before: ' + p.error }));
    if (p.sampled) add(main, h('p', { class: 'warn', text: 'sampled run: every count covers the ' + share(p.sampled.counted, p.sampled.seen) + ' of the references counted' }));
    if (p.miss_only) add(main, h('p', { class: 'warn', text: 'misses only (--miss-only): accesses, hits and line use are not known (-)' }));
    add(main, cachesCard());
    if (!p.where || !p.functions.length) {
      add(main, h('p', { class: 'warn', text: 'this profile has no where-and-why data: run with --where for procedures and data structures' }));
    } else {
      add(main, cyclesCard());
      callTreeCard();
      var g = h('div', { class: 'grid' });
      add(main, g);
      objectsTreemap(g);
      var eg = chartBox('tall');
      add(g, card('who evicts whom at ' + state.cache, eg,
        note('an arrow from X to Y: fills of X evicted lines of Y (its width: lines); a red loop: an object evicting its own lines (self-interference). ' +
          'The objects shown and their evictors, from the objects\' evicted_by at ' + state.cache + '.')));
      evictorGraph(eg, p.objects.filter(function (o) { return above(o.stall_cycles, p.totals.stall_cycles); })
        .map(function (o) { return { name: o.name, entry: o }; }));
    }
    timelineCard();
    processorsCard();
    processesCard();
    threadsCard();
    dumpsCard();
  }
  function cachesCard() {
    var p = P(), caches = p.caches, what = 'the whole run';
    if (state.pid >= 0 && p.processes[state.pid]) {
      var pr = p.processes[state.pid];
      caches = pr.caches;
      what = 'process ' + pr.pid + ' (' + pr.command + '), ' + num(pr.events) + ' events';
    }
    var withCauses = caches.some(function (c) { return c.causes; });
    var cols = [col('cache', null, true), col('description', null, true), col('accesses', 'accesses'), col('misses', 'misses'),
      col('miss rate', 'miss_rate')];
    if (withCauses) cols.push(col('cold', 'cold'), col('replacement', 'replacement'), col('invalidation', 'invalidation'));
    cols.push(col('evictions', 'evictions'), col('write-backs', 'writebacks'), col('cycles per miss', 'miss_latency'));
    var rows = caches.map(function (c) {
      var d = p.caches.find(function (x) { return x.name === c.name; }) || {};
      var cells = [c.name, d.size ? bytes(d.size) + ' ' + d.holds + ', ' + d.assoc + '-way, ' + d.line + ' B lines' + (d.shared ? ', shared' : '') : '',
        num(c.accesses), num(c.misses), rate(c.misses, c.accesses)];
      if (withCauses) {
        var k = c.causes || {};
        cells.push(num(k.cold), num(k.replacement), num(k.invalidation));
      }
      cells.push(num(c.evictions), num(c.writebacks), d.miss_latency ? num(d.miss_latency) : '-');
      return { cells: cells, sel: c.name === state.cache, attrs: { 'data-cache': c.name } };
    });
    var s = card('caches: ' + what, table(cols, rows, 'caches'),
      note('accesses count lines touched; memory: ' + num(p.memory.reads) + ' reads, ' + num(p.memory.writes) + ' writes (' +
        bytes(p.memory.bytes_read) + ' read, ' + bytes(p.memory.bytes_written) + ' written); cycles per miss: what a miss waits for the level below'));
    if (state.pid >= 0) add(s, note('procedures and data structures below are the whole tree\'s: the profile keeps them added up, not per process'));
    return s;
  }
  function cyclesCard() {
    var p = P(), all = allCycles(), hidden = 0;
    var fs = p.functions.filter(function (f) { var ok = above(fnCycles(f), all); if (!ok) hidden++; return ok; });
    var el = chartBox('tall');
    var cols = [col('procedure', null, true), col('compute cycles', 'compute'), col('stall cycles', 'stall'),
      col('sync cycles', 'sync'), col('total cycles', 'total'), col('share', 'share'), col('misses at ' + state.cache, 'misses')];
    var rows = fs.map(function (f) {
      var l = lvl(f);
      return { cells: [f.name + (f.region ? ' (region)' : ''), p.compute_known ? num(f.compute_cycles) : '-', num(f.stall_cycles),
        num(f.sync_cycles), num(fnCycles(f)), share(fnCycles(f), all), l ? num(l.misses) : '0'],
        go: at('fn', p.functions.indexOf(f)), attrs: { 'data-fn': f.name } };
    });
    var s = card('cycles by procedure: compute, memory stall and synchronization', el, table(cols, rows, 'functions'),
      note('the ' + fs.length + ' procedures shown of ' + num(p.totals.functions) + ', most cycles first; the run: ' +
        num(p.totals.compute_cycles) + ' compute, ' + num(p.totals.stall_cycles) + ' stall, ' + num(p.totals.sync_cycles) +
        ' sync cycles. Compute: one cycle per instruction' + (p.compute_known ? '' : ' (not known: no cache holds instructions)') +
        '; stall: each miss waits for the level below, at every cache; click a procedure for its data structures.'),
      hiddenNote(hidden));
    var top = fs.slice(0, 15).reverse();
    chart(el, {
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } }, legend: { top: 0 },
      grid: { left: 10, right: 30, top: 30, bottom: 36, containLabel: true },
      xAxis: { type: 'value', name: 'cycles', nameLocation: 'middle', nameGap: 24 },
      yAxis: { type: 'category', data: top.map(function (f) { return f.name; }), axisLabel: { width: 220, overflow: 'truncate' } },
      series: [['compute', 'compute_cycles'], ['memory stall', 'stall_cycles'], ['sync', 'sync_cycles']].map(function (x) {
        return { name: x[0], type: 'bar', stack: 'cycles', data: top.map(function (f) { return f[x[1]]; }) };
      })
    }, function (x) { location.hash = at('fn', p.functions.indexOf(top[x.dataIndex])); });
    return s;
  }
  function objectsTreemap(g) {
    var p = P(), kinds = {}, hidden = 0;
    p.objects.forEach(function (o, i) {
      var l = lvl(o), v = l ? l.stall_cycles : 0;
      if (!v) return;
      if (!above(o.stall_cycles, p.totals.stall_cycles)) { hidden++; return; }
      (kinds[o.kind] = kinds[o.kind] || []).push({ name: o.name, value: v, idx: i,
        itemStyle: { color: PALETTE[i % PALETTE.length] } });
    });
    var el = chartBox('tall');
    add(g, card('data structures by stall cycles at ' + state.cache, el,
      note('area: the stall cycles of each object\'s misses at ' + state.cache + ', grouped by kind; the ' + p.objects.length +
        ' objects with the most stall cycles of ' + num(p.totals.objects) + '; click one for its detail.'), hiddenNote(hidden)));
    chart(el, {
      tooltip: { formatter: function (x) { return x.name + ': ' + num(x.value) + ' stall cycles'; } },
      series: [{ type: 'treemap', roam: false, nodeClick: false, breadcrumb: { show: false }, top: 10, bottom: 10, left: 5, right: 5,
        upperLabel: { show: true, height: 18 }, label: { show: true, formatter: '{b}' },
        levels: [{ itemStyle: { borderWidth: 2, gapWidth: 2, borderColor: '#fff' } }, { itemStyle: { gapWidth: 1 } }],
        data: Object.keys(kinds).map(function (k) { return { name: k, children: kinds[k] }; }) }]
    }, function (x) { if (x.data && x.data.idx !== undefined) location.hash = at('obj', x.data.idx); });
  }
  function processorsCard() {
    var p = P();
    if (!p.processors || !p.processors.length) return;
    var priv = p.caches.filter(function (c) { return !c.shared; }).map(function (c) { return c.name; });
    var cols = [col('processor', null, true), col('threads', null, true)];
    priv.forEach(function (n) { cols.push(col(n + ' misses', 'misses_' + n), col(n + ' invalidations', 'inval_' + n)); });
    cols.push(col('upgrades'), col('interventions'), col('invalidations sent'), col('invalidations received'));
    var rows = p.processors.map(function (pr) {
      var cells = [String(pr.processor), (pr.threads || []).join(', ')];
      priv.forEach(function (n) {
        var c = (pr.caches || []).find(function (x) { return x.name === n; }) || {};
        cells.push(num(c.misses || 0), num(c.invalidations || 0));
      });
      cells.push(num(pr.upgrades), num(pr.interventions), num(pr.invalidations_sent), num(pr.invalidations_received));
      return { cells: cells, sel: pr.processor === state.cpu };
    });
    var el = chartBox();
    var s = card('processors: their private caches and the coherence protocol', el, table(cols, rows, 'processors'),
      note(p.processors.length + ' of ' + p.totals.processors + ' processors'));
    add(main, s);
    var names = p.processors.map(function (pr) { return 'P' + pr.processor; });
    chart(el, {
      tooltip: { trigger: 'axis' }, legend: { top: 0 }, grid: { left: 70, right: 20, top: 40, bottom: 30 },
      xAxis: { type: 'category', data: names }, yAxis: { type: 'value', name: 'count' },
      series: priv.map(function (n) {
        return { name: n + ' misses', type: 'bar', data: p.processors.map(function (pr) {
          var c = (pr.caches || []).find(function (x) { return x.name === n; }); return c ? c.misses : 0; }) };
      }).concat([{ name: 'invalidations received', type: 'bar', data: p.processors.map(function (pr) { return pr.invalidations_received; }) }])
    });
    var shared = p.objects.filter(function (o) { return o.sharing_writes && o.sharing_writes.length; });
    if (shared.length) {
      add(main, card('false sharing: objects whose writes invalidated other processors\' copies',
        table([col('object', null, true), col('copies invalidated'), col('false sharing'), col('processors writing')],
          shared.map(function (o) {
            var w = o.sharing_writes, cp = 0, fs = 0, procs = {};
            w.forEach(function (x) { cp += x.copies; fs += x.false_sharing; procs[x.processor] = 1; });
            return { cells: [o.name, num(cp), num(fs), Object.keys(procs).join(', ')], go: at('obj', p.objects.indexOf(o)) };
          }), 'sharing'),
        note('from the objects\' sharing_writes (at most 16 places each); click one for which processor wrote which offset')));
    }
  }
  function processesCard() {
    var p = P();
    if (!p.processes || !p.processes.length) return;
    var fc = state.cache;
    var rows = p.processes.map(function (pr, i) {
      var c = (pr.caches || []).find(function (x) { return x.name === fc; }) || {};
      return { cells: [String(pr.pid), String(pr.parent), pr.command, pr.exit, num(pr.events), num(c.accesses), num(c.misses),
        rate(c.misses, c.accesses)], sel: i === state.pid, attrs: { 'data-pid': pr.pid } };
    });
    var t = table([col('pid', null, true), col('parent', null, true), col('command', null, true), col('exit', null, true),
      col('events'), col(fc + ' accesses'), col(fc + ' misses'), col('miss rate')], rows, 'processes');
    t.querySelectorAll('tbody tr').forEach(function (tr, i) {
      tr.classList.add('go');
      tr.addEventListener('click', function () { state.pid = state.pid === i ? -1 : i; render(); });
    });
    add(main, card('processes of the tree', t, note(p.processes.length + ' of ' + p.totals.processes +
      ' programs run; click one to focus the caches on it (again for the whole tree)')));
  }
  function threadsCard() {
    var p = P();
    if (!p.threads || !p.threads.length) return;
    var el = chartBox();
    var rows = p.threads.map(function (t) {
      return { cells: [String(t.thread), String(t.processor), num(t.events), num(t.compute_cycles), num(t.stall_cycles), num(t.sync_cycles),
        num(t.end - t.start)], sel: t.processor === state.cpu };
    });
    var s = card('threads: simulated time', el, table([col('thread', null, true), col('processor'), col('events'), col('compute cycles'),
      col('stall cycles'), col('sync cycles'), col('end − start')], rows, 'threads'), note(p.threads.length + ' of ' + p.totals.threads + ' threads'));
    if (p.sync && p.sync.length) {
      add(s, [h('h2', { text: 'synchronization objects, most waiting first' }), table([col('object', null, true), col('kind', null, true),
        col('operations'), col('waits'), col('wait cycles')], p.sync.map(function (o) {
        return { cells: [o.name, o.kind, num(o.operations), num(o.waits), num(o.wait_cycles)] };
      }), 'sync'), note(p.sync.length + ' of ' + p.totals.sync + ' objects')]);
    }
    add(main, s);
    chart(el, {
      tooltip: { trigger: 'axis' }, legend: { top: 0 }, grid: { left: 70, right: 20, top: 40, bottom: 30 },
      xAxis: { type: 'category', data: p.threads.map(function (t) { return 'T' + t.thread; }) }, yAxis: { type: 'value', name: 'cycles' },
      series: [['compute', 'compute_cycles'], ['memory stall', 'stall_cycles'], ['sync', 'sync_cycles']].map(function (x) {
        return { name: x[0], type: 'bar', stack: 't', data: p.threads.map(function (t) { return t[x[1]]; }) };
      })
    });
  }
  // callTreeCard: the call tree as a flame graph, callers on top: each
  // calling context a bar as wide as its cycles with everything it
  // called (compute + memory stall + sync), its callees under it, left to
  // right in the order they were first called; coloured from blue (all
  // compute) to red (all memory stall). A click on a function the page
  // shows opens it.
  function callTreeCard() {
    var p = P(), t = p.call_tree;
    if (!t || !t.length) return;
    function incl(n) { return n.in_compute + n.in_stall + n.in_sync; }
    var kids = t.map(function () { return []; }), roots = [], total = 0, depth = 0;
    t.forEach(function (n, i) {
      if (n.caller >= 0) kids[n.caller].push(i);
      else { roots.push(i); total += incl(n); }
    });
    var data = [];
    function place(i, x, d) {
      var n = t[i], w = incl(n);
      depth = Math.max(depth, d + 1);
      var mem = w ? n.in_stall / w : 0;
      data.push({ name: n.function, value: [x, x + w, d, i],
        itemStyle: { color: 'rgb(' + Math.round(78 + 147 * mem) + ',' + Math.round(121 - 34 * mem) + ',' + Math.round(167 - 78 * mem) + ')' } });
      kids[i].forEach(function (k) { place(k, x, d + 1); x += incl(t[k]); });
    }
    var x0 = 0;
    roots.forEach(function (r) { place(r, x0, 0); x0 += incl(t[r]); });
    var el = h('div', { class: 'chart flame' });
    el.style.height = Math.max(160, 22 * depth + 20) + 'px';
    var s = card('call paths: cycles by calling context, callers on top', el,
      note(t.length + ' calling contexts with the most cycles (compute + memory stall + sync), callees under their callers, each as wide as ' +
        'its cycles with everything it called; from blue (compute) to red (memory stall). Hover for the numbers; click a procedure ' +
        'the page lists to open it. memspy report PROFILE calls lists them; memspy export --by stack gives pprof\'s flame graph.'));
    s.id = 'calltree';
    add(main, s);
    chart(el, {
      tooltip: { formatter: function (x) {
        var n = t[x.value[3]];
        return x.name + '<br>calls ' + num(n.calls) + '<br>with its callees: ' + num(incl(n)) + ' cycles (' + share(incl(n), total) +
          '), memory stall ' + num(n.in_stall) + '<br>its own: compute ' + num(n.compute) + ', memory stall ' + num(n.stall) +
          (n.sync ? ', sync ' + num(n.sync) : '');
      } },
      grid: { left: 5, right: 5, top: 5, bottom: 5 },
      xAxis: { type: 'value', min: 0, max: total || 1, show: false },
      yAxis: { type: 'value', min: 0, max: depth, inverse: true, show: false },
      series: [{ type: 'custom', data: data, encode: { x: [0, 1], y: 2 },
        renderItem: function (params, api) {
          var a = api.coord([api.value(0), api.value(2)]), b = api.coord([api.value(1), api.value(2) + 1]);
          var w = Math.max(b[0] - a[0] - 1, 0);
          return { type: 'rect', shape: { x: a[0], y: a[1], width: w, height: b[1] - a[1] - 1 }, style: api.style(),
            textContent: w > 40 ? { style: { text: data[params.dataIndex].name, fill: '#fff', fontSize: 11, width: w - 6, overflow: 'truncate' } } : null,
            textConfig: { position: 'insideLeft' } };
        } }]
    }, function (x) {
      var i = fnIndex(x.name);
      if (i >= 0) location.hash = at('fn', i);
    });
  }

  // timelineCard: each cache's miss rate over the run (the profile's
  // timeline: misses / accesses in each point), dump and reset markers
  // drawn as vertical lines, and the markers' table.
  function timelineCard() {
    var p = P(), tl = p.timeline;
    if (!tl || !tl.end.length) return;
    var el = chartBox('tall');
    var marks = tl.marks || [];
    var s = card('miss rate over the run', el,
      note(tl.end.length + ' points of about ' + num(tl.interval) + ' events each, from event ' + num(tl.start) + ' to ' +
        num(tl.end[tl.end.length - 1]) + (tl.start ? ' (the last reset marker on)' : '') +
        '; each point: the misses / accesses of a cache in it (the last point holds the final write-back). Drag or scroll to zoom.' +
        (state.pid >= 0 ? ' The whole tree\'s, one process after another.' : '') +
        (state.cpu >= 0 && tl.processors ? ' Private caches: processor ' + state.cpu + '\'s copy; shared caches: every processor\'s.' : '')));
    s.id = 'timeline';
    if (marks.length) {
      add(s, table([col('marker', null, true), col('name', null, true), col('event', 'event')], marks.map(function (m) {
        return { cells: [m.kind, m.name || '', num(m.event)], attrs: { 'data-mark': m.kind } };
      }), 'timeline-marks'));
    }
    add(main, s);
    chart(el, {
      tooltip: { trigger: 'axis', valueFormatter: function (v) { return v === null ? '-' : v.toFixed(4) + '%'; } },
      legend: { top: 0 }, grid: { left: 70, right: 30, top: 40, bottom: 70 },
      dataZoom: [{ type: 'inside' }, { type: 'slider', bottom: 10 }],
      xAxis: { type: 'value', name: 'events', nameLocation: 'middle', nameGap: 26, min: tl.start, max: tl.end[tl.end.length - 1] },
      yAxis: { type: 'value', name: 'miss rate %' },
      series: tl.caches.map(function (c, i) {
        // (On a processor, its own copies of the private caches.)
        var pr = state.cpu >= 0 && (tl.processors || []).find(function (x) { return x.processor === state.cpu; });
        c = (pr && pr.caches.find(function (x) { return x.name === c.name; })) || c;
        // (A point's rate holds from the last one's end to its own: the
        // line starts at the first point's start.)
        var rates = tl.end.map(function (e, k) { return [e, c.accesses[k] ? 100 * c.misses[k] / c.accesses[k] : null]; });
        var sr = { name: c.name, type: 'line', showSymbol: false, step: 'start', data: [[tl.start, rates[0][1]]].concat(rates) };
        if (i === 0 && marks.length) {
          sr.markLine = { symbol: 'none', silent: true, lineStyle: { color: '#b8452f', type: 'dashed' },
            label: { formatter: '{b}', position: 'insideEndTop', fontSize: 10 },
            data: marks.filter(function (m) { return m.event >= tl.start; }).map(function (m) {
              return { name: m.kind + (m.name ? ' ' + m.name : ''), xAxis: m.event };
            }) };
        }
        return sr;
      })
    });
  }
  function dumpsCard() {
    var p = P();
    if (!p.dumps || !p.dumps.length) return;
    var el = chartBox();
    add(main, card('dumps: the miss rate at each dump marker', el,
      note('each dump counts from the start of the run or its last reset marker, up to the marker; ' + p.dumps.length + ' of ' +
        p.totals.dumps + ' dumps')));
    chart(el, {
      tooltip: { trigger: 'axis', valueFormatter: function (v) { return v.toFixed(4) + '%'; } }, legend: { top: 0 },
      grid: { left: 70, right: 20, top: 40, bottom: 30 },
      xAxis: { type: 'category', data: p.dumps.map(function (d) { return d.name; }) }, yAxis: { type: 'value', name: 'miss rate %' },
      series: p.caches.map(function (c, i) {
        return { name: c.name, type: 'line', data: p.dumps.map(function (d) {
          var x = d.caches[i]; return x && x.accesses ? 100 * x.misses / x.accesses : 0; }) };
      })
    });
  }

  // ---- a procedure -----------------------------------------------------------
  function procedure(i) {
    var p = P(), f = p.functions[i];
    if (!f) return missing();
    crumbs([[f.name, at('fn', i)]]);
    add(main, h('h1', { text: f.name + (f.region ? ' (region)' : '') }));
    add(main, card('procedure', facts([
      ['source', f.file ? loc(f.file, f.line) : '-', 'fn-loc'],
      f.module ? ['module', f.module] : null,
      ['compute cycles', p.compute_known ? num(f.compute_cycles) : '-', 'fn-compute'],
      ['memory stall cycles', num(f.stall_cycles) + ' (every cache; ' + share(f.stall_cycles, p.totals.stall_cycles) + ' of the run\'s)', 'fn-stall'],
      ['sync cycles', num(f.sync_cycles), 'fn-sync'],
      f.inclusive ? ['with its callees', num(f.inclusive.compute_cycles) + ' compute, ' + num(f.inclusive.stall_cycles) + ' stall, ' +
        num(f.inclusive.sync_cycles) + ' sync cycles'] : null
    ]), h('h2', { text: 'by cache' }), levelTable(f, 'fn-levels')));
    var prs = f.pairs.map(function (j) { return { j: j, pr: p.pairs[j] }; }), hidden = 0;
    prs = prs.filter(function (x) { var ok = above(x.pr.stall_cycles, p.totals.stall_cycles); if (!ok) hidden++; return ok; });
    var el = chartBox();
    var rows = prs.map(function (x) {
      var l = lvl(x.pr) || { causes: {} };
      return { cells: [x.pr.object, num(x.pr.stall_cycles), share(x.pr.stall_cycles, f.stall_cycles), num(l.misses || 0),
        known() ? rate(l.misses || 0, l.accesses || 0) : '-', num(l.causes.cold || 0), num(l.causes.replacement || 0),
        num(l.causes.invalidation || 0), known() && l.fetched_bytes ? share(l.used_bytes, l.fetched_bytes) : '-'],
        go: at('pair', x.j), attrs: { 'data-object': x.pr.object } };
    });
    add(main, card('data structures of ' + f.name, el,
      table([col('object', null, true), col('stall cycles', 'stall'), col('share of its stall', 'share'), col('misses at ' + state.cache, 'misses'),
        col('miss rate', 'miss_rate'), col('cold', 'cold'), col('replacement', 'replacement'), col('invalidation', 'invalidation'),
        col('spatial use', 'spatial_use')], rows, 'pairs'),
      note(prs.length + ' shown of the ' + f.pairs_total + ' the profile lists for it (the page keeps those with the most stall cycles' +
        (p.totals.omitted_pairs ? '; the profile itself left out ' + num(p.totals.omitted_pairs) + ' pairs with the fewest stall cycles' : '') + '); ' +
        'stall cycles over every cache, the rest at ' + state.cache + '; click one for its detail by cache'),
      hiddenNote(hidden)));
    var caches = p.caches.map(function (c) { return c.name; }), top = prs.slice(0, 12).reverse();
    chart(el, {
      title: { text: 'stall cycles by data structure and cache', left: 'center', textStyle: { fontSize: 13 } },
      tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } }, legend: { bottom: 0 },
      grid: { left: 10, right: 30, top: 30, bottom: 62, containLabel: true },
      xAxis: { type: 'value', name: 'cycles', nameLocation: 'middle', nameGap: 24 },
      yAxis: { type: 'category', data: top.map(function (x) { return x.pr.object; }), axisLabel: { width: 200, overflow: 'truncate' } },
      series: caches.map(function (c) {
        return { name: c, type: 'bar', stack: 's', data: top.map(function (x) { var l = lvl(x.pr, c); return l ? l.stall_cycles : 0; }) };
      })
    }, function (x) { location.hash = at('pair', top[x.dataIndex].j); });
    var g = chartBox('tall');
    add(main, card('who evicts the lines of ' + f.name + '\'s data structures at ' + state.cache, g,
      note('from the pairs\' evicted_by: an arrow from X to Y: fills of X evicted lines that ' + f.name + '\'s references to Y brought in')));
    evictorGraph(g, prs.map(function (x) { return { name: x.pr.object, entry: x.pr }; }));
  }

  // ---- a data structure --------------------------------------------------------
  function object(i) {
    var p = P(), o = p.objects[i];
    if (!o) return missing();
    crumbs([[o.name, at('obj', i)]]);
    add(main, h('h1', { text: o.name }));
    add(main, card('data structure', facts([
      ['kind', o.kind], ['full name', o.full_name],
      ['size', o.size ? bytes(o.size) + (o.kind === 'heap' ? ' allocated over the run' : '') : '-'],
      o.blocks ? ['blocks', num(o.blocks)] : null,
      o.alloc_site ? ['allocated at', o.alloc_site] : null,
      o.call_path ? ['allocation call path', o.call_path.join(' ← ')] : null,
      ['stall cycles', num(o.stall_cycles) + ' (every cache)', 'obj-stall']
    ]), h('h2', { text: 'by cache' }), levelTable(o, 'obj-levels')));
    var rows = o.pairs.map(function (j) {
      var pr = p.pairs[j], l = lvl(pr) || {};
      return { cells: [pr.function, num(pr.stall_cycles), num(l.misses || 0)], go: at('pair', j), attrs: { 'data-function': pr.function } };
    });
    var g = h('div', { class: 'grid' });
    add(main, g);
    add(g, card('procedures using ' + o.name, table([col('procedure', null, true), col('stall cycles'), col('misses at ' + state.cache)], rows, 'obj-pairs'),
      note(rows.length + ' shown of the ' + o.pairs_total + ' the profile lists for it')));
    add(g, card('who evicted ' + o.name + '\'s lines at ' + state.cache, evictedByTable(o, o.name)));
    add(main, sharingTables(o));
    sharingHeatmap(o);
    lineUseHeatmap(o);
  }
  // lineUseHeatmap: of the lines the object's misses filled at each
  // cache, the share that used each byte offset while resident (its
  // line_use over the lines counted, fetched_bytes / line size).
  function lineUseHeatmap(o) {
    if (!o.line_use || !known()) return;
    var rows = [];
    P().caches.forEach(function (c) {
      var use = o.line_use[c.name], l = lvl(o, c.name);
      if (!use || !l || !l.fetched_bytes || !c.line) return;
      var counts = [];
      for (var i = 0; i < c.line; i++) counts.push(use[i] || 0);
      rows.push({ cache: c.name, line: c.line, lines: l.fetched_bytes / c.line, counts: counts, used: l.used_bytes });
    });
    if (!rows.length) return;
    var width = Math.max.apply(null, rows.map(function (r) { return r.line; }));
    var offs = [];
    for (var i = 0; i < width; i++) offs.push(String(i));
    var data = [];
    rows.forEach(function (r, y) {
      r.counts.forEach(function (n, x) { data.push([x, y, Math.round(1000 * n / r.lines) / 10, n]); });
    });
    var el = chartBox();
    add(main, card('line use: which bytes of ' + o.name + '\'s lines were used', el,
      table([col('cache', null, true), col('lines', 'lines'), col('bytes used per line', 'per_line'), col('offsets never used', 'unused'),
        col('least used offset', 'least')], rows.map(function (r) {
        var least = r.counts.indexOf(Math.min.apply(null, r.counts));
        return { cells: [r.cache, num(r.lines), (r.used / r.lines).toFixed(1) + ' of ' + r.line,
          num(r.counts.filter(function (n) { return !n; }).length), '+' + least + ' (' + share(r.counts[least], r.lines) + ')'],
          attrs: { 'data-level': r.cache } };
      }), 'line-use'),
      note('of the lines its misses filled at each cache, as they left (or at the end of the run), the share that had each byte offset used while resident: ' +
        'bytes never used were fetched for nothing (reorder, split or pack the fields)')));
    el.id = 'line-use-chart';
    chart(el, {
      tooltip: { formatter: function (x) {
        var r = rows[x.data[1]];
        return r.cache + ' offset +' + x.data[0] + ': ' + num(x.data[3]) + ' of ' + num(r.lines) + ' lines (' + x.data[2] + '%)';
      } },
      grid: { left: 70, right: 20, top: 20, bottom: 70 },
      xAxis: { type: 'category', data: offs, name: 'byte offset in the line', nameLocation: 'middle', nameGap: 28 },
      yAxis: { type: 'category', data: rows.map(function (r) { return r.cache; }) },
      visualMap: { min: 0, max: 100, dimension: 2, orient: 'horizontal', left: 'center', bottom: 0, calculable: false, itemHeight: 120,
        text: ['100% of lines', '0%'], inRange: { color: ['#f5f7fb', '#9cb3d9', '#1f4e99'] } },
      series: [{ type: 'heatmap', data: data }]
    });
  }
  // sharingHeatmap: which processor's writes at which offset invalidated
  // other processors' copies of the object's lines.
  function sharingHeatmap(o) {
    var w = (o.sharing_writes || []).filter(function (x) { return state.cpu < 0 || x.processor === state.cpu; });
    if (!w.length) return;
    var offs = [], procs = [];
    w.forEach(function (x) {
      var k = '+' + x.offset + ' (' + x.size + ' B)';
      if (offs.indexOf(k) < 0) offs.push(k);
      if (procs.indexOf(x.processor) < 0) procs.push(x.processor);
    });
    procs.sort(function (a, b) { return a - b; });
    var el = chartBox();
    add(main, card('writes that invalidated other processors\' copies, by processor and offset', el,
      table([col('processor', null, true), col('offset'), col('bytes'), col('copies invalidated'), col('false sharing'), col('neighbour'), col('own block')],
        w.map(function (x) { return { cells: [String(x.processor), '+' + x.offset, num(x.size), num(x.copies), num(x.false_sharing), num(x.neighbour || 0), x.own_block ? 'yes' : ''] }; }),
        'sharing-writes'),
      note('offset: of the first byte written, from the object\'s start (its heap block\'s for a heap object); false sharing: copies whose processor had not used the bytes written')));
    chart(el, {
      tooltip: { formatter: function (x) { return 'processor ' + procs[x.data[1]] + ' at ' + offs[x.data[0]] + ': ' + num(x.data[2]) + ' copies invalidated'; } },
      grid: { left: 90, right: 20, top: 20, bottom: 70 },
      xAxis: { type: 'category', data: offs, name: 'offset', nameLocation: 'middle', nameGap: 45 },
      yAxis: { type: 'category', data: procs.map(function (x) { return 'processor ' + x; }) },
      visualMap: { min: 0, max: Math.max.apply(null, w.map(function (x) { return x.copies; })), orient: 'horizontal', left: 'center', bottom: 0, calculable: false, itemHeight: 120 },
      series: [{ type: 'heatmap', label: { show: true, formatter: function (x) { return num(x.data[2]); } },
        data: w.map(function (x) { return [offs.indexOf('+' + x.offset + ' (' + x.size + ' B)'), procs.indexOf(x.processor), x.copies]; }) }]
    });
  }

  // ---- a pair -------------------------------------------------------------------
  function pair(i) {
    var p = P(), pr = p.pairs[i];
    if (!pr) return missing();
    var fi = fnIndex(pr.function);
    crumbs([[pr.function, fi >= 0 ? at('fn', fi) : null], [pr.object, at('pair', i)]]);
    add(main, h('h1', null, link(pr.function, fi >= 0 ? at('fn', fi) : null), ' × ', link(pr.object, objIndex(pr.object) >= 0 ? at('obj', objIndex(pr.object)) : null)));
    add(main, card('the data structure in the procedure', facts([
      ['stall cycles', num(pr.stall_cycles) + ' (every cache)', 'pair-stall'],
      ['strides', stridesText(pr.strides)]
    ]), h('h2', { text: 'by cache' }), levelTable(pr, 'pair-levels'),
    note('miss rate: misses / accesses; causes: what removed the line since it was last there; spatial use: of the lines its misses fetched, the bytes touched while resident')));
    var g = h('div', { class: 'grid' }), a = chartBox(), b = chartBox();
    add(main, g);
    add(g, card('why it misses', a));
    add(g, card('line use', b));
    causesChart(a, pr);
    lineUseChart(b, pr);
    add(main, card('who evicted its lines at ' + state.cache, evictedByTable(pr, pr.object)));
    add(main, sharingTables(pr));
    var rows = pr.references.map(function (j) {
      var r = p.references[j], l = lvl(r) || {};
      return { cells: [loc(r.file, r.line, r.column), r.kind, r.pc, num(r.stall_cycles), num(l.misses || 0),
        known() ? rate(l.misses || 0, l.accesses || 0) : '-'], go: at('ref', j), attrs: { 'data-ref': r.pc } };
    });
    add(main, card('its references', table([col('file:line', null, true), col('kind', null, true), col('pc', null, true), col('stall cycles', 'stall'),
      col('misses at ' + state.cache, 'misses'), col('miss rate', 'miss_rate')], rows, 'refs'),
    note(pr.references.length + ' of the ' + pr.refs_total + ' references the profile lists for the pair' +
      (p.totals.omitted_references ? ' (the profile left out ' + num(p.totals.omitted_references) + ' references with the fewest stall cycles)' : ''))));
  }

  // ---- a reference ----------------------------------------------------------------
  function reference(i) {
    var p = P(), r = p.references[i];
    if (!r) return missing();
    var pr = p.pairs[r.pair], fi = fnIndex(r.function);
    crumbs([[r.function, fi >= 0 ? at('fn', fi) : null], [r.object, at('pair', r.pair)], [loc(r.file, r.line), at('ref', i)]]);
    add(main, h('h1', { text: loc(r.file, r.line, r.column) + ' ' + r.kind + ' of ' + r.object }));
    add(main, card('reference', facts([
      ['source', r.file ? r.file + (r.line ? ':' + r.line : '') + (r.column ? ':' + r.column : '') : 'unknown', 'ref-loc'],
      ['pc', r.pc], ['procedure', r.function], ['object', r.object], ['kind', r.kind],
      ['stall cycles', num(r.stall_cycles) + ' (every cache; ' + share(r.stall_cycles, pr.stall_cycles) + ' of the pair\'s)', 'ref-stall'],
      ['strides', stridesText(r.strides)]
    ]), h('h2', { text: 'by cache' }), levelTable(r, 'ref-levels')));
    add(main, card('source', source(r)));
    var l = lvl(r);
    var ev = l && l.evictors ? l.evictors : [];
    add(main, card('references whose fills evicted its lines at ' + state.cache,
      ev.length ? table([col('reference', null, true), col('object', null, true), col('lines'), col('where', null, true)], ev.map(function (e) {
        var j = p.references.findIndex(function (x) { return x.pc === e.reference; });
        var w = j >= 0 ? loc(p.references[j].file, p.references[j].line) + ' in ' + p.references[j].function : '';
        return { cells: [e.reference === 'other' ? 'others' : e.reference, e.object || '', num(e.lines), w], go: j >= 0 ? at('ref', j) : null };
      }), 'evictors') : note('none recorded at ' + state.cache)));
  }
  function source(r) {
    var lines = (P().sources || {})[r.file];
    if (!r.file || !r.line) return note('the profile has no source line for this reference');
    if (!lines) return note(r.file + ' could not be read when the page was made');
    // The lines kept around it, as far as they run on without a gap.
    var lo = r.line, hi = r.line;
    while (lines[lo - 1] !== undefined && r.line - lo < 8) lo--;
    while (lines[hi + 1] !== undefined && hi - r.line < 8) hi++;
    var ns = [];
    for (var n = lo; n <= hi; n++) if (lines[n] !== undefined) ns.push(n);
    if (!ns.length) return note(r.file + ' has no line ' + r.line + ' now');
    return h('div', null, h('pre', { class: 'src' }, ns.map(function (n) {
      return h('div', { class: n === r.line ? 'hit' : null, 'data-line': n }, h('span', { class: 'n', text: n }), lines[n]);
    })), note(r.file + ', as it was when the page was made'));
  }
  function missing() { add(main, h('p', { class: 'warn', text: 'nothing here: the page does not hold this entry' })); }

  // ---- the comparison of two profiles ---------------------------------------------------
  function diff() {
    var d = DATA.diff;
    crumbs([]);
    document.getElementById('crumbs').textContent = 'A vs B';
    add(main, h('h1', { text: 'A: ' + d.a + '  vs  B: ' + d.b }));
    d.tables.forEach(function (t) {
      var c = t.columns, ia = c.indexOf('a'), ib = c.indexOf('b'), ic = c.indexOf('change'), ir = c.indexOf('relative'),
        icn = c.indexOf('counter'), is = c.indexOf('status'), nkeys = is >= 0 ? is : icn;
      var cols = c.map(function (n, i) { return col(n === 'a' ? 'A' : n === 'b' ? 'B' : n, n, i <= icn); });
      var rows = t.rows.map(function (r) {
        return { cells: r.map(function (v, i) {
          if (v === null) return '-';
          if (i === ir) return (v > 0 ? '+' : '') + (100 * v).toFixed(1) + '%';
          if (typeof v === 'number' && r[icn] === 'miss rate' && (i === ia || i === ib || i === ic)) return (100 * v).toFixed(4) + '%';
          if (i === ic) return h('span', { class: v > 0 ? 'pos' : v < 0 ? 'neg' : null, text: (v > 0 ? '+' : '') + num(v) });
          return typeof v === 'number' ? num(v) : v;
        }) };
      });
      var s = card(t.title, (t.notes || []).map(note));
      if (t.view !== 'summary') {
        var el = chartBox('tall');
        add(s, el);
        var st = t.rows.filter(function (r) { return r[icn] === 'stall cycles'; }).slice(0, 12).reverse();
        var label = function (r) { return r.slice(0, nkeys).join(' × '); };
        chart(el, {
          title: { text: 'stall cycles, A and B side by side', left: 'center', textStyle: { fontSize: 13 } },
          tooltip: { trigger: 'axis', axisPointer: { type: 'shadow' } }, legend: { bottom: 0 },
          grid: { left: 10, right: 30, top: 30, bottom: 62, containLabel: true }, xAxis: { type: 'value', name: 'cycles', nameLocation: 'middle', nameGap: 24 },
          yAxis: { type: 'category', data: st.map(label), axisLabel: { width: 260, overflow: 'truncate' } },
          series: [{ name: 'A: ' + d.a, type: 'bar', data: st.map(function (r) { return r[ia] || 0; }) },
            { name: 'B: ' + d.b, type: 'bar', data: st.map(function (r) { return r[ib] || 0; }) }]
        });
      }
      add(s, table(cols, rows, 'diff-' + t.view));
      add(main, s);
    });
  }

  // ---- routing ---------------------------------------------------------------------------
  function route() {
    var parts = location.hash.replace(/^#\/?/, '').split('/');
    if (parts[0] === 'diff' && DATA.diff) return { kind: 'diff' };
    var p = Number(parts[0]);
    return { p: p >= 0 && p < DATA.profiles.length ? p : 0, kind: parts[1] || '', i: Number(parts[2]) };
  }
  function render() {
    charts.forEach(function (c) { c.dispose(); });
    charts = [];
    main.textContent = '';
    var r = route();
    if (r.kind !== 'diff' && r.p !== state.p) {
      state.p = r.p;
      var p = P();
      if (!p.caches.some(function (c) { return c.name === state.cache; })) state.cache = p.focus;
      if (state.pid >= (p.processes || []).length) state.pid = -1;
    }
    controls();
    if (r.kind === 'diff') diff();
    else if (r.kind === 'fn') procedure(r.i);
    else if (r.kind === 'obj') object(r.i);
    else if (r.kind === 'pair') pair(r.i);
    else if (r.kind === 'ref') reference(r.i);
    else overview();
    document.body.setAttribute('data-page', r.kind || 'overview');
    window.scrollTo(0, 0);
  }
  window.addEventListener('hashchange', render);
  window.addEventListener('resize', function () {
    charts.forEach(function (c) { c.resize(); if (c.afterResize) c.afterResize(); });
  });
  document.getElementById('foot').textContent = 'memspy web UI · charts by Apache ECharts ' + DATA.echarts +
    ' (Apache-2.0), embedded · every number is the profile\'s; lists are bounded to the entries with the most cycles';
  render();
})();
