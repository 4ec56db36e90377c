/**
 * `janus demo` on the tests' cluster (--kubeconfig: the local-control-plane mode differs only in
 * starting that cluster, which the global setup already does with the same code), the
 * transaction story and the sources story (--sources). Every test uses the namespace shop, so
 * they run one after the other.
 */
import { existsSync } from 'node:fs';
import { delimiter } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { launchBrowser, screenshot } from '../../support/browser.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { eventually } from '../../support/eventually.ts';
import { janus, startJanus } from '../../support/processes/cli.ts';
import { renderToolsDir } from '../../support/servers/render-tools.ts';

const clients = useClients();

function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return false;
  } catch {
    return true;
  }
}

/** What the demo created outside the cluster, as its cleanup lines name them. */
function leftovers(stderr: string): { workDir: string; pid: number } {
  const workDir = /Removing (\/\S+janus-demo-\S+)/.exec(stderr)?.[1];
  const pid = Number(/Stopping janus run \(pid (\d+)\)/.exec(stderr)?.[1]);
  if (!workDir || !pid) throw new Error(`the demo did not report its cleanup:\n${stderr}`);
  return { workDir, pid };
}

async function shopGone(): Promise<void> {
  await eventually(
    async () =>
      expect(await clients.admin.find({ apiVersion: 'v1', kind: 'Namespace', name: 'shop' })).toBeUndefined(),
    { timeoutMs: 90_000 },
  );
}

