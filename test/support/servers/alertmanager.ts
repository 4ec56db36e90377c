/**
 * A real Alertmanager for the notification tests: built from its pinned Go module by
 * test/kube-testenv/build-alertmanager.sh, started on a free loopback port, clustering off,
 * routing every alert to a webhook receiver (the test's listener) with resolved notifications,
 * and stopped with the test worker however it ends (reap.ts).
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { terminate } from '../../../src/cli/demo/control-plane-processes.ts';
import { eventually } from '../eventually.ts';
import { reapOnExit } from '../processes/reap.ts';
import { builtBinaries } from './cached-build.ts';

const BUILD_SCRIPT = fileURLToPath(new URL('../../kube-testenv/build-alertmanager.sh', import.meta.url));

let binDir: string | undefined;

/** The folder holding `alertmanager`: the script builds it once, then answers from its cache. */
export function alertmanagerBinaries(): string {
  binDir ??= builtBinaries(BUILD_SCRIPT, process.env.JANUS_ALERTMANAGER_BIN);
  return binDir;
}

export interface TestAlertmanager {
  /** http://127.0.0.1:<port> */
  readonly address: string;
  stop(): Promise<void>;
}

/** Starts Alertmanager notifying `webhook` of each group within about a second, resolved ones too. */
export async function startAlertmanager(webhook: string): Promise<TestAlertmanager> {
  const dir = await mkdtemp(join(tmpdir(), 'janus-alertmanager-'));
  const config = [
    'route:',
    '  receiver: test',
    '  group_by: [alertname, namespace, transaction, severity]',
    '  group_wait: 1s',
    '  group_interval: 1s',
    '  repeat_interval: 1h',
    'receivers:',
    '  - name: test',
    '    webhook_configs:',
    `      - url: ${JSON.stringify(webhook)}`,
    '        send_resolved: true',
    '',
  ].join('\n');
  await writeFile(join(dir, 'alertmanager.yml'), config);
  const log = join(dir, 'alertmanager.log');
  const child = reapOnExit(
    spawn(
      join(alertmanagerBinaries(), 'alertmanager'),
      [
        `--config.file=${join(dir, 'alertmanager.yml')}`,
        `--storage.path=${join(dir, 'data')}`,
        // Port 0: the kernel picks a free port, which Alertmanager logs ("Listening on").
        '--web.listen-address=127.0.0.1:0',
        '--cluster.listen-address=', // no gossip port: one instance
        '--log.level=info',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    ),
  );
  child.stderr?.pipe(createWriteStream(log));
  const stop = async () => {
    await terminate(child);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    const address = await eventually(
      async () => {
        if (child.exitCode !== null) throw new Error(`exited (${child.exitCode})`);
        const found = /msg="Listening on" address=(127\.0\.0\.1:\d+)/.exec(await readFile(log, 'utf8'));
        if (!found) throw new Error('not listening yet');
        return `http://${found[1]}`;
      },
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    await eventually(
      async () => {
        const res = await fetch(`${address}/-/ready`, { signal: AbortSignal.timeout(2_000) });
        await res.body?.cancel();
        if (res.status !== 200) throw new Error(`/-/ready answered ${res.status}`);
      },
      { timeoutMs: 60_000, intervalMs: 50 },
    );
    return { address, stop };
  } catch (e) {
    const text = await readFile(log, 'utf8').catch(() => '');
    await stop();
    throw new Error(
      `Alertmanager did not start: ${(e as Error).message}\n${text.split('\n').slice(-30).join('\n')}`,
    );
  }
}
