/**
 * The notification file as the notifier reads it (src/notify/config-file.ts): parsed once per
 * version, and every look made while it is being read waits for that read. The notifier's first
 * event can race its start: with the Transaction cache already listed, a restart's replay asks for
 * the settings while the start's own read is still under way, and was answered "no providers".
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../../src/log/index.ts';
import { NotifyConfigFile } from '../../../src/notify/config-file.ts';

const settings = (provider: string) =>
  [
    'providers:',
    `  - {name: ${provider}, type: cloudevents, address: "https://audit.example.com/janus", secretFile: /etc/janus/hmac-key}`,
    `routes: [{providers: [${provider}]}]`,
    '',
  ].join('\n');

const dirs: string[] = [];
afterEach(async () => {
  for (const dir of dirs.splice(0)) await rm(dir, { recursive: true, force: true });
});

async function file(text: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'janus-notify-config-'));
  dirs.push(dir);
  const path = join(dir, 'notifications.yaml');
  await writeFile(path, text);
  return path;
}

const names = (config: { providers: { name: string }[] }) => config.providers.map((p) => p.name);

describe('NotifyConfigFile', () => {
  it('answers looks made while the file is being read with what it reads, not with nothing', async () => {
    const config = new NotifyConfigFile(await file(settings('audit')), silentLogger());

    const looks = await Promise.all([config.current(), config.current(), config.current()]);

    expect(looks.map(names)).toEqual([['audit'], ['audit'], ['audit']]);
  });

  it('reads a changed file again, and a missing one as no notifications', async () => {
    const path = await file(settings('audit'));
    const config = new NotifyConfigFile(path, silentLogger());
    expect(names(await config.current())).toEqual(['audit']);

    await writeFile(path, settings('team-chat-and-more'));
    expect(names(await config.current())).toEqual(['team-chat-and-more']);

    await rm(path);
    expect(names(await config.current())).toEqual([]);
  });

  it('keeps the settings in force when the file stops parsing', async () => {
    const path = await file(settings('audit'));
    const config = new NotifyConfigFile(path, silentLogger());
    expect(names(await config.current())).toEqual(['audit']);

    await writeFile(path, 'providers: [not: {a provider');
    expect(names(await config.current())).toEqual(['audit']);
  });
});