describe('janus demo', () => {
  it('tells the whole story: a commit, a rollback at commit, a ROLLBACK request, the results log', async () => {
    // kubectl on PATH, as on a person's machine: the demo runs it for the edit it shows refused.
    const binDir = inject('kube').binDir;
    const env = binDir ? { PATH: `${binDir}${delimiter}${process.env.PATH ?? ''}` } : {};
    const result = await janus(['demo', '--kubeconfig', clients.kubeconfigs.admin], { env });
    const out = result.stderr;
    expect(out, out).toContain('[1/7] Installing Janus');
    expect(out).toMatch(/shop\/deploy-v2\s+Committed\s+— 3\/3 changes committed.*target\(s\) healthy after/);
    expect(out).toMatch(
      /shop\/expose-checkout\s+RollingBack — change 2 .*provided port is already allocated/,
    );
    expect(out).toMatch(/shop\/expose-checkout\s+RolledBack/);
    expect(out).toMatch(
      /The shop now:\n\s+Deployment web runs image ghcr\.io\/stefanprodan\/podinfo:6\.7\.0/,
    );
    // Release 3 never becomes ready: rolled back by the health gate, release 2 serving throughout.
    expect(out).toMatch(/\[4\/7\] Release 3 goes out/);
    expect(out).toMatch(/shop\/deploy-v3\s+Verifying/);
    expect(out).toMatch(
      /while Janus waits for it to be healthy: web pods: 2 ready, image podinfo:6\.7\.0; 1 not ready, image podinfo:6\.7\.1/,
    );
    expect(out).toMatch(
      /shop\/deploy-v3\s+RollingBack\s+— .*Deployment shop\/web: rollout made no progress within 10s/,
    );
    expect(out).toMatch(/shop\/deploy-v3\s+RolledBack/);
    expect(out).toMatch(
      /Release 2 served throughout\.\n\s+The shop now:\n\s+Deployment web runs image ghcr\.io\/stefanprodan\/podinfo:6\.7\.0 \(2\/2 replicas ready\)/,
    );
    // Release 4 is ready but its checkout fails: the smoke test in the bake window rolls it back.
    expect(out).toMatch(/\[5\/7\] Release 4 switches the new checkout on/);
    expect(out).toMatch(/shop\/deploy-v4\s+Verifying/);
    // A person's kubectl edit in the bake window: refused by the API server, naming the Transaction.
    expect(out).toContain('$ kubectl edit deployment web -n shop');
    expect(out).toMatch(
      /error: deployments\.apps "web" could not be patched: .*locked by Transaction shop\/deploy-v4 \(Verifying\): writes are refused until it ends; see it with: janus status deploy-v4 -n shop/,
    );
    expect(out).toMatch(/shop\/deploy-v4\s+RollingBack\s+— .*check "checkout-smoke" failed: .*answered 503/);
    expect(out).toMatch(/shop\/deploy-v4\s+RolledBack/);
    expect(out).toMatch(
      /rolled release 4 back by itself\.\n\s+The shop now:\n\s+Deployment web runs image ghcr\.io\/stefanprodan\/podinfo:6\.7\.0 \(2\/2 replicas ready\)/,
    );
    expect(out).toMatch(/\[6\/7\] Release 2 misbehaves[\s\S]*shop\/deploy-v2\s+RolledBack/);
    expect(out).toMatch(
      /back where it started:\n\s+Deployment web runs image ghcr\.io\/stefanprodan\/podinfo:6\.6\.0/,
    );
    // The results branch, newest first.
    expect(out).toMatch(/^[0-9a-f]{7,} shop\/deploy-v2: RolledBack \(3\/3 changes rolled back\)$/m);
    expect(out).toMatch(/^[0-9a-f]{7,} shop\/expose-checkout: RolledBack/m);
    expect(out).toMatch(/^[0-9a-f]{7,} shop\/deploy-v4: RolledBack \(1\/1 changes rolled back\)$/m);
    expect(out).toMatch(/^[0-9a-f]{7,} shop\/deploy-v3: RolledBack \(1\/1 changes rolled back\)$/m);
    expect(out).toMatch(/^[0-9a-f]{7,} shop\/deploy-v2: Committed \(3\/3 changes\)$/m);
    expect(out).toMatch(/^Janus-Transaction: shop\/deploy-v2$/m);
    expect(out).toMatch(
      /\$ git show janus\/results:results\/shop\/deploy-v2\.yaml\n[\s\S]*phase: RolledBack[\s\S]*health:\n {2}check: Rollback\n {2}result: Healthy/,
    );
    expect(result.code).toBe(0);

    const { workDir, pid } = leftovers(out);
    expect(existsSync(workDir)).toBe(false);
    expect(processGone(pid)).toBe(true);
    await shopGone();
  });

  it('with --sources, tells the sources story: an overlay applied, a new generated ConfigMap all or nothing, a bad commit rolled back whole', async () => {
    // The tests' kustomize and helm: the demo runs build-render-tools.sh, which finds them built there.
    const result = await janus(['demo', '--sources', '--kubeconfig', clients.kubeconfigs.admin], {
      env: { JANUS_RENDER_TOOLS_BIN: renderToolsDir() },
    });
    const out = result.stderr;
    expect(out, out).toMatch(/\[1\/7\] Building kustomize and helm from their pinned Go modules/);
    expect(out).toContain('[2/7] Installing Janus');
    expect(out).toMatch(/janus run --repo \S+ .*--kustomize-path/);
    // Commit 1: release 1, one transaction creating the three objects.
    const [, first, one] =
      /(shop-[0-9a-f]{7,}), one transaction:\n\s+created ConfigMap (web-config-\w+)\n\s+created Service web\n\s+created Deployment web\n/.exec(
        out,
      ) ?? [];
    expect(first, out).toBeDefined();
    expect(out).toMatch(new RegExp(`shop/${first}\\s+Committed`));
    expect(out).toContain(
      `Deployment web runs image ghcr.io/stefanprodan/podinfo:6.6.0 (2/2 replicas ready), reading ConfigMap ${one}`,
    );
    // Commit 2: a new image and settings; the new ConfigMap created, the Deployment updated, the old one pruned.
    expect(out).toMatch(/\[5\/7\] Release 2[\s\S]*-\s+newTag: 6\.6\.0\n\s+\+\s+newTag: 6\.7\.0/);
    const [, second, two] =
      /(shop-[0-9a-f]{7,}), one transaction:\n\s+created ConfigMap (web-config-\w+)\n\s+updated Deployment web\n\s+pruned ConfigMap (web-config-\w+)\n/.exec(
        out,
      ) ?? [];
    expect(second, out).toBeDefined();
    expect(two).not.toBe(one);
    expect(out).toMatch(new RegExp(`updated Deployment web\\n\\s+pruned ConfigMap ${one}\\n`));
    expect(out).toMatch(new RegExp(`shop/${second}\\s+Committed`));
    expect(out).toMatch(
      new RegExp(
        `reading ConfigMap ${two}\\n\\s+ConfigMap ${two}: API_TIMEOUT=5s, FEATURE_CHECKOUT_V2=on\\n\\s+Service web exists\\n`,
      ),
    );
    // Commit 3: never ready; rolled back by the health gate, release 2 serving throughout.
    expect(out).toMatch(/\[6\/7\] Release 3/);
    expect(out).toMatch(
      /while Janus waits for it to be healthy: web pods: 2 ready, image podinfo:6\.7\.0; 1 not ready, image podinfo:6\.7\.1/,
    );
    const [, third, three] =
      /(shop-[0-9a-f]{7,}), one transaction:\n\s+created ConfigMap (web-config-\w+), undone\n\s+updated Deployment web, undone\n\s+pruned ConfigMap (web-config-\w+), undone\n/.exec(
        out,
      ) ?? [];
    expect(third, out).toBeDefined();
    expect(out).toMatch(
      new RegExp(`shop/${third}\\s+RollingBack\\s+— .*Deployment shop/web: rollout made no progress`),
    );
    expect(out).toMatch(new RegExp(`shop/${third}\\s+RolledBack`));
    expect(out).toMatch(new RegExp(`pruned ConfigMap ${two}, undone\\n`));
    expect(out).toMatch(
      new RegExp(
        `The shop now:\\n\\s+Deployment web runs image ghcr\\.io/stefanprodan/podinfo:6\\.7\\.0 \\(2/2 replicas ready\\), reading ConfigMap ${two}\\n\\s+ConfigMap ${two}: API_TIMEOUT=5s, FEATURE_CHECKOUT_V2=on\\n\\s+Service web exists\\n`,
      ),
    );
    expect(out).not.toContain(`ConfigMap ${three}:`);
    expect(out).toContain(`and ${two}, which it had pruned, re-created (a new uid)`);
    // Where people look: the Source at commit 2, commit 3 rolled back; the results branch.
    expect(out).toMatch(
      new RegExp(
        `\\$ kubectl get jsrc -n shop\\nNAME +APPLIED +ATTEMPTED +OUTCOME +DRIFT +AGE\\nshop +${second?.slice(5, 12)} +${third?.slice(5, 12)} +RolledBack `,
      ),
    );
    expect(out).toMatch(
      new RegExp(
        `\\(-o wide adds its Ready condition's message: ${third?.slice(5, 12)} rolled back \\(Transaction ${third}\\): .*; the source waits for a commit that changes its render\\)`,
      ),
    );
    expect(out).toMatch(new RegExp(`^[0-9a-f]{7,} shop/${third}: RolledBack`, 'm'));
    expect(out).toMatch(new RegExp(`^[0-9a-f]{7,} shop/${second}: Committed`, 'm'));
    expect(out).toMatch(new RegExp(`^[0-9a-f]{7,} shop/${first}: Committed`, 'm'));
    expect(out).toMatch(
      new RegExp(
        `\\$ git show janus/results:results/shop/${third}\\.yaml\\n[\\s\\S]*phase: RolledBack[\\s\\S]*render:\\n {2}source: shop`,
      ),
    );
    expect(result.code).toBe(0);

    const { workDir, pid } = leftovers(out);
    expect(existsSync(workDir)).toBe(false);
    expect(processGone(pid)).toBe(true);
    await shopGone();
  }, 600_000);

  it('cleans up everything on Ctrl-C and exits 130', async () => {
    const demo = startJanus(['demo', '--kubeconfig', clients.kubeconfigs.admin]);
    await eventually(() => expect(demo.stderr()).toMatch(/shop\/deploy-v2\s+\w+/), { timeoutMs: 120_000 });
    demo.child.kill('SIGINT');
    const result = await demo.exited;
    expect(result.stderr).toContain('\nInterrupted.\n');
    expect(result.code).toBe(130);
    const { workDir, pid } = leftovers(result.stderr);
    expect(existsSync(workDir)).toBe(false);
    expect(processGone(pid)).toBe(true);
    await shopGone();
  });

  it('with --ui, serves the story in the web view: live list, the smoke test verdict, reverse order, history', async () => {
    const demo = startJanus(['demo', '--kubeconfig', clients.kubeconfigs.admin, '--ui']);
    const browser = await launchBrowser();
    try {
      const url = await eventually(
        () => {
          const found =
            /Watch it in the web view \(janus ui\): (http:\/\/127\.0\.0\.1:\d+\/\?token=\S+)/.exec(
              demo.stderr(),
            )?.[1];
          if (!found) throw new Error(`no URL yet:\n${demo.stderr()}`);
          return found;
        },
        { timeoutMs: 120_000 },
      );
      const origin = new URL(url).origin;
      const page = await browser.page();
      page.setDefaultTimeout(240_000);
      await page.goto(url);
      // The list follows the story as it is told.
      await page.locator('tr[data-key="shop/deploy-v2"]').waitFor();
      await page.locator('tr[data-key="shop/deploy-v4"]').waitFor();
      // Release 4, rolled back by the smoke test in its bake window: the timeline says so.
      await page.goto(`${origin}/#/t/shop/deploy-v4`);
      await page.locator('dl.summary .phase-RolledBack').waitFor();
      await page.locator('.timeline', { hasText: 'check "checkout-smoke" failed' }).waitFor();

      await eventually(
        () => expect(demo.stderr()).toContain('Everything keeps running until you press Ctrl-C'),
        {
          timeoutMs: 600_000,
          intervalMs: 1000,
        },
      );
      await page.goto(`${origin}/#/?namespace=shop`);
      await page.locator('tr[data-key="shop/deploy-v4"][data-phase="RolledBack"]').waitFor();
      await screenshot(page, 'transactions');

      await page.goto(`${origin}/#/t/shop/expose-checkout`);
      const undo = page.locator('#undo-order li');
      await undo.first().waitFor();
      const order = await undo.evaluateAll((items) => items.map((i) => Number(i.getAttribute('data-index'))));
      expect(order).toEqual([...order].sort((a, b) => b - a));
      await page.locator('#record .record', { hasText: 'RolledBack' }).waitFor();

      await page.goto(`${origin}/#/history/shop`);
      const history = page.locator('.history-timeline li');
      await history.first().waitFor();
      expect(await history.allTextContents()).toEqual(
        expect.arrayContaining([
          expect.stringMatching(/Committed.*shop\/deploy-v2 \(3\/3 changes\)/),
          expect.stringMatching(/RolledBack.*shop\/deploy-v2 \(3\/3 changes rolled back\)/),
        ]),
      );
      await screenshot(page, 'history');

      // The demo's own Git side: the shared test cluster keeps those of earlier janus runs beside it.
      const repoPath = /janus run --repo (\S+)/.exec(demo.stderr())?.[1];
      expect(repoPath).toBeDefined();
      const side = page.locator('.git-side').filter({ hasText: repoPath ?? '' });
      await page.goto(`${origin}/#/git`);
      await side.filter({ hasText: 'active: polling' }).waitFor();
      await screenshot(page, 'git-side');
      // Suspend and resume, confirmed, as janus suspend and janus resume would.
      await side.locator('button', { hasText: 'Suspend' }).click();
      await page.locator('#confirm-reason').fill('change freeze');
      await page.locator('#confirm-go').click();
      await side.filter({ hasText: 'suspended' }).filter({ hasText: 'change freeze' }).waitFor();
      await side.locator('button', { hasText: 'Resume' }).click();
      await page.locator('#confirm-go').click();
      await page.locator('#git-result', { hasText: 'resumed; a poll is requested' }).waitFor();
      await side.filter({ hasText: 'active: polling' }).waitFor();
    } finally {
      await browser.close();
      demo.child.kill('SIGINT');
    }
    const result = await demo.exited;
    expect(result.stderr).toContain('Stopping the web view');
    const { workDir, pid } = leftovers(result.stderr);
    expect(existsSync(workDir)).toBe(false);
    expect(processGone(pid)).toBe(true);
    await shopGone();
  }, 600_000);

  it('refuses to touch a cluster whose namespace shop already exists (exit 2)', async () => {
    await shopGone(); // a demo before this one may still be deleting its own
    await clients.admin.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'shop' } });
    try {
      const result = await janus(['demo', '--kubeconfig', clients.kubeconfigs.admin]);
      expect(result.stderr).toContain('janus: namespace shop already exists in this cluster');
      expect(result.code).toBe(2);
    } finally {
      await clients.admin.delete({ apiVersion: 'v1', kind: 'Namespace', name: 'shop' });
    }
    await shopGone();
  });
});
