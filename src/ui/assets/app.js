// The page: a hash router over the views. Each view returns what stops it (its streams).

import { showTransaction } from './detail.js';
import { api, h } from './dom.js';
import { showList } from './list.js';
import { showGitSides, showHistory, showSources } from './pages.js';

const state = { info: undefined, stop: () => {} };

async function route() {
  state.stop();
  const main = document.getElementById('main');
  main.replaceChildren();
  const [path, query = ''] = (location.hash || '#/').slice(1).split('?');
  const [, view = '', ...rest] = path.split('/').map(decodeURIComponent);
  for (const link of document.querySelectorAll('nav a')) {
    const here = link.getAttribute('href') === `#/${view === 't' ? '' : view}`;
    if (here) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  const info = state.info;
  if (view === 't' && rest.length === 2) state.stop = showTransaction(main, rest[0], rest[1], info);
  else if (view === 'history') state.stop = showHistory(main, rest[0] ?? '', info);
  else if (view === 'sources') state.stop = showSources(main, info);
  else if (view === 'git') state.stop = showGitSides(main, info);
  else state.stop = showList(main, info, new URLSearchParams(query));
}

async function start() {
  const info = await api('/api/info');
  state.info = info;
  const who = document.getElementById('identity');
  who.replaceChildren(
    h('span', {}, `as ${info.user ?? 'your kubeconfig user'}`),
    info.context ? h('span', {}, ` · context ${info.context}`) : '',
  );
  window.addEventListener('hashchange', route);
  await route();
}

start();
