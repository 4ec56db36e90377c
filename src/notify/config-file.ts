/**
 * The platform team's notification file (a mounted ConfigMap), re-read when it changes: each
 * look stats it (a ConfigMap update swaps a symlink, so the inode or mtime moves) and parses it
 * again only then. A file that does not parse leaves the last good settings in force, logged
 * once per change; a missing file means no notifications.
 */
import { readFile, stat } from 'node:fs/promises';
import type { Logger } from '../log/index.ts';
import { EMPTY_CONFIG, type NotifyConfig, parseNotifyConfig } from './config.ts';

export class NotifyConfigFile {
  readonly path: string;
  readonly #log: Logger;
  #config: NotifyConfig = EMPTY_CONFIG;
  #seen: string | undefined;

  constructor(path: string, log: Logger) {
    this.path = path;
    this.#log = log;
  }

  /** The settings in force now. */
  async current(): Promise<NotifyConfig> {
    let version: string;
    try {
      const s = await stat(this.path);
      version = `${s.ino}:${s.mtimeMs}:${s.size}`;
    } catch (e) {
      version = `missing:${(e as NodeJS.ErrnoException).code}`;
      if (version !== this.#seen) {
        this.#log.warn({ file: this.path, err: e }, 'notification settings not readable: nothing is sent');
        this.#config = EMPTY_CONFIG;
        this.#seen = version;
      }
      return this.#config;
    }
    if (version === this.#seen) return this.#config;
    this.#seen = version;
    try {
      this.#config = parseNotifyConfig(this.path, await readFile(this.path, 'utf8'));
      this.#log.info(
        {
          file: this.path,
          providers: this.#config.providers.map((p) => `${p.name} (${p.type})`),
          routes: this.#config.routes.length,
        },
        'notification settings read',
      );
    } catch (e) {
      this.#log.error(
        { file: this.path, err: e },
        'notification settings refused; the previous ones stay in force',
      );
    }
    return this.#config;
  }
}
