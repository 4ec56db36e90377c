import { describe, expect, it } from 'vitest';
import {
  failedChange,
  invalidDirectory,
  planChange,
  planExitCode,
  redactedPlan,
  renderDiffs,
  renderMarkdown,
  renderPlan,
  type SourcePlanInfo,
  type TransactionPlan,
} from '../../../src/cli/plan-view.ts';
import type { KubeObject } from '../../../src/kube/resources.ts';

const cm = (data: Record<string, string>, rv = '1'): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'app', namespace: 'shop', resourceVersion: rv },
  data,
});
const T = 'v1 ConfigMap shop/app';
/** A custom resource whose content is secret when --sops-kinds lists its kind. */
const db = (password: string): KubeObject => ({
  apiVersion: 'db.example.com/v1',
  kind: 'Database',
  metadata: { name: 'orders', namespace: 'shop' },
  spec: { password },
});

describe('planChange', () => {
  it('classifies by what exists before and after', () => {
    expect(planChange(0, 'Create', T, undefined, cm({ a: '1' })).action).toBe('create');
    expect(planChange(0, 'Delete', T, cm({ a: '1' }), undefined).action).toBe('delete');
    expect(planChange(0, 'Patch', T, cm({ a: '1' }), cm({ a: '2' }, '2')).action).toBe('update');
    expect(planChange(0, 'Patch', T, cm({ a: '1' }), cm({ a: '1' }, '2'))).toMatchObject({
      action: 'unchanged',
      diff: '',
    });
    expect(planChange(0, 'Delete', T, undefined, undefined).action).toBe('unchanged');
  });

  it('labels the diff with the target and the change', () => {
    const { diff } = planChange(2, 'Patch', T, cm({ a: '1' }), cm({ a: '2' }));
    expect(diff).toMatch(
      /^--- current v1 ConfigMap shop\/app\n\+\+\+ planned v1 ConfigMap shop\/app \(change 2: Patch\)\n/,
    );
  });
});

