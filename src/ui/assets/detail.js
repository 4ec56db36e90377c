// One Transaction: its story, kept current by one stream (the Transaction, its Events, its locks).
import { age, announce, api, confirmAction, h, outcomeBadge, phaseBadge, s, section, time } from './dom.js';
import { bakeBar } from './list.js';

export function showTransaction(main, namespace, name, info) {
  const key = `${namespace}/${name}`;
  const body = h('div', { class: 'detail' }, h('p', {}, 'Loading…'));
  const result = h('p', { id: 'action-result', role: 'alert', class: 'result', hidden: true });
  const record = h('div', { id: 'record' });
  main.append(
    h(
      'p',
      {},
      h('a', { href: `#/?namespace=${encodeURIComponent(namespace)}` }, `← Transactions in ${namespace}`),
    ),
    h('h1', {}, `Transaction ${key}`),
    result,
    body,
    record,
  );
  const openDiffs = new Map();
  let tick = () => {};
  let lastPhase;
  const source = new EventSource(
    `/api/stream/transaction/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`,
  );
  source.addEventListener('detail', (e) => {
    const { detail, locks, eventsProblem } = JSON.parse(e.data);
    const focused = document.activeElement?.id;
    const view = render(detail, locks, eventsProblem, openDiffs);
    tick = view.tick;
    body.replaceChildren(view.element);
    if (focused) document.getElementById(focused)?.focus();
    if (lastPhase && lastPhase !== detail.row.phase) announce(`${key} is ${detail.row.phase}`);
    if (lastPhase !== detail.row.phase) loadRecord(record, namespace, name, info);
    lastPhase = detail.row.phase;
  });
  source.addEventListener('gone', () => {
    body.replaceChildren(
      h(
        'p',
        { class: 'problem' },
        `Transaction ${key} does not exist (any more). If it finished a while ago, the retention policy may have pruned it: its record stays on the results branch.`,
      ),
    );
    loadRecord(record, namespace, name, info);
  });
  source.addEventListener('problem', (e) => {
    body.replaceChildren(
      h('p', { class: 'problem', role: 'alert' }, `The API server refused: ${JSON.parse(e.data).message}`),
    );
  });
  const clock = setInterval(() => tick(), 1000);

  function render(d, locks, eventsProblem) {
    let tickBake = () => {};
    const summary = h(
      'dl',
      { class: 'summary' },
      field('Phase', phaseBadge(d.row.phase)),
      field(
        'Ready',
        d.ready && `${d.ready.status} (${d.ready.reason})${d.ready.message ? `: ${d.ready.message}` : ''}`,
      ),
      field('Progress', `${d.row.progress} changes committed`),
      field('ServiceAccount', d.serviceAccount),
      field('Source', d.source && `${d.source.repository} ${d.source.path} ${d.source.revision}`),
      field('Created', time(d.row.created)),
      field('Started', time(d.started)),
      field('Deadline', time(d.deadline)),
      field('Completed', time(d.completed)),
      field('Rollback store', d.rollbackRef),
    );
    const parts = [summary, actions(d)];
    if (d.health) {
      const gate = [];
      const h1 = d.health;
      if (h1.stableSince && !h1.completedAt && h1.check === 'Commit') {
        const bar = bakeBar({ stableSince: h1.stableSince, stableForMs: h1.stableForMs }, 'bake window');
        tickBake = bar.tick;
        gate.push(h('p', {}, 'Bake window: a regression rolls back. ', bar.element));
      } else if (!h1.completedAt) {
        gate.push(
          h('p', {}, `${h1.check}: waiting for every target to be healthy; gives up at `, time(h1.deadline)),
        );
      } else {
        gate.push(h('p', {}, `${h1.check}: ${h1.result ?? ''} at `, time(h1.completedAt)));
      }
      if (h1.message) gate.push(h('p', { class: 'message' }, h1.message));
      parts.push(section('Health gate', gate));
    }
    if (d.analysis.length > 0) parts.push(section('Analysis', d.analysis.map(analysisChart)));
    parts.push(section('Changes', changesTable(d)));
    if (
      d.changes.some((c) => c.outcome === 'rolled-back' || c.outcome === 'conflict') ||
      ['RollingBack', 'RolledBack'].includes(d.row.phase)
    ) {
      parts.push(section('Rollback', undoList(d)));
    }
    parts.push(section('Locks', locksTable(locks)));
    parts.push(section('Timeline', timeline(d.timeline, eventsProblem)));
    return { element: h('div', {}, parts), tick: tickBake };
  }

  function actions(d) {
    if (d.actions.length === 0) {
      return h('p', { class: 'no-actions' }, d.noActionBecause ?? 'No action applies in this phase.');
    }
    return h(
      'div',
      { class: 'actions', role: 'group', 'aria-label': 'Actions' },
      d.actions.map((a) =>
        h(
          'button',
          {
            id: `action-${a.request}`,
            class: 'danger',
            onclick: async () => {
              const answer = await confirmAction(`${a.label} ${key}?`, a.explanation, a.label);
              if (!answer) return;
              const reply = await api(
                `/api/request/transaction/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`,
                {
                  request: a.request,
                  reason: answer.reason,
                },
              );
              result.hidden = false;
              result.className = reply.ok ? 'result ok' : 'result refused';
              result.textContent = reply.ok ? reply.message : `Refused: ${reply.message}`;
            },
          },
          a.label,
        ),
      ),
    );
  }

  function changesTable(d) {
    return h(
      'table',
      { class: 'changes' },
      h('caption', { class: 'visually-hidden' }, 'Changes, in the order they are applied'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['#', 'Type', 'Target', 'Outcome', 'Health', 'Detail', 'Diff'].map((c) =>
            h('th', { scope: 'col' }, c),
          ),
        ),
      ),
      h(
        'tbody',
        {},
        d.changes.map((c) =>
          h(
            'tr',
            { 'data-index': c.index },
            h('td', {}, String(c.index)),
            h('td', {}, c.type),
            h('td', {}, c.target),
            h('td', {}, outcomeBadge(c.outcome)),
            h('td', {}, c.health ? `${c.health.status} (${c.health.reason})` : ''),
            h(
              'td',
              { class: 'message' },
              c.error || (c.health && c.health.status !== 'Current' ? c.health.message : ''),
            ),
            h('td', {}, diffToggle(c.index)),
          ),
        ),
      ),
    );
  }

  function diffToggle(index) {
    const known = openDiffs.get(index);
    const out = h('div', { class: 'diff', id: `diff-${index}` });
    if (known) out.append(known);
    const button = h(
      'button',
      {
        id: `diff-button-${index}`,
        'aria-expanded': known ? 'true' : 'false',
        'aria-controls': `diff-${index}`,
        onclick: async () => {
          if (openDiffs.has(index)) {
            openDiffs.delete(index);
            out.replaceChildren();
            button.setAttribute('aria-expanded', 'false');
            return;
          }
          const reply = await api(
            `/api/diff/transaction/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/${index}`,
          );
          const shown = reply.ok
            ? h(
                'div',
                {},
                reply.note ? h('p', { class: 'note' }, reply.note) : '',
                reply.diff ? diffBlock(reply.diff) : h('p', {}, 'no difference'),
              )
            : h('p', { class: 'problem' }, `The API server refused: ${reply.message}`);
          openDiffs.set(index, shown);
          out.replaceChildren(shown);
          button.setAttribute('aria-expanded', 'true');
        },
      },
      'Show diff',
    );
    return h('div', {}, button, out);
  }

  function undoList(d) {
    const byIndex = new Map(d.changes.map((c) => [c.index, c]));
    return h(
      'div',
      {},
      h('p', {}, 'A rollback undoes the committed changes in reverse order:'),
      h(
        'ol',
        { class: 'undo-order', id: 'undo-order' },
        d.undoOrder.map((i) => {
          const c = byIndex.get(i);
          return h('li', { 'data-index': i }, `#${i} ${c.type} ${c.target} `, outcomeBadge(c.outcome));
        }),
      ),
    );
  }

  return () => {
    clearInterval(clock);
    source.close();
  };
}

