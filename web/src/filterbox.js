// The filter box that helps (issue 20 part 6): completion of the
// grammar's keywords and field names and of values from the data, recent
// filters, and a bad filter's column marked in the box itself.
//
// Completion: complete.js says where the cursor stands; the list under
// the box holds the recent filters that start with what is typed (only
// while it is the whole filter), the grammar's words there, and for a
// value the top values of its field over the page's range (one GET
// /api/v1/complete?field=F&prefix=P&limit=10, a top-N of the query model
// whose keys start with P; docs/api.md).  Keys: ↓ / ↑ move in the list
// (↓ opens it), Enter or Tab takes the highlighted item (Enter with
// nothing highlighted applies the filter, as before), Escape closes the
// list.  A click takes an item too.
//
// Recent filters: the last RECENT_MAX filters applied without an error,
// in this browser's localStorage (complete.js recentAdd).
//
// A bad filter: the word at the column the parser stopped at is
// underlined in the box (an overlay with the box's font and scroll, the
// text transparent), aria-invalid set, and the parser's message under it
// (main.js showFilterError).
import { api } from './api.js';
import { getState } from './state.js';
import { esc, num } from './format.js';
import { grammar, context, staticItems, asWord, recentAdd, RECENT_KEY } from './complete.js';

let g = null, gWait = null;
async function loadGrammar() {
  if (g) return g;
  if (!gWait) gWait = api('fields').then((d) => (g = grammar(d))).catch(() => { gWait = null; return null; });
  return gWait;
}

export function recentFilters() {
  try {
    const v = JSON.parse(localStorage.getItem(RECENT_KEY) || '[]');
    return Array.isArray(v) ? v.filter((x) => typeof x === 'string') : [];
  } catch { return []; }
}
// Keeps f among the recent filters (after it was applied without error).
export function rememberFilter(f) {
  try { localStorage.setItem(RECENT_KEY, JSON.stringify(recentAdd(recentFilters(), f))); } catch { /* private mode */ }
}

const MAX_ITEMS = 15;
let input, list, mark, items = [], active = -1, ctx = null, seq = 0, timer = 0;

// Wires the box (once, after buildControls made it).
export function wireFilterBox() {
  input = document.getElementById('filter');
  list = document.getElementById('filter-list');
  mark = document.getElementById('filter-mark');
  input.setAttribute('role', 'combobox');
  input.setAttribute('aria-autocomplete', 'list');
  input.setAttribute('aria-controls', 'filter-list');
  input.setAttribute('aria-expanded', 'false');
  input.addEventListener('input', () => { syncMark(); schedule(); });
  input.addEventListener('focus', () => schedule(0));
  input.addEventListener('click', () => schedule(0));
  input.addEventListener('blur', () => setTimeout(close, 150));
  input.addEventListener('scroll', () => { mark.scrollLeft = input.scrollLeft; });
  input.addEventListener('keydown', onKey);
  list.addEventListener('mousedown', (e) => {
    const li = e.target.closest('li[data-i]');
    if (!li) return;
    e.preventDefault(); // the box keeps the focus
    take(Number(li.dataset.i));
  });
  loadGrammar();
}

function onKey(e) {
  const open = !list.hidden && items.length > 0;
  if (e.key === 'ArrowDown') {
    e.preventDefault();
    if (!open) { schedule(0); return; }
    highlight(Math.min(items.length - 1, active + 1));
  } else if (e.key === 'ArrowUp') {
    if (!open) return;
    e.preventDefault();
    highlight(Math.max(-1, active - 1));
  } else if (e.key === 'Enter') {
    if (open && active >= 0) { e.preventDefault(); take(active); } else close();
  } else if (e.key === 'Tab' && !e.shiftKey) {
    if (open) { e.preventDefault(); take(active >= 0 ? active : 0); }
  } else if (e.key === 'Escape') {
    if (open) { e.preventDefault(); close(); }
  }
}

function schedule(ms = 120) {
  clearTimeout(timer);
  timer = setTimeout(update, ms);
}

