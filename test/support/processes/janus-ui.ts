/** `janus ui` as its own process, as a person starts it: the URL it prints, and stopping it. */
import { eventually } from '../eventually.ts';
import { startJanus } from './cli.ts';

export interface UiProcess {
  /** The URL with its secret, as printed. */
  url: string;
  pid: number;
  stderr(): string;
  stop(): Promise<void>;
}

export async function startUi(kubeconfig: string, args: string[] = []): Promise<UiProcess> {
  const ui = startJanus(['ui', '--no-open', ...args], { kubeconfig });
  const url = await eventually(
    () => {
      const match = /^http:\/\/127\.0\.0\.1:\d+\/\?token=\S+$/m.exec(ui.stdout());
      if (!match) {
        if (ui.child.exitCode !== null) throw new Error(`janus ui exited: ${ui.stderr()}`);
        throw new Error(`no URL yet: ${ui.stderr()}`);
      }
      return match[0];
    },
    { timeoutMs: 60_000 },
  );
  return {
    url,
    pid: ui.child.pid ?? 0,
    stderr: ui.stderr,
    async stop() {
      ui.child.kill('SIGTERM');
      await ui.exited;
    },
  };
}