function field(label, value) {
  if (value === undefined || value === null || value === '') return '';
  return [h('dt', {}, label), h('dd', {}, value)];
}

function diffBlock(text) {
  return h(
    'pre',
    { class: 'diff-text', tabindex: '0' },
    text.split('\n').map((line) => {
      const kind = line.startsWith('+')
        ? 'add'
        : line.startsWith('-')
          ? 'del'
          : line.startsWith('@@')
            ? 'hunk'
            : 'same';
      return h('span', { class: `line ${kind}` }, `${line}\n`);
    }),
  );
}

function locksTable(locks) {
  if (locks.length === 0) return h('p', {}, 'No lock recorded (locks are taken at prepare).');
  return h(
    'table',
    {},
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        ['Lease', 'Holder', 'Expires'].map((c) => h('th', { scope: 'col' }, c)),
      ),
    ),
    h(
      'tbody',
      {},
      locks.map((l) =>
        h(
          'tr',
          {},
          h('td', {}, l.lease),
          h(
            'td',
            {},
            l.problem
              ? `not readable: ${l.problem}`
              : l.holder
                ? `${l.holder}${l.ours ? ' (this transaction)' : ''}`
                : 'free',
          ),
          h('td', {}, time(l.expires)),
        ),
      ),
    ),
  );
}

