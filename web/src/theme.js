// Themes and the series palette (issue 20 part 9).
//
// The theme is "auto" (the system's prefers-color-scheme), "light" or
// "dark": chosen with the header's toggle, kept in this browser's
// localStorage (THEME_KEY), applied as <html data-theme="light|dark">,
// which style.css's colour variables follow; charts are drawn with
// ECharts' built-in dark theme on a transparent background.  A change
// (the toggle, or the system's scheme under auto) sends the event
// ng-theme: main.js redraws the page.
//
// Series colours: Okabe & Ito's palette (Color Universal Design, 2008),
// eight colours told apart with the common colour-vision deficiencies,
// then Paul Tol's muted scheme for more series; "other" is grey.  Every
// chart takes it (ui.js chart()).
export const THEME_KEY = 'nagare.theme';
export const MODES = ['auto', 'light', 'dark'];
export const PALETTE = ['#0072b2', '#e69f00', '#009e73', '#cc79a7', '#56b4e9', '#d55e00', '#f0e442', '#000000',
  '#332288', '#88ccee', '#44aa99', '#117733', '#999933', '#ddcc77', '#cc6677', '#882255', '#aa4499'];
// black reads as nothing on a dark page: Okabe-Ito's eighth there is white-ish grey
const DARK_SWAP = { '#000000': '#e0e0e0' };
export const OTHER = '#a0a7b0';

export function palette() {
  return isDark() ? PALETTE.map((c) => DARK_SWAP[c] || c) : PALETTE;
}

export function themeMode() {
  try {
    const m = localStorage.getItem(THEME_KEY);
    return MODES.includes(m) ? m : 'auto';
  } catch { return 'auto'; }
}

const query = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;
export function isDark() {
  const m = themeMode();
  return m === 'dark' || (m === 'auto' && !!query && query.matches);
}

export function applyTheme() {
  document.documentElement.dataset.theme = isDark() ? 'dark' : 'light';
  const b = document.getElementById('theme-toggle');
  if (b) {
    const m = themeMode();
    b.textContent = { auto: '◐ auto', light: '☀ light', dark: '☾ dark' }[m];
    b.title = `theme: ${m}${m === 'auto' ? ' (the system\'s: ' + (isDark() ? 'dark' : 'light') + ')' : ''}; click for the next`;
    b.setAttribute('aria-label', `colour theme: ${m}`);
  }
}

export function setThemeMode(m) {
  try { localStorage.setItem(THEME_KEY, m); } catch { /* private mode: this page only */ }
  applyTheme();
  window.dispatchEvent(new Event('ng-theme'));
}

// The toggle (auto → light → dark → auto) and the system's changes.
export function wireTheme() {
  applyTheme();
  const b = document.getElementById('theme-toggle');
  if (b) b.addEventListener('click', () => setThemeMode(MODES[(MODES.indexOf(themeMode()) + 1) % MODES.length]));
  if (query) query.addEventListener('change', () => { if (themeMode() === 'auto') { applyTheme(); window.dispatchEvent(new Event('ng-theme')); } });
}

// A colour of the page's theme (a style.css variable), for chart parts
// drawn outside ECharts' theme (the map's land, the Sankey's label halo).
export function cssVar(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}