describe('planExitCode', () => {
  const plan = (changes: TransactionPlan['changes'], problems: string[] = []): TransactionPlan => ({
    path: 'transactions/x',
    namespace: 'shop',
    name: 'x',
    changes,
    problems,
  });
  const unchanged = planChange(0, 'Patch', T, cm({}), cm({}));
  const update = planChange(1, 'Patch', T, cm({ a: '1' }), cm({ a: '2' }));

  it('is 0 when nothing would change, 1 when something would, 2 when anything is wrong', () => {
    expect(planExitCode([plan([unchanged])])).toBe(0);
    expect(planExitCode([plan([unchanged, update])])).toBe(1);
    expect(planExitCode([plan([update, failedChange(2, 'Create', T, 'AlreadyExists')])])).toBe(2);
    expect(planExitCode([plan([update]), invalidDirectory('transactions/bad', 'shop', 'bad', [])])).toBe(1);
    expect(
      planExitCode([
        invalidDirectory('transactions/bad', 'shop', 'bad', [
          { code: 'no-changes', file: 'f', message: 'm' },
        ]),
      ]),
    ).toBe(2);
  });

  it('renders per change what would happen, the diff, and totals', () => {
    const text = renderPlan({
      ...plan([unchanged, update, failedChange(2, 'Create', T, 'Forbidden: no')]),
      identity: 'sa',
    });
    expect(text).toContain('Transaction shop/x (transactions/x), dry run as sa');
    expect(text).toContain('[0] Patch v1 ConfigMap shop/app: no change');
    expect(text).toContain('[1] Patch v1 ConfigMap shop/app: would change\n--- current');
    expect(text).toContain('[2] Create v1 ConfigMap shop/app: REFUSED\n    Forbidden: no');
    expect(text).toContain('shop/x: 0 to create, 1 to update, 0 to delete, 1 unchanged, 1 refused');
    expect(renderDiffs([plan([unchanged, update])])).toBe(update.diff);
  });

  it('renders an invalid directory with its diagnostics in file:line form', () => {
    const bad = invalidDirectory('transactions/bad', 'shop', 'bad', [
      {
        code: 'invalid-value',
        file: 'transactions/bad/10-x.patch.yaml',
        line: 3,
        column: 5,
        message: 'wrong',
      },
    ]);
    expect(renderPlan(bad)).toContain('transactions/bad/10-x.patch.yaml:3:5: wrong');
  });

  it('renders a pull-request comment: verdict, a table per transaction, refusals, folded diffs', () => {
    const bad = invalidDirectory('transactions/bad', 'shop', 'bad', [
      { code: 'invalid-value', file: 'transactions/bad/10-x.patch.yaml', line: 3, message: 'a | b' },
    ]);
    const md = renderMarkdown([
      { ...plan([unchanged, update, failedChange(2, 'Create', T, 'Forbidden: no')]), identity: 'sa' },
      bad,
    ]);
    expect(md.split('\n')[0]).toBe('### Janus plan: ❌ would be refused');
    expect(md).toContain(
      '2 transaction(s): 0 to create, 1 to update, 0 to delete, 1 unchanged, 1 refused; 1 cannot be planned.',
    );
    expect(md).toContain('#### `shop/x` (`transactions/x`), dry run as `sa`');
    expect(md).toContain('| 1 | Patch | `v1 ConfigMap shop/app` | would change |');
    expect(md).toContain('| 2 | Create | `v1 ConfigMap shop/app` | ❌ refused |');
    expect(md).toContain('**Change 2 would be refused:** `Forbidden: no`');
    expect(md).toContain(
      `<details><summary>[1] Patch v1 ConfigMap shop/app: would change</summary>\n\n\`\`\`diff\n${update.diff}`,
    );
    expect(md).toContain('**Cannot be planned:**\n\n- `transactions/bad/10-x.patch.yaml:3: a | b`');
    expect(renderMarkdown([plan([unchanged])]).split('\n')[0]).toBe('### Janus plan: ✅ no change');
  });

  it("shows a pusher's links, bare URLs, mentions, HTML and backticks as text, in code spans or entities", () => {
    // The pull request's author names the directory, the files and the targets; the comment is
    // posted with the CI's token into a page the reviewers trust.
    const link = '[approved](https://evil.example/login)';
    const bad = invalidDirectory('transactions/[x](http://evil)', 'shop', '[x](http://evil)', [
      {
        code: 'wrong-kind',
        file: 'transactions/x/transaction.yaml',
        message: `found "${link} @here <img src=x>"`,
      },
    ]);
    const target = 'v1 ConfigMap shop/`a`</summary><a href="https://evil.example">x</a>';
    const refused = failedChange(0, 'Create', target, 'Forbidden: see https://evil.example\n# Approved');
    const changed = { ...update, target, diff: '+  url: https://evil.example/\u202egnp.exe\t!\n' };
    const md = renderMarkdown([plan([refused, changed]), bad]);
    expect(md).toContain('#### `shop/[x](http://evil)` (`transactions/[x](http://evil)`)');
    expect(md).toContain(`- \`transactions/x/transaction.yaml: found "${link} @here <img src=x>"\``);
    expect(md).toContain(
      '| 0 | Create | ``v1 ConfigMap shop/`a`</summary><a href="https://evil.example">x</a>`` | ❌ refused |',
    );
    expect(md).toContain('**Change 0 would be refused:** `Forbidden: see https://evil.example # Approved`');
    expect(md).toContain(
      '<summary>[1] Patch v1 ConfigMap shop/`a`&lt;/summary&gt;&lt;a href=&quot;https://evil.example&quot;&gt;x&lt;/a&gt;: would change</summary>',
    );
    // Bidi controls in a diff become "?"; its tabs stay.
    expect(md).toContain('+  url: https://evil.example/?gnp.exe\t!');
    // Nothing of theirs outside a code span: the lines that hold it all start as Janus writes them.
    for (const line of md.split('\n').filter((l) => l.includes('evil')))
      expect(line).toMatch(
        /^(#### `|- `|\| \d+ \| \w+ \| `|\*\*Change \d+ would be refused:\*\* `|<details><summary>|\+ )/,
      );
  });

  it('fences a diff that itself holds backticks with a longer fence', () => {
    const tricky = { ...update, diff: '+  note: "```"\n' };
    const md = renderMarkdown([plan([tricky])]);
    expect(md).toContain('````diff\n+  note: "```"\n````');
  });
});

describe('plans of sources', () => {
  const BASE = 'a'.repeat(40);
  const HEAD = 'b'.repeat(40);
  const update = planChange(0, 'Apply', 'apps/v1 Deployment shop/web', cm({ a: '1' }), cm({ a: '2' }));
  const prune = planChange(1, 'Delete', 'v1 ConfigMap shop/old', cm({ a: '1' }), undefined);
  const source = (
    verdict: SourcePlanInfo['verdict'],
    more: Partial<TransactionPlan> = {},
    info: Partial<SourcePlanInfo> = {},
  ): TransactionPlan => ({
    path: 'sources/web.yaml',
    namespace: 'shop',
    name: 'web-bbbbbbb',
    changes: [],
    problems: [],
    ...more,
    source: {
      name: 'web',
      file: 'sources/web.yaml',
      base: BASE,
      head: HEAD,
      verdict,
      left: [],
      comparedWith: 'cluster',
      ...info,
    },
  });

  it('shows the transaction the merge would make: the source, its commits, an update with its diff and a prune', () => {
    const plan = source(
      'transaction',
      { changes: [update, prune], identity: 'system:serviceaccount:shop:deployer' },
      {
        left: ['v1 ConfigMap shop/keep is left in the cluster: its render says tx.janus.io/prune: disabled'],
      },
    );
    const text = renderPlan(plan);
    expect(text).toContain(
      'Source shop/web (sources/web.yaml), aaaaaaa → bbbbbbb: the merge would make this transaction\nTransaction shop/web-bbbbbbb (sources/web.yaml), dry run as system:serviceaccount:shop:deployer',
    );
    expect(text).toContain('[0] Apply apps/v1 Deployment shop/web: would change\n--- current');
    expect(text).toContain('[1] Delete v1 ConfigMap shop/old: would be pruned');
    expect(text).toContain('Left in the cluster:\n  v1 ConfigMap shop/keep is left in the cluster');
    expect(text).toContain('shop/web-bbbbbbb: 0 to create, 1 to update, 1 to delete, 0 unchanged');
    const md = renderMarkdown([plan]);
    expect(md).toContain(
      '0 transaction(s), 1 source(s): 0 to create, 1 to update, 1 to delete, 0 unchanged.',
    );
    expect(md).toContain('#### Source `shop/web` (`sources/web.yaml`), `aaaaaaa` → `bbbbbbb`');
    expect(md).toContain(
      'the merge would make this transaction: `shop/web-bbbbbbb`, dry run as `system:serviceaccount:shop:deployer`; compared with',
    );
    expect(md).toContain('| 1 | Delete | `v1 ConfigMap shop/old` | would be pruned |');
    expect(md).toContain('<details><summary>[0] Apply apps/v1 Deployment shop/web: would change</summary>');
    expect(planExitCode([plan])).toBe(1);
  });

  it('shows a render failure or a refusal as what would stop the merge, and exits 2', () => {
    const failed = source('render-failed', {
      problems: ['deploy/prod/kustomization.yaml:7: kustomize: bad'],
    });
    expect(renderPlan(failed)).toBe(
      'Source shop/web (sources/web.yaml), aaaaaaa → bbbbbbb: its render would fail: nothing would be applied\n  deploy/prod/kustomization.yaml:7: kustomize: bad\n\n',
    );
    const refused = source('refused', {
      problems: ['v1 ConfigMap kube-public/x: namespace kube-public is a Kubernetes system namespace'],
    });
    const md = renderMarkdown([refused]);
    expect(md.split('\n')[0]).toBe('### Janus plan: ❌ would be refused');
    expect(md).toContain(
      'its render would be refused: nothing would be applied.\n\n- `v1 ConfigMap kube-public/x: namespace kube-public is a Kubernetes system namespace`',
    );
    expect(planExitCode([failed])).toBe(2);
    expect(planExitCode([source('removed')])).toBe(1);
    expect(planExitCode([source('no-transaction')])).toBe(0);
  });

  it("shows a pusher's paths, object names and the tools' messages as text", () => {
    const evil = '[x](https://evil.example) @here <img src=x> `';
    const plan = source(
      'render-failed',
      {
        path: `sources/${evil}.yaml`,
        problems: [`deploy/${evil}/kustomization.yaml:1: kustomize: ${evil}\n# Approved`],
      },
      {
        name: evil,
        file: `sources/${evil}.yaml`,
        left: [`v1 ConfigMap shop/${evil} is left in the cluster`],
      },
    );
    const md = renderMarkdown([plan]);
    for (const line of md.split('\n').filter((l) => l.includes('evil')))
      expect(line).toMatch(/^(#### Source ``|- ``)/);
    expect(md).not.toMatch(/^# Approved/m);
    const changed = source('transaction', {
      changes: [{ ...prune, target: `v1 ConfigMap shop/${evil}</summary>`, diff: '-  a: "1"\n' }],
    });
    const md2 = renderMarkdown([changed]);
    expect(md2).toContain(
      '<summary>[1] Delete v1 ConfigMap shop/[x](https://evil.example) @here &lt;img src=x&gt; `&lt;/summary&gt;: would be pruned</summary>',
    );
    expect(renderPlan(plan)).toContain('\n    # Approved');
  });

  it('redacts every value a source render decrypted from all it shows: targets, diffs, refusals, what is left', () => {
    const token = 'tok-3f9a1c2e';
    const lines = 'line one 7d2c\nline two 9e1b';
    const decrypted = [
      { file: 'deploy/app/secret.yaml', values: [token, lines, 'ab'], text: '', recipients: [] },
    ];
    const secretCm = (data: Record<string, string>, name: string): KubeObject => ({
      ...cm(data),
      metadata: { name, namespace: 'shop', labels: { team: token }, annotations: { note: lines } },
    });
    const leaked = source(
      'transaction',
      {
        changes: [
          planChange(0, 'Apply', `v1 Secret shop/${token}`, undefined, secretCm({ a: '1' }, token)),
          failedChange(
            1,
            'Apply',
            'v1 Secret shop/x',
            `Secret "x" is invalid: metadata.labels: Invalid value: "${token}"`,
          ),
        ],
        problems: [`deploy/app: "${JSON.stringify(lines).slice(1, -1)}"`],
      },
      { left: [`v1 ConfigMap shop/${token} is left in the cluster`] },
    );
    const plan = redactedPlan(leaked, decrypted);
    const all = [JSON.stringify(plan), renderPlan(plan), renderMarkdown([plan]), renderDiffs([plan])].join(
      '\n',
    );
    for (const secret of [token, 'line one 7d2c', 'line two 9e1b']) expect(all).not.toContain(secret);
    expect(plan.changes[0]?.target).toBe('v1 Secret shop/(decrypted)');
    expect(plan.changes[0]?.diff).toContain('+    team: (decrypted)');
    expect(plan.changes[1]?.error).toBe(
      'Secret "x" is invalid: metadata.labels: Invalid value: "(decrypted)"',
    );
    expect(plan.problems).toEqual(['deploy/app: "(decrypted)"']);
    expect(plan.source?.left).toEqual(['v1 ConfigMap shop/(decrypted) is left in the cluster']);
    // What the render did not decrypt stays; a value under 4 characters too.
    expect(plan).toMatchObject({
      name: 'web-bbbbbbb',
      source: { base: BASE, head: HEAD, verdict: 'transaction' },
    });
    expect(redactedPlan(leaked, [])).toBe(leaked);
  });

  it("masks a secret kind's content on both sides by its kind, sealed or plain: the live object's too", () => {
    const target = 'db.example.com/v1 Database shop/orders';
    // A plain change whose content is not the live one: the live (decrypted) value stays hidden.
    const plain = planChange(0, 'Apply', target, db('live-pw'), db('guess'), true);
    expect(plain.action).toBe('update');
    expect(plain.diff).not.toMatch(/live-pw|guess/);
    expect(plain.note).toMatch(/values are masked and never compared/);
    expect(planChange(0, 'Delete', target, db('live-pw'), undefined, true).diff).not.toContain('live-pw');
    // Not a secret kind: shown as it is.
    expect(planChange(0, 'Apply', 'x', db('old-pw'), db('new-pw')).diff).toContain('+  password: new-pw');
  });

  it('never tells whether a secret value matches the live one: a guess and the right value plan alike', () => {
    const secret = (token: string): KubeObject => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'api', namespace: 'shop' },
      data: { token },
    });
    const cases: [KubeObject, KubeObject, KubeObject, boolean][] = [
      [secret('cmlnaHQ='), secret('cmlnaHQ='), secret('Z3Vlc3M='), false],
      [db('right'), db('right'), db('guess'), true],
    ];
    for (const [live, right, guess, secretContent] of cases) {
      const plans = [right, guess].map((planned) =>
        planChange(0, 'Apply', 'shop/x', live, planned, secretContent),
      );
      expect(plans[0]).toEqual(plans[1]);
      expect(plans[0]).toMatchObject({ action: 'update', note: expect.stringMatching(/never compared/) });
      const shown = plans.map((p) => {
        const plan = { path: 'p', namespace: 'shop', name: 'n', changes: [p], problems: [] };
        return [renderPlan(plan), renderMarkdown([plan]), JSON.stringify(plan)].join('\n');
      });
      expect(shown[0]).toBe(shown[1]);
      expect(shown[0]).toContain('values not compared');
      expect(shown[0]).not.toMatch(/before\)|after\)/);
      expect(planExitCode([{ path: 'p', namespace: 'shop', name: 'n', changes: plans, problems: [] }])).toBe(
        1,
      );
    }
  });
});
