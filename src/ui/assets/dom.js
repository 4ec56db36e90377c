// Small DOM helpers: every text goes in as a text node (never as HTML), so nothing the API
// server relays (an Event's message, a target's name) can become markup or script.

/** h('a', { href: '#/' }, 'text', child) */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on')) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

const SVG = 'http://www.w3.org/2000/svg';
export function s(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  for (const child of children.flat()) if (child) el.append(child instanceof Node ? child : String(child));
  return el;
}

/** "3m", "2h", "4d": how long ago. */
export function age(timestamp, now = Date.now()) {
  const t = Date.parse(timestamp ?? '');
  if (!Number.isFinite(t)) return '';
  const sec = Math.max(0, Math.round((now - t) / 1000));
  if (sec < 120) return `${sec}s`;
  if (sec < 7200) return `${Math.round(sec / 60)}m`;
  if (sec < 172800) return `${Math.round(sec / 3600)}h`;
  return `${Math.round(sec / 86400)}d`;
}

export function time(timestamp) {
  if (!timestamp) return '';
  return h(
    'time',
    { datetime: timestamp, title: timestamp },
    timestamp.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC'),
  );
}

/** Each phase's symbol, so no state is told by colour alone. */
const SYMBOLS = {
  Committed: '✓',
  RolledBack: '↺',
  Failed: '✗',
  RollingBack: '↶',
  Verifying: '…',
  Rejected: '✗',
  RenderFailed: '✗',
  Refused: '✗',
};

export function phaseBadge(phase) {
  const symbol = SYMBOLS[phase] ?? '●';
  return h(
    'span',
    { class: `badge phase-${phase}` },
    h('span', { 'aria-hidden': 'true' }, `${symbol} `),
    phase,
  );
}

export function outcomeBadge(outcome) {
  const symbol = {
    committed: '✓',
    'rolled-back': '↺',
    conflict: '!',
    failed: '✗',
    prepared: '○',
    pending: '·',
  }[outcome];
  return h(
    'span',
    { class: `badge outcome-${outcome}` },
    h('span', { 'aria-hidden': 'true' }, `${symbol ?? '·'} `),
    outcome,
  );
}

export function announce(text) {
  const region = document.getElementById('announce');
  region.textContent = '';
  // A change the screen reader notices even when the text repeats.
  setTimeout(() => {
    region.textContent = text;
  }, 50);
}

export async function api(path, body) {
  const response = await fetch(path, {
    method: body === undefined ? 'GET' : 'POST',
    headers: body === undefined ? {} : { 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
  try {
    return await response.json();
  } catch {
    return { ok: false, message: `${response.status} ${response.statusText}` };
  }
}

/** Asks before an action; resolves the reason given, or undefined when the person kept things as they are. */
export function confirmAction(title, text, go) {
  const dialog = document.getElementById('confirm');
  document.getElementById('confirm-title').textContent = title;
  document.getElementById('confirm-text').textContent = text;
  document.getElementById('confirm-go').textContent = go;
  const reason = document.getElementById('confirm-reason');
  reason.value = '';
  dialog.returnValue = '';
  dialog.showModal();
  reason.focus();
  return new Promise((resolve) => {
    dialog.addEventListener(
      'close',
      () => resolve(dialog.returnValue === 'go' ? { reason: reason.value.trim() } : undefined),
      { once: true },
    );
  });
}

export function section(title, ...children) {
  const id = `s-${title.toLowerCase().replace(/[^a-z]+/g, '-')}`;
  return h('section', { 'aria-labelledby': id }, h('h2', { id }, title), ...children);
}
