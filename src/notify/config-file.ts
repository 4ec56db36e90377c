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
  /**
   * The read of the version seen last, which every look at that version waits for: a look while
   * the file is being read (the notifier's first event races its start) must not answer with
   * the settings from before. Reads of successive versions run in turn.
   */
  #reading: Promise<NotifyConfig> = Promise.resolve(EMPTY_CONFIG);

  constructor(path: string, log: Logger) {
    this.path = path;
    this.#log = log;
  }

  /** The settings in force now. */
  async current(): Promise<NotifyConfig> {
    const version = await this.#version();
    if (version !== this.#seen) {
      this.#seen = version;
      this.#reading = this.#reading.then(() => this.#read(version));
    }
    return this.#reading;
  }

  /** The file's identity: a ConfigMap update swaps a symlink, so the inode or mtime moves. */
  async #version(): Promise<string> {
    try {
      const s = await stat(this.path);
      return `${s.ino}:${s.mtimeMs}:${s.size}`;
    } catch (e) {
      return `missing:${(e as NodeJS.ErrnoException).code}`;
    }
  }

  async #read(version: string): Promise<NotifyConfig> {
    if (version.startsWith('missing:')) {
      this.#log.warn(
        { file: this.path, reason: version.slice('missing:'.length) },
        'notification settings not readable: nothing is sent',
      );
      this.#config = EMPTY_CONFIG;
      return this.#config;
    }
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
