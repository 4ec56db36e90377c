// The history of a namespace from the results branch, the Sources, and the Git side of janus run.

import { historyItem } from './detail.js';
import { age, api, confirmAction, h, phaseBadge } from './dom.js';

export function showHistory(main, namespace, info) {
  const ns = namespace || info.initialScope || '';
  const input = h('input', { id: 'history-namespace', value: ns, autocomplete: 'off', required: true });
  const out = h('div', { id: 'history' });
  main.append(
    h('h1', {}, 'History'),
    h(
      'form',
      {
        class: 'filters',
        onsubmit: (e) => {
          e.preventDefault();
          location.hash = `#/history/${encodeURIComponent(input.value.trim())}`;
        },
      },
      h('label', { for: 'history-namespace' }, 'Namespace'),
      input,
      h('button', { type: 'submit' }, 'Show'),
    ),
    out,
  );
  if (!ns) {
    out.append(h('p', {}, 'Name a namespace to read its outcomes from the results branch.'));
    return () => {};
  }
  out.append(h('p', {}, 'Reading the results branch…'));
  api(`/api/history/namespace/${encodeURIComponent(ns)}`).then((reply) => {
    if (!reply.ok) {
      out.replaceChildren(h('p', { class: 'problem', role: 'alert' }, reply.message));
      return;
    }
    out.replaceChildren(
      h(
        'p',
        {},
        `${reply.entries.length} outcome(s) of namespace ${ns} on ${reply.branch} of ${reply.repository}${reply.more ? ' (older ones not shown)' : ''}, oldest first.`,
      ),
      h('ol', { class: 'history-timeline' }, reply.entries.map(historyItem)),
    );
  });
  return () => {};
}

export function showSources(main, info) {
  const tbody = h('tbody');
  const problem = h('p', { class: 'problem', hidden: true, role: 'status' });
  const rows = new Map();
  main.append(
    h('h1', {}, 'Sources'),
    problem,
    h(
      'table',
      {},
      h('caption', { class: 'visually-hidden' }, 'Sources'),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          [
            'Namespace',
            'Name',
            'Renders',
            'Applied',
            'Attempted',
            'Outcome',
            'Objects',
            'Drift',
            'Ready',
            'Age',
          ].map((c) => h('th', { scope: 'col' }, c)),
        ),
      ),
      tbody,
    ),
  );
  const render = (r) =>
    h(
      'tr',
      { 'data-key': r.key },
      h('td', {}, r.namespace),
      h('td', {}, r.name),
      h('td', {}, r.render),
      h(
        'td',
        {},
        r.applied
          ? `${r.applied.commit.slice(0, 7)}${r.applied.transaction ? ` (${r.applied.transaction})` : ''}`
          : '',
      ),
      h('td', {}, r.attempted?.commit.slice(0, 7) ?? ''),
      h(
        'td',
        { class: 'message' },
        r.attempted?.outcome ? phaseBadge(r.attempted.outcome) : '',
        r.attempted?.reason ? ` ${r.attempted.reason}` : '',
      ),
      h('td', {}, String(r.objects)),
      h('td', {}, r.drift),
      h('td', {}, r.ready ? `${r.ready.status} (${r.ready.reason})` : ''),
      h('td', {}, age(r.created)),
    );
  const source = new EventSource(
    `/api/stream/sources?namespace=${encodeURIComponent(info.initialScope ?? '')}`,
  );
  source.addEventListener('snapshot', (e) => {
    rows.clear();
    tbody.replaceChildren(
      ...JSON.parse(e.data).rows.map((r) => {
        const tr = render(r);
        rows.set(r.key, tr);
        return tr;
      }),
    );
  });
  source.addEventListener('upsert', (e) => {
    const r = JSON.parse(e.data);
    const tr = render(r);
    if (rows.has(r.key)) rows.get(r.key).replaceWith(tr);
    else tbody.append(tr);
    rows.set(r.key, tr);
  });
  source.addEventListener('remove', (e) => {
    const { key } = JSON.parse(e.data);
    rows.get(key)?.remove();
    rows.delete(key);
  });
  source.addEventListener('problem', (e) => {
    const { message, served } = JSON.parse(e.data);
    problem.textContent = served ? `The API server refused: ${message}` : `${message}.`;
    problem.hidden = false;
    if (!served) source.close();
  });
  return () => source.close();
}

export function showGitSides(main) {
  const out = h('div', { id: 'git-sides' });
  const result = h('p', { id: 'git-result', role: 'alert', class: 'result', hidden: true });
  main.append(h('h1', {}, 'Git side of janus run'), result, out);
  const load = async () => {
    const reply = await api('/api/git-sides');
    if (!reply.ok) {
      out.replaceChildren(h('p', { class: 'problem' }, `The API server refused: ${reply.message}`));
      return;
    }
    if (reply.sides.length === 0) {
      out.replaceChildren(
        h('p', {}, `No Git side in namespace ${reply.namespace} (janus run creates it when it leads).`),
      );
      return;
    }
    out.replaceChildren(...reply.sides.map((side) => sideView(side)));
  };
  const act = async (side, suspend) => {
    const verb = suspend ? 'Suspend' : 'Resume';
    const answer = await confirmAction(
      `${verb} the Git side of ${side.repository}?`,
      suspend
        ? 'No new transaction directory is applied until it is resumed; transactions in the cluster go on to their end.'
        : 'Polling starts again at once, and reads everything that landed meanwhile, in commit order.',
      verb,
    );
    if (!answer) return;
    const reply = await api(
      `/api/git-sides/${suspend ? 'suspend' : 'resume'}/${encodeURIComponent(side.name)}`,
      { reason: answer.reason },
    );
    result.hidden = false;
    result.className = reply.ok ? 'result ok' : 'result refused';
    result.textContent = reply.ok ? reply.message : `Refused: ${reply.message}`;
    await load();
  };
  const sideView = (side) =>
    h(
      'section',
      { class: 'git-side', 'aria-label': side.repository },
      h('h2', {}, side.repository),
      h(
        'p',
        {},
        `branch ${side.branch}, folder ${side.root || '/'} (ConfigMap ${side.namespace}/${side.name})`,
      ),
      h(
        'p',
        {},
        side.suspended
          ? h(
              'span',
              { class: 'badge phase-Failed' },
              `⏸ suspended${side.suspended.since ? ` since ${side.suspended.since}` : ''}${side.suspended.by ? ` by ${side.suspended.by}` : ''}${side.suspended.reason ? `: ${side.suspended.reason}` : ''}`,
            )
          : h('span', { class: 'badge phase-Committed' }, '▶ active: polling'),
      ),
      side.lastPoll
        ? h(
            'p',
            {},
            `last recorded poll ${side.lastPoll.at}${side.lastPoll.commit ? ` at ${side.lastPoll.commit.slice(0, 12)}` : ''}: ${side.lastPoll.result}`,
          )
        : '',
      h(
        'button',
        { class: 'danger', onclick: () => act(side, !side.suspended) },
        side.suspended ? 'Resume' : 'Suspend',
      ),
    );
  load();
  return () => {};
}
