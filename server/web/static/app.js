// dpbandit dashboard: plain JS, no dependencies, no build step.
//
// It talks only to this server's /v1 API with the key the user entered
// (kept in sessionStorage, sent as "Authorization: Bearer KEY"). Charts are
// inline SVG. Decision shares over time and the reward curve come from the
// server's series when it sends them; otherwise they are built from the
// counts seen at each refresh (kept in sessionStorage per experiment).
'use strict';

(function () {
  const REFRESH_MS = 3000;
  const MAX_SAMPLES = 240;
  const KEY_STORE = 'dpbandit.key';
  const HIST_STORE = 'dpbandit.hist.';
  const COLORS = ['#2f6fdb', '#e07b00', '#1e9b63', '#c2307a', '#7a5bd6', '#0f9bb0', '#a3862c', '#5d6b7a', '#d64545', '#4c8f2d'];
  const SVGNS = 'http://www.w3.org/2000/svg';

  const $ = (id) => document.getElementById(id);
  const state = {
    key: sessionStorage.getItem(KEY_STORE) || '',
    role: '',          // 'admin' | 'client' | ''
    experiments: [],
    selected: '',
    policies: [],
    timer: 0,
    busy: false,
  };

  // ---------- API ----------

  class APIError extends Error {
    constructor(status, code, message) {
      super(message || ('HTTP ' + status));
      this.status = status; this.code = code || '';
    }
  }

  async function api(method, path, body) {
    const headers = { 'Accept': 'application/json' };
    if (state.key) headers['Authorization'] = 'Bearer ' + state.key;
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let resp;
    try {
      resp = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), cache: 'no-store' });
    } catch (e) {
      throw new APIError(0, 'network', 'cannot reach the server: ' + e.message);
    }
    const text = await resp.text();
    let data = null;
    if (text) { try { data = JSON.parse(text); } catch (e) { data = null; } }
    if (!resp.ok) {
      const err = data && data.error ? data.error : {};
      throw new APIError(resp.status, err.code, err.message || text.trim() || resp.statusText);
    }
    return data;
  }

  // ---------- formatting ----------

  function fmtInt(n) { return (typeof n === 'number' && isFinite(n)) ? Math.round(n).toLocaleString('en-US') : '–'; }
  // ε: at least one decimal ("1.0"), at most 3 significant digits.
  function fmtEps(x) {
    if (typeof x !== 'number' || !isFinite(x)) return '∞';
    if (x === 0) return '0';
    if (Number.isInteger(x)) return x.toFixed(1);
    if (Math.abs(x) >= 0.001 && Math.abs(x) < 1e6) return String(Number(x.toPrecision(3)));
    return shortExp(x);
  }
  // δ: "1e-6", "2.5e-7"; 0 stays 0.
  function fmtDelta(x) {
    if (typeof x !== 'number' || !isFinite(x)) return '–';
    if (x === 0) return '0';
    if (x >= 0.001) return String(Number(x.toPrecision(3)));
    return shortExp(x);
  }
  function shortExp(x) { return Number(x.toPrecision(3)).toExponential().replace('e+', 'e'); }
  function fmtPct(f) {
    if (typeof f !== 'number' || !isFinite(f)) return '–';
    if (f > 0 && f < 0.001) return '<0.1%';
    return (100 * f).toFixed(f < 0.1 ? 1 : 0) + '%';
  }
  function fmtNum(x) { return (typeof x === 'number' && isFinite(x)) ? String(Number(x.toPrecision(4))) : '–'; }

  const NOTIONS = {
    gdp: 'Gaussian DP (μ-GDP)', zcdp: 'zero-concentrated DP (ρ-zCDP)', rdp: 'Rényi DP',
    pure: 'pure ε-DP', approx: '(ε, δ)-DP',
  };

  // ---------- reading the server's experiment object ----------
  // The functions below are the one place that knows the server's field
  // names; every field is optional so the page degrades when one is absent.

  function num(v) { return typeof v === 'number' && isFinite(v) ? v : undefined; }
  function armNames(exp) { return Array.isArray(exp.arms) ? exp.arms.map(String) : []; }

  // Per-arm decision counts in arm order (DP outputs: counts of released
  // arms), or null when the server sends none.
  function armDecisions(exp) {
    const v = exp.arm_decisions;
    return Array.isArray(v) && v.length === armNames(exp).length ? v.map((x) => num(x) || 0) : null;
  }

  function totalDecisions(exp) {
    if (num(exp.decisions) !== undefined) return exp.decisions;
    const c = armDecisions(exp);
    return c ? c.reduce((a, b) => a + b, 0) : undefined;
  }

  function totalRewards(exp) { return num(exp.rewards); }

  // The admin-only raw aggregates ("internal", labelled "internal, not
  // private"), or null.
  function internalOf(exp) {
    const v = exp.internal;
    if (!v || typeof v !== 'object') return null;
    const arms = Array.isArray(v.arms) ? v.arms.map((a) => ({
      name: String(a.name), rewards: num(a.rewards), sum: num(a.reward_sum), mean: num(a.reward_mean),
    })) : [];
    const rewards = num(v.rewards), sum = num(v.reward_sum);
    const mean = sum !== undefined && rewards ? sum / rewards : undefined;
    return { label: v.label || 'internal, not private', arms, rewards, sum, mean, series: Array.isArray(v.series) ? v.series : null };
  }

  // The privacy status: the server sends {private, notion, accounting,
  // budget, spent, remaining, fraction, exhausted, reason, statement}; spent
  // and remaining are amounts in the filter's units (rho for zCDP, mu for
  // GDP, epsilon for pure DP) with epsilon at delta.
  function privacyOf(exp) {
    const p = exp.privacy || {};
    const b = p.budget !== undefined ? p.budget : (exp.budget || null);
    const isPrivate = p.private !== undefined ? (!!p.private && !!b) : (!!b && p.notion !== 'none');
    const spent = amountOf(p.spent), remaining = amountOf(p.remaining);
    // The share of the budget spent, in the budget's own units (ε at the
    // budget's δ for an (ε, δ) budget, μ for a GDP one), as the server
    // states it; the additive fraction (of μ², ρ or ε) only as a fallback.
    let frac = num(p.share);
    let unit = p.share_unit || '';
    if (frac === undefined && b && spent.epsilon !== undefined && num(b.epsilon)) { frac = spent.epsilon / b.epsilon; unit = 'ε'; }
    if (frac === undefined) { frac = num(p.fraction); unit = ''; }
    return {
      private: isPrivate,
      notion: p.notion || (b ? '' : 'none'),
      accounting: p.accounting || '',
      budgetEps: b ? num(b.epsilon) : undefined,
      budgetMu: b ? num(b.mu) : undefined,
      budgetDelta: b ? num(b.delta) : undefined,
      spent, remaining, fraction: frac, unit,
      exhausted: !!p.exhausted,
      reason: p.reason || '',
      statement: p.statement || '',
    };
  }
  function amountOf(a) {
    if (typeof a === 'number') return { epsilon: a };
    if (!a || typeof a !== 'object') return {};
    return { epsilon: num(a.epsilon), delta: num(a.delta), mu: num(a.mu), rho: num(a.rho) };
  }
  // An amount in the experiment's accounting units, e.g. "ρ 0.0031".
  function amountText(a, p) {
    if (a.rho !== undefined) return 'ρ ' + fmtNum(a.rho);
    if (a.mu !== undefined) return 'μ ' + fmtNum(a.mu);
    if (a.epsilon !== undefined) return 'ε ' + fmtEps(a.epsilon);
    return undefined;
  }
  // "(1.0, 1e-6)" for an (ε, δ) budget, "μ = 0.5" for a GDP one.
  function budgetText(p) {
    if (p.budgetEps !== undefined) return '(' + fmtEps(p.budgetEps) + ', ' + fmtDelta(p.budgetDelta) + ')';
    if (p.budgetMu !== undefined) return 'μ = ' + fmtNum(p.budgetMu);
    return '?';
  }

  // The server's history of per-arm decision counts, as [{d, counts}],
  // ending with the current counts; null when it sends no history.
  function serverShares(exp) {
    const s = exp.history;
    if (!Array.isArray(s) || !s.length) return null;
    const out = [];
    for (const pt of s) {
      const d = num(pt.decisions);
      if (Array.isArray(pt.arm_decisions) && d !== undefined) out.push({ d, counts: pt.arm_decisions });
    }
    const now = armDecisions(exp), d = totalDecisions(exp);
    if (now && d !== undefined && (!out.length || out[out.length - 1].d < d)) out.push({ d, counts: now });
    return out.length ? out : null;
  }

  // ---------- words ----------

  function privacyWords(exp) {
    const p = privacyOf(exp);
    if (!p.private) {
      return { text: 'Not private: policy ' + (exp.policy || '?') + ' gives no privacy guarantee; its decisions depend on raw rewards.', none: true };
    }
    let s = p.budgetEps !== undefined
      ? 'This experiment is ' + budgetText(p) + '-DP for each user\'s reward'
      : 'This experiment is μ-GDP with ' + budgetText(p) + ' (δ = ' + fmtDelta(p.budgetDelta) + ' for reporting) for each user\'s reward';
    s += ' (event-level: one decision\'s reward replaced)';
    if (p.accounting === 'filter') {
      s += ', enforced by a ' + (NOTIONS[p.notion] || p.notion || 'privacy') + ' filter whatever the number of decisions.';
      if (p.spent.epsilon !== undefined && !p.exhausted) {
        const of = p.budgetEps !== undefined ? 'its ε = ' + fmtEps(p.budgetEps) : p.budgetMu !== undefined ? 'its μ = ' + fmtNum(p.budgetMu) : 'the budget';
        s += ' So far it has spent ' + fmtPct(p.fraction) + ' of ' + of + ': the decisions made so far are (' +
          fmtEps(p.spent.epsilon) + ', ' + fmtDelta(p.budgetDelta) + ')-DP' + (p.spent.mu !== undefined ? ' (μ = ' + fmtNum(p.spent.mu) + ')' : '') + '.';
      }
    } else {
      s += '.';
    }
    if (p.exhausted) {
      s += exp.on_exhausted === 'stop'
        ? ' The budget is exhausted: the experiment is stopped and decisions are refused (409).'
        : ' The budget is exhausted: the experiment is frozen and plays from the distribution of its past decisions (post-processing, no further cost).';
      if (p.reason) s += ' (' + p.reason.replace(/\.$/, '') + '.)';
    }
    return { text: s, none: false };
  }

  // ---------- history (shares and reward curve from refreshes) ----------

  function loadHist(id) {
    try { return JSON.parse(sessionStorage.getItem(HIST_STORE + id)) || []; } catch (e) { return []; }
  }
  function saveHist(id, h) {
    try { sessionStorage.setItem(HIST_STORE + id, JSON.stringify(h)); } catch (e) { /* quota: keep in memory only */ }
  }
  const hist = {};
  function record(exp) {
    const id = exp.id;
    const h = hist[id] || (hist[id] = loadHist(id));
    const d = totalDecisions(exp);
    const counts = armDecisions(exp);
    const inn = internalOf(exp);
    const pt = { t: Date.now(), d: d || 0, counts: counts || null, r: inn ? inn.rewards : undefined, s: inn ? inn.sum : undefined };
    const last = h[h.length - 1];
    if (last && last.d === pt.d && last.r === pt.r) { last.t = pt.t; } else { h.push(pt); }
    if (last && pt.d < last.d) h.splice(0, h.length - 1); // server restarted from scratch: drop the old history
    while (h.length > MAX_SAMPLES) h.shift();
    saveHist(id, h);
    return h;
  }

  // ---------- SVG ----------

  function el(name, attrs, parent) {
    const e = document.createElementNS(SVGNS, name);
    for (const k in attrs) e.setAttribute(k, attrs[k]);
    if (parent) parent.appendChild(e);
    return e;
  }
  function text(parent, x, y, s, anchor) {
    const t = el('text', { x, y, 'text-anchor': anchor || 'start' }, parent);
    t.textContent = s;
    return t;
  }

  // Stacked step chart of shares: points [{x0, x, shares: [..]}], each the
  // shares of the decisions made in the interval (x0, x], summing to 1. Each
  // interval is drawn flat over its own span: a share is known only as an
  // average over its interval, so nothing is interpolated between samples.
  function drawShares(container, names, points) {
    container.textContent = '';
    const W = 600, H = 190, L = 36, R = 8, T = 8, B = 24;
    const svg = el('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': 'decision shares per interval' }, container);
    const x0 = points[0].x0, x1 = points[points.length - 1].x;
    const sx = (x) => L + (x1 === x0 ? (W - L - R) : (x - x0) / (x1 - x0) * (W - L - R));
    const sy = (f) => T + (1 - f) * (H - T - B);
    for (const f of [0, 0.5, 1]) {
      el('line', { x1: L, x2: W - R, y1: sy(f), y2: sy(f), stroke: '#dde2e8' }, svg);
      text(svg, L - 4, sy(f) + 3, (100 * f) + '%', 'end');
    }
    // Two vertices per interval: its start and its end, at its share.
    const xs = points.flatMap((p) => [sx(p.x0), sx(p.x)]);
    let below = xs.map(() => 0);
    names.forEach((name, k) => {
      const above = points.flatMap((p, i) => {
        const y = below[2 * i] + (p.shares[k] || 0);
        return [y, y];
      });
      let d = '';
      xs.forEach((x, i) => { d += (i ? 'L' : 'M') + x.toFixed(1) + ',' + sy(above[i]).toFixed(1); });
      for (let i = xs.length - 1; i >= 0; i--) d += 'L' + xs[i].toFixed(1) + ',' + sy(below[i]).toFixed(1);
      const path = el('path', { d: d + 'Z', fill: COLORS[k % COLORS.length], 'fill-opacity': 0.8, 'data-arm': name }, svg);
      el('title', {}, path).textContent = name;
      below = above;
    });
    text(svg, L, H - 6, fmtInt(x0) + ' decisions');
    text(svg, W - R, H - 6, fmtInt(x1), 'end');
  }

  // Line chart: series [{name, color, points: [{x, y}]}].
  function drawLines(container, series, xlabel, ylabel, yrange) {
    container.textContent = '';
    const W = 600, H = 190, L = 44, R = 8, T = 8, B = 24;
    const all = series.flatMap((s) => s.points);
    const svg = el('svg', { viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': ylabel }, container);
    let x0 = Math.min(...all.map((p) => p.x)), x1 = Math.max(...all.map((p) => p.x));
    let y0 = Math.min(...all.map((p) => p.y)), y1 = Math.max(...all.map((p) => p.y));
    if (x1 === x0) { x1 = x0 + 1; }
    if (yrange && yrange[0] < yrange[1]) { y0 = Math.min(y0, yrange[0]); y1 = Math.max(y1, yrange[1]); }
    if (y1 === y0) { y0 -= 0.5; y1 += 0.5; }
    if (!yrange) { const pad = (y1 - y0) * 0.08; y0 -= pad; y1 += pad; }
    const sx = (x) => L + (x - x0) / (x1 - x0) * (W - L - R);
    const sy = (y) => T + (1 - (y - y0) / (y1 - y0)) * (H - T - B);
    for (const f of [0, 0.5, 1]) {
      const y = y0 + f * (y1 - y0);
      el('line', { x1: L, x2: W - R, y1: sy(y), y2: sy(y), stroke: '#dde2e8' }, svg);
      text(svg, L - 4, sy(y) + 3, fmtNum(y), 'end');
    }
    for (const s of series) {
      if (!s.points.length) continue;
      const d = s.points.map((p, i) => (i ? 'L' : 'M') + sx(p.x).toFixed(1) + ',' + sy(p.y).toFixed(1)).join('');
      el('path', { d, fill: 'none', stroke: s.color, 'stroke-width': 2, 'data-series': s.name }, svg);
      if (s.points.length === 1) el('circle', { cx: sx(s.points[0].x), cy: sy(s.points[0].y), r: 3, fill: s.color }, svg);
    }
    text(svg, L, H - 6, fmtInt(x0) + ' ' + xlabel);
    text(svg, W - R, H - 6, fmtInt(x1), 'end');
  }

  function drawGauge(svg, frac, label) {
    svg.textContent = '';
    const cx = 100, cy = 100, r = 80;
    const arc = (f) => {
      const a = Math.PI * (1 - f);
      return [cx + r * Math.cos(a), cy - r * Math.sin(a)];
    };
    const [sx0, sy0] = arc(0), [sx1, sy1] = arc(1);
    el('path', { d: `M${sx0},${sy0} A${r},${r} 0 0 1 ${sx1},${sy1}`, fill: 'none', stroke: '#e6e9ee', 'stroke-width': 16 }, svg);
    if (frac !== null) {
      const f = Math.max(0, Math.min(1, frac));
      const color = f >= 1 ? '#b3261e' : f > 0.8 ? '#b65c00' : '#2f6fdb';
      if (f > 0) {
        const [ex, ey] = arc(f);
        el('path', { d: `M${sx0},${sy0} A${r},${r} 0 0 1 ${ex.toFixed(2)},${ey.toFixed(2)}`, fill: 'none', stroke: color, 'stroke-width': 16 }, svg);
      }
    }
    const t = el('text', { x: cx, y: cy - 8, 'text-anchor': 'middle', 'font-size': 22, fill: '#1d232a', 'data-testid': 'budget-gauge-text' }, svg);
    t.textContent = label;
    svg.setAttribute('data-fraction', frac === null ? '' : String(frac));
  }

  // ---------- rendering ----------

  function show(id, on) { $(id).hidden = !on; }
  function banner(msg) { const b = $('banner'); b.textContent = msg || ''; b.hidden = !msg; }

  function renderList() {
    const ul = $('experiment-list');
    ul.textContent = '';
    for (const exp of state.experiments) {
      const li = document.createElement('li');
      const a = document.createElement('a');
      a.href = '#/experiments/' + encodeURIComponent(exp.id);
      a.dataset.testid = 'experiment-row';
      a.dataset.id = exp.id;
      if (exp.id === state.selected) a.className = 'selected';
      const name = document.createElement('div');
      name.textContent = exp.name || exp.id;
      const meta = document.createElement('div');
      meta.className = 'meta';
      const p = privacyOf(exp);
      const priv = p.private ? '(' + fmtEps(p.budgetEps) + ', ' + fmtDelta(p.budgetDelta) + ')-DP' : 'not private';
      const d = totalDecisions(exp);
      meta.textContent = (exp.policy || '') + ' · ' + priv + (d !== undefined ? ' · ' + fmtInt(d) + ' decisions' : '') + (p.exhausted ? ' · exhausted' : '');
      a.append(name, meta);
      li.appendChild(a);
      ul.appendChild(li);
    }
    show('experiment-empty', state.experiments.length === 0);
  }

  function renderDetail(exp) {
    const names = armNames(exp);
    $('exp-name').textContent = exp.name || exp.id;
    $('exp-id').textContent = exp.id;
    $('exp-policy').textContent = exp.policy || '–';
    $('exp-horizon').textContent = fmtInt(exp.horizon);
    $('exp-range').textContent = Array.isArray(exp.reward_range) ? '[' + exp.reward_range.join(', ') + ']' : '–';

    const p = privacyOf(exp);
    const status = $('exp-status');
    status.className = 'pill ' + (p.exhausted ? (exp.on_exhausted === 'stop' ? 'bad' : 'warn') : 'good');
    status.textContent = p.exhausted ? (exp.on_exhausted === 'stop' ? 'stopped: budget exhausted' : 'frozen: budget exhausted') : (exp.status || 'running');
    status.dataset.exhausted = String(p.exhausted);

    const w = privacyWords(exp);
    const pw = $('privacy-words');
    pw.textContent = w.text;
    pw.className = 'privacy' + (w.none ? ' none' : '');
    pw.dataset.private = String(!w.none);

    const d = totalDecisions(exp);
    $('decisions-count').textContent = fmtInt(d);
    $('decisions-count').dataset.value = d === undefined ? '' : String(d);
    $('decisions-progress').textContent = exp.horizon ? fmtPct((d || 0) / exp.horizon) + ' of the horizon' : '';
    const r = totalRewards(exp);
    $('rewards-count').textContent = fmtInt(r);
    $('rewards-count').dataset.value = r === undefined ? '' : String(r);
    $('rewards-note').textContent = r === undefined ? 'not shown for this key' : '';

    // Gauge: the share of the budget spent, in the budget's own units.
    if (p.private) {
      drawGauge($('budget-gauge'), p.fraction === undefined ? null : p.fraction, p.fraction === undefined ? '?' : fmtPct(p.fraction) + (p.unit ? ' of ' + p.unit.split(' ')[0] : ''));
      const st = amountText(p.spent, p), rt = amountText(p.remaining, p);
      $('budget-spent').textContent = st || '–';
      $('budget-spent').dataset.value = p.fraction === undefined ? '' : String(p.fraction);
      let total = budgetText(p) + '-DP';
      if (p.spent.rho !== undefined && p.remaining.rho !== undefined) total = 'ρ ' + fmtNum(p.spent.rho + p.remaining.rho) + ' = ' + total;
      else if (p.spent.mu !== undefined && p.remaining.mu !== undefined) total = 'μ ' + fmtNum(Math.hypot(p.spent.mu, p.remaining.mu)) + ' = ' + total;
      $('budget-total').textContent = total;
      $('budget-remaining').textContent = rt || '–';
    } else {
      drawGauge($('budget-gauge'), null, 'no budget');
      $('budget-spent').textContent = 'not private';
      $('budget-spent').dataset.value = '';
      $('budget-total').textContent = 'no budget';
      $('budget-remaining').textContent = '–';
    }

    // Arms table.
    const counts = armDecisions(exp);
    const tb = $('arms-table').querySelector('tbody');
    tb.textContent = '';
    const tot = counts ? counts.reduce((a, b) => a + b, 0) : 0;
    names.forEach((name, k) => {
      const tr = document.createElement('tr');
      tr.dataset.arm = name;
      const c = counts ? counts[k] : undefined;
      const share = counts && tot ? c / tot : undefined;
      const td0 = document.createElement('td');
      const sw = document.createElement('span');
      sw.className = 'swatch';
      sw.style.background = COLORS[k % COLORS.length];
      td0.append(sw, document.createTextNode(name));
      const td1 = document.createElement('td'); td1.className = 'num'; td1.dataset.testid = 'arm-decisions'; td1.textContent = fmtInt(c);
      const td2 = document.createElement('td'); td2.className = 'num'; td2.dataset.testid = 'arm-share'; td2.textContent = fmtPct(share);
      const td3 = document.createElement('td');
      const bar = document.createElement('div'); bar.className = 'bar';
      bar.style.width = (share ? (100 * share).toFixed(1) : 0) + '%';
      bar.style.background = COLORS[k % COLORS.length];
      td3.appendChild(bar);
      tr.append(td0, td1, td2, td3);
      tb.appendChild(tr);
    });

    // Shares over time.
    const h = record(exp);
    const chart = $('shares-chart');
    let pts = null, note = '';
    const ss = serverShares(exp);
    if (ss) {
      pts = intervalShares(ss.map((s) => ({ d: s.d, counts: s.counts })), names.length);
      note = 'Share of decisions per interval, from the server\'s history.';
    } else if (counts) {
      pts = intervalShares(h.filter((s) => s.counts), names.length);
      note = 'Share of decisions between refreshes of this page (the server sends no history).';
    } else {
      note = 'The server sends no per-arm decision counts for this key.';
    }
    if (pts && pts.length) {
      drawShares(chart, names, pts);
      chart.dataset.points = String(pts.length);
    } else {
      chart.textContent = '';
      chart.dataset.points = '0';
      if (counts) note = 'No decisions yet. ' + note;
    }
    $('shares-note').textContent = note;

    // Internal (admin) aggregates.
    const inn = internalOf(exp);
    show('internal', !!inn);
    if (inn) {
      $('internal').querySelector('.internal-label').title = inn.label;
      const it = $('internal-table').querySelector('tbody');
      it.textContent = '';
      for (const a of inn.arms) {
        const tr = document.createElement('tr');
        tr.dataset.arm = a.name;
        const c0 = document.createElement('td'); c0.textContent = a.name;
        const c1 = document.createElement('td'); c1.className = 'num'; c1.textContent = fmtInt(a.rewards);
        const c2 = document.createElement('td'); c2.className = 'num'; c2.dataset.testid = 'arm-mean'; c2.textContent = fmtNum(a.mean);
        tr.append(c0, c1, c2);
        it.appendChild(tr);
      }
      const rc = $('reward-chart');
      const curve = rewardCurve(inn, h);
      if (curve.length) {
        drawLines(rc, [{ name: 'mean reward', color: '#8a4b00', points: curve }], 'rewards', 'mean reward',
          Array.isArray(exp.reward_range) ? exp.reward_range : null);
      } else {
        rc.textContent = 'No rewards yet.';
      }
      rc.dataset.points = String(curve.length);
    }

    $('raw-json').textContent = JSON.stringify(exp, null, 2);
  }

  // Shares of decisions per interval between consecutive samples that gained
  // decisions; the first point is the cumulative share up to it.
  function intervalShares(samples, k) {
    const out = [];
    let prev = null;
    for (const s of samples) {
      if (!s.counts || s.counts.length !== k) continue;
      const base = prev ? prev.counts : new Array(k).fill(0);
      const delta = s.counts.map((c, i) => c - base[i]);
      const tot = delta.reduce((a, b) => a + b, 0);
      if (tot > 0 && delta.every((x) => x >= 0)) {
        out.push({ x0: prev ? prev.d : s.d - tot, x: s.d, shares: delta.map((x) => x / tot) });
        prev = s;
      } else if (!prev || tot < 0) {
        prev = s;
      }
    }
    return out;
  }

  // Cumulative mean reward against the number of rewards, from the server's
  // internal series when present, else from the samples.
  function rewardCurve(inn, h) {
    let pts;
    if (inn.series) {
      pts = inn.series.map((p) => ({ x: num(p.rewards), y: num(p.reward_mean) !== undefined ? p.reward_mean : (p.rewards ? p.reward_sum / p.rewards : undefined) }))
        .filter((p) => p.x !== undefined && p.x > 0 && p.y !== undefined && isFinite(p.y));
    } else {
      pts = h.filter((s) => s.r > 0 && s.s !== undefined).map((s) => ({ x: s.r, y: s.s / s.r }));
    }
    // End with the current totals when the series lags behind them.
    if (inn.rewards > 0 && inn.mean !== undefined && (!pts.length || pts[pts.length - 1].x < inn.rewards)) {
      pts.push({ x: inn.rewards, y: inn.mean });
    }
    return pts;
  }

  // ---------- policies and the create form ----------

  const FALLBACK_POLICIES = [
    { name: 'mts-gaussian', private: true }, { name: 'dp-ts-ucb', private: true }, { name: 'ts-gaussian', private: true },
    { name: 'beta-ts', private: false }, { name: 'ucb1', private: false },
  ];

  async function loadPolicies() {
    let list = null;
    try {
      const d = await api('GET', '/v1/policies');
      list = d && (d.policies || d);
    } catch (e) { /* a client key, or an older server: use the dashboard's own list */ }
    if (!Array.isArray(list) || !list.length) list = FALLBACK_POLICIES;
    state.policies = list.map((p) => (typeof p === 'string' ? { name: p, private: true } : p));
    const sel = document.querySelector('#create-form select[name=policy]');
    sel.textContent = '';
    for (const p of state.policies) {
      const o = document.createElement('option');
      o.value = p.name;
      o.textContent = p.name + (p.private ? '' : ' (not private)');
      sel.appendChild(o);
    }
    const pref = state.policies.find((p) => p.name === 'mts-gaussian') || state.policies.find((p) => p.private);
    if (pref) sel.value = pref.name;
    policyChanged();
  }

  function policyChanged() {
    const f = $('create-form');
    const p = state.policies.find((q) => q.name === f.policy.value) || {};
    $('budget-fields').disabled = p.private === false;
    $('policy-help').textContent = (p.summary || '') + (p.private === false ? ' Not private: created with "budget": null.' : '');
  }

  async function submitCreate(ev) {
    ev.preventDefault();
    const f = $('create-form');
    const err = $('create-error');
    err.hidden = true;
    const arms = f.arms.value.split(/[\n,]/).map((s) => s.trim()).filter(Boolean);
    const pol = state.policies.find((q) => q.name === f.policy.value) || {};
    const body = {
      name: f.name.value.trim(),
      arms,
      policy: f.policy.value,
      horizon: Number(f.horizon.value),
      budget: pol.private === false ? null : { epsilon: Number(f.epsilon.value), delta: Number(f.delta.value) },
      reward_range: [Number(f.reward_lo.value), Number(f.reward_hi.value)],
      on_exhausted: f.on_exhausted.value,
    };
    if (f.reward_wait.value.trim()) body.reward_wait = f.reward_wait.value.trim();
    if (f.default_reward.value.trim() !== '') body.default_reward = Number(f.default_reward.value);
    try {
      const created = await api('POST', '/v1/experiments', body);
      f.reset();
      policyChanged();
      show('create', false);
      location.hash = '#/experiments/' + encodeURIComponent(created.id);
      await refresh();
    } catch (e) {
      err.textContent = (e.status ? e.status + ': ' : '') + e.message;
      err.hidden = false;
    }
  }

  // ---------- refresh loop ----------

  async function refresh() {
    if (!state.key || state.busy) return;
    state.busy = true;
    try {
      api('GET', '/healthz').then(() => setHealth(true), () => setHealth(false));
      try {
        const d = await api('GET', '/v1/experiments');
        state.experiments = (d && (d.experiments || d)) || [];
        if (!Array.isArray(state.experiments)) state.experiments = [];
        if (!state.role) setRole(roleFromList(d));
        banner('');
      } catch (e) {
        if (e.status === 401) { banner('The server refused this key (401): check it and enter it again.'); forget(false); return; }
        if (e.status === 403) {
          setRole('client');
          state.experiments = [];
          banner('');
        } else { banner(e.message); }
      }
      renderList();
      const id = selectedFromHash();
      state.selected = id;
      if (!$('create').hidden) { show('detail', false); show('welcome', false); }
      else if (id) {
        try {
          const exp = await api('GET', '/v1/experiments/' + encodeURIComponent(id));
          if (exp.internal) setRole('admin');
          show('welcome', false);
          show('detail', true);
          renderDetail(exp);
        } catch (e) {
          show('detail', false);
          show('welcome', true);
          $('welcome').textContent = e.status === 403
            ? 'This key may not read experiment ' + id + ' (403): client keys may only decide and reward.'
            : e.status === 404 ? 'No experiment ' + id + ' (404).' : e.message;
        }
      } else {
        show('detail', false);
        show('welcome', true);
        $('welcome').textContent = state.role === 'client'
          ? 'This is a client key: it may only decide and reward, so there is nothing to show. Enter the admin key to see experiments.'
          : 'Select an experiment, or create one.';
      }
      $('updated-at').textContent = new Date().toLocaleTimeString();
      renderList();
    } finally {
      state.busy = false;
    }
  }

  function roleFromList(d) {
    if (d && typeof d.role === 'string') return d.role;
    const exps = (d && d.experiments) || [];
    if (exps.some((e) => e.internal)) return 'admin';
    return '';
  }

  function setRole(role) {
    state.role = role || state.role;
    const r = $('key-role');
    r.textContent = state.role ? state.role + ' key' : 'key accepted';
    r.dataset.role = state.role;
    $('new-experiment').hidden = state.role === 'client';
  }

  function setHealth(ok) {
    const h = $('health');
    h.textContent = ok ? 'healthy' : 'unhealthy';
    h.className = 'pill ' + (ok ? 'good' : 'bad');
  }

  function selectedFromHash() {
    const m = /^#\/experiments\/(.+)$/.exec(location.hash);
    return m ? decodeURIComponent(m[1]) : '';
  }

  function useKey(key) {
    state.key = key;
    state.role = '';
    sessionStorage.setItem(KEY_STORE, key);
    show('key-form', false);
    show('key-status', true);
    show('app', true);
    show('login-help', false);
    setRole('');
    loadPolicies();
    refresh();
    clearInterval(state.timer);
    state.timer = setInterval(() => { if (!document.hidden) refresh(); }, REFRESH_MS);
  }

  function forget(clearBanner) {
    clearInterval(state.timer);
    state.key = '';
    state.role = '';
    sessionStorage.removeItem(KEY_STORE);
    $('key-input').value = '';
    show('key-form', true);
    show('key-status', false);
    show('app', false);
    show('login-help', true);
    if (clearBanner) banner('');
  }

  // ---------- wiring ----------

  document.addEventListener('DOMContentLoaded', () => {
    $('refresh-secs').textContent = String(REFRESH_MS / 1000);
    $('key-form').addEventListener('submit', (ev) => {
      ev.preventDefault();
      const k = $('key-input').value.trim();
      if (k) { banner(''); useKey(k); }
    });
    $('key-forget').addEventListener('click', () => forget(true));
    $('new-experiment').addEventListener('click', () => {
      show('create', true); show('detail', false); show('welcome', false);
      $('create-error').hidden = true;
    });
    $('create-cancel').addEventListener('click', () => { show('create', false); refresh(); });
    $('create-form').addEventListener('submit', submitCreate);
    $('create-form').policy.addEventListener('change', policyChanged);
    window.addEventListener('hashchange', () => { show('create', false); refresh(); });
    api('GET', '/healthz').then(() => setHealth(true), () => setHealth(false));
    if (state.key) useKey(state.key);
  });

  // Exposed for tests.
  window.dpbandit = { fmtEps, fmtDelta, privacyWords, intervalShares, refresh };
})();