function timeline(entries, eventsProblem) {
  return h(
    'div',
    {},
    eventsProblem ? h('p', { class: 'problem' }, `Events not readable: ${eventsProblem}`) : '',
    h(
      'ol',
      { class: 'timeline' },
      entries.map((t) =>
        h(
          'li',
          { class: `tl-${t.kind} tl-${t.type}` },
          time(t.at),
          ' ',
          h('strong', {}, t.kind === 'event' ? `${t.type === 'Warning' ? '⚠ ' : ''}${t.reason}` : t.reason),
          t.message ? ` ${t.message}` : '',
          t.count ? ` (×${t.count})` : '',
        ),
      ),
    ),
  );
}

/** A check's measurements as a small line chart, failed ones marked, with a table for screen readers. */
function analysisChart(check) {
  const values = check.measurements.filter((m) => typeof m.value === 'number');
  const width = 320;
  const height = 80;
  const max = Math.max(...values.map((m) => m.value), 0) || 1;
  const x = (i) => (values.length <= 1 ? width / 2 : 10 + (i * (width - 20)) / (values.length - 1));
  const y = (v) => height - 10 - (v / max) * (height - 20);
  const chart = s(
    'svg',
    {
      viewBox: `0 0 ${width} ${height}`,
      width,
      height,
      role: 'img',
      'aria-label': `${check.name}: ${check.measured} measured, ${check.failed} failed`,
    },
    s('polyline', { class: 'chart-line', points: values.map((m, i) => `${x(i)},${y(m.value)}`).join(' ') }),
    values.map((m, i) =>
      s(
        'circle',
        {
          class: m.phase === 'Passed' ? 'chart-ok' : 'chart-bad',
          cx: x(i),
          cy: y(m.value),
          r: m.phase === 'Passed' ? 3 : 5,
        },
        s('title', {}, `${m.at} ${m.phase} ${m.value}`),
      ),
    ),
  );
  const last = check.measurements.at(-1);
  return h(
    'figure',
    { class: 'analysis' },
    h(
      'figcaption',
      {},
      `${check.name}: ${check.measured} measured, ${check.failed} failed${last ? `; last ${last.phase}${last.value === undefined ? '' : ` ${last.value}`}: ${last.message}` : ''}`,
    ),
    chart,
    h(
      'details',
      {},
      h('summary', {}, 'Measurements'),
      h(
        'ol',
        {},
        check.measurements.map((m) => h('li', {}, time(m.at), ` ${m.phase} ${m.value ?? ''} ${m.message}`)),
      ),
    ),
  );
}

/** This transaction's records on the results branch, with the signature state. */
async function loadRecord(container, namespace, name, info) {
  if (!info.history) {
    container.replaceChildren(
      section('Results branch', h('p', {}, 'No results repository is known to janus ui (--repo).')),
    );
    return;
  }
  const reply = await api(`/api/history/namespace/${encodeURIComponent(namespace)}`);
  if (!reply.ok) {
    container.replaceChildren(section('Results branch', h('p', { class: 'note' }, reply.message)));
    return;
  }
  const mine = reply.entries.filter((e) => e.transaction === `${namespace}/${name}`);
  container.replaceChildren(
    section(
      'Results branch',
      mine.length === 0
        ? h('p', {}, `Nothing recorded for ${namespace}/${name} on ${reply.branch} yet.`)
        : h('ul', { class: 'records' }, mine.map(historyItem)),
    ),
  );
}

export function historyItem(e) {
  const link = (url, text) =>
    url ? h('a', { href: url, rel: 'noreferrer noopener', target: '_blank' }, text) : h('code', {}, text);
  return h(
    'li',
    { class: 'record' },
    time(e.recordedAt),
    ' ',
    phaseBadge(e.phase),
    ' ',
    h('a', { href: `#/t/${e.transaction.split('/').map(encodeURIComponent).join('/')}` }, e.transaction),
    e.detail ? ` (${e.detail})` : '',
    ' · record ',
    link(e.recordUrl, e.record.slice(0, 12)),
    e.source ? [' · source ', link(e.sourceUrl, e.source.slice(0, 12))] : '',
    e.signature
      ? h(
          'span',
          { class: `sig sig-${e.signature.status.replace(' ', '-')}` },
          ` · signature: ${e.signature.status}`,
        )
      : '',
  );
}

export { age };
