/**
 * Notifications end to end: the controller process, the real API server, a test HTTP listener
 * and a real Alertmanager (built from its Go module). A transaction that commits and one that
 * the health gate rolls back produce CloudEvents signed with a verifiable HMAC, and an
 * Alertmanager alert that fires and then resolves; a route filtered to another namespace
 * receives nothing.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Change } from '../../../src/api/v1alpha1/index.ts';
import { useClients } from '../../support/cluster/kube.ts';
import { testNamespace, transaction, waitForPhase } from '../../support/cluster/saga.ts';
import { eventually } from '../../support/eventually.ts';
import { withController } from '../../support/processes/controller-process.ts';
import { startAlertmanager, type TestAlertmanager } from '../../support/servers/alertmanager.ts';
import { startListener, type TestListener } from '../../support/servers/http-listener.ts';

const clients = useClients();
const KEY = 'test-hmac-key-0123456789';

const service = (name: string, type: string): Change => ({
  target: { apiVersion: 'v1', kind: 'Service', name },
  type: 'Create',
  content: { spec: { type, selector: { app: 'x' }, ports: [{ port: 80 }] } },
});

interface CloudEvent {
  id: string;
  type: string;
  subject: string;
  data: { phase: string; severity: string; reason: string; changes: number; url?: string };
}

interface AlertmanagerWebhook {
  status: 'firing' | 'resolved';
  alerts: { status: string; labels: Record<string, string>; annotations: Record<string, string> }[];
}

let listener: TestListener;
let alertmanager: TestAlertmanager;
let dir: string;

beforeAll(async () => {
  listener = await startListener();
  alertmanager = await startAlertmanager(`${listener.address}/alertmanager-webhook`);
  dir = await mkdtemp(join(tmpdir(), 'janus-notify-'));
}, 600_000); // a cold build of Alertmanager takes minutes (docs/operations.md)

afterAll(async () => {
  await alertmanager?.stop();
  await listener?.close();
  await rm(dir, { recursive: true, force: true });
});

/** A namespace whose events one route sends, signed, to the listener's `/<path>`; a controller's options for it. */
async function auditedNamespace(prefix: string, path: string) {
  const ns = await testNamespace(clients.admin, prefix, {
    deployer: [{ apiGroups: [''], resources: ['services'], verbs: ['*'] }],
  });
  await writeFile(join(dir, 'hmac-key'), `${KEY}\n`);
  const config = join(dir, `${path}.yaml`);
  await writeFile(
    config,
    [
      'providers:',
      `  - {name: audit, type: cloudevents, address: "${listener.address}/${path}", secretFile: ${join(dir, 'hmac-key')}}`,
      `routes: [{namespaces: [${ns}], providers: [audit]}]`,
      '',
    ].join('\n'),
  );
  const options = {
    kubeconfig: clients.kubeconfigs.controller,
    namespace: ns,
    logLevel: 'info',
    env: { JANUS_NOTIFICATIONS_CONFIG: config },
  };
  return { ns, options };
}

