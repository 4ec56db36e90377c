// Every Transaction of a scope, live: a snapshot, then one row changed per event of the stream.
import { age, announce, h, phaseBadge } from './dom.js';

/** The bake window's bar: the page counts it down between updates (its own clock, no request). */
export function bakeBar(bake, label) {
  const bar = h('progress', { max: bake.stableForMs, class: 'bake', 'aria-label': label });
  const text = h('span', { class: 'bake-text' });
  const tick = () => {
    const elapsed = Math.min(bake.stableForMs, Math.max(0, Date.now() - Date.parse(bake.stableSince)));
    bar.value = elapsed;
    text.textContent = ` stable for ${Math.floor(elapsed / 1000)}s of ${Math.round(bake.stableForMs / 1000)}s`;
  };
  tick();
  return { element: h('span', { class: 'bake-wrap' }, bar, text), tick };
}

export function showList(main, info, params) {
  let scope = params.get('namespace') ?? info.initialScope ?? '';
  let phase = params.get('phase') ?? '';
  const rows = new Map();
  const namespaces = new Set(scope ? [scope] : []);
  const ticks = new Map();
  const tbody = h('tbody');
  const count = h('p', { class: 'count', id: 'tx-count' });
  const problem = h('p', { class: 'problem', role: 'alert', hidden: true });
  const nsList = h('datalist', { id: 'namespaces' });
  const nsInput = h('input', {
    id: 'filter-namespace',
    list: 'namespaces',
    value: scope,
    placeholder: 'every namespace',
    autocomplete: 'off',
  });
  const phaseSelect = h(
    'select',
    { id: 'filter-phase' },
    h('option', { value: '' }, 'every phase'),
    info.phases.map((p) => h('option', { value: p, selected: p === phase }, p)),
  );
  const table = h(
    'table',
    { class: 'list', 'aria-describedby': 'tx-count' },
    h('caption', { class: 'visually-hidden' }, 'Transactions'),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Namespace', 'Name', 'Phase', 'Changes', 'Age', 'Reason'].map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    tbody,
  );
  main.append(
    h('h1', {}, 'Transactions'),
    h(
      'form',
      { class: 'filters', role: 'search', onsubmit: (e) => e.preventDefault() },
      h('label', { for: 'filter-namespace' }, 'Namespace'),
      nsInput,
      nsList,
      h('label', { for: 'filter-phase' }, 'Phase'),
      phaseSelect,
    ),
    problem,
    count,
    table,
  );

  const visible = (row) => !phase || row.phase === phase;
  const render = (row) => {
    const bake = row.bake ? bakeBar(row.bake, `bake window of ${row.key}`) : undefined;
    if (bake) ticks.set(row.key, bake.tick);
    else ticks.delete(row.key);
    const tr = h(
      'tr',
      { 'data-key': row.key, 'data-phase': row.phase },
      h('td', {}, row.namespace),
      h(
        'td',
        {},
        h(
          'a',
          { href: `#/t/${encodeURIComponent(row.namespace)}/${encodeURIComponent(row.name)}` },
          row.name,
        ),
      ),
      h('td', {}, phaseBadge(row.phase)),
      h('td', {}, row.progress),
      h('td', { class: 'age', 'data-created': row.created ?? '' }, age(row.created)),
      h('td', {}, row.reason, bake ? [' ', bake.element] : ''),
    );
    tr.hidden = !visible(row);
    return tr;
  };
  const updateCount = () => {
    const shown = [...rows.values()].filter((r) => visible(r.row)).length;
    count.textContent = `${shown} of ${rows.size} Transaction(s) ${scope ? `in namespace ${scope}` : 'in every namespace'}${phase ? `, phase ${phase}` : ''}`;
  };
  const remember = (ns) => {
    if (ns && !namespaces.has(ns)) {
      namespaces.add(ns);
      nsList.append(h('option', { value: ns }));
    }
  };

  let source;
  const open = () => {
    source?.close();
    rows.clear();
    ticks.clear();
    tbody.replaceChildren();
    count.textContent = 'Loading…';
    problem.hidden = true;
    source = new EventSource(`/api/stream/transactions?namespace=${encodeURIComponent(scope)}`);
    source.addEventListener('snapshot', (e) => {
      const { rows: all } = JSON.parse(e.data);
      rows.clear();
      ticks.clear();
      problem.hidden = true;
      const fragment = document.createDocumentFragment();
      // Newest first, as new ones arrive on top.
      all.sort((a, b) => (b.created ?? '').localeCompare(a.created ?? '') || a.key.localeCompare(b.key));
      for (const row of all) {
        const tr = render(row);
        rows.set(row.key, { row, tr });
        fragment.append(tr);
        remember(row.namespace);
      }
      tbody.replaceChildren(fragment);
      updateCount();
    });
    source.addEventListener('upsert', (e) => {
      const row = JSON.parse(e.data);
      const tr = render(row);
      const known = rows.get(row.key);
      if (known) {
        known.tr.replaceWith(tr);
        if (known.row.phase !== row.phase && visible(row)) announce(`${row.key} is ${row.phase}`);
      } else {
        tbody.prepend(tr);
        announce(`new Transaction ${row.key}`);
      }
      rows.set(row.key, { row, tr });
      remember(row.namespace);
      updateCount();
    });
    source.addEventListener('remove', (e) => {
      const { key } = JSON.parse(e.data);
      rows.get(key)?.tr.remove();
      rows.delete(key);
      ticks.delete(key);
      updateCount();
    });
    source.addEventListener('problem', (e) => {
      const { message } = JSON.parse(e.data);
      problem.textContent = `The API server refused: ${message}`;
      problem.hidden = false;
      count.textContent = '';
    });
  };
  const setUrl = () => {
    const query = new URLSearchParams({
      ...(scope && { namespace: scope }),
      ...(phase && { phase }),
    }).toString();
    history.replaceState(null, '', `#/${query ? `?${query}` : ''}`);
  };
  nsInput.addEventListener('change', () => {
    scope = nsInput.value.trim();
    setUrl();
    open();
  });
  phaseSelect.addEventListener('change', () => {
    phase = phaseSelect.value;
    setUrl();
    for (const { row, tr } of rows.values()) tr.hidden = !visible(row);
    updateCount();
  });
  open();
  let seconds = 0;
  const clock = setInterval(() => {
    for (const tick of ticks.values()) tick();
    // Ages move slowly: every 10 s is enough, and cheap with 1,000 rows.
    if (++seconds % 10 === 0) {
      const now = Date.now();
      for (const cell of tbody.querySelectorAll('td.age')) cell.textContent = age(cell.dataset.created, now);
    }
  }, 1000);
  return () => {
    clearInterval(clock);
    source?.close();
  };
}
