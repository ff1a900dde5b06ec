// agentckpt web console: plain JavaScript, no framework, no network but this server's /api/.
// Views (location.hash): #/ fleet, #/agent/ID timeline, #/agent/ID/checkpoint/SEQ,
// #/agent/ID/diff/A/B, #/agent/ID/preview, #/agent/ID/gates. docs/console.md documents the API.
'use strict';

const TOKEN_KEY = 'agentckpt.console.token';
const BY_KEY = 'agentckpt.console.by';
const view = () => document.getElementById('view');

class Unauthorized extends Error {}

function el(tag, attrs, ...children) {
  const ns = ['svg', 'rect', 'circle', 'line', 'text', 'g', 'title', 'path'].includes(tag)
    ? 'http://www.w3.org/2000/svg' : null;
  const e = ns ? document.createElementNS(ns, tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === 'text') e.textContent = String(v);
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

function token() { return sessionStorage.getItem(TOKEN_KEY) || ''; }

async function api(path, options) {
  const headers = { 'Accept': 'application/json' };
  if (token()) headers['Authorization'] = 'Bearer ' + token();
  if (options && options.body) headers['Content-Type'] = 'application/json';
  const r = await fetch(path, Object.assign({ headers }, options || {}));
  const body = await r.json();
  if (r.status === 401) throw new Unauthorized(body.error ? body.error.message : 'unauthorized');
  if (!r.ok) {
    const e = new Error(body.error ? body.error.code + ': ' + body.error.message : 'HTTP ' + r.status);
    e.body = body;
    throw e;
  }
  return body;
}

function age(ms) {
  if (ms === null || ms === undefined) return '-';
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return s + ' s ago';
  if (s < 3600) return Math.floor(s / 60) + ' min ago';
  if (s < 86400) return Math.floor(s / 3600) + ' h ago';
  return Math.floor(s / 86400) + ' d ago';
}

function agentLink(id, suffix, text) {
  return el('a', { href: '#/agent/' + encodeURIComponent(id) + (suffix || ''), text: text || id });
}

function crumbs(items) {
  const nav = document.getElementById('crumbs');
  nav.replaceChildren(...items);
}

function kv(pairs) {
  return el('dl', { class: 'kv' }, pairs.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', {}, v)]));
}

function show(...nodes) { view().replaceChildren(...nodes); }

// ---- fleet ----
// Text for HTML: the fleet's rows are drawn as one string (a thousand rows of eight cells drawn
// element by element took most of the page's time).
const ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
function esc(v) { return String(v).replace(/[&<>"']/g, (c) => ESCAPES[c]); }

function fleetRowHtml(a) {
  const id = esc(a.agentId);
  const href = '#/agent/' + esc(encodeURIComponent(a.agentId));
  const cp = a.lastCheckpoint;
  const num = (extra, text) => `<td class="num${extra}">${text}</td>`;
  const gates = a.pendingGates > 0
    ? num(' warn', `<a href="${href}/gates">${esc(a.pendingGates)}</a>`) : num('', '0');
  return `<tr data-agent="${id}"><td><a href="${href}">${id}</a></td>` +
    `<td>${esc(a.status || '-')}</td>` +
    num('', cp ? esc(cp.sequenceNumber) : '-') +
    `<td>${cp ? esc(age(cp.ageMs)) : 'none'}</td>` +
    num(a.corrupted > 0 ? ' bad' : '', esc(a.corrupted)) +
    gates +
    num(a.outcomeUnknown > 0 ? ' warn' : '', esc(a.outcomeUnknown)) +
    `<td class="error">${esc(a.error || '')}</td></tr>`;
}

async function fleetView() {
  crumbs([]);
  const data = await api('/api/fleet');
  const body = el('tbody');
  body.innerHTML = data.agents.map(fleetRowHtml).join('');
  show(el('h2', { text: 'Fleet: ' + data.agents.length + ' agents' }),
    el('p', { class: 'muted', text: 'as of ' + data.generatedAt }),
    el('table', { id: 'fleet' },
      el('thead', {}, el('tr', {}, ['agent', 'status', 'last seq', 'last checkpoint',
        'corrupted', 'pending gates', 'outcome unknown', ''].map((h) => el('th', { text: h })))),
      body));
}

// ---- timeline ----
const PHASE_COLORS = { gathering: '#cfe2ff', planning: '#e2d9f3', executing: '#d1e7dd', reviewing: '#fff3cd' };
const TRIGGER_COLORS = { periodic: '#5b6573', manual: '#2458b3', pre_compaction: '#a15c00',
  task_phase_change: '#1e7a34', pre_shutdown: '#6f42c1' };

function timelineSvg(t) {
  const W = 1000, H = 150, pad = 20;
  const times = t.checkpoints.map((c) => Date.parse(c.timestamp))
    .concat(t.restores.map((r) => Date.parse(r.at)));
  const lo = Math.min(...times), hi = Math.max(...times);
  const x = (ts) => pad + (hi > lo ? (Date.parse(ts) - lo) / (hi - lo) : 0.5) * (W - 2 * pad);
  const svg = el('svg', { class: 'timeline', viewBox: `0 0 ${W} ${H}`, role: 'img',
    'aria-label': 'timeline of ' + t.agentId });
  for (const b of t.phases) {
    const x0 = x(b.from), x1 = Math.max(x(b.to), x0 + 4);
    svg.append(el('rect', { class: 'band', x: x0, y: 10, width: x1 - x0, height: 70,
      fill: PHASE_COLORS[b.phase] || '#eee' }, el('title', { text: b.phase + ' (' + b.taskId + ')' })));
  }
  const buckets = t.journal.buckets;
  const most = Math.max(1, ...buckets.map((b) => b.count));
  const bw = (W - 2 * pad) / Math.max(1, buckets.length);
  buckets.forEach((b, i) => {
    const h = (b.count / most) * 40;
    svg.append(el('rect', { class: 'density', x: pad + i * bw, y: H - 10 - h, width: Math.max(1, bw - 1),
      height: h, fill: '#9aa5b1' }, el('title', { text: b.count + ' journal entries' })));
  });
  for (const r of t.restores) {
    svg.append(el('line', { class: 'restore', x1: x(r.at), x2: x(r.at), y1: 4, y2: H - 8,
      stroke: '#b3261e', 'stroke-dasharray': '4 3' }, el('title', { text: 'restore (epoch ' + r.epoch + ') at ' + r.at })));
  }
  for (const c of t.checkpoints) {
    const cx = x(c.timestamp);
    const mark = el('circle', { class: 'mark', cx, cy: 45, r: 6, 'data-seq': c.sequenceNumber,
      fill: c.ok ? (TRIGGER_COLORS[c.triggerReason] || '#333') : '#b3261e',
      onclick: () => { location.hash = '#/agent/' + encodeURIComponent(t.agentId) + '/checkpoint/' + c.sequenceNumber; } },
    el('title', { text: '#' + c.sequenceNumber + ' ' + c.triggerReason + (c.ok ? '' : ' CORRUPTED') }));
    svg.append(mark);
  }
  return svg;
}

async function timelineView(agent) {
  const t = await api('/api/agents/' + encodeURIComponent(agent) + '/timeline');
  crumbs([agentLink(agent, '', agent + ': timeline'), agentLink(agent, '/preview', 'restore preview'),
    agentLink(agent, '/gates', 'gates')]);
  const rows = t.checkpoints.slice().reverse().map((c, i, all) => el('tr', { 'data-seq': c.sequenceNumber },
    el('td', { class: 'num' }, agentLink(agent, '/checkpoint/' + c.sequenceNumber, String(c.sequenceNumber))),
    el('td', { text: c.timestamp }),
    el('td', { text: c.triggerReason }),
    el('td', { text: c.phase || '-' }),
    el('td', { class: 'num', text: c.progress === null ? '-' : c.progress + '%' }),
    el('td', { class: c.ok ? 'ok' : 'bad', text: c.ok ? 'ok' : c.reason }),
    el('td', {}, i + 1 < all.length
      ? agentLink(agent, '/diff/' + all[i + 1].sequenceNumber + '/' + c.sequenceNumber, 'diff with previous') : '')));
  const legend = el('p', { class: 'legend' },
    Object.entries(TRIGGER_COLORS).map(([k, v]) => {
      const s = el('span', {}, el('i', { class: 'swatch' }), k);
      s.firstChild.style.background = v;
      return s;
    }));
  show(el('h2', { text: agent + ': ' + t.checkpoints.length + ' checkpoints, ' + t.restores.length + ' restores, ' +
      t.journal.entries + ' journal entries (status ' + (t.status || '-') + ')' }),
  timelineSvg(t), legend,
  el('table', { id: 'checkpoints' },
    el('thead', {}, el('tr', {}, ['seq', 'taken', 'trigger', 'phase', 'progress', 'verification', '']
      .map((h) => el('th', { text: h })))),
    el('tbody', {}, rows)));
}

// ---- checkpoint detail ----
function toolCallRows(log) {
  return (log || []).map((c) => el('tr', {},
    el('td', { text: c.timestamp }), el('td', { text: c.toolName }),
    el('td', { text: c.inputSummary }), el('td', { text: c.outputSummary }),
    el('td', { class: c.success ? 'ok' : 'bad', text: c.success ? 'ok' : 'failed' })));
}

function table(id, heads, rows) {
  return el('table', { id }, el('thead', {}, el('tr', {}, heads.map((h) => el('th', { text: h })))),
    el('tbody', {}, rows));
}

async function checkpointView(agent, which) {
  const d = await api('/api/agents/' + encodeURIComponent(agent) + '/checkpoints/' + encodeURIComponent(which));
  crumbs([agentLink(agent, '', agent + ': timeline'), el('span', { text: 'checkpoint ' + which })]);
  if (!d.verification.ok) {
    show(el('h2', { text: 'checkpoint ' + which }), el('p', { id: 'verification', class: 'bad', text: 'does not verify: ' + d.verification.reason }));
    return;
  }
  const cp = d.checkpoint;
  const cs = cp.contextSummary || {};
  const task = cp.activeTask;
  const ledger = cp.ledger || { openCalls: [], completed: [] };
  const ws = cp.workspace;
  const seq = cp.sequenceNumber;
  show(el('h2', { text: 'checkpoint ' + seq + ' (' + cp.checkpointId + ')' }),
    el('p', { id: 'verification', class: 'ok', text: 'verified: contentSha256 ' + d.verification.contentSha256 }),
    el('p', {}, seq > 1 ? agentLink(agent, '/diff/' + (seq - 1) + '/' + seq, 'diff with ' + (seq - 1)) : ''),
    el('div', { class: 'card' }, kv([['taken', cp.timestamp], ['trigger', cp.triggerReason], ['size', cp.sizeBytes + ' bytes'],
      ['task', task ? task.taskId + ': ' + task.title : '-'], ['phase', task ? task.phase : '-'],
      ['progress', task ? task.progress + '%' : '-'], ['completed steps', cs.completedSteps],
      ['lastAckedSequence', cp.natsPosition ? cp.natsPosition.lastAckedSequence : '-'],
      ['journal', cp.journal ? 'through ' + cp.journal.sequence : '-']])),
    el('h2', { text: 'plan' }), el('ol', { id: 'plan' }, (cs.planOutline || []).map((p) => el('li', { text: p }))),
    el('h2', { text: 'tool calls' }), table('tool-calls', ['at', 'tool', 'input', 'output', ''], toolCallRows(cs.toolCallLog)),
    el('h2', { text: 'ledger' }), table('ledger', ['call', 'tool', 'effect', 'state', 'began'],
      (ledger.openCalls || []).concat(ledger.completed || []).map((c) => el('tr', {}, el('td', { text: c.callId }), el('td', { text: c.toolName }),
        el('td', { text: c.effect }), el('td', { class: c.state === 'outcome_unknown' ? 'warn' : '', text: c.state }),
        el('td', { text: c.beganAt })))),
    el('h2', { text: 'workspace' }), ws ? el('div', { class: 'card' }, kv([['branch', ws.branchName], ['commit', ws.lastCommitHash],
      ['uncommitted changes', String(ws.uncommittedChanges)], ['modified', (ws.modifiedFiles || []).join(', ') || '-']]))
      : el('p', { class: 'muted', text: 'no workspace configured' }),
    el('h2', { text: 'draft' }), el('pre', { id: 'draft', text: cs.draftContent || '' }));
}

// ---- diff ----
function change(c) {
  return c.changed ? el('span', { class: 'warn', text: String(c.from) + ' \u2192 ' + String(c.to) })
    : el('span', { class: 'muted', text: String(c.from) + ' (unchanged)' });
}

async function diffView(agent, from, to) {
  const d = await api('/api/agents/' + encodeURIComponent(agent) + '/diff?from=' + encodeURIComponent(from) + '&to=' + encodeURIComponent(to));
  crumbs([agentLink(agent, '', agent + ': timeline'), el('span', { text: 'diff ' + from + ' \u2192 ' + to })]);
  const draft = el('pre', { id: 'draft-diff' }, d.draft.lines.map((l) =>
    el('div', { class: l.op === '+' ? 'add' : l.op === '-' ? 'del' : '', text: l.op + ' ' + l.text })));
  show(el('h2', { text: 'diff of ' + agent + ': ' + d.from.sequenceNumber + ' \u2192 ' + d.to.sequenceNumber }),
    el('div', { class: 'card' }, kv([['task', change(d.task.taskId)], ['phase', change(d.task.phase)],
      ['progress', change(d.task.progress)], ['completed steps', change(d.completedSteps)],
      ['lastAckedSequence', el('span', { id: 'acked' }, change(d.lastAckedSequence),
        d.lastAckedSequence.delta !== undefined ? ' (' + (d.lastAckedSequence.delta >= 0 ? '+' : '') + d.lastAckedSequence.delta + ')' : '')]])),
    el('h2', { text: 'plan' }),
    el('ul', { id: 'plan-diff' }, d.plan.added.map((p) => el('li', { class: 'add', text: '+ ' + p })),
      d.plan.removed.map((p) => el('li', { class: 'del', text: '- ' + p }))),
    el('h2', { text: 'new tool calls' }), table('diff-tool-calls', ['at', 'tool', 'input', 'output', ''], toolCallRows(d.toolCalls.added)),
    el('h2', { text: 'ledger' }), table('diff-ledger', ['call', 'tool', 'change'],
      d.ledger.added.map((c) => el('tr', { class: 'add' }, el('td', { text: c.callId }), el('td', { text: c.toolName }), el('td', { text: 'new, ' + c.state })))
        .concat(d.ledger.stateChanged.map((c) => el('tr', {}, el('td', { text: c.callId }), el('td', { text: c.toolName }), el('td', { text: c.from + ' \u2192 ' + c.to }))))),
    el('h2', { text: 'draft (' + d.draft.linesAdded + ' added, ' + d.draft.linesRemoved + ' removed)' }), draft);
}

// ---- restore preview ----
async function previewView(agent) {
  crumbs([agentLink(agent, '', agent + ': timeline'), el('span', { text: 'restore preview' })]);
  show(el('p', { class: 'muted', text: 'running the restore --dry-run phases\u2026' }));
  const p = await api('/api/agents/' + encodeURIComponent(agent) + '/restore-preview');
  const cut = p.promptCut && p.promptCut.length ? p.promptCut.join(', ') : 'none';
  show(el('h2', { text: 'restore preview of ' + agent + ' (dry run: nothing published, stashed or written)' }),
    el('div', { class: 'card' }, kv([
      ['checkpoint', p.coldStart ? 'none: cold start' : p.checkpointId + ' (sequence ' + p.sequenceNumber + (p.stale ? ', stale' : '') + ')'],
      ['skipped corrupted', String((p.skipped || []).length)],
      ['replay', !p.replayConfigured ? 'not run (console started without --nats)' : p.replayError ? 'not run: ' + p.replayError
        : p.handled + ' handled, ' + p.pending + ' pending, ' + p.replayed + ' replayed, ' + p.truncated + ' left out'],
      ['tokens', el('span', { id: 'tokens', text: p.promptTokens + ' of ' + p.promptMaxTokens + ' (' + p.tokenizer + ')' })],
      ['sections cut', el('span', { id: 'cut', text: cut })],
      ['timings', 'load ' + p.loadMs + ' ms, replay ' + p.replayMs + ' ms, workspace ' + p.workspaceMs + ' ms, prompt ' + p.promptMs + ' ms']])),
    el('h2', { text: 'restoration prompt' }), el('pre', { id: 'prompt', text: p.prompt }));
}

// ---- gates ----
async function decide(agent, g, decision, comment, out) {
  const by = document.getElementById('by').value.trim();
  if (!by) { out.textContent = 'say who decides (the "decided by" field)'; out.className = 'error'; return; }
  sessionStorage.setItem(BY_KEY, by);
  const body = { decision, by, comment };
  if (g.argsSha256) body.argsSha256 = g.argsSha256;
  try {
    const r = await api('/api/agents/' + encodeURIComponent(agent) + '/gates/' + encodeURIComponent(g.gateId) + '/resolve',
      { method: 'POST', body: JSON.stringify(body) });
    out.textContent = r.state + ' (via ' + r.via + ')';
    out.className = 'ok';
    await gatesView(agent, out.textContent);
  } catch (e) {
    if (e instanceof Unauthorized) throw e;
    out.textContent = e.message;
    out.className = 'error';
  }
}

async function gatesView(agent, notice) {
  const d = await api('/api/agents/' + encodeURIComponent(agent) + '/gates');
  crumbs([agentLink(agent, '', agent + ': timeline'), el('span', { text: 'gates' })]);
  const pending = d.gates.filter((g) => g.state === 'pending');
  const decided = d.gates.filter((g) => g.state !== 'pending');
  const rows = pending.map((g) => {
    const comment = el('textarea', { rows: 2, 'aria-label': 'comment', class: 'comment' });
    const out = el('span', { class: 'result' });
    const wrap = (fn) => () => fn().catch(fail);
    return el('tr', { 'data-gate': g.gateId },
      el('td', { text: g.gateId }), el('td', { text: g.reason }),
      el('td', { text: (g.toolCallId || '-') + (g.argsSha256 ? ' args ' + g.argsSha256.slice(0, 16) : '') }),
      el('td', { text: g.request ? JSON.stringify(g.request) : '-' }),
      el('td', { text: g.expiresAt }),
      el('td', {}, comment, el('div', {},
        el('button', { type: 'button', class: 'approve', onclick: wrap(() => decide(agent, g, 'approved', comment.value, out)) }, 'approve'), ' ',
        el('button', { type: 'button', class: 'reject', onclick: wrap(() => decide(agent, g, 'rejected', comment.value, out)) }, 'reject'), ' ', out)));
  });
  const decidedRows = decided.map((g) => el('tr', { 'data-gate': g.gateId },
    el('td', { text: g.gateId }), el('td', { class: g.state === 'approved' ? 'ok' : 'bad', text: g.state + (g.consumed ? ' (consumed)' : '') }),
    el('td', { text: g.reason }),
    el('td', { text: g.decision ? (g.decision.expired ? 'expiry' : g.decision.by) : '-' }),
    el('td', { text: g.decision ? g.decision.resolvedAt : '-' }),
    el('td', { text: g.decision && g.decision.response != null ? JSON.stringify(g.decision.response) : '' })));
  show(el('h2', { text: agent + ': ' + pending.length + ' pending, ' + decided.length + ' decided' }),
    notice ? el('p', { id: 'notice', class: 'ok', text: notice }) : '',
    el('p', {}, el('label', {}, 'decided by ', el('input', { id: 'by', value: sessionStorage.getItem(BY_KEY) || '' }))),
    el('h2', { text: 'pending' }),
    table('pending-gates', ['gate', 'reason', 'tool call', 'request', 'expires', 'decision'], rows),
    el('h2', { text: 'decided' }),
    table('decided-gates', ['gate', 'state', 'reason', 'by', 'at', 'response'], decidedRows));
}

// ---- token and routing ----
function askToken(message) {
  const form = document.getElementById('token-form');
  form.hidden = false;
  view().replaceChildren();
  const err = document.getElementById('token-error');
  err.hidden = !message;
  err.textContent = message || '';
}

function fail(e) {
  if (e instanceof Unauthorized) {
    sessionStorage.removeItem(TOKEN_KEY);
    askToken('the token was refused');
    return;
  }
  show(el('p', { id: 'failure', class: 'error', text: e.message }));
}

async function route() {
  document.getElementById('token-form').hidden = true;
  document.getElementById('logout').hidden = !token();
  const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  if (parts[0] !== 'agent' || !parts[1]) return fleetView();
  const [, agent, what, a, b] = parts;
  if (!what) return timelineView(agent);
  if (what === 'checkpoint') return checkpointView(agent, a || 'latest');
  if (what === 'diff') return diffView(agent, a, b);
  if (what === 'preview') return previewView(agent);
  if (what === 'gates') return gatesView(agent);
  return fleetView();
}

async function start() {
  // The answer is about the token sent: one stored while the request was out (another tab's
  // action, or the form) is neither refused nor forgotten by it.
  const sent = token();
  const s = await (await fetch('/api/session', { headers: sent ? { 'Authorization': 'Bearer ' + sent } : {} })).json();
  if (token() !== sent) return start();
  if (s.tokenRequired && !s.authorized) {
    askToken(sent ? 'the token was refused' : '');
    if (sent) sessionStorage.removeItem(TOKEN_KEY);
    return;
  }
  await route();
}

document.addEventListener('DOMContentLoaded', () => {
  document.getElementById('token-form').addEventListener('submit', (ev) => {
    ev.preventDefault();
    sessionStorage.setItem(TOKEN_KEY, document.getElementById('token').value.trim());
    start().catch(fail);
  });
  document.getElementById('logout').addEventListener('click', () => {
    sessionStorage.removeItem(TOKEN_KEY);
    start().catch(fail);
  });
  window.addEventListener('hashchange', () => start().catch(fail));
  start().catch(fail);
});