describe('notifications', () => {
  it('notifies a commit and a health-gate rollback, signed, with an alert that fires and resolves; another namespace hears nothing', async () => {
    const ns = await testNamespace(clients.admin, 'notify', {
      deployer: [{ apiGroups: [''], resources: ['services'], verbs: ['*'] }],
    });
    await writeFile(join(dir, 'hmac-key'), `${KEY}\n`);
    const config = join(dir, 'notifications.yaml');
    await writeFile(
      config,
      [
        'transactionUrl: https://janus.example.com/t/{namespace}/{name}',
        'providers:',
        '  - name: audit',
        '    type: cloudevents',
        `    address: ${listener.address}/audit`,
        `    secretFile: ${join(dir, 'hmac-key')}`,
        '  - name: other-team',
        '    type: cloudevents',
        `    address: ${listener.address}/other-team`,
        `    secretFile: ${join(dir, 'hmac-key')}`,
        '  - name: alertmanager',
        '    type: alertmanager',
        `    address: ${alertmanager.address}/api/v2/alerts`,
        '    resolveAfter: 5s', // so the test sees the error alert resolve
        'routes:',
        `  - {namespaces: [${ns}], providers: [audit]}`,
        `  - {namespaces: ["${ns}-other", other-*], providers: [other-team]}`,
        `  - {namespaces: [${ns}], severity: warning, providers: [alertmanager]}`,
        '',
      ].join('\n'),
    );

    await withController(
      {
        kubeconfig: clients.kubeconfigs.controller,
        namespace: ns,
        logLevel: 'info',
        env: { JANUS_NOTIFICATIONS_CONFIG: config },
      },
      async (controller) => {
        await clients.admin.create(transaction(ns, 'expose', [service('web', 'ClusterIP')]));
        await clients.admin.create(
          transaction(ns, 'expose-lb', [service('lb', 'LoadBalancer')], { health: { timeout: '3s' } }),
        );
        const committed = await waitForPhase(clients.admin, ns, 'expose', 'Committed');
        const rolledBack = await waitForPhase(clients.admin, ns, 'expose-lb', 'RolledBack');
        const uid = { expose: committed.metadata.uid, 'expose-lb': rolledBack.metadata.uid };

        // CloudEvents, each once, signed over the exact body.
        const events = await eventually(() => {
          const got = listener.at('/audit');
          expect(got).toHaveLength(3);
          return got;
        });
        for (const request of events) {
          expect(request.headers['content-type']).toMatch(/^application\/cloudevents\+json/);
          const expected = `sha256=${createHmac('sha256', KEY).update(request.body).digest('hex')}`;
          const header = String(request.headers['x-signature']);
          expect(timingSafeEqual(Buffer.from(header), Buffer.from(expected))).toBe(true);
        }
        const parsed = events.map((r) => JSON.parse(r.body) as CloudEvent);
        expect(parsed.map((e) => e.id).sort()).toEqual(
          [
            `${uid.expose}/Committed`,
            `${uid['expose-lb']}/RollingBack`,
            `${uid['expose-lb']}/RolledBack`,
          ].sort(),
        );
        const lbRolledBack = parsed.find((e) => e.id === `${uid['expose-lb']}/RolledBack`);
        expect(lbRolledBack).toMatchObject({
          type: 'io.janus.tx.transaction.rolledback',
          subject: `${ns}/expose-lb`,
          data: {
            phase: 'RolledBack',
            severity: 'error',
            changes: 1,
            url: `https://janus.example.com/t/${ns}/expose-lb`,
          },
        });
        expect(lbRolledBack?.data.reason).toContain('waiting for the load balancer to get an address');

        // Alertmanager: the rollback's error alert fires, and resolves when resolveAfter passes.
        const isLb = (a: AlertmanagerWebhook['alerts'][number]) =>
          a.labels.transaction === 'expose-lb' && a.labels.severity === 'error';
        const notices = () =>
          listener.at('/alertmanager-webhook').map((r) => JSON.parse(r.body) as AlertmanagerWebhook);
        await eventually(
          () => {
            const statuses = notices().flatMap((n) => n.alerts.filter(isLb).map((a) => a.status));
            expect(statuses).toEqual(['firing', 'resolved']);
          },
          { timeoutMs: 60_000 },
        );
        const fired = notices()
          .flatMap((n) => n.alerts)
          .find(isLb);
        expect(fired?.labels).toMatchObject({ alertname: 'JanusTransaction', namespace: ns });
        expect(fired?.annotations.summary).toBe(`${ns}/expose-lb: RolledBack`);
        // The rollback's warning was resolved by the RolledBack event: Alertmanager lists it no more.
        const active = (await (await fetch(`${alertmanager.address}/api/v2/alerts`)).json()) as {
          labels: Record<string, string>;
        }[];
        expect(
          active.filter((a) => a.labels.transaction === 'expose-lb' && a.labels.severity === 'warning'),
        ).toEqual([]);

        // The other team's route heard nothing, and the counters say what was sent.
        expect(listener.at('/other-team')).toEqual([]);
        const metrics = await (await fetch(`${await controller.opsUrl()}/metrics`)).text();
        expect(metrics).toContain('janus_notifications_total{provider="audit",result="sent"} 3');
        // Every configured provider has its series from the start, at zero (for the alert's unless).
        expect(metrics).toContain('janus_notifications_total{provider="other-team",result="sent"} 0');
        expect(metrics).toContain('janus_notifications_total{provider="other-team",result="failed"} 0');
      },
    );
  }, 600_000);

  it('delivers at least once across a crash: a notification that failed before the kill is sent by the next controller', async () => {
    const { ns, options } = await auditedNamespace('notify-crash', 'crash');
    listener.answer(503);
    const uid = await withController(options, async (controller) => {
      await clients.admin.create(transaction(ns, 'expose', [service('web', 'ClusterIP')]));
      const txn = await waitForPhase(clients.admin, ns, 'expose', 'Committed');
      await eventually(() => expect(listener.at('/crash').length).toBeGreaterThan(0));
      await controller.kill(); // SIGKILL, with the notification still to retry
      return txn.metadata.uid;
    });
    listener.answer(200);
    await withController(options, async () => {
      // The promise is "at least once", not a deadline: a request the loaded test API server
      // leaves unanswered fails only after the client's 60 s idle timeout, and is then retried
      // (CI3 gave up at 60 s with the second controller's log silent). Allow for one such.
      const delivered = await eventually(
        () => {
          const ok = listener.at('/crash').filter((r) => r.status === 200);
          expect(ok).toHaveLength(1);
          return ok;
        },
        { timeoutMs: 180_000 },
      );
      expect((JSON.parse(delivered[0]?.body ?? '{}') as CloudEvent).id).toBe(`${uid}/Committed`);
    });
  }, 600_000);
  it('delivers once across a crash: a notification sent before the kill is not sent again by the next controller', async () => {
    const { ns, options } = await auditedNamespace('notify-once', 'once');
    const idOf = (r: { body: string }) => (JSON.parse(r.body) as CloudEvent).id;
    listener.answer(200);
    const uids = await withController(options, async (controller) => {
      // The first ends and is delivered; the receiver then fails the second, and the controller
      // is killed between the two: one notification sent, one still owed.
      await clients.admin.create(transaction(ns, 'first', [service('first', 'ClusterIP')]));
      const first = await waitForPhase(clients.admin, ns, 'first', 'Committed');
      await eventually(() => expect(listener.at('/once').filter((r) => r.status === 200)).toHaveLength(1));
      listener.answer(503);
      await clients.admin.create(transaction(ns, 'second', [service('second', 'ClusterIP')]));
      const second = await waitForPhase(clients.admin, ns, 'second', 'Committed');
      await eventually(() =>
        expect(listener.at('/once').filter((r) => r.status === 503).length).toBeGreaterThan(0),
      );
      await controller.kill(); // SIGKILL
      return [first.metadata.uid, second.metadata.uid];
    });
    listener.answer(200);
    const expected = uids.map((uid) => `${uid}/Committed`).sort();
    await withController(options, async (controller) => {
      await eventually(() => {
        const ok = listener.at('/once').filter((r) => r.status === 200);
        expect(ok.map(idOf).sort()).toEqual(expected);
      });
      // Replayed, the first is known delivered: once the second is sent, nothing more is owed.
      await eventually(async () => {
        const metrics = await (await fetch(`${await controller.opsUrl()}/metrics`)).text();
        expect(metrics).toContain('janus_notifications_total{provider="audit",result="sent"} 1');
      });
      expect(
        listener
          .at('/once')
          .filter((r) => r.status === 200)
          .map(idOf)
          .sort(),
      ).toEqual(expected);
    });
  }, 600_000);
});