// The list for the text and cursor now: the words at once, then the
// data's values when they come (a later keystroke's answer wins).
async function update() {
  const gr = await loadGrammar();
  if (!gr || document.activeElement !== input) return;
  const text = input.value, cur = input.selectionStart ?? text.length;
  const c = context(gr, text, cur);
  const my = ++seq;
  ctx = c;
  const head = text.slice(0, c.start).trim();
  const recents = c.kind === 'term' && head === ''
    ? recentFilters().filter((f) => f !== text && f.toLowerCase().startsWith(text.trim().toLowerCase())).slice(0, 5)
      .map((f) => ({ text: f, insert: f, kind: 'recent', doc: 'recent filter', whole: true }))
    : [];
  const words = staticItems(gr, c);
  show([...recents, ...words]);
  if (c.kind === 'value' && c.field) {
    const s = getState();
    try {
      const d = await api('complete', { field: c.field, prefix: c.partial, limit: 10, from: s.from, to: s.to });
      if (my !== seq) return;
      const [k, label] = d.query.keys;
      const vals = d.rows.map((r) => {
        const v = String(r[k]);
        const w = c.quoted ? `"${v}"` : asWord(v);
        return w && v !== '' ? { text: v, insert: w, kind: 'value', doc: `${label && r[label] ? r[label] + ' · ' : ''}${num(r.flows)} flows` } : null;
      }).filter(Boolean);
      show([...recents, ...words, ...vals], { values: d.summary ? d.summary.groups : vals.length });
    } catch { /* no values: the words stay */ }
  }
}

function show(all, { values } = {}) {
  items = all.slice(0, MAX_ITEMS);
  active = -1;
  if (!items.length) { close(); return; }
  list.innerHTML = items.map((it, i) => `<li id="filter-opt-${i}" role="option" data-i="${i}" data-kind="${it.kind}" aria-selected="false"><span class="c-text">${esc(it.text)}</span>${it.doc ? `<span class="c-doc">${esc(it.doc)}</span>` : ''}</li>`).join('')
    + (values !== undefined && ctx && ctx.field ? `<li class="c-foot" aria-hidden="true">${esc(ctx.field)}: ${values} value${values === 1 ? '' : 's'} start with “${esc(ctx.partial)}” in this range</li>` : '');
  list.hidden = false;
  input.setAttribute('aria-expanded', 'true');
}

function highlight(i) {
  active = i;
  list.querySelectorAll('li[data-i]').forEach((li) => {
    const on = Number(li.dataset.i) === i;
    li.classList.toggle('active', on);
    li.setAttribute('aria-selected', String(on));
    if (on) li.scrollIntoView({ block: 'nearest' });
  });
  if (i >= 0) input.setAttribute('aria-activedescendant', 'filter-opt-' + i);
  else input.removeAttribute('aria-activedescendant');
}

function close() {
  if (!list) return;
  list.hidden = true;
  items = [];
  active = -1;
  input.setAttribute('aria-expanded', 'false');
  input.removeAttribute('aria-activedescendant');
}

// Puts item i in the box: a recent filter replaces it all; a word
// replaces the word being typed (to its end) and a blank follows, so the
// list goes on with what may come next.
function take(i) {
  const it = items[i];
  if (!it || !ctx) return;
  const text = input.value;
  let end = input.selectionStart ?? text.length;
  while (end < text.length && /[A-Za-z0-9.:/_\-+"']/.test(text[end])) end++;
  let v, at;
  if (it.whole) { v = it.insert; at = v.length; } else {
    const after = text.slice(end).replace(/^\s+/, '');
    v = text.slice(0, ctx.start) + it.insert + ' ' + after;
    at = ctx.start + it.insert.length + 1;
  }
  input.value = v;
  input.setSelectionRange(at, at);
  syncMark();
  close();
  schedule(0);
}

// ---- a bad filter's column, in the box -------------------------------
let bad = null; // {filter, column}
export function markError(e) {
  if (!input) return;
  bad = e && e.column ? { filter: e.filter ?? input.value, column: e.column } : null;
  syncMark();
}
function syncMark() {
  if (!mark) return;
  const on = bad && bad.filter === input.value;
  input.toggleAttribute('aria-invalid', !!on);
  if (!on) { mark.innerHTML = ''; mark.hidden = true; return; }
  const t = bad.filter, at = Math.min(t.length, Math.max(0, bad.column - 1));
  // the token at the column: a word, a quoted word, or one character;
  // at the end of the text a blank, underlined
  let end = at;
  if (t[at] === '"' || t[at] === "'") { const q = t.indexOf(t[at], at + 1); end = q < 0 ? t.length : q + 1; } else while (end < t.length && /[A-Za-z0-9.:/_\-+]/.test(t[end])) end++;
  if (end === at) end = at + 1;
  const word = t.slice(at, end) || ' ';
  mark.innerHTML = `${esc(t.slice(0, at))}<mark title="the parser stopped here">${esc(word)}</mark>`;
  mark.hidden = false;
  mark.scrollLeft = input.scrollLeft;
}
