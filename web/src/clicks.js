// Click-through (issue 20 part 7): a click on an aggregate's element adds
// its filter term (filterterm.js) to the page's filter; its "flows" link
// opens the Flow explorer on the flows behind it.
import { setState } from './state.js';
import { withTerm, explorerHref } from './filterterm.js';
import { esc } from './format.js';

// Adds term (null: nothing) to the filter of state s; the page re-renders.
export function addTerm(s, term) {
  if (term) setState({ filter: withTerm(s.filter, term), offset: '' });
}

// The range and filter an aggregate of API answer d was computed over
// (absolute: the explorer shows the same flows however "now" moved).
export function rangeOf(d, s) {
  return { from: d.query.from, to: d.query.to || s.to, filter: s.filter };
}

// A link to the Flow explorer on the flows of range r narrowed by term.
export function flowsLink(r, term, text = 'flows ›') {
  const href = explorerHref(r, term);
  return `<a class="flows-link" data-nav href="${esc(href)}" title="open these flows in the Flow explorer">${esc(text)}</a>`;
}

// Wires the page element el (once; it outlives the pages): a click or
// Enter on an element with data-term adds the term to the filter of the
// state the page shows (el._ngState, set by every render), and an
// a[data-nav] is followed without reloading the page.
export function wireClicks(el, s) {
  el._ngState = s;
  if (el._ngClicks) return;
  el._ngClicks = true;
  const follow = (a) => {
    history.pushState(null, '', a.getAttribute('href'));
    window.dispatchEvent(new Event('ng-state'));
  };
  el.addEventListener('click', (e) => {
    const a = e.target.closest('a[data-nav]');
    if (a) {
      if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
      e.preventDefault();
      follow(a);
      return;
    }
    if (e.target.closest('a, button, select, input')) return;
    const r = e.target.closest('[data-term]');
    if (r && el.contains(r)) addTerm(el._ngState, r.dataset.term);
  });
  el.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter' || e.target.closest('a, button, select, input')) return;
    const r = e.target.closest('[data-term]');
    if (r && el.contains(r)) addTerm(el._ngState, r.dataset.term);
  });
}
